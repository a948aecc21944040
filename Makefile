# Developer entry points. `make test` is the README's test command and what CI runs.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install test unit cluster lint fuzz demo bench bench-cluster soak golden help

# Test processes: each runs its own simulated cluster (tests/cluster/conftest.py).
# Whole test files go to one worker, so a module's components start once there.
# Three, though the machine has two cores: the suite mostly waits on its clusters
# (docs/development.md#tests has the measured figures).
WORKERS ?= 3
XDIST := -n $(WORKERS) --dist loadfile
N ?= 3

help:
	@echo "install  create $(VENV) and install aicr with its test extras"
	@echo "test     every test (unit + simulated cluster)"
	@echo "unit     unit tests only"
	@echo "cluster  simulated-cluster tests only"
	@echo "fuzz     the loaders' property tests, many examples, for FUZZ_MINUTES (seed printed)"
	@echo "golden   rewrite tests/data/golden/outputs from today's outputs (review with git diff)"
	@echo "lint     ruff + mypy --strict on src/ + actionlint on .github/workflows"
	@echo "demo     a CNCF AI Conformance run on the simulated GPU cluster (ARGS=--keep leaves it up)"
	@echo "bench    print the benchmark figures beside their goals (start-up, CNCF rendering, verify)"
	@echo "soak     the cluster suite N times (make soak N=5): each test's failure count"
	@echo "bench-cluster  executor overhead, parallel speed-up and the conformance phase wall time on the simulated cluster"

$(BIN)/aicr: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -e '.[test]'
	@touch $@

install: $(BIN)/aicr

# Builds the simulated cluster first when it can (cached; minutes on first use). Where it
# cannot be built, the cluster tests say why once and the rest still run (CI=true fails).
test: install
	@bash hack/sim/build.sh >/dev/null || echo "make test: simulated cluster binaries could not be built; the cluster tests will say why"
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest tests $(XDIST) $(PYTEST_ARGS)

unit: install
	$(BIN)/pytest tests/unit

cluster: install
	@bash hack/sim/build.sh >/dev/null
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest tests/cluster $(XDIST) $(PYTEST_ARGS)

soak: install
	@bash hack/sim/build.sh >/dev/null
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python hack/soak.py $(N) --pytest-args "$(XDIST) $(PYTEST_ARGS)"

# After a deliberate change of output: rewrite the goldens, then review `git diff`.
golden: install
	AICR_UPDATE_GOLDEN=1 $(BIN)/pytest tests/unit/test_golden_outputs.py tests/unit/test_bench_outputs.py tests/unit/cli/test_root_help.py -q -p no:cacheprovider
	$(BIN)/python bench/cncf_render.py --only large --runs 1 --update-golden
	@git status --short tests/data/golden src/aicr/cli/root_help.py

lint: install
	$(BIN)/ruff check src tests bench hack
	$(BIN)/ruff format --check src hack/sim
	$(BIN)/mypy src
	bash hack/actionlint.sh

# Rounds of the property tests in tests/unit/fuzz with fresh seeds until FUZZ_MINUTES pass;
# each round prints its seed (rerun one with FUZZ_SEED=N) and the first failure stops.
FUZZ_MINUTES ?= 10
FUZZ_EXAMPLES ?= 300
fuzz: install
	@end=$$(( $$(date +%s) + $(FUZZ_MINUTES) * 60 )); \
	while [ $$(date +%s) -lt $$end ]; do \
		seed=$${FUZZ_SEED:-$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}; \
		echo "make fuzz: seed $$seed ($(FUZZ_EXAMPLES) examples per test)"; \
		AICR_HYPOTHESIS_PROFILE=fuzz AICR_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) \
			$(BIN)/pytest tests/unit/fuzz -q -x -p no:cacheprovider --hypothesis-seed=$$seed \
			|| { echo "make fuzz: failed with seed $$seed"; exit 1; }; \
		[ -z "$$FUZZ_SEED" ] || break; \
	done

demo: install
	@PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python hack/demo.py $(ARGS)

# Prints each figure (min, median, max) beside its goal, OVER where one misses; never fails
# on a figure. The verify figure needs the real CNCF corpus named by AICR_CNCF_SUBMISSIONS.
bench: install
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/cli_startup.py
	$(BIN)/python bench/cncf_render.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/cncf_verify.py

bench-cluster: install
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/executor_overhead.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/conformance_phase.py

-include hack/sim/sim.mk
