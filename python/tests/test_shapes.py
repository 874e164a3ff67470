"""obb_pairs and polygon_pairs: axis-aligned scenes against a NumPy oracle, rotated cases with
known answers, and CPU against GPU on random rotated scenes."""

import numpy as np
import pytest

import sweepfan

IDENTITY = (1.0, 0.0, 0.0, 0.0)  # (w, x, y, z)

# Relative size change of the "touching band": a pair on which two backends may differ must
# overlap with both shapes grown by it and not with both shrunk by it (the Rust suite's rule,
# cli/src/run/verify_shapes.rs: rounding, e.g. fused multiply-add on a GPU, decides such pairs).
TOUCH_REL = 1e-5


def z_rotation(angle):
    """Quaternion (w, x, y, z) of a rotation by `angle` about z."""
    return (np.cos(angle / 2), 0.0, 0.0, np.sin(angle / 2))


def random_quaternions(rng, n):
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def assert_only_touching_differ(cpu, gpu, overlaps_resized, oracle):
    """CPU and GPU agree, except on pairs within the touching band (checked one by one)."""
    oracle.check(cpu)
    oracle.check(gpu)
    c, g = oracle.as_set(cpu), oracle.as_set(gpu)
    differ = sorted(c ^ g)
    for i, j in differ:
        grown, shrunk = overlaps_resized(i, j, 1.0), overlaps_resized(i, j, -1.0)
        assert grown and not shrunk, (
            f"pair {(i, j)} differs (cpu: {(i, j) in c}, gpu: {(i, j) in g}) "
            "and is not within the touching band"
        )
    assert len(differ) <= max(2, len(c) // 1000), f"{len(differ)} pairs differ"


# --- oriented boxes ---------------------------------------------------------------------


def lattice_boxes(n, seed, side):
    """Axis-aligned boxes on a 1/4 grid with half-extents multiples of 1/4: many exact
    touchings (faces, edges, corners), every comparison exact in float32."""
    rng = np.random.default_rng(seed)
    centers = rng.integers(0, side * 4, size=(n, 3)) / 4.0
    halves = rng.integers(1, 5, size=(n, 3)) / 4.0
    return centers, halves


def test_axis_aligned_boxes_match_aabb_oracle(backend, oracle):
    centers, halves = lattice_boxes(3000, seed=30, side=28)
    quats = np.tile(IDENTITY, (len(centers), 1))
    got = sweepfan.obb_pairs(centers, halves, quats, backend=backend)
    expected = oracle.boxes(centers, halves)
    assert len(expected) > 1000
    oracle.assert_equal(got, expected, f"obb axis-aligned/{backend}")


def test_touching_faces_edges_and_corners(backend, oracle):
    h = np.ones((5, 3))
    centers = np.array(
        [
            [0.0, 0.0, 0.0],
            [2.0, 0.0, 0.0],  # shares a face with 0
            [2.0, 2.0, 0.0],  # shares an edge with 0, a face with 1
            [-2.0, -2.0, -2.0],  # shares a corner with 0
            [2.0 + 2.0**-10, -2.0, 0.0],  # a face with 1; a hair apart from 0
        ]
    )
    quats = np.tile(IDENTITY, (5, 1))
    got = sweepfan.obb_pairs(centers, h, quats, backend=backend)
    oracle.assert_equal(got, [(0, 1), (0, 2), (0, 3), (1, 2), (1, 4)], "touching")
    oracle.assert_equal(got, oracle.boxes(centers, h), "oracle")


def test_rotated_cube_known_answer(backend):
    h = np.ones((2, 3))
    centers = np.array([[0.0, 0.0, 0.0], [2.2, 0.0, 0.0]])
    aligned = np.array([IDENTITY, IDENTITY])
    turned = np.array([IDENTITY, z_rotation(np.pi / 4)])
    # Axis-aligned, the gap is 0.2; turned 45 degrees, the corner reaches sqrt(2) ~ 1.414 > 1.2.
    assert len(sweepfan.obb_pairs(centers, h, aligned, backend=backend)) == 0
    got = sweepfan.obb_pairs(centers, h, turned, backend=backend)
    assert got.tolist() == [[0, 1]]
    # Farther than 1 + sqrt(2): apart again.
    far = centers + [[0.0, 0.0, 0.0], [0.3, 0.0, 0.0]]
    assert len(sweepfan.obb_pairs(far, h, turned, backend=backend)) == 0


def test_quaternion_order_is_w_first(backend):
    # A long thin box along x, turned 90 degrees about z, points along y.
    centers = np.array([[0.0, 0.0, 0.0], [0.0, 4.0, 0.0]])
    h = np.array([[5.0, 0.5, 0.5], [0.5, 0.5, 0.5]])
    turned = np.array([z_rotation(np.pi / 2), IDENTITY])
    assert sweepfan.obb_pairs(centers, h, turned, backend=backend).tolist() == [[0, 1]]
    aligned = np.array([IDENTITY, IDENTITY])
    assert len(sweepfan.obb_pairs(centers, h, aligned, backend=backend)) == 0


def random_boxes(n, seed):
    rng = np.random.default_rng(seed)
    halves = rng.uniform(0.2, 1.5, size=(n, 3))
    side = (n * np.mean(np.prod(2 * halves, axis=1)) / 0.15) ** (1 / 3)
    centers = rng.uniform(0.0, side, size=(n, 3))
    return centers, halves, random_quaternions(rng, n)


@pytest.mark.gpu
def test_obb_cpu_and_gpu_agree(gpu, oracle):
    centers, halves, quats = random_boxes(2000, seed=31)
    cpu = sweepfan.obb_pairs(centers, halves, quats, backend="cpu")
    got = sweepfan.obb_pairs(centers, halves, quats, backend=gpu)
    assert len(cpu) > 500

    def overlaps_resized(i, j, sign):
        k = [i, j]
        scale = halves[k].max(axis=1).sum() + np.linalg.norm(centers[i] - centers[j])
        h = np.maximum(halves[k] + sign * TOUCH_REL * scale, 0.0)
        return len(sweepfan.obb_pairs(centers[k], h, quats[k])) == 1

    assert_only_touching_differ(cpu, got, overlaps_resized, oracle)


def test_obb_inputs_in_any_layout(oracle):
    centers, halves, quats = random_boxes(1000, seed=32)
    expected = sweepfan.obb_pairs(centers, halves, quats)
    assert len(expected) > 100
    f32 = [a.astype(np.float32) for a in (centers, halves, quats)]
    fortran = [np.asfortranarray(a) for a in (centers, halves, quats)]
    for args in (f32, fortran):
        oracle.assert_equal(sweepfan.obb_pairs(*args), expected, "layout")


# --- convex polygons ----------------------------------------------------------------------


def flatten(polygons):
    """(vertices (M, 2), offsets (P + 1,)) of a list of (k, 2) vertex arrays."""
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in polygons])]).astype(np.int64)
    return np.concatenate(polygons).astype(np.float64), offsets


def rectangle(lo, hi, clockwise=False):
    (x0, y0), (x1, y1) = lo, hi
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    return np.array(corners[::-1] if clockwise else corners)


def test_rectangles_match_aabb_oracle(backend, oracle):
    # Corners on a 1/4 grid: exact in float32, with many exact touchings.
    rng = np.random.default_rng(40)
    n = 3000
    lo = rng.integers(0, 400, size=(n, 2)) / 4.0
    hi = lo + rng.integers(1, 12, size=(n, 2)) / 4.0
    polygons = [rectangle(lo[i], hi[i], clockwise=bool(i % 2)) for i in range(n)]
    vertices, offsets = flatten(polygons)
    got = sweepfan.polygon_pairs(vertices, offsets, backend=backend)
    expected = oracle.aabb(lo, hi)
    assert len(expected) > 1000
    oracle.assert_equal(got, expected, f"rectangles/{backend}")


def test_diamond_and_square_known_answers(backend):
    square = rectangle((-1.0, -1.0), (1.0, 1.0))

    def diamond(cx, cy, r):
        return np.array([(cx + r, cy), (cx, cy + r), (cx - r, cy), (cx, cy - r)])

    cases = [
        # Bounding boxes overlap, the shapes do not: the corner (1, 1) is 2 from (2, 2) in L1.
        (diamond(2.0, 2.0, 1.5), False),
        # The diamond's edge passes through the square's corner (1, 1): touching counts.
        (diamond(2.0, 2.0, 2.0), True),
        # Its left corner (0.9, 0) inside the square.
        (diamond(2.4, 0.0, 1.5), True),
        # Its left corner (1, 0) on the square's right edge.
        (diamond(2.5, 0.0, 1.5), True),
        (diamond(2.5 + 2.0**-10, 0.0, 1.5), False),
    ]
    for shape, touching in cases:
        vertices, offsets = flatten([square, shape])
        got = sweepfan.polygon_pairs(vertices, offsets, backend=backend)
        assert got.tolist() == ([[0, 1]] if touching else []), shape.tolist()


def random_ngons(n, seed):
    """Regular n-gons, 3 to 8 sides, random size, rotation and winding."""
    rng = np.random.default_rng(seed)
    sides = rng.integers(3, 9, size=n)
    sizes = rng.uniform(0.3, 2.0, size=n)
    side = np.sqrt(n * np.mean(sizes**2) * 2.0 / 0.3)
    centers = rng.uniform(0.0, side, size=(n, 2))
    polygons = []
    for i in range(n):
        a = rng.uniform(0, 2 * np.pi) + 2 * np.pi * np.arange(sides[i]) / sides[i]
        p = centers[i] + sizes[i] * np.stack([np.cos(a), np.sin(a)], axis=1)
        polygons.append(p[::-1] if i % 3 == 0 else p)
    return polygons


@pytest.mark.gpu
def test_polygon_cpu_and_gpu_agree(gpu, oracle):
    polygons = random_ngons(2000, seed=41)
    vertices, offsets = flatten(polygons)
    cpu = sweepfan.polygon_pairs(vertices, offsets, backend="cpu")
    got = sweepfan.polygon_pairs(vertices, offsets, backend=gpu)
    assert len(cpu) > 500

    def overlaps_resized(i, j, sign):
        pi, pj = polygons[i], polygons[j]
        mi, mj = pi.mean(axis=0), pj.mean(axis=0)
        scale = (
            np.abs(pi - mi).max() + np.abs(pj - mj).max() + np.linalg.norm(mi - mj)
        )

        def resized(p, m):
            # Move each vertex outward (or inward) from the centre by the band.
            d = p - m
            length = np.linalg.norm(d, axis=1, keepdims=True)
            return m + d * (1.0 + sign * TOUCH_REL * scale / length)

        v, o = flatten([resized(pi, mi), resized(pj, mj)])
        return len(sweepfan.polygon_pairs(v, o)) == 1

    assert_only_touching_differ(cpu, got, overlaps_resized, oracle)


def test_polygons_against_bounding_boxes(oracle):
    """Every overlapping pair of polygons has overlapping bounding boxes (a sanity bound)."""
    polygons = random_ngons(2000, seed=42)
    vertices, offsets = flatten(polygons)
    got = sweepfan.polygon_pairs(vertices, offsets)
    lo = np.array([p.min(axis=0) for p in polygons])
    hi = np.array([p.max(axis=0) for p in polygons])
    boxes = oracle.as_set(oracle.aabb(lo, hi))
    pairs = oracle.as_set(got)
    assert pairs <= boxes
    assert len(pairs) > 0.3 * len(boxes)


def test_polygon_offsets_any_integer_type(oracle):
    polygons = random_ngons(300, seed=43)
    vertices, offsets = flatten(polygons)
    expected = sweepfan.polygon_pairs(vertices, offsets)
    for dtype in (np.int32, np.uint32, np.uint64):
        got = sweepfan.polygon_pairs(vertices.astype(np.float32), offsets.astype(dtype))
        oracle.assert_equal(got, expected, str(np.dtype(dtype)))
