#!/usr/bin/env python3
"""Our figures beside the peer anchor's, measured in the same device call (docs/design.md §9.8).

    scripts/speed_vs_anchor.py OUT_DIR

Reads, in OUT_DIR, what `scripts/gpu-figures.sh` wrote: radix_sort_ours.json (`sweepfan
sort-bench`), frame_grid_<n>.json (`sweepfan bench --scene density --methods grid --count-only`)
and anchor.json (../shared/gpu-kit/cuda_grid_anchor.py: CUB's sort, a CUDA grid frame, the
host-to-device copy). Writes OUT_DIR/speed_vs_anchor.json, one row a (measure, n) both sides
have: ours, the peer's, the ratio ours / peer, which way is better, and the target the ratio
is held to:
  sort_gpairs_per_s         sort-bench's plan row against CUB's sort (higher is better, >= 0.8)
  grid_device_ms            the frame's device stages summed against the CUDA grid's frame
                            (lower is better, <= 0.8)
  grid_end_to_end_ms        the frame as `bench` pays it against the pinned copy of the spheres
                            plus the CUDA grid's frame (lower is better, <= 1.5)
Prints the rows as a table. Exit 1 when a file is missing or holds no comparable row.
"""
import json
import os
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def device_ms(row):
    """The frame's device stages (timestamps, "(gpu)"), summed."""
    return sum(v for k, v in row["stage_ms"].items() if k.endswith("(gpu)"))


def rows_for(out):
    anchor = load(os.path.join(out, "anchor.json"))
    rows = []

    def add(measure, n, ours, peer, better, target):
        ratio = ours / peer if peer > 0 else float("inf")
        meets = ratio >= target if better == "higher" else ratio <= target
        rows.append({"measure": measure, "n": n, "ours": ours, "peer": peer, "ratio": ratio,
                     "better": better, "target": target, "meets": meets})

    cub = {r["n"]: r for r in anchor.get("sort", [])}
    ours_sort = os.path.join(out, "radix_sort_ours.json")
    if os.path.exists(ours_sort):
        for r in load(ours_sort)["rows"]:
            if r["config"] == "plan" and r["n"] in cub and r["verified"]:
                add("sort_gpairs_per_s", r["n"], r["gpairs_per_s"], cub[r["n"]]["gpairs_per_s"],
                    "higher", 0.8)
    copies = {r["n"]: r for r in anchor.get("h2d", [])}
    for g in anchor.get("grid", []):
        path = os.path.join(out, f"frame_grid_{g['n']}.json")
        if not os.path.exists(path):
            continue
        frame = [r for r in load(path)["rows"] if r["method"] == "grid" and r["backend"] == "gpu"]
        if not frame:
            continue
        r = frame[0]
        add("grid_device_ms", g["n"], device_ms(r), g["ms_per_frame"], "lower", 0.8)
        if g["n"] in copies:
            floor = copies[g["n"]]["pinned_ms"] + g["ms_per_frame"]
            add("grid_end_to_end_ms", g["n"], r["ms_per_frame"], floor, "lower", 1.5)
    return anchor.get("device", "?"), rows


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    out = sys.argv[1]
    try:
        device, rows = rows_for(out)
    except (OSError, KeyError, ValueError) as e:
        print(f"speed_vs_anchor: {e}", file=sys.stderr)
        return 1
    if not rows:
        print("speed_vs_anchor: no measure both sides have", file=sys.stderr)
        return 1
    with open(os.path.join(out, "speed_vs_anchor.json"), "w") as f:
        json.dump({"device": device,
                   "note": "ours and the peer's from one device call; ratio = ours / peer",
                   "rows": rows}, f, indent=1)
    print(f"{'measure':<20} {'n':>11} {'ours':>10} {'peer':>10} {'ratio':>7}  target")
    for r in rows:
        sign = ">=" if r["better"] == "higher" else "<="
        mark = "ok" if r["meets"] else "NOT MET"
        print(f"{r['measure']:<20} {r['n']:>11,} {r['ours']:>10.3f} {r['peer']:>10.3f} "
              f"{r['ratio']:>7.2f}  {sign} {r['target']} {mark}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
