"""BroadPhase: pairs per step, and the found / lost events between steps."""

import numpy as np
import pytest

import sweepfan

STEPS = 6
N = {"cpu": 3000, "gpu": 2000}
EVENT_METHODS = ("grid", "sap", "brute_force", "min_axis")


def random_walk(n, seed, steps=STEPS):
    """Seeded random walk on the 1/8 grid (radius 0.5, so cKDTree is an exact oracle)."""
    rng = np.random.default_rng(seed)
    side = (n * 4.0 / 3.0 * np.pi * 0.5**3 / 0.08) ** (1.0 / 3.0)
    c = np.round(rng.uniform(0.0, side, size=(n, 3)) * 8.0) / 8.0
    frames = [c]
    for _ in range(steps - 1):
        c = c + np.round(rng.normal(0.0, 0.3, size=(n, 3)) * 8.0) / 8.0
        frames.append(c)
    return frames


@pytest.mark.parametrize("method", EVENT_METHODS)
def test_found_and_lost_follow_the_pairs(backend, method, oracle):
    n = N[backend]
    bp = sweepfan.BroadPhase(method=method, backend=backend, track_events=True)
    assert bp.method == method and bp.backend == backend
    assert bp.frames == 0
    for empty in (bp.found, bp.lost):
        assert empty.shape == (0, 2) and empty.dtype == np.uint32

    prev = set()
    changes = 0
    for k, c in enumerate(random_walk(n, seed=20)):
        # Alternate radii given as a scalar and as an array.
        radii = 0.5 if k % 2 == 0 else np.full(n, 0.5, dtype=np.float32)
        pairs = bp.step(c, radii)
        oracle.assert_equal(pairs, oracle.kdtree(c, 0.5), f"step {k}")
        now = oracle.as_set(pairs)
        found, lost = bp.found, bp.lost
        oracle.check(found)
        oracle.check(lost)
        oracle.assert_equal(found, sorted(now - prev), f"found, step {k}")
        oracle.assert_equal(lost, sorted(prev - now), f"lost, step {k}")
        if k == 0:
            oracle.assert_equal(found, pairs, "first step: found is every pair")
            assert len(lost) == 0
        else:
            changes += len(found) + len(lost)
        assert bp.frames == k + 1
        assert bp.tests >= len(pairs)
        if method == "brute_force":
            assert bp.tests == n * (n - 1) // 2
        prev = now
    assert changes > 0, "the walk changed no pair: the test would be vacuous"


def test_same_spheres_twice_give_no_events(backend, oracle):
    c = random_walk(1000, seed=21, steps=1)[0]
    bp = sweepfan.BroadPhase(backend=backend, track_events=True)
    first = bp.step(c, 0.5)
    second = bp.step(c, 0.5)
    expected = oracle.kdtree(c, 0.5)
    assert len(expected) > 0
    oracle.assert_equal(first, expected, "first step")
    oracle.assert_equal(second, expected, "same scene")
    assert len(bp.found) == 0 and len(bp.lost) == 0
    assert bp.frames == 2


def test_everything_lost_when_spheres_part(backend, oracle):
    together = np.zeros((50, 3))
    apart = np.arange(150.0).reshape(50, 3) * 10.0
    bp = sweepfan.BroadPhase(backend=backend, track_events=True)
    all_pairs = bp.step(together, 1.0)
    assert len(all_pairs) == 50 * 49 // 2
    assert len(bp.step(apart, 1.0)) == 0
    assert len(bp.found) == 0
    oracle.assert_equal(bp.lost, all_pairs, "lost")


def test_events_need_track_events(backend):
    bp = sweepfan.BroadPhase(backend=backend)
    for _ in range(2):  # before and after a step
        with pytest.raises(RuntimeError):
            bp.found
        with pytest.raises(RuntimeError):
            bp.lost
        bp.step(np.zeros((4, 3)), 1.0)
    assert bp.frames == 2
    assert bp.tests >= 6


def test_pairs_without_events_match(backend, oracle):
    frames = random_walk(1500, seed=22, steps=3)
    bp = sweepfan.BroadPhase(method="grid", backend=backend, track_events=False)
    for k, c in enumerate(frames):
        oracle.assert_equal(bp.step(c, 0.5), oracle.kdtree(c, 0.5), f"step {k}")
    assert bp.frames == 3


def test_defaults():
    bp = sweepfan.BroadPhase(backend="cpu")
    assert bp.method == "auto" and bp.backend == "cpu"


def test_default_backend_is_the_shared_default():
    bp = sweepfan.BroadPhase()
    assert bp.backend == sweepfan.default_backend() and bp.method == "auto"


def test_an_event_tracker_follows_any_pair_list():
    """EventTracker: found and lost pairs between successive lists of oriented boxes' pairs,
    against Python set differences; rows in either order and any row order; bad lists refused,
    nothing changed."""
    rng = np.random.default_rng(5)
    tracker = sweepfan.EventTracker()
    before = set()
    centers = rng.uniform(0, 12, (300, 3)).astype(np.float32)
    half = np.full((300, 3), 0.6, np.float32)
    quats = np.tile(np.array([1, 0, 0, 0], np.float32), (300, 1))
    for frame in range(4):
        pairs = sweepfan.obb_pairs(centers, half, quats, backend="cpu")
        now = {tuple(p) for p in pairs.tolist()}
        # Rows reversed and shuffled: the tracker takes them as pairs.
        given = pairs[rng.permutation(len(pairs))][:, ::-1]
        found, lost = tracker.update(given)
        assert found.dtype == np.uint32 and lost.dtype == np.uint32
        assert [tuple(p) for p in found.tolist()] == sorted(now - before), frame
        assert [tuple(p) for p in lost.tolist()] == sorted(before - now), frame
        assert [tuple(p) for p in tracker.pairs.tolist()] == sorted(now)
        assert tracker.frames == frame + 1
        before = now
        centers += rng.normal(0, 0.3, centers.shape).astype(np.float32)
    assert len(before) > 0
    for bad, says in [
        ([[1, 2], [2, 1]], "rows 0 and 1 are the same pair (1, 2)"),
        ([[0, 5], [1, 2], [3, 4], [1, 2]], "rows 1 and 3 are the same pair (1, 2)"),
        ([[3, 3]], "itself"),
        ([[0, -1]], "negative"),
        (np.zeros((2, 3), np.int64), "(K, 2)"),
        ([[0.5, 1.0]], "integer"),
    ]:
        with pytest.raises(ValueError, match="pairs") as e:
            tracker.update(bad)
        assert says in str(e.value), (bad, str(e.value))
    assert tracker.frames == 4, "a refused list changes nothing"
    found, lost = tracker.update(np.zeros((0, 2), np.uint32))
    assert len(found) == 0 and sorted(map(tuple, lost.tolist())) == sorted(before)
    tracker.reset()
    assert tracker.frames == 0 and len(tracker.pairs) == 0
