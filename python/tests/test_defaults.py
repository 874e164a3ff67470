"""One default story: backend="auto" everywhere (a hardware GPU when one exists, else the CPU),
a warning when a software adapter is asked for by name, empty scenes give empty results, and
the docstrings name what the arguments take."""

import warnings

import numpy as np
import pytest

import sweepfan

HARDWARE = ("DiscreteGpu", "IntegratedGpu", "VirtualGpu")


def expected_default():
    """What backend="auto" must pick, from the adapter list by this test's own rule."""
    return "gpu" if any(a["device_type"] in HARDWARE for a in sweepfan.adapters()) else "cpu"


def test_default_backend_follows_the_adapters():
    assert sweepfan.default_backend() == expected_default()


def test_every_function_and_class_shares_the_default(oracle):
    c = np.random.default_rng(2).uniform(0, 20, (400, 3)).astype(np.float32)
    expected = oracle.brute(c, 0.5)
    oracle.assert_equal(sweepfan.sphere_pairs(c, 0.5), expected, "sphere_pairs()")
    bp = sweepfan.BroadPhase()
    assert bp.backend == sweepfan.default_backend()
    oracle.assert_equal(bp.step(c, 0.5), expected, "BroadPhase().step")
    assert "backend='auto'" not in repr(bp)


def software_adapters():
    return [a for a in sweepfan.adapters() if a["device_type"] == "Cpu"]


@pytest.mark.gpu
def test_a_software_adapter_named_explicitly_warns(gpu, oracle):
    soft = software_adapters()
    assert soft or expected_default() == "gpu", "no adapter at all"
    c = np.random.default_rng(4).uniform(0, 20, (300, 3)).astype(np.float32)
    for a in soft:
        with pytest.warns(sweepfan.SoftwareAdapterWarning, match="software adapter"):
            got = sweepfan.sphere_pairs(c, 0.5, backend="gpu", adapter=a["index"])
        oracle.assert_equal(got, oracle.brute(c, 0.5), a["name"])
        with pytest.warns(sweepfan.SoftwareAdapterWarning):
            sweepfan.BroadPhase(backend="gpu", adapter=a["index"])
    # The default never warns: it does not pick a software adapter.
    with warnings.catch_warnings():
        warnings.simplefilter("error", sweepfan.SoftwareAdapterWarning)
        sweepfan.sphere_pairs(c, 0.5)
        sweepfan.BroadPhase().step(c, 0.5)
        sweepfan.sphere_pairs(c, 0.5, backend="cpu")


@pytest.mark.gpu
def test_auto_with_an_adapter_runs_there(gpu):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sweepfan.SoftwareAdapterWarning)
        assert sweepfan.BroadPhase(adapter=0).backend == "gpu"
        assert sweepfan.BroadPhase(backend="AUTO", adapter=0).backend == "gpu"


NO_DRIVER_CHILD = r"""
import numpy as np, sweepfan
assert sweepfan.adapters() == [], sweepfan.adapters()
print("default:", sweepfan.default_backend())
bp = sweepfan.BroadPhase(track_events=True)
print("class:", bp.backend, len(bp.step(np.zeros((3, 3)), 1.0)))
print("function:", len(sweepfan.sphere_pairs(np.zeros((3, 3)), 1.0)))
"""


def test_the_default_works_without_vulkan(without_vulkan):
    run = without_vulkan(NO_DRIVER_CHILD)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "default: cpu" in run.stdout and "class: cpu 3" in run.stdout, run.stdout
    assert "function: 3" in run.stdout, run.stdout


# --- empty scenes ---------------------------------------------------------------------------


def check_empty(got):
    assert isinstance(got, np.ndarray) and got.shape == (0, 2) and got.dtype == np.uint32, got


def test_empty_spheres_give_no_pairs(backend):
    for c in (np.zeros((0, 3), np.float32), np.zeros((0, 3)), np.zeros((0, 3), np.int32)):
        check_empty(sweepfan.sphere_pairs(c, 1.0, backend=backend))
        check_empty(sweepfan.sphere_pairs(c, np.zeros(0), backend=backend, method="sap"))
        assert sweepfan.sphere_pairs(c, 1.0, backend=backend, count_only=True) == (0, 0)
    method, reason = sweepfan.choose_method(np.zeros((0, 3)), 1.0, backend=backend)
    assert method == "grid" and "empty" in reason


def test_empty_scenes_still_check_their_arguments():
    empty = np.zeros((0, 3))
    with pytest.raises(ValueError, match=r"^radii: radius is negative"):
        sweepfan.sphere_pairs(empty, -1.0)
    with pytest.raises(ValueError, match=r"^radii: expected a scalar or an \(0,\) array"):
        sweepfan.sphere_pairs(empty, np.ones(3))
    with pytest.raises(ValueError, match=r"^centers: "):
        sweepfan.sphere_pairs(np.zeros((0, 2)), 1.0)
    with pytest.raises(ValueError, match=r"^half_extents: 1 rows, but centers has 0"):
        sweepfan.obb_pairs(empty, np.ones((1, 3)), np.zeros((0, 4)))
    with pytest.raises(ValueError, match=r"^offsets: "):
        sweepfan.polygon_pairs(np.zeros((0, 2)), np.array([3]))


def test_empty_boxes_and_polygons_give_no_pairs(backend):
    check_empty(sweepfan.obb_pairs(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 4)),
                                   backend=backend))
    for offsets in (np.array([0]), np.zeros(0, np.int64)):
        check_empty(sweepfan.polygon_pairs(np.zeros((0, 2)), offsets, backend=backend))


def test_an_empty_step_loses_every_pair(backend, oracle):
    c = np.random.default_rng(5).uniform(0, 15, (500, 3)).astype(np.float32)
    expected = oracle.brute(c, 0.5)
    assert len(expected) > 10
    for method in ("auto", "grid", "sap"):
        bp = sweepfan.BroadPhase(method=method, backend=backend, track_events=True)
        oracle.assert_equal(bp.step(c, 0.5), expected, f"{method}: first")
        check_empty(bp.step(np.zeros((0, 3), np.float32), 0.5))
        assert bp.tests == 0 and bp.frames == 2 and bp.choice is None
        check_empty(bp.found)
        oracle.assert_equal(bp.lost, expected, f"{method}: all lost")
        oracle.assert_equal(bp.step(c, 0.5), expected, f"{method}: again")
        oracle.assert_equal(bp.found, expected, f"{method}: all found again")
        check_empty(bp.lost)


# --- docstrings -----------------------------------------------------------------------------


def test_docstrings_name_the_methods_and_backends():
    for f in (sweepfan.sphere_pairs, sweepfan.BroadPhase):
        for name in sweepfan.METHODS:
            assert name in f.__doc__, (f.__name__, name)
    for f in (sweepfan.sphere_pairs, sweepfan.BroadPhase, sweepfan.obb_pairs,
              sweepfan.polygon_pairs, sweepfan.choose_method):
        for name in ("auto", "cpu", "gpu"):
            assert f'"{name}"' in f.__doc__, (f.__name__, name)
    assert "default_backend" in sweepfan.__doc__

