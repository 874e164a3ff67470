"""python/bench.py runs and checks itself (it is not part of the package: run as a script)."""

import os
import subprocess
import sys


def test_the_benchmark_runs_its_dense_case_and_checks_it():
    """python/bench.py, as the README runs it, at a small size of the dense case: it checks its
    pairs against cKDTree's and prints the count_only column and the sorted/count ratio."""
    bench = os.path.join(os.path.dirname(__file__), "..", "bench.py")
    done = subprocess.run(
        [sys.executable, bench, "--no-gpu", "--sizes", "3000", "--fraction", "10", "--reps", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    head = done.stdout.splitlines()[1]
    assert "sf count" in head and "sorted/count" in head, done.stdout
    row = done.stdout.splitlines()[3].split()
    assert row[0] == "3000" and row[-1] == "yes", done.stdout
    # About 42 pairs an object at this density (a few fewer near the walls).
    assert 30 * 3000 < int(row[1]) < 45 * 3000, done.stdout
