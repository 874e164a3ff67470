#!/bin/bash
# Issue 41 item 4, second session: the CPU grid before (binary of 6be88c7) and after this
# session's work (this commit's binary), both built with `--features peers`, alternating on one
# machine: the density million (grid against broccoli, one and two threads: the issue's
# commands), the paper box at n = 5000 (grid and brute force, one and two threads), and the
# default benchmark (`cargo run --release`: the binary without arguments).
# Usage: OLD=/tmp/sf_old NEW=/tmp/sf_new bash grid_cpu_limit.sh
set -e
show() { python3 "$(dirname "$0")/bench_rows.py" "$1" /tmp/gcl.json 3; }
for t in 1 2; do for rep in 1 2 3; do for b in old new; do
  bin=$OLD; [ $b = new ] && bin=$NEW
  $bin bench --scene density --n 1000000 --methods grid,peer-broccoli --threads $t --json /tmp/gcl.json >/dev/null 2>&1
  show "density 1M grid,peer-broccoli --threads $t, $b"
done; done; done
for t in 1 2; do for rep in 1 2; do for b in old new; do
  bin=$OLD; [ $b = new ] && bin=$NEW
  $bin bench --scene paper --n 5000 --methods grid,brute_force --frames 300 --threads $t --json /tmp/gcl.json >/dev/null 2>&1
  show "paper 5000 grid,brute_force --threads $t, $b"
done; done; done
for rep in 1 2 3; do for b in old new; do
  bin=$OLD; [ $b = new ] && bin=$NEW
  echo "default benchmark, $b: $($bin 2>&1 | grep -E '^(brute_force|grid) ' | awk '{printf "%s %s ms %s  ", $1, $4, $5}')"
done; done
