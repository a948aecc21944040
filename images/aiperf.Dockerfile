# The inference-perf check's load generator image (`aiperf` in
# src/aicr/checks/images.yaml): NVIDIA AIPerf with every package pinned by
# hack/sim/loadgen-requirements.txt (the same list the simulated cluster runs),
# and the benchmark model's tokenizer in a Hugging Face cache, fetched here at
# build time so the pod runs with HF_HUB_OFFLINE=1 and downloads nothing.
#
#   docker build -f images/aiperf.Dockerfile -t ghcr.io/aicr-dev/aicr-aiperf:0.13.0 .
#
# Another model's tokenizer: --build-arg TOKENIZERS="Qwen/Qwen3-8B org/other"
# and the check's `tokenizer` param naming it. The pod runs as a non-root uid
# with /tmp an emptyDir; the cache is read-only at run time.

# The pins were resolved on Python 3.11.
FROM python:3.11-slim
ARG TOKENIZERS="Qwen/Qwen3-8B"
ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HOME=/opt/hf
COPY hack/sim/loadgen-requirements.txt /tmp/requirements.txt
RUN pip install --no-deps -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt \
    && for t in $TOKENIZERS; do \
         python -c "import sys; from huggingface_hub import snapshot_download; \
snapshot_download(sys.argv[1], allow_patterns=['tokenizer*', 'vocab*', 'merges*', \
'special_tokens_map.json', 'config.json'])" "$t"; \
       done \
    && HF_HUB_OFFLINE=1 python -c "import sys; from aiperf.common.tokenizer import Tokenizer; \
[Tokenizer.from_pretrained(t) for t in sys.argv[1:]]" $TOKENIZERS \
    && chmod -R a+rX /opt/hf
USER 65534:65534
WORKDIR /tmp
ENV HOME=/tmp HF_HUB_OFFLINE=1
ENTRYPOINT ["aiperf"]
CMD ["--help"]
