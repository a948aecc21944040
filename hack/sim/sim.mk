# Simulated GPU cluster (hack/sim): included by the top-level Makefile.
#   make sim-build   build the control plane, etcd and kwok from Go modules, install the
#                    inference load generator, build the platform components (all cached
#                    by hack/sim/pins.env; a build prints its time)
#   make sim-up      start the cluster; prints the kubeconfig path last
#                    (WITH=prometheus,... also runs those platform components)
#   make sim-down    stop exactly what sim-up started and remove its state
SIM := hack/sim/sim

.PHONY: sim-build sim-up sim-down sim-status

sim-build:
	@bash hack/sim/build.sh
	@bash hack/sim/loadgen.sh
	@bash hack/sim/build-component.sh all

sim-up:
	@$(SIM) up $(if $(WITH),--with $(WITH))

sim-down:
	@$(SIM) down

sim-status:
	@$(SIM) status
