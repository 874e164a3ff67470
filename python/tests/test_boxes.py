"""BoxBroadPhase: boxes by the caller's ids, pairs and events by id, against brute force."""

import numpy as np
import pytest

import sweepfan


def brute_force(ids, lo, hi):
    """Every touching pair by id (closed boxes), as a set of (a, b) with a < b."""
    touch = np.all((lo[:, None, :] <= hi[None, :, :]) & (lo[None, :, :] <= hi[:, None, :]), axis=2)
    i, j = np.nonzero(np.triu(touch, k=1))
    a, b = ids[i], ids[j]
    return set(zip(np.minimum(a, b).tolist(), np.maximum(a, b).tolist()))


def as_set(pairs):
    assert pairs.dtype == np.uint64 and pairs.ndim == 2 and pairs.shape[1] == 2
    rows = [tuple(r) for r in pairs.tolist()]
    assert rows == sorted(rows), "rows not sorted"
    assert all(a < b for a, b in rows)
    return set(rows)


def test_pairs_and_events_by_id_over_frames(backend):
    rng = np.random.default_rng(3)
    n = 800
    # Ids far from positions: random over all of u64.
    ids = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    assert len(set(ids.tolist())) == n
    # On the 1/4 grid, so that many boxes touch exactly.
    lo = np.round(rng.uniform(0.0, 12.0, size=(n, 3)) * 4.0) / 4.0
    hi = lo + np.round(rng.uniform(0.0, 1.5, size=(n, 3)) * 4.0) / 4.0
    bp = sweepfan.BoxBroadPhase(backend=backend)
    assert bp.backend == backend and len(bp) == 0
    bp.set(ids, lo.astype(np.float32), hi)
    held = {int(i): (l, h) for i, l, h in zip(ids, lo, hi)}
    prev = set()
    for frame in range(3):
        if frame > 0:
            moved = rng.choice(n, size=n // 4, replace=False)
            shift = np.round(rng.normal(0.0, 0.5, size=(len(moved), 3)) * 4.0) / 4.0
            bp.set(ids[moved], lo[moved] + shift, hi[moved] + shift)
            for k, m in enumerate(moved):
                held[int(ids[m])] = (lo[m] + shift[k], hi[m] + shift[k])
            gone = ids[rng.choice(n, size=20, replace=False)]
            removed = bp.remove(gone)
            assert removed == sum(1 for g in gone.tolist() if g in held)
            for g in gone.tolist():
                held.pop(g, None)
        found, lost = bp.update()
        keys = np.array(list(held.keys()), dtype=np.uint64)
        want = brute_force(
            keys, np.array([held[k][0] for k in held]), np.array([held[k][1] for k in held])
        )
        assert len(bp) == len(held)
        assert as_set(bp.pairs) == want, f"frame {frame}"
        assert as_set(found) == want - prev, f"frame {frame}: found"
        assert as_set(lost) == prev - want, f"frame {frame}: lost"
        assert as_set(bp.found) == want - prev and as_set(bp.lost) == prev - want
        assert len(want) > n // 4, "too few pairs for the test to mean much"
        prev = want


def test_bad_boxes_name_the_id_and_change_nothing():
    bp = sweepfan.BoxBroadPhase(backend="cpu")
    bp.set([1, 2], np.zeros((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="object id 9: min.y = 2 is above max.y = 1"):
        bp.set([8, 9], [[0, 0, 0], [0, 2, 0]], [[1, 1, 1], [1, 1, 1]])
    with pytest.raises(ValueError, match="object id 8: given twice"):
        bp.set([8, 8], np.zeros((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="hi.*1 rows for 2 ids"):
        bp.set([3, 4], np.zeros((2, 3)), np.ones((1, 3)))
    with pytest.raises(ValueError, match="row 0: -1 is outside"):
        bp.set(np.array([-1]), np.zeros((1, 3)), np.ones((1, 3)))
    with pytest.raises(ValueError, match="NaN"):
        bp.set([5], [[np.nan, 0, 0]], [[1, 1, 1]])
    assert len(bp) == 2
    found, lost = bp.update()
    assert found.tolist() == [[1, 2]] and lost.shape == (0, 2)
    # A list of Python ints is read as ints: NumPy would make one mixing values past 2^63 with
    # smaller ones float64.
    with pytest.raises(ValueError, match=r"ids: row 1: 18446744073709551616 is outside"):
        bp.set([7, 2**64], np.zeros((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="ids: row 0: -3 is outside"):
        bp.set((-3,), np.zeros((1, 3)), np.ones((1, 3)))
    # NumPy reads True as 1 in a list of ints: a boolean is no id.
    for flag in [True, np.True_]:
        with pytest.raises(ValueError, match="ids: row 0: a boolean"):
            bp.set([flag, 2], np.zeros((2, 3)), np.ones((2, 3)))
    assert len(bp) == 2
    bp.set([2**63, 7], np.zeros((2, 3)), np.ones((2, 3)))
    found, _ = bp.update()
    assert found.tolist() == [[1, 7], [1, 2**63], [2, 7], [2, 2**63], [7, 2**63]]


def test_boxes_in_worlds_pair_only_within_a_world(backend):
    rng = np.random.default_rng(8)
    n = 600
    ids = np.arange(1000, 1000 + n, dtype=np.uint64)
    lo = np.round(rng.uniform(0.0, 8.0, size=(n, 3)) * 4.0) / 4.0
    hi = lo + np.round(rng.uniform(0.0, 1.5, size=(n, 3)) * 4.0) / 4.0
    world = rng.integers(0, 7, n)
    world[::50] = sweepfan.SHARED
    bp = sweepfan.BoxBroadPhase(backend=backend)
    bp.set(ids, lo, hi, world=world)
    found, lost = bp.update()
    shared = world == sweepfan.SHARED
    expected = {
        (a, b)
        for (a, b) in brute_force(ids, lo, hi)
        if world[a - 1000] == world[b - 1000] or shared[a - 1000] or shared[b - 1000]
    }
    assert as_set(found) == expected and len(lost) == 0
    assert len(expected) < len(brute_force(ids, lo, hi)), "worlds cut pairs"
    # Each event's world beside it: its boxes', a shared box's partner's.
    def world_of(a, b):
        wa, wb = world[a - 1000], world[b - 1000]
        return wb if wa == sweepfan.SHARED else wa

    assert bp.found_worlds.dtype == np.uint32
    assert bp.found_worlds.tolist() == [world_of(a, b) for a, b in found.tolist()]
    # Removed boxes' pairs are lost in the worlds they had.
    gone = ids[:100]
    bp.remove(gone)
    _, lost = bp.update()
    assert len(lost) > 0
    assert bp.lost_worlds.tolist() == [world_of(a, b) for a, b in lost.tolist()]
    with pytest.raises(ValueError, match="world"):
        bp.set(ids[:3], lo[:3], hi[:3], world=[0, 1])
