"""adapters() and choosing one with adapter=."""

import os

import numpy as np
import pytest

import sweepfan

pytestmark = pytest.mark.gpu

KEYS = {
    "index": int,
    "name": str,
    "device_type": str,
    "backend": str,
    "driver": str,
    "driver_info": str,
    "vendor": int,
    "device": int,
}


def test_adapters_listed(gpu):
    found = sweepfan.adapters()
    assert isinstance(found, list) and found, "no adapter (this machine should have lavapipe)"
    for i, a in enumerate(found):
        assert isinstance(a, dict)
        assert set(a) == set(KEYS), sorted(a)
        for key, kind in KEYS.items():
            assert isinstance(a[key], kind), (key, a[key])
        assert a["index"] == i
        assert a["name"].strip()
    expected = os.environ.get("SWEEPFAN_EXPECT_ADAPTER", "").strip().lower()
    if expected:
        assert any(expected in a["name"].lower() for a in found), found


def small_scene():
    c = np.zeros((20, 3))
    c[:, 0] = np.arange(20)  # 1 apart: with radius 0.5 neighbours touch exactly
    return c


def test_adapter_by_index(gpu, oracle):
    c = small_scene()
    for a in sweepfan.adapters():
        got = sweepfan.sphere_pairs(c, 0.5, backend="gpu", adapter=a["index"])
        oracle.assert_equal(got, [(i, i + 1) for i in range(19)], a["name"])


def test_adapter_by_name(gpu, oracle):
    c = small_scene()
    name = sweepfan.adapters()[0]["name"]
    expected = [(i, i + 1) for i in range(19)]
    for wanted in (name, name.upper(), name[: max(3, len(name) // 2)]):
        got = sweepfan.sphere_pairs(c, 0.5, backend="gpu", adapter=wanted)
        oracle.assert_equal(got, expected, wanted)


def test_adapter_zero_everywhere(gpu, oracle):
    c = small_scene()
    expected = [(i, i + 1) for i in range(19)]
    oracle.assert_equal(
        sweepfan.sphere_pairs(c, 0.5, backend="gpu", adapter=0), expected, "sphere_pairs"
    )
    bp = sweepfan.BroadPhase(backend="gpu", adapter=0, track_events=True)
    oracle.assert_equal(bp.step(c, 0.5), expected, "BroadPhase")
    oracle.assert_equal(bp.found, expected, "found")
    h = np.full((20, 3), 0.5)
    q = np.tile([1.0, 0.0, 0.0, 0.0], (20, 1))
    oracle.assert_equal(
        sweepfan.obb_pairs(c, h, q, backend="gpu", adapter=0), expected, "obb_pairs"
    )
    squares = [[(x, 0.0), (x + 1.0, 0.0), (x + 1.0, 1.0), (x, 1.0)] for x in range(20)]
    vertices = np.array([v for s in squares for v in s])
    offsets = np.arange(0, 81, 4)
    oracle.assert_equal(
        sweepfan.polygon_pairs(vertices, offsets, backend="gpu", adapter=0),
        expected,
        "polygon_pairs",
    )


def test_software_adapter_is_named_as_such(gpu):
    """lavapipe reports itself as a CPU device; a bench must not call its times GPU times."""
    for a in sweepfan.adapters():
        if "llvmpipe" in a["name"].lower():
            assert a["device_type"] == "Cpu", a


NO_DRIVER_CHILD = r"""
import numpy as np
import sweepfan

assert sweepfan.adapters() == [], sweepfan.adapters()
try:
    sweepfan.sphere_pairs(np.zeros((3, 3)), 1.0, backend="gpu")
except RuntimeError as e:
    print("RuntimeError:", e)
else:
    print("no error")
# The CPU needs no driver.
print("cpu pairs:", len(sweepfan.sphere_pairs(np.zeros((3, 3)), 1.0)))
"""


def test_no_driver_is_a_runtime_error(without_vulkan):
    """Without any Vulkan driver: no adapters listed, backend="gpu" raises RuntimeError saying
    what to install, and the CPU still works."""
    run = without_vulkan(NO_DRIVER_CHILD)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "RuntimeError: no GPU adapter" in run.stdout, run.stdout
    assert "Vulkan driver" in run.stdout, run.stdout
    assert "cpu pairs: 3" in run.stdout, run.stdout
