#!/usr/bin/env bash
# The cost of the exact sphere touch (issue 61 item 1, docs/design.md §9.6a): the old binary
# (before) and the new (after) alternating on the same machine in the same period, CPU grid
# at the density million (one and two threads) and the GPU grid on lavapipe at 200k and 1M.
# Usage: OLD=path NEW=path bash results/lavapipe-2core/exact_touch_cost.sh
set -euo pipefail
for round in 1 2 3; do
  for which in OLD NEW; do
    bin="${!which}"
    echo "== round $round $which: bench --scene density --n 1000000 --methods grid --threads 1"
    "$bin" bench --scene density --n 1000000 --methods grid --threads 1 --frames 5 2>&1 | grep -E '^(grid|sap|x) '
    echo "== round $round $which: bench --scene density --n 1000000 --methods grid --threads 2"
    "$bin" bench --scene density --n 1000000 --methods grid --threads 2 --frames 5 2>&1 | grep -E '^(grid|sap|x) '
    echo "== round $round $which: bench --scene density --n 1000000 --methods grid --backend gpu (lavapipe)"
    "$bin" bench --scene density --n 1000000 --methods grid --backend gpu --frames 5 2>&1 | grep -E '^(grid|sap|x) '
  done
done
