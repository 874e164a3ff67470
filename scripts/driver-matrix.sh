#!/usr/bin/env bash
# The GPU code on every Vulkan driver this machine can reach (docs/design.md §9.12), each one
# unpacked by scripts/drivers.sh into a cache, never installed over the system's driver:
#   * `sweepfan selftest --quick` (every stage against the CPU) under each driver, in a process
#     limited to 8 GiB of address space and 10 minutes;
#   * `sweepfan shaders --compile-report` under each driver: every pipeline built in under 5 s
#     with the process's peak memory under 1 GiB while it is built;
#   * under the Khronos validation layer, no validation message but the listed ones.
#   scripts/driver-matrix.sh                       # lavapipe4 swiftshader validation mesa25
#   DRIVERS="swiftshader" scripts/driver-matrix.sh # some of them (scripts/drivers.sh list)
# Logs go to $MATRIX_LOGS (default target/driver-matrix/). Exit 1 when any check fails.
# ALLOWED_VUIDS replaces the list of validation messages that are not ours (below).
set -uo pipefail
cd "$(dirname "$0")/.."
drivers=${DRIVERS:-lavapipe4 swiftshader validation mesa25}
logs=${MATRIX_LOGS:-target/driver-matrix}
bin=target/release/sweepfan
mkdir -p "$logs"
# Validation messages that are not ours, each with its reason.
#   VUID-StandaloneSpirv-None-10684: naga decorates workgroup arrays with ArrayStride, which
#   newer SPIR-V validators reject (wgpu issue 7696); the layout is unused for workgroup memory.
allowed_vuids=${ALLOWED_VUIDS-VUID-StandaloneSpirv-None-10684}

cargo build --release --quiet || exit 1
# shellcheck disable=SC2086
scripts/drivers.sh fetch $drivers || exit 1

status=0
fail() { echo "driver-matrix: FAIL $*"; status=1; }
for d in $drivers; do
  echo "== $d"
  log=$logs/$d.selftest.log
  # An 8 GiB address-space cap: a kernel whose compilation would take all memory fails here
  # instead of pushing the machine into its OOM killer.
  t0=$SECONDS
  if (ulimit -v $((8 << 20)); scripts/drivers.sh run "$d" -- timeout 600 "$bin" selftest --quick) \
      > "$log" 2>&1; then
    echo "   selftest: $(grep -E 'checks passed' "$log" | tail -1) ($((SECONDS - t0)) s)"
  else
    fail "$d: selftest (log $log):"; grep -E '^FAIL|error' "$log" | head -5
  fi
  report=$logs/$d.compile.txt
  if scripts/drivers.sh run "$d" -- timeout 600 "$bin" shaders --compile-report \
      --max-seconds 5 --max-rss-mb 1024 --json "$logs/$d.compile.json" > "$report" 2>&1; then
    echo "   compile: $(tail -1 "$report")"
  else
    fail "$d: compile report (log $report):"; grep -E 'OVER|error' "$report" | head -5
  fi
  if [ "$d" = validation ]; then
    found=$(cat "$log" "$report" | grep -oE 'VUID-[A-Za-z0-9_-]+' | sort -u)
    messages=$(cat "$log" "$report" | grep -cE 'Validation (Error|Warning)')
    listed=0
    for v in $found; do
      if [[ " $allowed_vuids " == *" $v "* ]]; then
        listed=$((listed + $(cat "$log" "$report" | grep -cE "Validation (Error|Warning): \[ $v \]")))
      else
        fail "validation: $v is not a listed message"
      fi
    done
    if [ "$messages" -eq "$listed" ]; then
      echo "   validation: $messages messages, all listed (${found:-none})"
    else
      fail "validation: $((messages - listed)) of $messages messages are not listed"
    fi
  fi
done
[ $status -eq 0 ] && echo "driver-matrix: every driver passed ($drivers)"
exit $status
