"""Contacts from Python (docs/design.md §4.8): arrays beside the pairs, values that follow from
the shapes' placement, the caller's pairs in their order, and bad input named."""

import numpy as np
import pytest

import sweepfan


def test_spheres_give_normal_depth_and_point():
    centers = np.array([[0, 0, 0], [1.5, 0, 0], [10, 0, 0]], np.float32)
    c = sweepfan.sphere_contacts(centers, 1.0)
    assert c["pairs"].tolist() == [[0, 1]]
    assert c["normals"].tolist() == [[1, 0, 0]]
    assert c["depths"].tolist() == [0.5]
    assert c["counts"].tolist() == [1]
    assert c["points"].shape == (1, 4, 3) and c["point_depths"].shape == (1, 4)
    assert c["points"][0, 0].tolist() == [0.75, 0, 0]
    # The caller's pairs, in their order: the one apart gets no point and minus its gap.
    c = sweepfan.sphere_contacts(centers, 1.0, pairs=np.array([[1, 0], [1, 2]]))
    assert c["normals"][0].tolist() == [-1, 0, 0]
    assert c["counts"].tolist() == [1, 0]
    assert c["depths"][1] == pytest.approx(-6.5)


def test_a_box_on_a_box_touches_at_four_corners():
    centers = np.array([[0, 0, 0], [0.2, 0.1, 1.4]], np.float32)
    halves = np.array([[1, 1, 1], [0.5, 0.5, 0.5]], np.float32)
    quats = np.array([[1, 0, 0, 0], [1, 0, 0, 0]], np.float32)
    c = sweepfan.obb_contacts(centers, halves, quats)
    assert c["pairs"].tolist() == [[0, 1]]
    np.testing.assert_allclose(c["normals"], [[0, 0, 1]], atol=1e-6)
    np.testing.assert_allclose(c["depths"], [0.1], atol=1e-6)
    assert c["counts"].tolist() == [4]
    corners = sorted(c["points"][0].tolist())
    expected = sorted([0.2 + x * 0.5, 0.1 + y * 0.5, 0.95] for x in (-1, 1) for y in (-1, 1))
    np.testing.assert_allclose(corners, expected, atol=1e-6)


def test_polygons_are_two_dimensional():
    square = [[0, 0], [1, 0], [1, 1], [0, 1]]
    shifted = [[0.8, 0.2], [1.8, 0.2], [1.8, 1.2], [0.8, 1.2]]
    c = sweepfan.polygon_contacts(np.array(square + shifted, np.float32), [0, 4, 8])
    assert c["normals"].shape == (1, 2) and c["points"].shape == (1, 2, 2)
    np.testing.assert_allclose(c["normals"], [[1, 0]], atol=1e-6)
    np.testing.assert_allclose(c["depths"], [0.2], atol=1e-6)
    assert c["counts"].tolist() == [2]
    np.testing.assert_allclose(sorted(c["points"][0].tolist()), [[0.9, 0.2], [0.9, 1.0]], atol=1e-6)


def test_empty_inputs_give_empty_arrays():
    c = sweepfan.sphere_contacts(np.zeros((0, 3), np.float32), 1.0)
    assert c["pairs"].shape == (0, 2) and c["points"].shape == (0, 4, 3)
    c = sweepfan.obb_contacts(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 4)))
    assert c["depths"].shape == (0,)


@pytest.mark.parametrize(
    "pairs, says",
    [
        (np.array([[0, 5]]), "row 0: 5 is not one of the 2 shapes"),
        (np.array([[0, 1], [1, 1]]), "row 1: shape 1 paired with itself"),
        (np.array([[0, -1]]), "row 0: -1 is negative"),
        (np.array([0, 1]), "(K, 2)"),
        (np.array([[0.0, 1.0]]), "not an integer type"),
    ],
)
def test_bad_pairs_are_named(pairs, says):
    centers = np.array([[0, 0, 0], [1, 0, 0]], np.float32)
    with pytest.raises(ValueError, match="pairs") as e:
        sweepfan.sphere_contacts(centers, 1.0, pairs=pairs)
    assert says in str(e.value)


def test_no_pairs_of_any_dtype_are_no_contacts():
    # np.zeros((0, 2)) is float64: no rows, so no value that is not an integer.
    centers = np.array([[0, 0, 0], [1, 0, 0]], np.float32)
    for pairs in [np.zeros((0, 2)), np.zeros((0, 2), np.int32), []]:
        c = sweepfan.sphere_contacts(centers, 1.0, pairs=pairs)
        assert c["pairs"].shape == (0, 2) and c["depths"].shape == (0,)


def test_bad_shapes_are_named_as_the_pair_functions_name_them():
    centers = np.zeros((2, 3), np.float32)
    halves = np.ones((2, 3), np.float32)
    quats = np.array([[1, 0, 0, 0], [2, 0, 0, 0]], np.float32)
    with pytest.raises(ValueError, match="quaternions"):
        sweepfan.obb_contacts(centers, halves, quats)
    with pytest.raises(ValueError, match="radii|radius"):
        sweepfan.sphere_contacts(centers, [1.0, float("nan")])
    dart = np.array([[0, 0], [2, 0], [0.5, 0.5], [0, 2]], np.float32)
    with pytest.raises(ValueError, match="vertices"):
        sweepfan.polygon_contacts(dart, [0, 4])


def test_box_contacts_on_the_gpu_agree_with_the_cpu():
    rng = np.random.default_rng(5)
    n = 3000
    centers = rng.uniform(-20, 20, (n, 3)).astype(np.float32)
    halves = rng.uniform(0.2, 1.5, (n, 3)).astype(np.float32)
    q = rng.normal(size=(n, 4)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    cpu = sweepfan.obb_contacts(centers, halves, q)
    gpu = sweepfan.obb_contacts(centers, halves, q, backend="gpu")
    assert len(cpu["pairs"]) > 500
    np.testing.assert_array_equal(gpu["pairs"], cpu["pairs"])
    extent = (
        np.abs(centers[cpu["pairs"][:, 1]] - centers[cpu["pairs"][:, 0]]).sum(axis=1)
        + halves[cpu["pairs"]].sum(axis=(1, 2))
    )
    assert np.all(np.abs(gpu["depths"] - cpu["depths"]) <= extent / 16384)
    same = np.einsum("ij,ij->i", gpu["normals"], cpu["normals"]) > 1 - 1e-4
    assert same.mean() > 0.99
    assert np.all((gpu["counts"] >= 1) & (gpu["counts"] <= 4))
    # The caller's pairs, reversed, through the GPU kernel: the normals turn round.
    flipped = sweepfan.obb_contacts(
        centers, halves, q, pairs=cpu["pairs"][:, ::-1], backend="gpu"
    )
    assert np.all(np.abs(flipped["depths"] - cpu["depths"]) <= extent / 16384)
    turned = np.einsum("ij,ij->i", flipped["normals"], cpu["normals"]) < -1 + 1e-4
    assert turned.mean() > 0.99


def test_sphere_contacts_on_the_gpu_agree_with_the_cpu():
    rng = np.random.default_rng(6)
    n = 4000
    centers = rng.uniform(-15, 15, (n, 3)).astype(np.float32)
    radii = rng.uniform(0.2, 1.0, n).astype(np.float32)
    cpu = sweepfan.sphere_contacts(centers, radii)
    gpu = sweepfan.sphere_contacts(centers, radii, backend="gpu")
    assert len(cpu["pairs"]) > 500
    # The pairs of the GPU's grid are the CPU's, sorted.
    np.testing.assert_array_equal(gpu["pairs"], cpu["pairs"])
    p = cpu["pairs"]
    extent = np.abs(centers[p]).sum(axis=(1, 2)) + radii[p].sum(axis=1)
    assert np.all(np.abs(gpu["depths"] - cpu["depths"]) <= extent / 16384)
    assert np.all(np.einsum("ij,ij->i", gpu["normals"], cpu["normals"]) > 1 - 1e-5)
    assert np.all(gpu["counts"] == 1)
    gap = np.linalg.norm(gpu["points"][:, 0] - cpu["points"][:, 0], axis=1)
    assert np.all(gap <= extent / 16384)
    # The caller's pairs: one apart gets no point and minus its gap, as on the CPU.
    two = np.array([[0, 0, 0], [3, 0, 0]], np.float32)
    c = sweepfan.sphere_contacts(two, 1.0, pairs=[[0, 1]], backend="gpu")
    assert c["counts"].tolist() == [0] and c["depths"][0] == pytest.approx(-1.0)


def test_polygon_contacts_on_the_gpu_agree_with_the_cpu():
    rng = np.random.default_rng(7)
    n = 1500
    centres = rng.uniform(-12, 12, (n, 2)).astype(np.float32)
    sides = rng.integers(3, 8, n)
    offsets = np.concatenate([[0], np.cumsum(sides)]).astype(np.int64)
    vertices = np.concatenate(
        [
            c
            + rng.uniform(0.3, 1.0)
            * np.stack(
                [np.cos(a := np.sort(rng.uniform(0, 2 * np.pi, k))), np.sin(a)], axis=1
            )
            for c, k in zip(centres, sides)
        ]
    ).astype(np.float32)
    cpu = sweepfan.polygon_contacts(vertices, offsets)
    gpu = sweepfan.polygon_contacts(vertices, offsets, backend="gpu")
    assert len(cpu["pairs"]) > 200
    np.testing.assert_array_equal(gpu["pairs"], cpu["pairs"])
    extent = 4 * np.abs(vertices).sum(axis=1).max()
    assert np.all(np.abs(gpu["depths"] - cpu["depths"]) <= extent / 16384)
    assert np.all((gpu["counts"] >= 1) & (gpu["counts"] <= 2))
    same = np.einsum("ij,ij->i", gpu["normals"], cpu["normals"]) > 1 - 1e-4
    assert same.mean() > 0.95
    # The caller's pairs through the kernel.
    given = sweepfan.polygon_contacts(
        vertices, offsets, pairs=cpu["pairs"], backend="gpu"
    )
    np.testing.assert_allclose(given["depths"], gpu["depths"], atol=extent / 16384)
