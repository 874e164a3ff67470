#!/usr/bin/env bash
# The test command named in the README (and called by .ci/run).
# Installs Mesa's software Vulkan driver (lavapipe) when no Vulkan driver is present, so that the
# GPU tests run everywhere: they fail, not skip, without an adapter (see README, "GPU tests").
# Never where a vendor tool lists a GPU: the "GPU" tests would then pass on the CPU and claim the
# GPU. It says instead why the GPU's Vulkan driver is missing, and exits 2.
# SWEEPFAN_EXPECT_ADAPTER=<part of the adapter's name> makes the tests (and the selftest) fail
# on any other adapter; this script then checks that first (docs/design.md §9.5).
#
# `scripts/test.sh --slow` runs instead the few tests marked #[ignore] for taking minutes on 2
# cores (partitioned frames of every method, the figures script, 200k-sphere and past-u32 GPU
# counts): CI (.ci/run) runs them after the main suite, so they are never dropped, and the
# first test run on a 2-core machine stays under 10 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
slow=0
if [ "${1:-}" = "--slow" ]; then
  slow=1
  shift
fi

ICD_DIRS=(/usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/share/vulkan/icd.d)

icd_files() {
  local d f
  for d in "${ICD_DIRS[@]}"; do
    for f in "$d"/*.json; do
      [ -e "$f" ] && echo "$f"
    done
  done
  return 0
}

have_vulkan_icd() {
  [ -n "$(icd_files)" ]
}

# GPUs that the vendors' tools list, one per line as "vendor: line"; nothing when no tool is
# installed or none lists a device.
listed_gpus() {
  if command -v nvidia-smi >/dev/null 2>&1; then
    { nvidia-smi -L 2>/dev/null || true; } | { grep -E '^(GPU [0-9]|  MIG )' || true; } |
      sed 's/^ */nvidia: /'
  fi
  if command -v rocm-smi >/dev/null 2>&1; then
    { rocm-smi --showproductname 2>/dev/null || true; } | { grep -E '^GPU\[' || true; } |
      sed 's/^/amd: /'
  fi
  if command -v xpu-smi >/dev/null 2>&1; then
    { xpu-smi discovery 2>/dev/null || true; } | { grep -E 'Device Name' || true; } |
      sed 's/^[ |]*/intel: /'
  fi
  return 0
}

in_container() {
  [ -e /.dockerenv ] || [ -e /run/.containerenv ] ||
    grep -qE '(docker|containerd|kubepods|libpod)' /proc/1/cgroup 2>/dev/null
}

# Why the listed GPU has no Vulkan driver here, as far as this machine can tell.
explain_missing_gpu_driver() {
  local gpus="$1"
  echo "scripts/test.sh: a GPU is present, but no Vulkan driver for it:" >&2
  sed 's/^/  /' <<<"$gpus" >&2
  if grep -q '^nvidia:' <<<"$gpus"; then
    local caps="${NVIDIA_DRIVER_CAPABILITIES-}"
    if grep -q '^nvidia: MIG ' <<<"$gpus"; then
      echo "  - the GPU is split into MIG instances: a MIG instance runs compute (CUDA) only, no" \
        "graphics API, so no Vulkan; use a whole GPU (MIG disabled)." >&2
    fi
    if in_container || [ -n "$caps" ]; then
      if [ -z "$caps" ]; then
        echo "  - NVIDIA container without NVIDIA_DRIVER_CAPABILITIES: the runtime's default is" \
          "'compute,utility', which lacks 'graphics', so the Vulkan driver (nvidia_icd.json," \
          "libGLX_nvidia.so.0) is not mounted. Start the container with" \
          "NVIDIA_DRIVER_CAPABILITIES=all (or compute,utility,graphics)." >&2
      elif ! grep -qE '(^|,)(graphics|all)(,|$)' <<<"$caps"; then
        echo "  - NVIDIA container with NVIDIA_DRIVER_CAPABILITIES=$caps: it lacks 'graphics'" \
          "(or 'all'), so the Vulkan driver (nvidia_icd.json, libGLX_nvidia.so.0) is not" \
          "mounted. Start the container with NVIDIA_DRIVER_CAPABILITIES=all (or" \
          "$caps,graphics)." >&2
      fi
    fi
    if ! grep -q 'nvidia' <<<"$(icd_files)"; then
      echo "  - no nvidia_icd.json in ${ICD_DIRS[*]} (the file that points the Vulkan loader at" \
        "the NVIDIA driver)." >&2
    fi
    if command -v ldconfig >/dev/null 2>&1 &&
      ! grep -q 'libGLX_nvidia\.so\.0' <<<"$(ldconfig -p 2>/dev/null || true)"; then
      echo "  - libGLX_nvidia.so.0 (the NVIDIA driver's Vulkan library) is not in the linker" \
        "cache. Outside a container: install the driver's Vulkan part (Debian:" \
        "nvidia-vulkan-icd; Ubuntu: libnvidia-gl-<driver version>)." >&2
    fi
  fi
  if grep -qE '^(amd|intel):' <<<"$gpus"; then
    echo "  - AMD and Intel GPUs take Mesa's Vulkan drivers (RADV, ANV: apt-get install" \
      "mesa-vulkan-drivers) with /dev/dri visible (in a container: --device /dev/dri)." >&2
  fi
  echo "Not installing lavapipe: the GPU tests would pass on the CPU and claim the GPU. Expose" \
    "the GPU's Vulkan driver, or install mesa-vulkan-drivers yourself and run with" \
    "SWEEPFAN_EXPECT_ADAPTER=llvmpipe to test on lavapipe knowingly." >&2
}

if [ "${SWEEPFAN_NO_GPU:-0}" != "1" ]; then
  gpus="$(listed_gpus)"
  if ! have_vulkan_icd; then
    if [ -n "$gpus" ]; then
      explain_missing_gpu_driver "$gpus"
      exit 2
    fi
    echo "scripts/test.sh: no Vulkan driver found; installing mesa-vulkan-drivers (lavapipe)"
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq mesa-vulkan-drivers >/dev/null
  elif [ -n "$gpus" ]; then
    vendors="$(sed 's/:.*//' <<<"$gpus" | sort -u)"
    for v in $vendors; do
      case "$v" in
        nvidia) pattern='nvidia' ;;
        amd) pattern='radeon|amd' ;;
        *) pattern="$v" ;;
      esac
      if ! grep -qiE "$pattern" <<<"$(icd_files)"; then
        echo "scripts/test.sh: warning: a $v GPU is listed, but the Vulkan drivers here" \
          "($(icd_files | xargs -n1 basename | tr '\n' ' ')) do not include its own: the GPU" \
          "tests may run on a software adapter. SWEEPFAN_EXPECT_ADAPTER=<GPU name> makes" \
          "them fail there." >&2
      fi
    done
  fi
fi

# Each stage says when it starts and how long it took (a silent build or suite looks hung).
script_start=$SECONDS
stage() {
  local name="$1" start=$SECONDS
  shift
  echo "== scripts/test.sh: $name" >&2
  "$@"
  echo "== scripts/test.sh: $name took $((SECONDS - start)) s ($((SECONDS - script_start)) s in all)" >&2
}

# libwayland (loaded by the Vulkan loader) complains on every adapter probe without it.
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
  export XDG_RUNTIME_DIR="${TMPDIR:-/tmp}/sweepfan-xdg-$(id -u)"
  mkdir -p -m 700 "$XDG_RUNTIME_DIR"
fi

# On the adapter asked for, or fail at once naming both (one test, not the whole suite first).
if [ "$#" -eq 0 ] && [ -n "${SWEEPFAN_EXPECT_ADAPTER:-}" ]; then
  if ! cargo test --release -p sweepfan --lib -- --exact \
    gpu::context::tests::the_tests_run_on_the_expected_adapter --nocapture; then
    echo "scripts/test.sh: not on the adapter SWEEPFAN_EXPECT_ADAPTER=$SWEEPFAN_EXPECT_ADAPTER" \
      "names (see above)" >&2
    exit 2
  fi
fi

if [ "$slow" = 1 ]; then
  stage "slow tests (cargo test --release --test suite -- --ignored)" \
    cargo test --release --test suite "$@" -- --ignored
  exit 0
fi
stage "build (cargo test --release --no-run)" cargo test --release --no-run "$@"
stage "tests (cargo test --release)" cargo test --release "$@"

# The simulation example runs its CPU side alone where no adapter opens: here that is a failure.
simulation_on_both_sides() {
  local out
  out=$(cargo run --release --quiet --example simulation -- 2000 10) || {
    echo "$out"
    return 1
  }
  echo "$out"
  if grep -q "the CPU side alone" <<<"$out"; then
    echo "scripts/test.sh: the simulation example found no GPU adapter" >&2
    return 1
  fi
}

# The examples a simulation would start from run too: each exits 1 when the GPU's pairs or
# frame events differ from the CPU's (not with test filters, nor on a machine opted out of GPU
# tests).
if [ "$#" -eq 0 ] && [ "${SWEEPFAN_NO_GPU:-0}" != "1" ]; then
  stage "example bouncing" cargo run --release --quiet --example bouncing -- 2000 30
  stage "example gpu_resident" cargo run --release --quiet --example gpu_resident -- 20000 40
  stage "example simulation" simulation_on_both_sides
fi
