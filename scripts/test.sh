#!/usr/bin/env bash
# The test command named in the README (and called by .ci/run).
# Installs Mesa's software Vulkan driver (lavapipe) when no Vulkan driver is present, so that the
# GPU tests run everywhere: they fail, not skip, without an adapter (see README, "GPU tests").
set -euo pipefail
cd "$(dirname "$0")/.."

have_vulkan_icd() {
  local f
  for f in /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json /usr/local/share/vulkan/icd.d/*.json; do
    [ -e "$f" ] && return 0
  done
  return 1
}

if [ "${SWEEPFAN_NO_GPU:-0}" != "1" ] && ! have_vulkan_icd; then
  echo "scripts/test.sh: no Vulkan driver found; installing mesa-vulkan-drivers (lavapipe)"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq mesa-vulkan-drivers >/dev/null
fi

# libwayland (loaded by the Vulkan loader) complains on every adapter probe without it.
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
  export XDG_RUNTIME_DIR="${TMPDIR:-/tmp}/sweepfan-xdg-$(id -u)"
  mkdir -p -m 700 "$XDG_RUNTIME_DIR"
fi

cargo test --release "$@"

# The examples a simulation would start from run too: each exits 1 when the GPU's pairs or
# frame events differ from the CPU's (not with test filters, nor on a machine opted out of GPU
# tests).
if [ "$#" -eq 0 ] && [ "${SWEEPFAN_NO_GPU:-0}" != "1" ]; then
  cargo run --release --quiet --example bouncing -- 2000 30
  cargo run --release --quiet --example gpu_resident -- 20000 40
fi
