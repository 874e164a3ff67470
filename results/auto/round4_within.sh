#!/usr/bin/env bash
# Issue 61 item 2: `auto` beside grid, sap, xyz and min_axis on every generated scene and on the
# grains-and-boulders family (1 to 1,000 boulders, radius 0.5 and 5), --frames 10, CPU, two
# threads. Usage: BIN=target/release/sweepfan bash results/auto/round4_within.sh
set -uo pipefail
BIN="${BIN:-target/release/sweepfan}"
M=auto,grid,sap,xyz,min_axis
run() {
  echo "== bench $*"
  "$BIN" bench --methods "$M" --frames 10 --threads 2 "$@" 2>&1 |
    grep -E '^(auto|grid|sap|xyz|min_axis) |auto \['
}
for s in paper density clusters mixed-radii giant rotating wide line-x; do
  run --scene "$s" --n 100000
done
run --scene one-point --n 2000
for b in 1 10 33 100 1000; do
  for r in 0.5 5; do
    run --scene boulders --n 50000 --boulders "$b" --radius "$r"
  done
done
