"""sphere_pairs against independent oracles: every method, both backends, several scenes.

Equal-radius scenes (uniform, clustered, one point) are checked against SciPy's cKDTree.
cKDTree works in float64 and the library in float32, so those scenes put every coordinate on
a 1/8 grid with radius 0.5: each squared distance near the threshold 1 is then exact in both
precisions and the two must agree pair for pair, exact touchings included. Mixed radii are
checked against the NumPy float32 brute force (conftest.brute_pairs), which applies the
library's touch rule operation by operation, so arbitrary float coordinates are fine there.
"""

import re

import numpy as np
import pytest

import sweepfan

# The methods the spec names (METHODS may hold more, e.g. with the "peers" feature).
SPEC_METHODS = ("brute_force", "origin_distance", "x", "xy", "xyz", "min_axis", "sap", "grid")
SCENES = ("uniform", "clustered", "one_point", "one_point_zero_radius", "mixed_radii")

# Scene sizes per backend; brute force is quadratic, lavapipe is slow.
SIZES = {
    ("cpu", "brute_force"): 3000,
    ("cpu", "other"): 20000,
    ("gpu", "brute_force"): 2000,
    ("gpu", "other"): 8000,
}
ONE_POINT_N = 300
MIXED_N = {"cpu": 4000, "gpu": 2000}

_expected_cache = {}


def scene(scenes, oracle, name, n):
    """(centers, radii, expected pairs) for a named scene of n spheres, oracle results cached."""
    key = (name, n)
    if name == "uniform":
        c, r = scenes.uniform(n), scenes.RADIUS
        make = lambda: oracle.kdtree(c, r)  # noqa: E731
    elif name == "clustered":
        c, r = scenes.clustered(n), scenes.RADIUS
        make = lambda: oracle.kdtree(c, r)  # noqa: E731
    elif name == "one_point":
        c, r = scenes.one_point(ONE_POINT_N), scenes.RADIUS
        make = lambda: oracle.kdtree(c, r)  # noqa: E731
    elif name == "one_point_zero_radius":
        # Coincident points of radius 0 touch: d2 = 0 <= 0.
        c, r = scenes.one_point(ONE_POINT_N), 0.0
        make = lambda: oracle.brute(c, r)  # noqa: E731
    else:
        c, r = scenes.mixed_radii(n)
        make = lambda: oracle.brute(c, r)  # noqa: E731
    if key not in _expected_cache:
        _expected_cache[key] = make()
    return c, r, _expected_cache[key]


def size(backend, method):
    return SIZES[(backend, "brute_force" if method == "brute_force" else "other")]


def test_constants():
    assert sweepfan.BACKENDS == ("auto", "cpu", "gpu")
    assert isinstance(sweepfan.METHODS, tuple)
    assert sweepfan.METHODS[: len(SPEC_METHODS)] == SPEC_METHODS
    assert isinstance(sweepfan.__version__, str) and sweepfan.__version__[0].isdigit()


@pytest.mark.parametrize("name", SCENES)
@pytest.mark.parametrize("method", SPEC_METHODS)
def test_method_matches_oracle(backend, method, name, scenes, oracle):
    n = MIXED_N[backend] if name == "mixed_radii" else size(backend, method)
    c, r, expected = scene(scenes, oracle, name, n)
    got = sweepfan.sphere_pairs(c, r, method=method, backend=backend)
    oracle.assert_equal(got, expected, f"{method}/{backend}/{name}")
    if name.startswith("one_point"):
        assert len(got) == len(c) * (len(c) - 1) // 2


def test_scenes_are_not_trivial(scenes, oracle):
    """The oracle scenes have work in them (guards against a scene change making tests vacuous)."""
    n = SIZES[("cpu", "other")]
    assert len(scene(scenes, oracle, "uniform", n)[2]) > 1000
    assert len(scene(scenes, oracle, "clustered", n)[2]) > n
    c, r, pairs = scene(scenes, oracle, "mixed_radii", MIXED_N["cpu"])
    giants = np.flatnonzero(np.asarray(r) >= 6.0)
    assert len(pairs) > 500
    assert np.isin(pairs, giants).any(), "no giant touches anything"


@pytest.mark.parametrize("method", ["grid", "sap", "xyz", "min_axis", "origin_distance"])
def test_cpu_100k_uniform(method, scenes, oracle):
    c = scenes.uniform(100_000, seed=11)
    got = sweepfan.sphere_pairs(c, scenes.RADIUS, method=method, backend="cpu")
    oracle.assert_equal(got, oracle.kdtree(c, scenes.RADIUS), f"{method}/cpu/100k")


@pytest.mark.gpu
@pytest.mark.parametrize("method", ["grid", "sap"])
def test_gpu_20k_uniform(gpu, method, scenes, oracle):
    c = scenes.uniform(20_000, seed=12)
    got = sweepfan.sphere_pairs(c, scenes.RADIUS, method=method, backend=gpu)
    oracle.assert_equal(got, oracle.kdtree(c, scenes.RADIUS), f"{method}/gpu/20k")


def test_default_method_and_backend(scenes, oracle):
    c = scenes.uniform(5000, seed=4)
    got = sweepfan.sphere_pairs(c, scenes.RADIUS)
    oracle.assert_equal(got, oracle.kdtree(c, scenes.RADIUS), "defaults")


@pytest.mark.parametrize("method", SPEC_METHODS)
def test_touching_is_inclusive(backend, method, oracle):
    # Sphere 0 touches 1 exactly (distance 2 = 1 + 1); 2 is just out of reach of 1.
    c = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [4.0 + 2.0**-10, 0.0, 0.0], [0.0, 3.0, 4.0]])
    r = np.array([1.0, 1.0, 1.0, 4.0])  # sphere 3 reaches 0 exactly: 5 = 1 + 4
    got = sweepfan.sphere_pairs(c, r, method=method, backend=backend)
    oracle.assert_equal(got, [(0, 1), (0, 3)], method)


def test_empty_result_and_single_sphere(backend):
    far = sweepfan.sphere_pairs([[0.0, 0.0, 0.0], [10.0, 0.0, 0.0]], 1.0, backend=backend)
    one = sweepfan.sphere_pairs(np.zeros((1, 3)), 1.0, backend=backend)
    for got in (far, one):
        assert got.shape == (0, 2) and got.dtype == np.uint32


def test_float32_and_float64_agree(backend, scenes, oracle):
    n = 5000
    c64 = scenes.uniform(n, seed=5)  # on the 1/8 grid: exact in float32
    expected = oracle.kdtree(c64, scenes.RADIUS)
    for c in (c64, c64.astype(np.float32)):
        for r in (0.5, np.float32(0.5), np.full(n, 0.5, dtype=c.dtype)):
            got = sweepfan.sphere_pairs(c, r, backend=backend)
            oracle.assert_equal(got, expected, f"{c.dtype}, radii {type(r).__name__}")


def test_float64_is_rounded_to_float32(backend, scenes, oracle):
    """Values not representable in float32 are rounded once; the answer is the float32 scene's."""
    c, r = scenes.mixed_radii(2000, seed=6)
    expected = oracle.brute(c, r)  # the oracle rounds to float32 first, too
    oracle.assert_equal(sweepfan.sphere_pairs(c, r, backend=backend), expected, "float64")
    got32 = sweepfan.sphere_pairs(c.astype(np.float32), r.astype(np.float32), backend=backend)
    oracle.assert_equal(got32, expected, "float32")


def test_integer_centers(backend, oracle):
    rng = np.random.default_rng(7)
    c = rng.integers(-20, 20, size=(3000, 3))
    for cc in (c.astype(np.int32), c.astype(np.int64), (c + 20).astype(np.uint16)):
        got = sweepfan.sphere_pairs(cc, 1, backend=backend)
        oracle.assert_equal(got, oracle.kdtree(cc, 1.0), str(cc.dtype))


def test_sequences_accepted(oracle):
    c = [[0.0, 0.0, 0.0], [1.5, 0.0, 0.0], [5.0, 5.0, 5.0]]
    oracle.assert_equal(sweepfan.sphere_pairs(c, [1.0, 0.5, 1.0]), [(0, 1)], "lists")


def test_non_contiguous_inputs(backend, scenes, oracle):
    n = 4000
    c = scenes.uniform(n, seed=8)
    r = np.full(n, scenes.RADIUS)
    expected = oracle.kdtree(c, scenes.RADIUS)

    every_other = np.zeros((2 * n, 3))
    every_other[::2] = c
    wide = np.zeros((n, 5))  # rows with a stride of 5 values
    wide[:, 1:4] = c
    radii_strided = np.zeros(3 * n)
    radii_strided[::3] = r
    views = {
        "c[::2]": (every_other[::2], r),
        "fortran": (np.asfortranarray(c), r),
        "fortran float32": (np.asfortranarray(c.astype(np.float32)), r),
        "column slice": (wide[:, 1:4], r),
        "radii[::3]": (c, radii_strided[::3]),
    }
    for what, (cc, rr) in views.items():
        assert not (cc.flags.c_contiguous and rr.flags.c_contiguous), what
        got = sweepfan.sphere_pairs(cc, rr, backend=backend)
        oracle.assert_equal(got, expected, what)

    # Negative strides: the reversed scene, whose pairs are those of its copy.
    rev = c[::-1]
    got = sweepfan.sphere_pairs(rev, r[::-1], backend=backend)
    oracle.assert_equal(got, oracle.kdtree(rev.copy(), scenes.RADIUS), "reversed")


@pytest.mark.parametrize("method", ["brute-force", "origin-distance", "min-axis"])
def test_hyphenated_method_names(method, scenes, oracle):
    c = scenes.uniform(2000, seed=9)
    got = sweepfan.sphere_pairs(c, scenes.RADIUS, method=method)
    oracle.assert_equal(got, oracle.kdtree(c, scenes.RADIUS), method)


@pytest.mark.parametrize("method", SPEC_METHODS)
def test_count_only(backend, method, scenes, oracle):
    n = 2000
    c = scenes.clustered(n, seed=10)
    pairs = sweepfan.sphere_pairs(c, scenes.RADIUS, method=method, backend=backend)
    counts = sweepfan.sphere_pairs(
        c, scenes.RADIUS, method=method, backend=backend, count_only=True
    )
    assert isinstance(counts, tuple) and len(counts) == 2
    found, tests = counts
    assert isinstance(found, int) and isinstance(tests, int)
    assert found == len(pairs) == len(oracle.kdtree(c, scenes.RADIUS))
    assert tests >= found
    if method == "brute_force":
        assert tests == n * (n - 1) // 2


@pytest.mark.parametrize("name", SCENES)
def test_auto_matches_oracle_and_says_what_it_chose(backend, name, scenes, oracle):
    n = MIXED_N[backend] if name == "mixed_radii" else size(backend, "other")
    c, r, expected = scene(scenes, oracle, name, n)
    got = sweepfan.sphere_pairs(c, r, method="auto", backend=backend)
    oracle.assert_equal(got, expected, f"auto/{backend}/{name}")
    method, reason = sweepfan.choose_method(c, r, backend=backend)
    assert method in ("grid", "sap", "x", "brute_force") and reason, (method, reason)


def test_auto_is_listed_and_the_default():
    assert "auto" in sweepfan.METHODS
    rng = np.random.default_rng(3)
    # A sparse uniform scene: the grid, which auto names with its statistics.
    c = rng.uniform(0, 1000, (20_000, 3)).astype(np.float32)
    method, reason = sweepfan.choose_method(c, 0.5)
    assert method == "grid" and "spheres a cell" in reason, (method, reason)
    # Every sphere at one point: one cell holds them all, and the reason says so.
    one_point = sweepfan.choose_method(np.zeros((500, 3), np.float32), 1.0, backend="cpu")
    assert one_point[0] in ("grid", "sap", "x", "brute_force"), one_point
    assert re.search(r"\b(499|500)(\.0+)? ", one_point[1]), one_point
    bp = sweepfan.BroadPhase(backend="cpu")
    assert bp.method == "auto" and bp.choice is None
    bp.step(c, 0.5)
    assert bp.choice == (method, reason)
    assert sweepfan.BroadPhase(method="grid", backend="cpu").choice is None


def test_float32_rows_and_one_radius_read_as_they_lie_or_not(backend, scenes, oracle):
    """The path without an intermediate array (C-ordered float32 rows, one radius) and every
    layout that must not take it give the same pairs; its refusals are the general path's."""
    n = 4000
    c = scenes.uniform(n, seed=9).astype(np.float32)
    expected = oracle.kdtree(c.astype(np.float64), scenes.RADIUS)
    wide = np.zeros((n, 5), dtype=np.float32)
    wide[:, 1:4] = c
    layouts = {
        "c-ordered": c,
        "fortran": np.asfortranarray(c),
        "column slice": wide[:, 1:4],
        "every other row": np.repeat(c, 2, axis=0)[::2],
    }
    for what, cc in layouts.items():
        for radius in (scenes.RADIUS, np.float64(scenes.RADIUS)):
            got = sweepfan.sphere_pairs(cc, radius, backend=backend)
            oracle.assert_equal(got, expected, f"{what}, radius {type(radius).__name__}")
    with pytest.raises(ValueError, match="radii"):
        sweepfan.sphere_pairs(c, True, backend=backend)
    bad = c.copy()
    bad[7, 1] = np.nan
    with pytest.raises(ValueError) as as_float32:
        sweepfan.sphere_pairs(bad, scenes.RADIUS, backend=backend)
    with pytest.raises(ValueError) as as_float64:
        sweepfan.sphere_pairs(bad.astype(np.float64), scenes.RADIUS, backend=backend)
    assert str(as_float32.value) == str(as_float64.value)
    assert "row 7" in str(as_float32.value)


def lattice(side, shift):
    """side^3 centres on the integer lattice, moved by `shift` (exact in float32 and float64)."""
    g = np.arange(side, dtype=np.float64)
    c = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    return (c + np.asarray(shift, dtype=np.float64)).astype(np.float32)


def test_a_freed_large_array_lends_its_memory_to_the_next_call_only(oracle):
    """sphere_pairs finds its pairs into the list of the last large array Python freed (the
    memory stays mapped): arrays still alive keep their pairs, every result equals cKDTree's,
    a small result after a large one is right, and an array may be written by its owner."""
    big = lattice(28, (0, 0, 0))  # radius 1.5: 61 lattice neighbours within 3, 1.2M pairs
    other = lattice(27, (0.5, 0, 0))
    want_big = oracle.kdtree(big, 1.5)
    want_other = oracle.kdtree(other, 1.5)
    assert len(want_big) > 1 << 20 and len(want_other) > 1 << 20
    a = sweepfan.sphere_pairs(big, 1.5, method="grid", backend="cpu")
    b = sweepfan.sphere_pairs(big, 1.5, method="grid", backend="cpu")
    oracle.assert_equal(a, want_big, "first")
    oracle.assert_equal(b, want_big, "second")
    a[:] = 7  # the owner's to write; freed below, its memory is the next call's
    freed = a.__array_interface__["data"][0]
    del a
    c = sweepfan.sphere_pairs(other, 1.5, method="grid", backend="cpu")
    assert c.__array_interface__["data"][0] == freed, "the freed array's memory, reused"
    oracle.assert_equal(c, want_other, "into a freed array's memory")
    oracle.assert_equal(b, want_big, "an array alive meanwhile")
    del c
    small = sweepfan.sphere_pairs(lattice(3, (0, 0, 0)), 1.5, method="grid", backend="cpu")
    oracle.assert_equal(small, oracle.kdtree(lattice(3, (0, 0, 0)), 1.5), "small after large")
    oracle.assert_equal(b, want_big, "still")
