# Sourced by the sim's build and install scripts once they set `here` (this folder):
# the pins every cached build is keyed by, and the cache root they all build into:
# AICR_SIM_CACHE, else $XDG_CACHE_HOME/aicr-sim, else ~/.cache/aicr-sim (the same
# rule as simcluster.cluster.paths.cache_root).
# shellcheck source=pins.env
source "$here/pins.env"
cache_root=${AICR_SIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aicr-sim}

# route_out: true when this network namespace has a route out, a default route
# (IPv4 or IPv6) that is not a reject route. The simulated cluster's namespace has
# none by design (simcluster/net/namespace.py), nor has a fresh `unshare -n` one:
# a build there cannot fetch a module or a package ("dial udp ...:53: connect:
# network is unreachable"). Read from /proc, so it needs no tool.
route_out() {
  local dest len mask flags dev
  while read -r _ dest _ flags _ _ _ mask _; do
    [ "$dest" = 00000000 ] && [ "$mask" = 00000000 ] && (((16#$flags & 0x200) == 0)) && return 0
  done < <(tail -n +2 /proc/net/route)
  while read -r dest len _ _ _ _ _ _ flags dev; do
    [ "$dest" = 00000000000000000000000000000000 ] && [ "$len" = 00 ] && [ "$dev" != lo ] &&
      (((16#$flags & 0x200) == 0)) && return 0
  done </proc/net/ipv6_route
  return 1
}

# refuse_without_route PREFIX WHAT COMMAND: unless route_out, say in one line on
# stderr that WHAT is refused here and that COMMAND, run outside, does it; exit 3.
refuse_without_route() {
  route_out && return 0
  echo "$1: refusing to $2: this network namespace has no route out (the simulated" \
    "cluster's, or another), so nothing can be fetched; run \`$3\` outside it first" >&2
  exit 3
}

# progress_start PREFIX WHAT: until progress_stop, one line on stderr every
# PROGRESS_SECONDS (30) saying how long WHAT has been building. One-second sleeps,
# so a stopped ticker leaves no sleep holding the script's output open.
progress_start() {
  local prefix=$1 what=$2 since
  since=$(date +%s)
  (
    n=0
    while sleep 1; do
      ((++n % ${PROGRESS_SECONDS:-30})) ||
        echo "$prefix: building $what: $(($(date +%s) - since)) s so far" >&2
    done
  ) >/dev/null &
  progress_pid=$!
}
progress_stop() { [ -z "${progress_pid:-}" ] || kill "$progress_pid" 2>/dev/null || true; }
