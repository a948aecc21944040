# Sourced by the sim's build and install scripts once they set `here` (this folder):
# the pins every cached build is keyed by, and the cache root they all build into:
# AICR_SIM_CACHE, else $XDG_CACHE_HOME/aicr-sim, else ~/.cache/aicr-sim (the same
# rule as simcluster.cluster.paths.cache_root).
# shellcheck source=pins.env
source "$here/pins.env"
cache_root=${AICR_SIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aicr-sim}
