"""One line per `sweepfan bench --json` file: the grid's time and stages, and each peer or brute
force against it. Usage: python3 bench_rows.py LABEL JSON [DIGITS]"""
import json
import sys

label, path = sys.argv[1], sys.argv[2]
digits = int(sys.argv[3]) if len(sys.argv) > 3 else 2
rows = {r['method']: r for r in json.load(open(path))['rows']}
g = rows['grid']
f = lambda v: f"{v:.{digits}f}"
line = (f"{label}  grid {f(g['ms_per_frame'])} ms (sort {f(g['stage_ms']['sort'])}, "
        f"pairs {f(g['stage_ms']['pairs'])})  tests {g['tests_per_frame']:.0f}")
for other in ('peer-broccoli', 'brute_force'):
    if other in rows:
        o = rows[other]
        line += f"  {other} {o['ms_per_frame']:.2f} ms  ratio {o['ms_per_frame'] / g['ms_per_frame']:.1f}x"
print(line, flush=True)
