#!/bin/bash
# The CPU grid at the density million before (binary of 4224e90, sparse layout) and after the
# dense rows (this commit's binary, built with --features peers), alternating on one machine;
# then the issue's commands (grid against broccoli, one and two threads) and the paper box.
# Usage: OLD=/tmp/sweepfan_old NEW=/tmp/sweepfan_new bash grid_dense_rows.sh
set -e
show() { python3 "$(dirname "$0")/bench_rows.py" "$1" /tmp/gdr.json; }
for t in 1 2; do for rep in 1 2 3; do for b in old new; do
  bin=$OLD; [ $b = new ] && bin=$NEW
  $bin bench --scene density --n 1000000 --methods grid --frames 10 --threads $t --json /tmp/gdr.json >/dev/null 2>&1
  show "density 1M, $t thread(s), $b"
done; done; done
for t in 1 2; do for rep in 1 2; do
  $NEW bench --scene density --n 1000000 --methods grid,peer-broccoli --threads $t --json /tmp/gdr.json >/dev/null 2>&1
  show "issue command: density 1M grid,peer-broccoli --threads $t"
done; done
for t in 1 2; do for rep in 1 2; do
  $NEW bench --scene paper --n 5000 --methods grid,brute_force --frames 300 --threads $t --json /tmp/gdr.json >/dev/null 2>&1
  show "paper 5000 grid,brute_force --threads $t"
done; done
