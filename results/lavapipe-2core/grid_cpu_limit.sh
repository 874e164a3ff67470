#!/bin/bash
# Issue 41 item 4, second session: the CPU grid before (binary of 6be88c7) and after this
# session's work (this commit's binary), both built with `--features peers`, alternating on one
# machine: the density million (grid against broccoli, one and two threads: the issue's
# commands), the paper box at n = 5000 (grid and brute force, one and two threads), and the
# default benchmark (`cargo run --release`: the binary without arguments).
# Usage: OLD=/tmp/sf_old NEW=/tmp/sf_new bash grid_cpu_limit.sh
set -e
show() {
python3 - "$@" <<'PY'
import json,sys
label=sys.argv[1]
rows={r['method']:r for r in json.load(open('/tmp/gcl.json'))['rows']}
g=rows['grid']
line=f"{label}  grid {g['ms_per_frame']:.3f} ms (sort {g['stage_ms']['sort']:.3f}, pairs {g['stage_ms']['pairs']:.3f})  tests {g['tests_per_frame']:.0f}"
for other in ('peer-broccoli','brute_force'):
    if other in rows:
        o=rows[other]
        line+=f"  {other} {o['ms_per_frame']:.2f} ms  ratio {o['ms_per_frame']/g['ms_per_frame']:.1f}x"
print(line, flush=True)
PY
}
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
