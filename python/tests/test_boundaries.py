"""The boundary between NumPy and the library: memory layouts NumPy can hand over, values that
change in float32, exceptions that must pass through unchanged, and processes that fork."""

import os
import subprocess
import sys

import numpy as np
import pytest

import sweepfan

ROW = 7


def spaced(n=12, step=10.0):
    """n spheres on the x axis, `step` apart: with radius 0.5 none touch."""
    c = np.zeros((n, 3))
    c[:, 0] = np.arange(n) * step
    return c


def test_packed_structured_field_is_read_by_value(backend, oracle):
    # A float64 field after a 4-byte tag: strides of 28 bytes, not a multiple of 8, and the
    # data unaligned. Read in place, the values would be taken from the wrong bytes.
    s = np.zeros(4, dtype=[("tag", "u4"), ("c", "<f8", (3,))])
    s["c"] = [[0, 0, 0], [100, 0, 0], [200, 0, 0], [300, 0, 0]]
    assert not s["c"].flags.aligned
    got = sweepfan.sphere_pairs(s["c"], 0.5, backend=backend)
    oracle.assert_equal(got, [], "packed field, apart")
    s["c"][1] = [0.5, 0, 0]
    oracle.assert_equal(sweepfan.sphere_pairs(s["c"], 0.5, backend=backend), [(0, 1)], "touching")


def test_unaligned_float32_buffer(oracle):
    raw = bytearray(4 * 9 + 1)
    c = np.frombuffer(raw, np.float32, count=9, offset=1).reshape(3, 3)
    assert not c.flags.aligned
    c[1, 0] = 1.0  # spheres 0 and 1 one apart: radius 0.5 touches exactly
    c[2, 0] = 50.0
    oracle.assert_equal(sweepfan.sphere_pairs(c, 0.5), [(0, 1)], "unaligned")


def test_big_endian_floats(oracle):
    c = spaced()
    c[3, 0] = c[2, 0] + 1.0
    for dtype in (">f4", ">f8"):
        got = sweepfan.sphere_pairs(c.astype(dtype), np.full(len(c), 0.5, dtype=dtype))
        oracle.assert_equal(got, [(2, 3)], dtype)


def test_masked_array_with_masked_rows_is_refused():
    c = np.ma.masked_array(spaced(), mask=False)
    c.mask[ROW] = True
    with pytest.raises(ValueError, match=r"^centers: a masked array"):
        sweepfan.sphere_pairs(c, 0.5)
    # No masked entry: read as the plain array.
    assert sweepfan.sphere_pairs(np.ma.masked_array(spaced()), 0.5).shape == (0, 2)


def test_float64_rounding_to_zero_is_an_error():
    c = spaced()
    c[ROW, 1] = 1e-50  # non-zero, but 0 in float32
    with pytest.raises(ValueError, match=rf"^centers: row {ROW}: y = 1e-50 rounds to 0"):
        sweepfan.sphere_pairs(c, 0.5)
    r = np.full(len(c), 0.5)
    r[ROW] = 1e-50
    with pytest.raises(ValueError, match=rf"^radii: row {ROW}: radius = 1e-50 rounds to 0"):
        sweepfan.sphere_pairs(spaced(), r)


def test_the_message_names_the_argument_it_is_about():
    # The half-extent is negative; the centre is also out of range on its own, but the message
    # is about the half-extent.
    with pytest.raises(ValueError, match=r"^half_extents: row 0: half-extent hx is negative"):
        sweepfan.obb_pairs([[1e-35, 0, 0]], [[-1, 1, 1]], [[1, 0, 0, 0]])
    # The reach of centre plus radius is out of range: both arguments together.
    with pytest.raises(ValueError, match=r"^centers and radii: row 0: \|coordinate\| \+ radius"):
        sweepfan.sphere_pairs([[0.0, 1e12, 0.0]], 1e18)


def test_keyboard_interrupt_while_reading_passes_through():
    class Interrupting:
        def __array__(self, dtype=None, copy=None):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sweepfan.sphere_pairs(Interrupting(), 0.5)

    class Failing:
        def __array__(self, dtype=None, copy=None):
            raise TypeError("no array here")

    with pytest.raises(ValueError, match=r"^centers: cannot be read") as info:
        sweepfan.sphere_pairs(Failing(), 0.5)
    assert isinstance(info.value.__cause__, TypeError)


def test_object_arrays_of_numbers(oracle):
    c = spaced().astype(object)
    c[3, 0] = c[2, 0] + 1
    oracle.assert_equal(sweepfan.sphere_pairs(c, 0.5), [(2, 3)], "object array")
    with pytest.raises(ValueError, match=r"^radii: "):
        sweepfan.sphere_pairs(spaced(), 10**400)


def test_offsets_errors_name_offsets():
    v = np.array([[0, 0], [1, 0], [0, 1], [5, 5], [6, 5], [5, 6]], dtype=np.float64)
    with pytest.raises(ValueError, match=r"^offsets: row 2: polygon 1 would have 0 vertices"):
        sweepfan.polygon_pairs(v, [0, 3, 3, 6])
    with pytest.raises(ValueError, match=r"^offsets: row 1: 9223372036854775813 is outside"):
        sweepfan.polygon_pairs(v, np.array([0, 2**63 + 5, 6], dtype=np.uint64))
    with pytest.raises(ValueError, match=r"^offsets: expected P \+ 1 offsets"):
        sweepfan.polygon_pairs(v, [])


def test_method_names_in_any_case(oracle):
    c = spaced()
    c[1, 0] = 1.0
    for name in ("GRID", " Sap ", "Min-Axis"):
        oracle.assert_equal(sweepfan.sphere_pairs(c, 0.5, method=name), [(0, 1)], name)
    if "peer-rstar" not in sweepfan.METHODS:
        with pytest.raises(ValueError, match=r"^method: unknown method 'peer-rstar'"):
            sweepfan.sphere_pairs(c, 0.5, method="peer-rstar")


def test_adapter_must_not_be_a_bool():
    with pytest.raises(ValueError, match=r"^adapter: .*not a bool"):
        sweepfan.sphere_pairs(spaced(), 0.5, backend="gpu", adapter=True)


@pytest.mark.gpu
def test_clear_caches_then_use_again(gpu, oracle):
    c = spaced()
    c[1, 0] = 1.0
    for _ in range(2):
        oracle.assert_equal(sweepfan.sphere_pairs(c, 0.5, backend=gpu), [(0, 1)], "gpu")
        oracle.assert_equal(sweepfan.sphere_pairs(c, 0.5), [(0, 1)], "cpu")
        sweepfan.clear_caches()


def test_repr_is_python_syntax():
    bp = sweepfan.BroadPhase(method="sap", backend="cpu", track_events=True)
    assert repr(bp) == "BroadPhase(method='sap', backend='cpu', track_events=True)"


FORK_CHILD = r"""
import os, sys
import numpy as np
import sweepfan

c = np.random.default_rng(1).uniform(0, 100, (70_000, 3))
sweepfan.sphere_pairs(c, 0.5)          # the parent's worker threads now exist
pid = os.fork()
if pid == 0:
    try:
        sweepfan.sphere_pairs(c, 0.5)
    except RuntimeError as e:
        print("child RuntimeError:", e, flush=True)
        os._exit(0)
    print("child: no error", flush=True)
    os._exit(1)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork: POSIX")
@pytest.mark.parametrize("parent_backend", ["auto", "cpu"])
def test_use_after_fork_is_refused_not_hung(parent_backend):
    # A parent on the CPU only has never looked for adapters: the child's default, "auto",
    # must be refused before it does (listing adapters there could hang).
    child = FORK_CHILD.replace(
        "sweepfan.sphere_pairs(c, 0.5)          #",
        f"sweepfan.sphere_pairs(c, 0.5, backend={parent_backend!r})  #",
    )
    assert child != FORK_CHILD
    run = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "child RuntimeError: sweepfan was used in this process's parent before fork()" in (
        run.stdout
    )


def test_masked_entries_are_refused_in_every_argument():
    # Round 4 (issue 61): a mask is never dropped silently, whichever argument carries it, and
    # float32 centres with one radius (the path that reads the array as it lies) included.
    c = np.ma.masked_array(spaced().astype(np.float32), mask=False)
    c.mask[ROW] = True
    with pytest.raises(ValueError, match=r"^centers: a masked array"):
        sweepfan.sphere_pairs(c, 0.5)
    r = np.ma.masked_array(np.full(12, 0.5), mask=False)
    r.mask[3] = True
    with pytest.raises(ValueError, match=r"^radii: a masked array"):
        sweepfan.sphere_pairs(spaced(), r)
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=np.float32)
    v = np.ma.masked_array(square, mask=False)
    v.mask[1, 0] = True
    with pytest.raises(ValueError, match=r"^vertices: a masked array"):
        sweepfan.polygon_pairs(v, [0, 4], backend="cpu")


def test_an_adapter_with_the_cpu_backend_is_refused():
    with pytest.raises(ValueError, match=r"^adapter: only with backend"):
        sweepfan.sphere_pairs(spaced(), 0.5, backend="cpu", adapter=0)


def test_broadcast_offsets_are_refused_before_any_copy():
    # 2^26 offsets as a broadcast view of one value: refused by their count (one more than the
    # polygons, fewer than the vertices), not after a gigabyte of copies.
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=np.float32)
    offsets = np.broadcast_to(np.array(0, dtype=np.int64), (1 << 26,))
    with pytest.raises(ValueError, match=r"^offsets: 67108864 entries, at most 5 "):
        sweepfan.polygon_pairs(square, offsets, backend="cpu")
