#!/usr/bin/env python3
"""sweepfan against SciPy's cKDTree on equal spheres, one core each.

Scene: N spheres of radius r = 1 at 1% volume fraction (--fraction), uniform in a cube of side
L = (N * 4/3 pi r^3 / fraction)^(1/3), seeded. Pairs touch when |c_i - c_j| <= 2. At 1% an
object has about 0.2 pairs; --fraction 10 is a dense case of about 42 pairs an object (2.4
centres a unit volume, as atoms at a 0.6 nm cutoff).

Timed, best of --reps runs with time.perf_counter:
  * cKDTree: build, then query_pairs(r=2, output_type='ndarray'); both single-threaded.
  * sweepfan.sphere_pairs(method="grid", backend="cpu"): the Rust thread pool is limited to
    one thread by RAYON_NUM_THREADS=1, set before sweepfan is imported (--threads K to change);
    beside it the same call with count_only=True ("sf count") and the ratio of the two
    ("sorted/count": what the sorted (K, 2) array costs over the search itself).
  * sweepfan.sphere_pairs(method="grid", backend="gpu"), after one warm-up call (the first call
    opens the device and compiles the pipelines).

Coordinates are multiples of 2^-10, so every squared distance near the threshold 4 is exact in
float32 (sweepfan) and float64 (cKDTree): both must find the same pairs. Each sweepfan result
is checked against cKDTree's (the count always, the pairs themselves up to N = 10^5).

Times on a software GPU adapter (llvmpipe / lavapipe, SwiftShader: device_type "Cpu") are CPU
times of a Vulkan emulation, not GPU times; the JSON records the adapter's name and type.
RAYON_NUM_THREADS does not limit such a driver's own threads (llvmpipe: LP_NUM_THREADS).

    python bench.py                       # N = 10^4, 10^5, 10^6
    python bench.py --sizes 10000 100000 --reps 5 --json bench.json
    python bench.py --no-gpu --threads 4
    python bench.py --no-gpu --sizes 132000 --fraction 10 --reps 5   # the dense case

Without SciPy (or with --no-ckdtree) the cKDTree columns are null and each GPU result is checked
against sweepfan's CPU grid instead (`verified_against` in each row says which).
"""

import argparse
import json
import os
import platform
import sys
import time


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--sizes", type=int, nargs="+", default=[10**4, 10**5, 10**6], help="sphere counts"
    )
    p.add_argument("--reps", type=int, default=3, help="timed runs per measurement (best kept)")
    p.add_argument("--threads", type=int, default=None, help="RAYON_NUM_THREADS (default 1)")
    p.add_argument("--no-gpu", action="store_true", help="skip the GPU backend")
    p.add_argument("--no-ckdtree", action="store_true", help="skip cKDTree (needs no SciPy)")
    p.add_argument(
        "--adapter",
        default=None,
        help="GPU adapter, index or part of its name (default: a hardware GPU if one is listed)",
    )
    p.add_argument(
        "--fraction", type=float, default=0.01, help="sphere volume / cube volume (default 0.01)"
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", metavar="FILE", help="write the results as JSON")
    args = p.parse_args(argv)
    if args.reps < 1 or (args.threads is not None and args.threads < 1):
        p.error("--reps and --threads must be at least 1")
    if any(n < 2 for n in args.sizes):
        p.error("--sizes must be at least 2")
    if not 0 < args.fraction <= 100:
        p.error("--fraction must be above 0 and at most 100")
    return args


ARGS = parse_args()
# Before sweepfan is imported: the Rust thread pool reads it once, when first used.
THREADS = ARGS.threads if ARGS.threads is not None else 1
os.environ["RAYON_NUM_THREADS"] = str(THREADS)

# The installed package, not the source tree's sweepfan/ beside this script (which lacks the
# compiled half unless built in place; an editable install is found through site-packages).
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]

import numpy as np  # noqa: E402
try:
    import scipy  # noqa: E402
    from scipy.spatial import cKDTree  # noqa: E402
except ImportError:  # a machine without SciPy: sweepfan's GPU checked against its CPU grid
    scipy = cKDTree = None

import sweepfan  # noqa: E402

RADIUS = 1.0
GRID = 2.0**-10  # coordinate resolution (see the docstring)
VERIFY_PAIRS_UP_TO = 10**5


def scene(n, seed, fraction):
    side = (n * 4.0 / 3.0 * np.pi * RADIUS**3 / fraction) ** (1.0 / 3.0)
    rng = np.random.default_rng(seed)
    c = np.round(rng.uniform(0.0, side, size=(n, 3)) / GRID) * GRID
    return c.astype(np.float32)  # exact: side < 2^14, so 24 bits hold every coordinate


def best_of(reps, fn):
    """(best time in seconds, result of the last run)."""
    best, result = float("inf"), None
    for _ in range(reps):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def time_cpu(c, args, row):
    """The CPU grid's sorted pairs (best time, pairs), with its count_only time and the ratio of
    the two recorded in `row`."""
    cpu_s, got = best_of(
        args.reps, lambda: sweepfan.sphere_pairs(c, RADIUS, method="grid", backend="cpu")
    )
    count_s, (pairs, _tests) = best_of(
        args.reps,
        lambda: sweepfan.sphere_pairs(c, RADIUS, method="grid", backend="cpu", count_only=True),
    )
    if pairs != len(got):
        sys.exit(f"N={len(c)}: count_only counted {pairs} pairs, the list holds {len(got)}")
    row.update(
        sweepfan_cpu_s=cpu_s,
        sweepfan_count_s=count_s,
        sorted_over_count=cpu_s / count_s if count_s > 0 else None,
    )
    return cpu_s, got


def time_gpu(c, args, adapter):
    """(best time, pairs) of the GPU grid, after one warm-up call (device, pipelines, buffers)."""

    def call():
        return sweepfan.sphere_pairs(c, RADIUS, method="grid", backend="gpu", adapter=adapter)

    call()
    return best_of(args.reps, call)


def canonical(pairs):
    p = np.sort(np.asarray(pairs, dtype=np.int64).reshape(-1, 2), axis=1)
    return p[np.lexsort((p[:, 1], p[:, 0]))].astype(np.uint32)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def pick_adapter(wanted):
    """(index, info) of the adapter to use, or (None, None) when there is none.

    The index is always passed explicitly, so the recorded name is the adapter that ran."""
    try:
        found = sweepfan.adapters()
    except RuntimeError as e:
        print(f"no GPU: {e}", file=sys.stderr)
        return None, None
    if not found:
        print("no GPU adapter found: GPU column skipped", file=sys.stderr)
        return None, None
    if wanted is None:
        rank = {"DiscreteGpu": 0, "IntegratedGpu": 1, "VirtualGpu": 2, "Cpu": 4}
        info = min(found, key=lambda a: (rank.get(a["device_type"], 3), a["index"]))
    elif wanted.isdigit():
        matches = [a for a in found if a["index"] == int(wanted)]
        info = matches[0] if matches else None
    else:
        matches = [a for a in found if wanted.lower() in a["name"].lower()]
        info = matches[0] if matches else None
    if info is None:
        names = ", ".join(f"{a['index']}: {a['name']}" for a in found)
        sys.exit(f"--adapter {wanted}: no such adapter (available: {names})")
    return info["index"], info


def reference_columns(row, pairs, against, build_s=None, query_s=None, total_s=None):
    """Records the reference's pairs, its name and cKDTree's times (None when it did not run)."""
    row.update(
        pairs=int(len(pairs)),
        ckdtree_build_s=build_s,
        ckdtree_query_s=query_s,
        ckdtree_total_s=total_s,
        verified_against=against,
    )


def run_size(n, args, adapter):
    c = scene(n, args.seed + n, args.fraction)
    c64 = c.astype(np.float64)
    row = {"n": n}

    if cKDTree is None or args.no_ckdtree:
        return run_without_ckdtree(n, c, row, args, adapter)
    build_s = query_s = float("inf")
    expected = None
    for _ in range(args.reps):
        t0 = time.perf_counter()
        tree = cKDTree(c64)
        t1 = time.perf_counter()
        expected = tree.query_pairs(r=2.0 * RADIUS, output_type="ndarray")
        t2 = time.perf_counter()
        build_s, query_s = min(build_s, t1 - t0), min(query_s, t2 - t1)
    total_s = build_s + query_s
    reference_columns(row, expected, "ckdtree", build_s, query_s, total_s)
    check_pairs = n <= VERIFY_PAIRS_UP_TO
    expected = canonical(expected) if check_pairs else None

    verified = True

    def agrees(got, what):
        ok = len(got) == row["pairs"] and (not check_pairs or np.array_equal(got, expected))
        if not ok:
            print(f"N={n} {what}: {len(got)} pairs, cKDTree {row['pairs']}", file=sys.stderr)
        return ok

    cpu_s, got = time_cpu(c, args, row)
    verified &= agrees(got, "cpu")

    gpu_s = None
    if adapter is not None:
        gpu_s, got = time_gpu(c, args, adapter)
        verified &= agrees(got, "gpu")
    row["sweepfan_gpu_s"] = gpu_s

    row["ratio_cpu"] = total_s / cpu_s if cpu_s > 0 else None
    row["ratio_gpu"] = total_s / gpu_s if gpu_s else None
    row["verified"] = bool(verified)
    row["verified_pairs"] = check_pairs  # False: counts compared only
    return row


def run_without_ckdtree(n, c, row, args, adapter):
    """The row without cKDTree: sweepfan's CPU grid timed, and the GPU's pairs checked
    against it (every pair, at every size)."""
    cpu_s, expected = time_cpu(c, args, row)
    reference_columns(row, expected, "sweepfan cpu grid")
    row.update(ratio_cpu=None, ratio_gpu=None)
    gpu_s, verified = None, True
    if adapter is not None:
        gpu_s, got = time_gpu(c, args, adapter)
        verified = bool(np.array_equal(got, expected))
        if not verified:
            print(f"N={n} gpu: {len(got)} pairs, cpu {len(expected)}", file=sys.stderr)
    row.update(sweepfan_gpu_s=gpu_s, verified=verified, verified_pairs=True)
    if gpu_s:
        row["gpu_speedup_over_cpu"] = cpu_s / gpu_s
    return row


def fmt(v, spec):
    width = spec.split(".")[0]
    return format("-", ">" + width) if v is None else format(v, spec)


def print_table(rows):
    head = (
        f"{'N':>9} {'pairs':>9} {'kd build':>9} {'kd query':>9} {'kd total':>9} "
        f"{'sf cpu':>9} {'sf count':>9} {'sorted/count':>12} {'sf gpu':>9} {'x cpu':>7} "
        f"{'x gpu':>7}  verified"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['n']:>9} {r['pairs']:>9} {fmt(r['ckdtree_build_s'], '9.4f')} "
            f"{fmt(r['ckdtree_query_s'], '9.4f')} {fmt(r['ckdtree_total_s'], '9.4f')} "
            f"{fmt(r['sweepfan_cpu_s'], '9.4f')} {fmt(r['sweepfan_count_s'], '9.4f')} "
            f"{fmt(r['sorted_over_count'], '12.2f')} {fmt(r['sweepfan_gpu_s'], '9.4f')} "
            f"{fmt(r['ratio_cpu'], '7.2f')} {fmt(r['ratio_gpu'], '7.2f')}  "
            f"{'yes' if r['verified'] else 'NO'}{'' if r['verified_pairs'] else ' (count)'}"
        )
    print("times in seconds, best of the runs; x = cKDTree total / sweepfan")


def main(args):
    adapter, info = (None, None) if args.no_gpu else pick_adapter(args.adapter)
    machine = {
        "platform": platform.platform(),
        "cpu": cpu_name(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__ if scipy else None,
        "sweepfan": sweepfan.__version__,
        "adapter": info["name"] if info else None,
        "adapter_type": info["device_type"] if info else None,
        "threads": THREADS,
        "reps": args.reps,
        "seed": args.seed,
        "fraction": args.fraction,
    }
    print(
        f"threads {THREADS}; adapter: "
        + (f"{info['name']} ({info['device_type']})" if info else "none")
    )
    if info and info["device_type"] == "Cpu":
        print("note: a software adapter; its times are not GPU times")
    rows = []
    for n in args.sizes:
        rows.append(run_size(n, args, adapter))
        print(f"N={n}: done", file=sys.stderr)
    print_table(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine, "rows": rows}, f, indent=2)
            f.write("\n")
    return 0 if all(r["verified"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(ARGS))
