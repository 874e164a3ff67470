"""Writes the scene files auto-bench was run on (results/auto/cpu_files.txt): a plane of 200,000
spheres of radius 0.5 (every centre at z = 0, x and y uniform in [0, 1000]) and a shell of
100,000 (centres uniform on a sphere of radius 300). `python3 scene_files.py DIR`."""
import math
import random
import sys

out = sys.argv[1]
rng = random.Random(5)


def write(name, centres):
    with open(f"{out}/{name}.csv", "w") as f:
        f.write("x,y,z,r\n")
        for x, y, z in centres:
            f.write(f"{x:.4f},{y:.4f},{z:.4f},0.5\n")


write("plane_200k", ((rng.uniform(0, 1000), rng.uniform(0, 1000), 0.0) for _ in range(200_000)))


def on_shell():
    v = [rng.gauss(0, 1) for _ in range(3)]
    n = math.sqrt(sum(c * c for c in v))
    return tuple(300 * c / n for c in v)


write("shell_100k", (on_shell() for _ in range(100_000)))
