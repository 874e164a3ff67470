#!/usr/bin/env bash
# Every real-GPU figure of the GPU-frame work (docs/design.md §9.7-9.9) in one run, each file
# with the command that made it (commands.txt):
#   scripts/gpu-figures.sh OUT_DIR            # full sizes, for a real GPU (about 10 minutes on an H100)
#   scripts/gpu-figures.sh OUT_DIR --small    # tiny sizes: checks the script itself (lavapipe, CI)
# The binary is $SWEEPFAN, else .gpu/sweepfan (carried by ../shared/gpu-kit/prepare.sh), else
# target/release/sweepfan. Where PyTorch with CUDA exists, CUB's radix sort (torch.sort,
# stable) is timed beside ours in the same run and radix_sort_vs_cub.json pairs them up; where
# CuPy with CUDA exists, the peer anchor (cuda_grid_anchor.py) runs too and
# speed_vs_anchor.json sets ours beside it (scripts/speed_vs_anchor.py).
# The whole directory is also packed into OUT_DIR.tar.gz (one file to bring back).
# ONLY=stress,sort runs only the steps whose names start with one of these (a device call is
# limited to 10 minutes: split the run, e.g. ONLY=selftest,stress then ONLY=frame,radix,sector,boxes).
# STEP_TIMEOUT=S stops any one step after S seconds (recorded as a failure; the others still run);
# STRESS_BUDGET_S=S sets the stress steps' time budget (default 240 s each).
# Exit status: non-zero when any step failed or did not verify (the others still run).
set -uo pipefail
out=${1:?usage: scripts/gpu-figures.sh OUT_DIR [--small]}
small=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${SWEEPFAN:-}
if [ -z "$bin" ]; then
  if [ -x "$here/.gpu/sweepfan" ]; then bin=$here/.gpu/sweepfan; else bin=$here/target/release/sweepfan; fi
fi
[ -x "$bin" ] || { echo "gpu-figures: no sweepfan binary at $bin (cargo build --release)" >&2; exit 2; }
mkdir -p "$out"
: > "$out/commands.txt"
status=0

# Runs one step: records the command, keeps its output in OUT_DIR/<name>.txt.
step() {
  local name=$1; shift
  if [ -n "${ONLY:-}" ]; then
    local want keep=0
    for want in ${ONLY//,/ }; do [[ $name == "$want"* ]] && keep=1; done
    [ $keep = 1 ] || return 0
  fi
  echo "== $name: $*" | tee -a "$out/commands.txt"
  local t0=$SECONDS
  local limit=()
  [ -n "${STEP_TIMEOUT:-}" ] && limit=(timeout -k 10 "$STEP_TIMEOUT")
  if "${limit[@]}" "$@" > "$out/$name.txt" 2>&1; then
    echo "   ok ($((SECONDS - t0)) s)"
  else
    local rc=$?
    echo "   FAILED rc=$rc ($((SECONDS - t0)) s); last lines:"; tail -5 "$out/$name.txt"
    status=1
  fi
}

if [ "$small" = "--small" ]; then
  stress_max=262144; sort_sizes=64K,256K; torch_sizes=65536,262144; rotations=8
  boxes_small=20000; boxes_large=50000; frame_small=100000; frame_large=200000
  selftest=--quick; world_sizes='256:64 64:256'
else
  stress_max=33554432; sort_sizes=1M,4M,16M,64M; torch_sizes=1048576,4194304,16777216,67108864
  rotations=100000; boxes_small=1000000; boxes_large=10000000; frame_small=1000000
  frame_large=16777216; selftest=--full; world_sizes='4096:64 1024:1024'
fi

step info "$bin" info
step selftest "$bin" selftest $selftest --json "$out/selftest.json"
for m in grid sap; do
  step "stress_$m" "$bin" stress --backend gpu --method $m --max-n $stress_max --budget-s ${STRESS_BUDGET_S:-240} \
    --json "$out/stress_$m.json"
done
# The sphere frame at the two sizes the targets name (device time per stage in the rows).
for n in $frame_small $frame_large; do
  step "frame_grid_$n" "$bin" bench --backend gpu --scene density --n $n --methods grid \
    --frames 5 --count-only --json "$out/frame_grid_$n.json"
done
# Each configuration in its own process (an order effect was measured in one: the same kernel
# 31 ms first and 80 ms third at 64M), then one file; the tiled plan also on keys below 2^24
# (three passes run).
for c in plan portable subgroup; do
  step "radix_sort_ours_$c" "$bin" sort-bench --sizes $sort_sizes --reps 10 --configs $c \
    --json "$out/radix_sort_ours_$c.json"
done
step radix_sort_ours_24bit "$bin" sort-bench --sizes $sort_sizes --reps 10 --configs plan \
  --key-bits 24 --json "$out/radix_sort_ours_24bit.json"
if [[ -z "${ONLY:-}" || ",$ONLY," == *,radix* ]]; then
  python3 - "$out" <<'PY' || status=1
import json, os, sys
out = sys.argv[1]
rows = []
for c in ("plan", "portable", "subgroup"):
    path = f"{out}/radix_sort_ours_{c}.json"
    if os.path.exists(path):
        rows += json.load(open(path))["rows"]
json.dump({"note": "one process a configuration", "rows": rows},
          open(f"{out}/radix_sort_ours.json", "w"), indent=1)
PY
fi
if [[ -z "${ONLY:-}" || ",$ONLY," == *,radix* ]] &&
   python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  torch_py=$here/.gpu/torch_sort.py
  [ -e "$torch_py" ] || torch_py=$here/../shared/gpu-kit/torch_sort.py
  step radix_sort_cub python3 "$torch_py" --sizes $torch_sizes --json "$out/radix_sort_cub.json"
  python3 - "$out" <<'PY' || status=1
import json, sys
out = sys.argv[1]
ours = json.load(open(f"{out}/radix_sort_ours.json"))["rows"]
cub = {r["n"]: r for r in json.load(open(f"{out}/radix_sort_cub.json"))["rows"]}
rows = []
for r in ours:
    if r["config"] != "plan" or r["n"] not in cub:
        continue
    c = cub[r["n"]]
    rows.append({"n": r["n"], "ours_gpairs_per_s": r["gpairs_per_s"],
                 "cub_gpairs_per_s": c["gpairs_per_s"], "variant": r["variant"],
                 "rounds": r["rounds"], "ours_verified": r["verified"], "cub_sorted": c["sorted"],
                 "ratio": r["gpairs_per_s"] / c["gpairs_per_s"]})
    print(f"n={r['n']:>11,}  ours {r['gpairs_per_s']:.2f}  cub {c['gpairs_per_s']:.2f} G pairs/s  "
          f"ratio {rows[-1]['ratio']:.2f}  ({r['variant']}, {r['rounds']} rounds)")
json.dump({"note": "same GPU, same run; ours: sweepfan sort-bench (plan), cub: torch.sort(stable=True)",
           "rows": rows}, open(f"{out}/radix_sort_vs_cub.json", "w"), indent=1)
PY
else
  echo "== radix_sort_cub: skipped (no PyTorch with CUDA here)" | tee -a "$out/commands.txt"
fi
# The peer anchor in the same call (CUB's sort, a CUDA grid frame, the host-to-device copy), then
# ours beside it: speed_vs_anchor.json (scripts/speed_vs_anchor.py). Runs with the frame or radix
# steps, where CuPy with CUDA exists.
if [[ -z "${ONLY:-}" || ",$ONLY," == *,frame* || ",$ONLY," == *,radix* ]] &&
   python3 -c 'import cupy, sys; sys.exit(0 if cupy.cuda.runtime.getDeviceCount() > 0 else 1)' 2>/dev/null; then
  anchor_py=$here/.gpu/cuda_grid_anchor.py
  [ -e "$anchor_py" ] || anchor_py=$here/../shared/gpu-kit/cuda_grid_anchor.py
  ONLY='' step anchor python3 "$anchor_py" --sizes "$frame_small,$frame_large" \
    --sort-sizes "$torch_sizes" --json "$out/anchor.json"
  ONLY='' step speed_vs_anchor python3 "$here/scripts/speed_vs_anchor.py" "$out"
  cat "$out/speed_vs_anchor.txt"
else
  echo "== anchor: skipped (no CuPy with CUDA here)" | tee -a "$out/commands.txt"
fi
# Many worlds (issue 63): the batch against a loop of one call a world, both backends, at the
# two sizes the targets name (ns per world and step in the rows).
for wn in $world_sizes; do
  step "worlds_${wn/:/x}" "$bin" bench --worlds "${wn%%:*}" --n "${wn##*:}" --scene paper \
    --methods auto,grid,sap,min_axis --backend both --frames 5 --json "$out/worlds_${wn/:/x}.json"
done
step sector_accuracy "$bin" reproduce sector --backend gpu --rotations $rotations --speed-runs 1 \
  --json "$out/sector_accuracy.json"
for n in $boxes_small $boxes_large; do
  step "boxes_$n" "$bin" bench --backend gpu --shape obb --scene density --n $n --frames 3 \
    --count-only --json "$out/boxes_$n.json"
done
tar czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")"
echo "gpu-figures: wrote $out and $out.tar.gz (status $status)"
exit $status
