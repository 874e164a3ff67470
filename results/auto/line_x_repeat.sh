#!/usr/bin/env bash
# Issue 61 item 2, the one row past 1.25x in round4_within.txt (line-x: auto 3.77 ms, grid 2.74).
# auto picks the grid there and its choice costs 0.0003 ms a frame (stage `choose`), so the gap
# is the same method timed twice. Six runs, both orders, medians of --frames 10 each.
# Usage: BIN=target/release/sweepfan bash results/auto/line_x_repeat.sh
set -uo pipefail
BIN="${BIN:-target/release/sweepfan}"
for i in 1 2 3; do
  for order in auto,grid grid,auto; do
    echo "== bench --scene line-x --n 100000 --methods $order --frames 10 --threads 2"
    "$BIN" bench --scene line-x --n 100000 --methods "$order" --frames 10 --threads 2 2>&1 |
      grep -E '^(auto|grid) |auto \['
  done
done
