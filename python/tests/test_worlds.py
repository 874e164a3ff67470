"""world_pairs: many worlds in one call, against a brute force per world written here."""

import numpy as np
import pytest

import sweepfan


def brute_per_world(centers, radii, world):
    """The expected groups {world: sorted pairs}, shared objects in every world."""
    centers = np.asarray(centers, dtype=np.float64)
    radii = np.broadcast_to(np.asarray(radii, dtype=np.float64), (len(centers),))
    world = np.asarray(world, dtype=np.int64)
    shared = sweepfan.SHARED
    groups = {}
    for w in sorted(set(world.tolist())):
        groups[w] = []
    n = len(centers)
    for i in range(n):
        for j in range(i + 1, n):
            wi, wj = world[i], world[j]
            if wi != wj and wi != shared and wj != shared:
                continue
            d = centers[i] - centers[j]
            if d @ d <= (radii[i] + radii[j]) ** 2:
                w = wj if wi == shared else wi
                groups[int(w)].append((i, j))
    return {w: sorted(p) for w, p in groups.items()}


def as_groups(pairs, worlds, offsets):
    return {
        int(w): [tuple(p) for p in pairs[offsets[k] : offsets[k + 1]].tolist()]
        for k, w in enumerate(worlds)
    }


def random_worlds(seed, n, worlds, shared_every):
    """n spheres in a 20-unit cube in `worlds` worlds, every `shared_every`-th one shared:
    (rng, centers, radii, world)."""
    rng = np.random.default_rng(seed)
    centers = rng.uniform(0, 20, (n, 3)).astype(np.float32)
    radii = rng.uniform(0.5, 1.5, n).astype(np.float32)
    world = rng.integers(0, worlds, n)
    world[::shared_every] = sweepfan.SHARED
    return rng, centers, radii, world


def check_against_brute(centers, radii, world, **kw):
    """world_pairs(**kw) groups the brute force's pairs by world, the shared last, and
    count_only counts them; returns the tests count_only reports."""
    pairs, worlds, offsets = sweepfan.world_pairs(centers, radii, world, **kw)
    assert pairs.dtype == np.uint32 and pairs.shape[1] == 2
    assert len(offsets) == len(worlds) + 1
    assert worlds[-1] == sweepfan.SHARED
    assert as_groups(pairs, worlds, offsets) == brute_per_world(centers, radii, world)
    count, tests = sweepfan.world_pairs(centers, radii, world, count_only=True, **kw)
    assert count == len(pairs)
    return tests, count


@pytest.mark.parametrize("method", ["auto", "grid", "sap", "brute_force", "min_axis"])
def test_world_ids_match_a_brute_force_per_world(method):
    _, centers, radii, world = random_worlds(4, 300, 9, 37)
    tests, count = check_against_brute(centers, radii, world, method=method)
    assert tests >= count


def test_a_batch_axis_is_b_worlds_of_n():
    rng = np.random.default_rng(5)
    b, n = 12, 40
    centers = rng.uniform(0, 10, (b, n, 3)).astype(np.float32)
    radii = rng.uniform(0.3, 1.0, (b, n)).astype(np.float32)
    pairs, worlds, offsets = sweepfan.world_pairs(centers, radii)
    assert worlds.tolist() == list(range(b))
    flat_world = np.repeat(np.arange(b), n)
    expected = brute_per_world(centers.reshape(-1, 3), radii.reshape(-1), flat_world)
    assert as_groups(pairs, worlds, offsets) == expected
    # Each world alone gives the same pairs, shifted by its first row.
    for k in range(b):
        alone = sweepfan.sphere_pairs(centers[k], radii[k], backend="cpu")
        got = pairs[offsets[k] : offsets[k + 1]] - k * n
        assert np.array_equal(got, alone)
    # A scalar radius and float64 centres too.
    pairs64, _, _ = sweepfan.world_pairs(centers.astype(np.float64), 0.8)
    assert len(pairs64) > 0


def test_bad_world_ids_are_refused_naming_the_argument():
    centers = np.zeros((4, 3), np.float32)
    for bad, words in [
        ([0, 1, 2], "one id per object"),
        ([0, -1, 2, 3], "outside"),
        ([0.0, np.nan, 1.0, 2.0], "integer world ids"),
        ([0, 1, 2, 2**32], "outside"),
        ([0, True, 2, 3], "row 1: a boolean"),
        ([0, 1, np.True_, 3], "row 2: a boolean"),
        (None, "one id per sphere is needed"),
    ]:
        with pytest.raises(ValueError, match="world") as e:
            sweepfan.world_pairs(centers, 1.0, bad)
        assert words in str(e.value)
    # An id past int64's range is named as given (it was clamped to 2^63 - 1), from an array
    # or a plain list of Python ints (NumPy made that list float64: "not integers").
    for big in [2**63, 2**64 - 1, 2**64, 2**200]:
        given = [[0, 1, 2, big], (0, 1, 2, big)]
        if big < 2**64:
            given.append(np.array([0, 1, 2, big], np.uint64))
        for ids in given:
            with pytest.raises(ValueError, match=f"world id {big} outside"):
                sweepfan.world_pairs(centers, 1.0, ids)
            with pytest.raises(ValueError, match=f"world id {big} outside"):
                sweepfan.BoxBroadPhase(backend="cpu").set(
                    [1, 2, 3, 4], np.zeros((4, 3)), np.ones((4, 3)), world=ids
                )
    # Too few ids, none at all among them, is a wrong length, not a wrong type.
    for few in [[], (), np.array([], np.uint32), [0, 1]]:
        with pytest.raises(ValueError, match="one id per object") as e:
            sweepfan.world_pairs(centers, 1.0, few)
        assert "world" in str(e.value)
    with pytest.raises(ValueError, match="centers"):
        sweepfan.world_pairs([[[0, 0, 0]], [[1, 1, 1], [2, 2, 2]]], 1.0)
    with pytest.raises(ValueError, match="not both"):
        sweepfan.world_pairs(np.zeros((2, 3, 3)), 1.0, [0] * 6)
    with pytest.raises(ValueError, match="radii"):
        sweepfan.world_pairs(np.zeros((2, 3, 3)), np.ones((3, 2)))
    # Centers of neither shape are the centers' fault, with or without world=.
    for bad in [np.zeros((2, 1, 4, 3)), np.zeros(3), np.zeros((4, 2))]:
        for world in [None, [0, 0, 0, 0]]:
            with pytest.raises(ValueError, match="^centers: ") as e:
                sweepfan.world_pairs(bad, 0.5, world)
            assert "(B, N, 3)" in str(e.value)


def test_batch_radii_per_object_per_world_or_flat():
    rng = np.random.default_rng(8)
    b, n = 5, 30
    centers = rng.uniform(0, 6, (b, n, 3)).astype(np.float32)
    one_world = rng.uniform(0.2, 0.9, n).astype(np.float32)
    flat_world = np.repeat(np.arange(b), n)
    expected = brute_per_world(centers.reshape(-1, 3), np.tile(one_world, b), flat_world)
    # (N,): the same radii in every world; (B, N) and (B * N,) say the same thing.
    for radii in [one_world, np.tile(one_world, (b, 1)), np.tile(one_world, b)]:
        pairs, worlds, offsets = sweepfan.world_pairs(centers, radii)
        assert as_groups(pairs, worlds, offsets) == expected
    with pytest.raises(ValueError, match="radii") as e:
        sweepfan.world_pairs(centers, np.ones(n + 1))
    assert f"({n},)" in str(e.value) and f"({b}, {n})" in str(e.value)


def test_empty_lists_are_no_spheres_and_no_pairs():
    pairs, worlds, offsets = sweepfan.world_pairs([], 1.0, [])
    assert pairs.shape == (0, 2) and len(worlds) == 0 and offsets.tolist() == [0]
    assert sweepfan.sphere_pairs([], 1.0).shape == (0, 2)
    got = sweepfan.sphere_contacts(np.zeros((3, 3)), 0.5, pairs=[])
    assert got["pairs"].shape == (0, 2) and got["depths"].shape == (0,)


@pytest.mark.parametrize(
    "method", ["auto", "sap", "x", "xy", "xyz", "brute_force", "grid", "min_axis", "origin_distance"]
)
def test_the_gpu_batch_matches_a_brute_force_per_world(method):
    rng, centers, radii, world = random_worlds(6, 400, 11, 41)
    check_against_brute(centers, radii, world, method=method, backend="gpu")
    # A batch axis on the GPU equals the CPU's.
    batch = rng.uniform(0, 10, (9, 50, 3)).astype(np.float32)
    on_gpu = sweepfan.world_pairs(batch, 0.7, method=method, backend="gpu")
    on_cpu = sweepfan.world_pairs(batch, 0.7, method=method, backend="cpu")
    for a, b in zip(on_gpu, on_cpu):
        assert np.array_equal(a, b)


def test_every_method_batches_on_the_gpu_and_an_unknown_one_is_refused():
    centers = np.zeros((4, 3), dtype=np.float32)
    for method in ["min_axis", "origin_distance", "xyz"]:
        pairs, worlds, _ = sweepfan.world_pairs(
            centers, 1.0, [0, 0, 1, 1], method=method, backend="gpu"
        )
        assert pairs.tolist() == [[0, 1], [2, 3]] and worlds.tolist() == [0, 1]
    with pytest.raises(ValueError, match="method.*grdi"):
        sweepfan.world_pairs(centers, 1.0, [0, 0, 1, 1], method="grdi", backend="gpu")


def events_per_world(before, after):
    """Found and lost per world, from two {world: pairs} groups, written here."""
    found, lost = {}, {}
    for w in sorted(set(before) | set(after)):
        b, a = set(before.get(w, [])), set(after.get(w, []))
        found[w], lost[w] = sorted(a - b), sorted(b - a)
    return found, lost


@pytest.mark.parametrize(
    "method, backend",
    [("auto", "cpu"), ("sap", "cpu"), ("grid", "cpu"), ("auto", "gpu"), ("grid", "gpu")],
)
def test_a_broad_phase_steps_worlds_with_events(method, backend):
    rng = np.random.default_rng(7)
    n = 240
    centers = rng.uniform(0, 12, (n, 3)).astype(np.float32)
    radii = rng.uniform(0.4, 1.2, n).astype(np.float32)
    world = rng.integers(0, 6, n)
    world[::29] = sweepfan.SHARED
    velocities = rng.uniform(-0.6, 0.6, (n, 3)).astype(np.float32)
    bp = sweepfan.BroadPhase(method=method, backend=backend, track_events=True)
    before = {}
    for frame in range(4):
        pairs = bp.step(centers, radii, world=world)
        expected = brute_per_world(centers, radii, world)
        worlds, offsets = bp.world_groups()
        assert as_groups(pairs, worlds, offsets) == expected
        found, lost = events_per_world(before, expected)
        fw, fo = bp.world_groups("found")
        lw, lo = bp.world_groups("lost")
        got_found = as_groups(bp.found, fw, fo)
        got_lost = as_groups(bp.lost, lw, lo)
        assert {w: p for w, p in got_found.items() if p} == {w: p for w, p in found.items() if p}
        assert {w: p for w, p in got_lost.items() if p} == {w: p for w, p in lost.items() if p}
        if frame == 0:
            assert len(bp.found) == len(pairs) > 0 and len(bp.lost) == 0
        before = expected
        centers = centers + velocities
    assert bp.frames == 4
    # A batch axis steps the same way; the worlds are 0..B-1.
    batch = rng.uniform(0, 8, (5, 30, 3)).astype(np.float32)
    bp2 = sweepfan.BroadPhase(method=method, backend=backend)
    pairs = bp2.step(batch, 0.8)
    expected = brute_per_world(batch.reshape(-1, 3), 0.8, np.repeat(np.arange(5), 30))
    assert as_groups(pairs, *bp2.world_groups()) == expected


def test_a_broad_phase_keeps_to_one_kind_of_step():
    centers = np.zeros((4, 3), dtype=np.float32)
    bp = sweepfan.BroadPhase(backend="cpu")
    bp.step(centers, 1.0, world=[0, 0, 1, 1])
    with pytest.raises(ValueError, match="world"):
        bp.step(centers, 1.0)
    bp = sweepfan.BroadPhase(backend="cpu", track_events=True)
    with pytest.raises(RuntimeError, match="no step with worlds"):
        bp.world_groups()
    bp.step(centers, 1.0)
    with pytest.raises(ValueError, match="world"):
        bp.step(centers, 1.0, world=[0, 0, 1, 1])
    with pytest.raises(ValueError, match="which"):
        bp.world_groups("everything")
    with pytest.raises(RuntimeError, match="track_events"):
        sweepfan.BroadPhase(backend="cpu").world_groups("found")
    # Ids of another length are refused, nothing stepped.
    bp = sweepfan.BroadPhase(backend="cpu")
    with pytest.raises(ValueError, match="world"):
        bp.step(centers, 1.0, world=[0, 1])
    assert bp.frames == 0
    # The GPU batches min_axis too.
    gpu = sweepfan.BroadPhase(method="min_axis", backend="gpu")
    assert gpu.step(centers, 1.0, world=[0, 0, 1, 1]).tolist() == [[0, 1], [2, 3]]


def test_masked_world_ids_and_batches_are_refused():
    centers = np.zeros((3, 3), np.float32)
    world = np.ma.masked_array([0, 5, 1], mask=[0, 1, 0])
    with pytest.raises(ValueError, match="world.*masked"):
        sweepfan.world_pairs(centers, 0.5, world)
    with pytest.raises(ValueError, match="world.*masked"):
        sweepfan.BroadPhase(backend="cpu").step(centers, 0.5, world=world)
    batch = np.ma.masked_array(np.zeros((2, 2, 3)), mask=False)
    batch.mask[0, 1, 0] = True
    with pytest.raises(ValueError, match="centers.*masked"):
        sweepfan.world_pairs(batch, 1.0)
    radii = np.ma.masked_array(np.ones((2, 2)), mask=[[0, 1], [0, 0]])
    with pytest.raises(ValueError, match="radii.*masked"):
        sweepfan.world_pairs(np.zeros((2, 2, 3)), radii)
    # Without a masked entry a masked array is read as its data.
    unmasked = np.ma.masked_array([0, 0, 1], mask=False)
    pairs, worlds, offsets = sweepfan.world_pairs(centers, 0.5, unmasked)
    assert pairs.tolist() == [[0, 1]] and worlds.tolist() == [0, 1]


def test_an_empty_batch_has_no_pairs():
    for centers, world in [(np.zeros((0, 3)), np.zeros(0, int)), (np.zeros((0, 5, 3)), None)]:
        pairs, worlds, offsets = sweepfan.world_pairs(centers, 1.0, world)
        assert pairs.shape == (0, 2) and worlds.tolist() == [] and offsets.tolist() == [0]
        assert sweepfan.world_pairs(centers, 1.0, world, count_only=True) == (0, 0)
    bp = sweepfan.BroadPhase(backend="cpu", track_events=True)
    assert bp.step(np.zeros((0, 3)), 1.0, world=np.zeros(0, int)).shape == (0, 2)
    worlds, offsets = bp.world_groups()
    assert worlds.tolist() == [] and offsets.tolist() == [0]


def test_a_failed_world_step_leaves_consistent_groups():
    # The GPU grid takes at most GPU_GRID_SHARED_MAX shared objects: past them the step fails.
    bp = sweepfan.BroadPhase(method="grid", backend="gpu", track_events=True)
    bp.step(np.zeros((4, 3), np.float32), 1.0, world=[0, 0, 3, 3])
    too_many = [sweepfan.SHARED] * 18 + [0, 0]
    with pytest.raises(ValueError):
        bp.step(np.zeros((20, 3), np.float32), 1.0, world=too_many)
    for which in ["pairs", "found", "lost"]:
        worlds, offsets = bp.world_groups(which)
        assert len(offsets) == len(worlds) + 1 and offsets[-1] == 0, which
    assert bp.found.shape == (0, 2) and bp.lost.shape == (0, 2)
    # The next good step's events are against the last good frame.
    apart = np.array([[0, 0, 0], [0, 0, 0], [10, 0, 0], [20, 0, 0]], np.float32)
    bp.step(apart, 1.0, world=[0, 0, 3, 3])
    assert bp.found.tolist() == [] and bp.lost.tolist() == [[2, 3]]
    worlds, offsets = bp.world_groups("lost")
    assert worlds.tolist() == [0, 3] and offsets.tolist() == [0, 0, 1]


def test_a_step_refused_for_its_input_leaves_no_events(backend):
    # Refused while its arrays were read (a NaN, a world id past the range), a step left the
    # step before's events in found and lost: a loop that caught the error read them twice.
    two = np.array([[0, 0, 0], [1, 0, 0]], np.float32)
    nan = np.array([[0, 0, 0], [np.nan, 0, 0]], np.float32)
    for world, bad_world in [(None, None), ([0, 0], [0, 0]), ([0, 0], [0, -1])]:
        bp = sweepfan.BroadPhase(backend=backend, track_events=True)
        bp.step(two, 0.5, world=world)
        assert bp.found.tolist() == [[0, 1]], world
        bad = nan if bad_world == world else two
        with pytest.raises(ValueError):
            bp.step(bad, 0.5, world=bad_world)
        assert bp.found.shape == (0, 2) and bp.lost.shape == (0, 2), world
        if world is not None:
            for which in ["pairs", "found", "lost"]:
                assert bp.world_groups(which)[1][-1] == 0, (world, which)
        # The next good step compares with the last good one.
        bp.step(two, 0.5, world=world)
        assert bp.found.tolist() == [] and bp.lost.tolist() == [], world
        bp.step(two * 3, 0.5, world=world)
        assert bp.lost.tolist() == [[0, 1]], world


def test_a_batch_past_memory_is_a_memory_error():
    # A view of one value: B x N objects that the batch's ids and spheres could never hold.
    centers = np.broadcast_to(np.float32(0), (1 << 20, 1 << 20, 3))
    with pytest.raises(MemoryError):
        sweepfan.world_pairs(centers, 1.0, count_only=True)
    with pytest.raises(MemoryError):
        sweepfan.BroadPhase(backend="cpu").step(centers, 1.0)


def test_sphere_pairs_takes_world_and_a_batch_axis(backend):
    """sphere_pairs(..., world=ids) and sphere_pairs on (B, N, 3) centres give the worlds'
    pairs as world_pairs does, against the brute force per world."""
    _, centers, radii, world = random_worlds(71, 300, 7, 29)
    pairs, worlds, offsets = sweepfan.sphere_pairs(centers, radii, world=world, backend=backend)
    expected = brute_per_world(centers, radii, world)
    assert sum(len(p) for w, p in expected.items() if w != sweepfan.SHARED) > 25
    assert as_groups(pairs, worlds, offsets) == expected
    count, _ = sweepfan.sphere_pairs(centers, radii, world=world, count_only=True)
    assert count == len(pairs)
    # Four worlds of 50 as a batch axis: world k holds rows k * 50 .. k * 50 + 49.
    batch = centers[:200].reshape(4, 50, 3)
    pairs, worlds, offsets = sweepfan.sphere_pairs(batch, 1.0, backend=backend)
    ids = np.repeat(np.arange(4), 50)
    assert as_groups(pairs, worlds, offsets) == brute_per_world(centers[:200], 1.0, ids)
    # Nested lists with a batch axis too.
    listed = sweepfan.sphere_pairs(batch.tolist(), 1.0, backend=backend)
    assert as_groups(*listed) == as_groups(pairs, worlds, offsets)
    # world=None is one scene.
    plain = sweepfan.sphere_pairs(centers, radii, world=None)
    assert plain.shape[1] == 2
