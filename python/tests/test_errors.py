"""Bad input raises ValueError naming the argument (and the first bad row); a missing adapter
raises RuntimeError. Never a crash.

Bad values are put at row 7 so the message must say "row 7"."""

import re
import subprocess
import sys

import numpy as np
import pytest

import sweepfan

N = 10
ROW = 7


def centers():
    return np.arange(3.0 * N).reshape(N, 3) * 3.0


def radii():
    return np.ones(N)


def line():
    """N centres 1 apart along x: with radius 0.5 neighbours touch exactly."""
    c = np.zeros((N, 3))
    c[:, 0] = np.arange(N)
    return c


def with_object(a, row, col, value):
    """`a` as an object array of Python floats, `value` at (row, col)."""
    a = np.array(a, dtype=np.float64).astype(object)
    a[row, col] = value
    return a


def with_value(a, row, col, value):
    a = np.array(a, dtype=np.float64)
    if a.ndim == 1:
        a[row] = value
    else:
        a[row, col] = value
    return a


def raises(exc, pattern, fn, *args, **kwargs):
    """Calls fn and checks the exception type and that the message matches `pattern`."""
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    message = str(info.value)
    assert re.search(pattern, message), f"message {message!r} does not match {pattern!r}"
    return message


# --- sphere_pairs -----------------------------------------------------------------------

BAD_CENTERS = {
    "1-d": (np.zeros(3 * N), r"^centers: "),
    "3-d": (np.zeros((N, 3, 1)), r"^centers: "),
    "scalar": (1.0, r"^centers: "),
    "2 columns": (np.zeros((N, 2)), r"^centers: "),
    "4 columns": (np.zeros((N, 4)), r"^centers: "),
    "complex": (centers().astype(np.complex128), r"^centers: "),
    "bool": (np.ones((N, 3), dtype=bool), r"^centers: "),
    "str": (np.full((N, 3), "1.0"), r"^centers: "),
    "object with a string": (
        with_object(centers(), ROW, 1, "a"),
        r"^centers: row 7: a string is not a number",
    ),
    # NumPy would parse it; a string array is refused, and so is a string among numbers.
    "object with a numeric string": (
        with_object(centers(), ROW, 2, "1.5"),
        r"^centers: row 7: a string is not a number",
    ),
    "object with bytes": (
        with_object(centers(), ROW, 0, b"1.5"),
        r"^centers: row 7: a string is not a number",
    ),
    "ragged": ([[0.0, 0.0, 0.0], [1.0, 1.0]], r"^centers: "),
    "None": (None, r"^centers: None is not a number"),
    "object with None": (
        np.where(np.arange(N)[:, None] == ROW, None, centers()).astype(object),
        r"^centers: row 7: None is not a number",
    ),
    "NaN": (with_value(centers(), ROW, 1, np.nan), r"^centers: row 7: y is NaN"),
    "inf": (with_value(centers(), ROW, 0, np.inf), r"^centers: row 7: x is infinite"),
    "-inf": (with_value(centers(), ROW, 2, -np.inf), r"^centers: row 7: z is infinite"),
    "float32 NaN": (
        with_value(centers(), ROW, 1, np.nan).astype(np.float32),
        r"^centers: row 7: y is NaN",
    ),
    # Finite in float64, infinite once rounded to float32.
    "beyond float32": (with_value(centers(), ROW, 0, 1e300), r"^centers: row 7\b"),
    # The library's own range limits (|coordinate| <= 1e18, nonzero magnitudes >= 1e-30).
    "huge": (with_value(centers(), ROW, 0, 1e30), r"^centers: row 7\b"),
    "tiny": (with_value(centers(), ROW, 0, 1e-35), r"^centers: row 7\b"),
}


@pytest.mark.parametrize("case", sorted(BAD_CENTERS))
def test_bad_centers(case):
    c, pattern = BAD_CENTERS[case]
    raises(ValueError, pattern, sweepfan.sphere_pairs, c, 1.0)


BAD_RADII = {
    "NaN": (with_value(radii(), ROW, 0, np.nan), r"^radii: row 7: radius is NaN"),
    "inf": (with_value(radii(), ROW, 0, np.inf), r"^radii: row 7: radius is infinite"),
    "negative": (
        with_value(radii(), ROW, 0, -1.0),
        r"^radii: row 7: radius is negative \(-1\)",
    ),
    "negative float32": (
        with_value(radii(), ROW, 0, -1.0).astype(np.float32),
        r"^radii: row 7: radius is negative",
    ),
    "scalar negative": (-1.0, r"^radii: .*negative"),
    "scalar NaN": (np.nan, r"^radii: .*NaN"),
    "too short": (np.ones(N - 1), r"^radii: "),
    "too long": (np.ones(N + 1), r"^radii: "),
    "2-d": (np.ones((N, 1)), r"^radii: "),
    "complex": (np.ones(N, dtype=np.complex64), r"^radii: "),
    "bool": (np.ones(N, dtype=bool), r"^radii: "),
    "str": (np.full(N, "1"), r"^radii: "),
    "None": (None, r"^radii: None is not a number"),
    "list with None": ([1.0] * ROW + [None] + [1.0] * (N - ROW - 1), r"^radii: row 7: None is"),
}


@pytest.mark.parametrize("case", sorted(BAD_RADII))
def test_bad_radii(case):
    r, pattern = BAD_RADII[case]
    raises(ValueError, pattern, sweepfan.sphere_pairs, centers(), r)


def test_first_bad_row_is_named():
    c = with_value(with_value(centers(), 9, 0, np.nan), ROW, 2, np.nan)
    raises(ValueError, r"^centers: row 7: z is NaN", sweepfan.sphere_pairs, c, 1.0)


def test_non_contiguous_bad_row_is_named():
    wide = np.zeros((N, 5))
    wide[:, 1:4] = centers()
    wide[ROW, 2] = np.nan  # column y of the view
    raises(ValueError, r"^centers: row 7: y is NaN", sweepfan.sphere_pairs, wide[:, 1:4], 1.0)
    f = np.asfortranarray(with_value(centers(), ROW, 0, np.inf))
    raises(ValueError, r"^centers: row 7: x is infinite", sweepfan.sphere_pairs, f, 1.0)


@pytest.mark.parametrize("method", ["nope", "", "GRID2", "brute force"])
def test_unknown_method(method):
    raises(ValueError, r"^method: ", sweepfan.sphere_pairs, centers(), 1.0, method=method)


@pytest.mark.parametrize("backend", ["tpu", "", "cuda"])
def test_unknown_backend(backend):
    raises(ValueError, r"^backend: ", sweepfan.sphere_pairs, centers(), 1.0, backend=backend)


@pytest.mark.parametrize("adapter", [0, "llvmpipe"])
def test_adapter_only_with_gpu(adapter):
    pattern = r"^adapter: only with backend"
    cpu = dict(adapter=adapter, backend="cpu")
    raises(ValueError, pattern, sweepfan.sphere_pairs, centers(), 1.0, **cpu)
    c, h, q = box_args()
    raises(ValueError, pattern, sweepfan.obb_pairs, c, h, q, **cpu)
    v, o = polygon_args()
    raises(ValueError, pattern, sweepfan.polygon_pairs, v, o, **cpu)
    raises(ValueError, pattern, sweepfan.BroadPhase, backend="cpu", adapter=adapter)


@pytest.mark.parametrize("adapter", [-1, 1.5, ""])
def test_bad_adapter_argument(adapter):
    args = (centers(), 1.0)
    raises(ValueError, r"^adapter: ", sweepfan.sphere_pairs, *args, backend="gpu", adapter=adapter)


def test_options_are_keyword_only():
    with pytest.raises(TypeError):
        sweepfan.sphere_pairs(centers(), 1.0, "grid")
    with pytest.raises(TypeError):
        sweepfan.obb_pairs(*box_args(), "cpu")
    with pytest.raises(TypeError):
        sweepfan.polygon_pairs(*polygon_args(), "cpu")


def test_bad_input_with_count_only():
    c = with_value(centers(), ROW, 1, np.nan)
    raises(ValueError, r"^centers: row 7", sweepfan.sphere_pairs, c, 1.0, count_only=True)


def child_lines(script, *args):
    """The output lines of `script` run in a child Python (an address-space limit set there
    stays there), which must exit 0."""
    run = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout.splitlines()


MEMORY_CHILD = r"""
import resource, sys
import numpy as np
import sweepfan

centers = np.zeros((2_000_000, 3), dtype=np.float32)  # 2M spheres: 512 MB of host plan
with open("/proc/self/status") as f:
    vm = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize:"))
# Address space for what is mapped now plus 128 MB: the library must refuse, not abort.
resource.setrlimit(resource.RLIMIT_AS, (vm + (128 << 20), resource.RLIM_INFINITY))
try:
    sweepfan.sphere_pairs(centers, 1.0)
except MemoryError as e:
    print("MemoryError:", e)
    sys.exit(0)
print("no MemoryError")
sys.exit(1)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
def test_memory_error_names_the_limit():
    """A scene whose plan does not fit the address-space limit: MemoryError with advice."""
    out = "\n".join(child_lines(MEMORY_CHILD))
    assert "MemoryError:" in out
    assert "2000000 objects" in out and "fit" in out, out


TIGHT_PAIRS_CHILD = r"""
import resource, sys
import numpy as np
import sweepfan

def vm():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize:"))

method = sys.argv[1]
sweepfan.sphere_pairs(np.zeros((10, 3), np.float32), 1.0, backend="cpu", method=method)
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
for room in (8, 12, 16, 20):
    # 2,000 spheres at one point: 1,999,000 pairs, 16 MB, against a few MB of room.
    resource.setrlimit(resource.RLIMIT_AS, (vm() + (room << 20), hard))
    try:
        sweepfan.sphere_pairs(np.zeros((2000, 3), np.float32), 1.0, backend="cpu", method=method)
        print(room, "ok")
    except MemoryError:
        print(room, "MemoryError")
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
@pytest.mark.parametrize("method", ["grid", "brute_force"])
def test_pairs_past_a_tight_address_space_are_refused_not_aborted(method):
    """The pair buffers grow within the budget, and an allocator that refuses what the budget
    allowed is a MemoryError too: with 12 MB of room the grid's buffer growth aborted the
    process."""
    lines = child_lines(TIGHT_PAIRS_CHILD, method)
    assert len(lines) == 4, lines
    # 16 MB of pairs against 8 MB of room cannot be stored: refused, whichever check refuses.
    assert lines[0] == "8 MemoryError", lines


GPU_MEMORY_CHILD = r"""
import resource, sys
import numpy as np
import sweepfan

def vm():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize:"))

def cpu_pairs(c):
    return {tuple(p) for p in sweepfan.sphere_pairs(c, 0.3, backend="cpu").tolist()}

method = sys.argv[1]
rng = np.random.default_rng(0)
c = rng.uniform(0, 3, (100, 3)).astype(np.float32)
bp = sweepfan.BroadPhase(method=method, backend="gpu", track_events=True)
bp.step(c, 0.3)
before = cpu_pairs(c)
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
# lavapipe's device memory is the process's: 10 MB of room runs the device out of memory.
resource.setrlimit(resource.RLIMIT_AS, (vm() + (10 << 20), hard))
try:
    bp.step(np.zeros((4000, 3), np.float32), 1.0)
    print("big step ran")
except MemoryError:
    print("big step MemoryError")
resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
for k in range(3):
    c = c + rng.normal(0, 0.1, c.shape).astype(np.float32)
    got = {tuple(p) for p in bp.step(c, 0.3).tolist()}
    now = cpu_pairs(c)
    found = {tuple(p) for p in bp.found.tolist()}
    lost = {tuple(p) for p in bp.lost.tolist()}
    print(k, got == now, found == now - before, lost == before - now)
    before = now
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
@pytest.mark.parametrize("method", ["grid", "sap", "brute_force"])
def test_a_device_out_of_memory_leaves_the_broad_phase_usable(method, gpu):
    """A GPU step that runs the device out of memory raises MemoryError and changes nothing:
    the next steps, with the memory back, find the pairs and the events against the last
    whole frame (a buffer the device could not make was kept, and every later step failed on
    it)."""
    lines = child_lines(GPU_MEMORY_CHILD, method)
    assert lines[0] == "big step MemoryError", lines
    assert lines[1:] == [f"{k} True True True" for k in range(3)], lines


COPY_CHILD = r"""
import resource, sys
import numpy as np
import sweepfan

with open("/proc/self/status") as f:
    vm = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (vm + (256 << 20), resource.RLIM_INFINITY))
square = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=np.float32)
# Views of a few bytes standing for gigabytes once copied: 400M offsets, 100M integer centres.
cases = [
    ("offsets", lambda: sweepfan.polygon_pairs(
        square, np.broadcast_to(np.int64(0), (400_000_000,)), backend="cpu")),
    ("centers", lambda: sweepfan.sphere_pairs(
        np.broadcast_to(np.int32(0), (100_000_000, 3)), 1.0, backend="cpu")),
]
for arg, call in cases:
    try:
        call()
        print(arg, "no error")
    except (MemoryError, ValueError) as e:
        print(arg, type(e).__name__ + ":", e)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
def test_cheap_views_of_costly_copies_are_refused_before_the_copy():
    """A broadcast view claims no memory, its copy all of it: every argument is checked against
    the memory before it is copied (issue 39), naming the argument, never an abort. Offsets are
    refused sooner still, by their count against the vertices (issue 61)."""
    lines = child_lines(COPY_CHILD)
    assert len(lines) == 2, lines
    offsets, centers = lines
    assert offsets.startswith("offsets ValueError: offsets: 400000000 entries, at most 5"), offsets
    assert centers.startswith("centers MemoryError:"), centers
    assert "a copy of the" in centers and "values of centers" in centers, centers


# --- BroadPhase ---------------------------------------------------------------------------


def test_broad_phase_bad_arguments():
    raises(ValueError, r"^method: ", sweepfan.BroadPhase, method="nope", backend="cpu")
    raises(ValueError, r"^backend: ", sweepfan.BroadPhase, backend="tpu")


def test_broad_phase_bad_step_keeps_state(oracle):
    bp = sweepfan.BroadPhase(backend="cpu", track_events=True)
    c = line()
    first = bp.step(c, 0.5)
    assert len(first) == N - 1
    raises(ValueError, r"^centers: row 7: y is NaN", bp.step, with_value(c, ROW, 1, np.nan), 0.5)
    r = with_value(np.full(N, 0.5), ROW, 0, -2.0)
    raises(ValueError, r"^radii: row 7: radius is negative", bp.step, c, r)
    assert bp.frames == 1
    # A refused step leaves no events (as one failing inside the library, and as the Rust
    # frame's update_into); the tracker keeps the last good step.
    assert len(bp.found) == 0 and len(bp.lost) == 0
    # The next good step compares with the last good one.
    oracle.assert_equal(bp.step(c, 0.5), first, "second step")
    assert len(bp.found) == 0 and len(bp.lost) == 0


# --- obb_pairs ------------------------------------------------------------------------------


def box_args():
    return centers(), np.ones((N, 3)), np.tile([1.0, 0.0, 0.0, 0.0], (N, 1))


def bad_box_case(which, value):
    c, h, q = box_args()
    if which == "centers":
        c = value
    elif which == "half_extents":
        h = value
    else:
        q = value
    return c, h, q


_, _H, _Q = box_args()
BAD_BOXES = {
    "centers 2 columns": ("centers", np.zeros((N, 2)), r"^centers: "),
    "centers NaN": (
        "centers",
        with_value(centers(), ROW, 1, np.nan),
        r"^centers: row 7: y is NaN",
    ),
    "half_extents too short": ("half_extents", np.ones((N - 1, 3)), r"^half_extents: "),
    "half_extents 1-d": ("half_extents", np.ones(N), r"^half_extents: "),
    "half_extents complex": ("half_extents", _H.astype(np.complex128), r"^half_extents: "),
    "half_extents NaN": ("half_extents", with_value(_H, ROW, 2, np.nan), r"^half_extents: row 7\b"),
    "half_extents inf": ("half_extents", with_value(_H, ROW, 0, np.inf), r"^half_extents: row 7\b"),
    "half_extents negative": (
        "half_extents",
        with_value(_H, ROW, 1, -1.0),
        r"^half_extents: row 7\b",
    ),
    "quaternions too long": ("quaternions", np.tile(_Q[0], (N + 1, 1)), r"^quaternions: "),
    "quaternions 3 columns": ("quaternions", np.zeros((N, 3)), r"^quaternions: "),
    "quaternions bool": ("quaternions", _Q.astype(bool), r"^quaternions: "),
    "quaternions NaN": ("quaternions", with_value(_Q, ROW, 0, np.nan), r"^quaternions: row 7\b"),
    "quaternions not unit": ("quaternions", with_value(_Q, ROW, 0, 2.0), r"^quaternions: row 7\b"),
    "quaternions zero": ("quaternions", with_value(_Q, ROW, 0, 0.0), r"^quaternions: row 7\b"),
}


@pytest.mark.parametrize("case", sorted(BAD_BOXES))
def test_bad_boxes(case):
    which, value, pattern = BAD_BOXES[case]
    raises(ValueError, pattern, sweepfan.obb_pairs, *bad_box_case(which, value))


def test_bad_box_backend():
    raises(ValueError, r"^backend: ", sweepfan.obb_pairs, *box_args(), backend="tpu")


def test_quaternion_norm_tolerance():
    c, h, q = box_args()
    q = q.copy()
    q[ROW, 0] = 1.0 + 5e-4  # within 1e-3 of unit norm: accepted
    assert sweepfan.obb_pairs(c, h, q).shape[1] == 2
    q[ROW, 0] = 1.0 + 5e-3
    raises(ValueError, r"^quaternions: row 7\b", sweepfan.obb_pairs, c, h, q)


# --- polygon_pairs --------------------------------------------------------------------------


def squares(n=N):
    """n unit squares in a row, 4 vertices each."""
    out = []
    for i in range(n):
        x = 3.0 * i
        out.append([(x, 0.0), (x + 1.0, 0.0), (x + 1.0, 1.0), (x, 1.0)])
    return out


def polygon_args(polys=None):
    polys = squares() if polys is None else polys
    vertices = np.array([v for p in polys for v in p], dtype=np.float64)
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in polys])]).astype(np.int64)
    return vertices, offsets


def test_polygon_args_are_good():
    v, o = polygon_args()
    assert sweepfan.polygon_pairs(v, o).shape == (0, 2)


def bad_offsets(row, value):
    v, o = polygon_args()
    o = o.copy()
    o[row] = value
    return v, o


_V, _O = polygon_args()
BAD_POLYGONS = {
    "vertices 3 columns": ((np.zeros((len(_V), 3)), _O), r"^vertices: "),
    "vertices 1-d": ((_V.ravel(), _O), r"^vertices: "),
    "vertices bool": ((_V.astype(bool), _O), r"^vertices: "),
    "vertices str": ((_V.astype(str), _O), r"^vertices: "),
    "vertices NaN": ((with_value(_V, 29, 1, np.nan), _O), r"^vertices: row 29: y is NaN"),
    "vertices inf": ((with_value(_V, 29, 0, np.inf), _O), r"^vertices: row 29: x is infinite"),
    "offsets first not 0": (bad_offsets(0, 1), r"^offsets: row 0\b"),
    "offsets last not M": (bad_offsets(N, 4 * N - 1), r"^offsets: row 10\b"),
    "offsets decrease": (bad_offsets(ROW, 20), r"^offsets: row 7\b"),
    "offsets negative": (bad_offsets(0, -1), r"^offsets: row 0\b"),
    "offsets float": ((_V, _O.astype(np.float64)), r"^offsets: "),
    "offsets 2-d": ((_V, _O.reshape(-1, 1)), r"^offsets: "),
    "offsets bool": ((_V, np.ones(N + 1, dtype=bool)), r"^offsets: "),
    "offsets too few": ((_V, np.array([0])), r"^offsets: "),
}


@pytest.mark.parametrize("case", sorted(BAD_POLYGONS))
def test_bad_polygons(case):
    (v, o), pattern = BAD_POLYGONS[case]
    raises(ValueError, pattern, sweepfan.polygon_pairs, v, o)


# Polygon 7 is bad; the message names the argument and polygon (or row) 7.
POLYGON_7 = r"^(vertices|offsets): .*\b(polygon|row) 7\b"


def with_polygon_7(p):
    polys = squares()
    polys[ROW] = p
    return polygon_args(polys)


@pytest.mark.parametrize(
    "polygon",
    [
        [(21.0, 0.0), (22.0, 0.0)],  # two vertices
        [(21.0, 0.0), (22.0, 0.0), (22.0, 1.0), (21.6, 0.5), (21.0, 1.0)],  # not convex
        [(21.0, 0.0), (22.0, 0.0), (23.0, 0.0)],  # collinear: no area
        [(21.0, 0.0), (22.0, 1.0), (22.0, 0.0), (21.0, 1.0)],  # self-intersecting (a bow tie)
    ],
    ids=["two vertices", "not convex", "collinear", "bow tie"],
)
def test_bad_polygon_named(polygon):
    raises(ValueError, POLYGON_7, sweepfan.polygon_pairs, *with_polygon_7(polygon))


def test_polygon_with_no_vertices():
    v, o = polygon_args()
    o = np.insert(o, ROW + 1, o[ROW])  # polygon 7 is empty
    raises(ValueError, POLYGON_7, sweepfan.polygon_pairs, v, o)


def test_bad_polygon_backend():
    raises(ValueError, r"^backend: ", sweepfan.polygon_pairs, *polygon_args(), backend="tpu")


# --- missing adapters ---------------------------------------------------------------------


@pytest.mark.parametrize("adapter", ["no-such-adapter", 999])
def test_missing_adapter_is_runtime_error(adapter):
    named = re.escape(str(adapter))  # the message names the adapter asked for
    gpu = {"backend": "gpu", "adapter": adapter}
    raises(RuntimeError, named, sweepfan.sphere_pairs, centers(), 1.0, **gpu)
    raises(RuntimeError, named, sweepfan.BroadPhase, **gpu)
    raises(RuntimeError, named, sweepfan.obb_pairs, *box_args(), **gpu)
    raises(RuntimeError, named, sweepfan.polygon_pairs, *polygon_args(), **gpu)


def test_library_still_works_after_errors(oracle):
    for case in sorted(BAD_CENTERS):
        with pytest.raises(ValueError):
            sweepfan.sphere_pairs(BAD_CENTERS[case][0], 1.0)
    c = line()
    oracle.assert_equal(sweepfan.sphere_pairs(c, 0.5), oracle.brute(c, 0.5), "after errors")


def test_messages_show_control_characters_escaped_and_huge_indices_as_out_of_range():
    """A method or adapter name with control characters is quoted escaped (a raw ESC would
    drive the terminal), and an adapter index past 64 bits is out of range, not of the wrong
    type (issue 39)."""
    with pytest.raises(ValueError) as e:
        sweepfan.sphere_pairs(centers(), 1.0, method="\x1b[2J\nx", backend="cpu")
    assert "\x1b" not in str(e.value) and "\n" not in str(e.value), repr(str(e.value))
    with pytest.raises(ValueError, match=r"^adapter: index 1180591620717411303424 is out of range"):
        sweepfan.sphere_pairs(centers(), 1.0, backend="gpu", adapter=2**70)
