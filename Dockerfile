# The validator image: what every check Job runs (`aicr check run NAME`).
#
#   docker build -t ghcr.io/aicr-dev/aicr-validator:v$(python -c 'import aicr; print(aicr.__version__)') .
#
# The tag must equal the tool's version: `aicr validate` pins the image to it, so
# a laptop and its checks never disagree about the catalog. Mirrors:
# AICR_VALIDATOR_IMAGE_REGISTRY=<registry/path> (or the config's
# spec.validate.images.registry) replaces the registry host, so the run pulls
# <registry/path>/aicr-dev/aicr-validator:v<version>; `aicr images list` prints it.
#
# Two stages: build a wheel with the build tools, install only the wheel and its
# runtime dependencies on a slim base. The Job's pod runs it as uid 65532 with a
# read-only root filesystem, no capabilities and RuntimeDefault seccomp; /tmp is
# an emptyDir, so nothing here needs to be writable.

ARG PYTHON_VERSION=3.12

FROM python:${PYTHON_VERSION}-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:${PYTHON_VERSION}-slim
# Byte-compile at install time: the root filesystem is read-only at run time, so
# Python could not write .pyc files then (and start-up stays fast).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
COPY --from=build /wheels /wheels
RUN pip install --compile /wheels/*.whl \
    && rm -rf /wheels \
    && groupadd --gid 65532 aicr \
    && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /tmp --shell /usr/sbin/nologin aicr
USER 65532:65532
WORKDIR /tmp
ENV HOME=/tmp
# The Job sets `command` explicitly; this default only helps `docker run IMAGE --help`.
ENTRYPOINT ["aicr"]
CMD ["--help"]
