"""Shared oracles, scenes and fixtures for the sweepfan Python tests.

The oracles are independent of sweepfan: SciPy's cKDTree for equal radii and a NumPy
brute force that applies the library's float32 touch rule exactly. The helpers are handed
to the tests through fixtures (``oracle``, ``scenes``) so no test imports this file.

GPU tests are never skipped for a missing adapter: they fail. ``SWEEPFAN_NO_GPU=1`` is the
same explicit opt-out the Rust test suite honours, for a machine known to have no Vulkan.
"""

import os

import numpy as np
import pytest
from scipy.spatial import cKDTree

import sweepfan

NO_GPU = os.environ.get("SWEEPFAN_NO_GPU") == "1"


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a GPU adapter (lavapipe counts)")
    # The GPU tests run on lavapipe by design; test_defaults checks the warning itself.
    config.addinivalue_line("filterwarnings", "ignore::sweepfan.SoftwareAdapterWarning")


# --- pair lists -------------------------------------------------------------------------


def canonical(pairs):
    """Any (K, 2) pair list (or iterable of pairs) as a canonical (K, 2) uint32 array."""
    p = np.asarray(list(pairs) if not isinstance(pairs, np.ndarray) else pairs)
    p = p.reshape(-1, 2).astype(np.int64)
    if len(p) == 0:
        return np.zeros((0, 2), dtype=np.uint32)
    # np.unique over rows sorts them lexicographically.
    return np.unique(np.sort(p, axis=1), axis=0).astype(np.uint32)


def as_set(pairs):
    return {(int(i), int(j)) for i, j in np.asarray(pairs).reshape(-1, 2)}


def check_canonical(got):
    """The shape, dtype and order every pair list of the API must have."""
    assert isinstance(got, np.ndarray), type(got)
    assert got.dtype == np.uint32, got.dtype
    assert got.ndim == 2 and got.shape[1] == 2, got.shape
    if len(got):
        assert np.all(got[:, 0] < got[:, 1]), "a row with i >= j"
        keys = (got[:, 0].astype(np.uint64) << np.uint64(32)) | got[:, 1].astype(np.uint64)
        assert np.all(keys[1:] > keys[:-1]), "rows not sorted or repeated"


def assert_pairs_equal(got, expected, what=""):
    """`got` is canonical and equals `expected`; a mismatch shows a few pairs of each side."""
    check_canonical(got)
    expected = canonical(expected)
    if np.array_equal(got, expected):
        return
    g, e = as_set(got), as_set(expected)
    extra = sorted(g - e)[:5]
    missing = sorted(e - g)[:5]
    pytest.fail(
        f"{what}: {len(got)} pairs, expected {len(expected)}; "
        f"extra {len(g - e)} (e.g. {extra}), missing {len(e - g)} (e.g. {missing})"
    )


# --- oracles ----------------------------------------------------------------------------


def kdtree_pairs(centers, radius):
    """Equal radii: pairs with |c_i - c_j| <= 2 * radius, by cKDTree in float64.

    Only exact when float64 and float32 decide alike: the scenes given to it have
    coordinates on a 1/8 grid (see Scenes.grid_coords), where every squared distance near
    the threshold is exact in both.
    """
    tree = cKDTree(np.asarray(centers, dtype=np.float64))
    return canonical(tree.query_pairs(r=2.0 * float(radius), output_type="ndarray"))


def brute_pairs(centers, radii, block=256):
    """The library's touch rule in float32 over all pairs (in blocks of rows, no loop per pair).

    d = c_i - c_j, d2 = (dx*dx + dy*dy) + dz*dz, s = r_i + r_j, touching iff d2 <= s*s,
    every operation rounded to float32 (NumPy float32 ufuncs, never fused).
    """
    c = np.asarray(centers).astype(np.float32)
    n = len(c)
    r = np.broadcast_to(np.asarray(radii).astype(np.float32), (n,))
    x, y, z = (np.ascontiguousarray(c[:, k]) for k in range(3))

    def hits(a, b):
        dx = x[a:b, None] - x[None, a:]
        dy = y[a:b, None] - y[None, a:]
        dz = z[a:b, None] - z[None, a:]
        d2 = (dx * dx + dy * dy) + dz * dz
        s = r[a:b, None] + r[None, a:]
        return d2 <= s * s

    return _upper_pairs(n, hits, block)


def _upper_pairs(n, block_hits, block=256):
    """All pairs i < j for which `block_hits(a, b)` (rows a..b against columns a..n, a bool
    array) holds, canonical."""
    out = []
    for a in range(0, n, block):
        b = min(a + block, n)
        i, j = np.nonzero(block_hits(a, b))
        keep = j > i  # the block's columns start at row a: j > i is the upper triangle
        out.append(np.stack([i[keep] + a, j[keep] + a], axis=1))
    return canonical(np.concatenate(out) if out else np.zeros((0, 2)))


def _every_axis_pairs(n, dims, axis_hits):
    """All pairs i < j overlapping on every axis k < dims, where `axis_hits(a, b, k)` (rows
    a..b against columns a..n, a bool array) is the overlap on axis k; canonical."""

    def hits(a, b):
        hit = np.ones((b - a, n - a), dtype=bool)
        for k in range(dims):
            hit &= axis_hits(a, b, k)
        return hit

    return _upper_pairs(n, hits)


def aabb_pairs(lo, hi):
    """Closed overlap of axis-aligned boxes [lo, hi] (any dimension), in float32, all pairs."""
    lo = np.asarray(lo, dtype=np.float32)
    hi = np.asarray(hi, dtype=np.float32)

    def axis_hits(a, b, k):
        return (lo[a:b, None, k] <= hi[None, a:, k]) & (lo[None, a:, k] <= hi[a:b, None, k])

    return _every_axis_pairs(len(lo), lo.shape[1], axis_hits)


def box_overlap_pairs(centers, half_extents):
    """Boxes by centre and half-extents: |c_i - c_j| <= h_i + h_j on every axis (float32)."""
    c = np.asarray(centers, dtype=np.float32)
    h = np.asarray(half_extents, dtype=np.float32)

    def axis_hits(a, b, k):
        d = np.abs(c[a:b, None, k] - c[None, a:, k])
        return d <= h[a:b, None, k] + h[None, a:, k]

    return _every_axis_pairs(len(c), c.shape[1], axis_hits)


class Oracle:
    canonical = staticmethod(canonical)
    as_set = staticmethod(as_set)
    check = staticmethod(check_canonical)
    assert_equal = staticmethod(assert_pairs_equal)
    kdtree = staticmethod(kdtree_pairs)
    brute = staticmethod(brute_pairs)
    aabb = staticmethod(aabb_pairs)
    boxes = staticmethod(box_overlap_pairs)


# --- scenes -----------------------------------------------------------------------------


def side_for(n, radius, fraction):
    """Box side for n spheres of `radius` filling `fraction` of its volume."""
    return (n * 4.0 / 3.0 * np.pi * radius**3 / fraction) ** (1.0 / 3.0)


def grid_coords(x):
    """Rounds to multiples of 1/8. With radius 0.5 (threshold d2 <= 1), every squared distance
    that could decide a pair is a small multiple of 1/64, exact in float32 and float64, so
    cKDTree (float64) and the library (float32) must agree exactly, touching pairs included."""
    return np.round(np.asarray(x, dtype=np.float64) * 8.0) / 8.0


class Scenes:
    """Seeded sphere scenes. Equal-radius scenes use radius 0.5 on the 1/8 grid."""

    RADIUS = 0.5

    @staticmethod
    def uniform(n, seed=1, fraction=0.05):
        rng = np.random.default_rng(seed)
        side = side_for(n, Scenes.RADIUS, fraction)
        return grid_coords(rng.uniform(0.0, side, size=(n, 3)))

    @staticmethod
    def clustered(n, seed=2, blobs=4):
        rng = np.random.default_rng(seed)
        side = side_for(n, Scenes.RADIUS, 0.05)
        middles = rng.uniform(0.0, side, size=(blobs, 3))
        which = rng.integers(0, blobs, size=n)
        spread = side / 12.0
        return grid_coords(middles[which] + rng.normal(0.0, spread, size=(n, 3)))

    @staticmethod
    def one_point(n):
        return np.full((n, 3), 3.25)

    @staticmethod
    def mixed_radii(n, seed=3, giants=4):
        """Log-uniform radii over two decades [0.01, 1] plus a few giants (radius 6)."""
        rng = np.random.default_rng(seed)
        radii = 10.0 ** rng.uniform(-2.0, 0.0, size=n)
        radii[rng.choice(n, size=giants, replace=False)] = 6.0
        mean_volume = 4.0 / 3.0 * np.pi * np.mean(radii[radii < 6.0] ** 3)
        side = (n * mean_volume / 0.05) ** (1.0 / 3.0)
        centers = rng.uniform(0.0, side, size=(n, 3))
        return centers, radii

    grid_coords = staticmethod(grid_coords)
    side_for = staticmethod(side_for)


# --- fixtures ---------------------------------------------------------------------------


@pytest.fixture
def oracle():
    return Oracle


@pytest.fixture
def scenes():
    return Scenes


def require_gpu():
    """Fails (does not skip) without an adapter, unless SWEEPFAN_NO_GPU=1 opts out."""
    if NO_GPU:
        pytest.skip("SWEEPFAN_NO_GPU=1: GPU test not run")
    found = sweepfan.adapters()
    assert found, (
        "no GPU adapter: GPU tests fail without one (install Mesa's lavapipe, "
        "mesa-vulkan-drivers, or set SWEEPFAN_NO_GPU=1 on a machine without Vulkan)"
    )


@pytest.fixture
def gpu():
    require_gpu()
    return "gpu"


@pytest.fixture(params=[pytest.param("cpu"), pytest.param("gpu", marks=pytest.mark.gpu)])
def backend(request):
    """Each backend in turn; the GPU one fails without an adapter."""
    if request.param == "gpu":
        require_gpu()
    return request.param


@pytest.fixture
def without_vulkan():
    """Runs Python code in a child process that sees no Vulkan driver (the loader reads its
    variables once per process); returns the finished process, its output as text."""
    import subprocess
    import sys

    def run(code):
        env = dict(os.environ)
        env.pop("SWEEPFAN_EXPECT_ADAPTER", None)
        env["VK_DRIVER_FILES"] = env["VK_ICD_FILENAMES"] = "/nonexistent/no_driver.json"
        env["WGPU_BACKEND"] = "vulkan"
        return subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
        )

    return run
