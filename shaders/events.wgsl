// Frame events on the device (src/gpu/events.rs, docs/design.md §10): this frame's pair list
// (any order, from a broad phase) is put in canonical order by two stable radix sorts (by j,
// then by i), then compared with the previous frame's canonical list by binary search: pairs
// of this frame missing from the previous one are found, pairs of the previous frame missing
// from this one are lost. Both lists are compacted in canonical order by an exclusive scan of
// 0/1 flags (mark -> scan -> scatter), so the output is deterministic and equals the CPU's.

// #import dispatch.wgsl
// #import events_params.wgsl

const WG: u32 = 256u;

@group(0) @binding(0) var<uniform> ev: EventParams;
@group(0) @binding(1) var<storage, read> pairs: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> pair_count: array<u32>;
@group(0) @binding(3) var<storage, read_write> keys: array<u32>;
@group(0) @binding(4) var<storage, read_write> values: array<u32>;
// This frame's canonical list and its count ([0]), written by gather_sorted.
@group(0) @binding(5) var<storage, read_write> sorted_now: array<vec2<u32>>;
@group(0) @binding(6) var<storage, read_write> now_count: array<u32, 1>;
@group(0) @binding(7) var<storage, read> sorted_prev: array<vec2<u32>>;
@group(0) @binding(8) var<storage, read> prev_count: array<u32, 1>;
// 0/1 flags, scanned in place into output offsets; `flag_total` [0] holds the scan's total.
@group(0) @binding(9) var<storage, read_write> flags: array<u32>;
@group(0) @binding(10) var<storage, read> flag_total: array<u32, 1>;
@group(0) @binding(11) var<storage, read_write> out: array<vec2<u32>>;
// Frames whose pair list overflowed (count past cap): their events are incomplete. The host
// runs such a frame again when it reads back; a GPU-resident caller checks this count.
@group(0) @binding(12) var<storage, read_write> overflowed: array<u32, 1>;

fn count_now() -> u32 {
    return min(pair_count[ev.count_index], ev.cap);
}

// keys = j (empty slots: pad), values = slot.
@compute @workgroup_size(WG)
fn keys_by_j(inv: Invocation) {
    let s = flat_id(inv);
    if s >= ev.cap {
        return;
    }
    keys[s] = select(ev.pad, pairs[s].y, s < count_now());
    values[s] = s;
}

// After the sort by j: keys = i of the pair each value names (stable sort by i next).
@compute @workgroup_size(WG)
fn keys_by_i(inv: Invocation) {
    let s = flat_id(inv);
    if s >= ev.cap {
        return;
    }
    let v = values[s];
    keys[s] = select(ev.pad, pairs[min(v, ev.cap - 1u)].x, v < count_now());
}

// After both sorts: the canonical list, and its count for the next frame.
@compute @workgroup_size(WG)
fn gather_sorted(inv: Invocation) {
    let s = flat_id(inv);
    if s == 0u {
        now_count[0] = count_now();
        if pair_count[ev.count_index] > ev.cap {
            overflowed[0] += 1u;
        }
    }
    if s >= ev.cap {
        return;
    }
    var p = vec2<u32>(0xffffffffu);
    if s < count_now() {
        p = pairs[min(values[s], ev.cap - 1u)];
    }
    sorted_now[s] = p;
}

// Pair s of the previous frame's canonical list (`in_prev`) or of this frame's.
fn listed(in_prev: bool, s: u32) -> vec2<u32> {
    if in_prev {
        return sorted_prev[s];
    }
    return sorted_now[s];
}

// Whether `p` is in list[0..len) (canonical: lexicographic).
fn contains(p: vec2<u32>, in_prev: bool, len: u32) -> bool {
    var lo = 0u;
    var hi = len;
    while lo < hi {
        let mid = lo + (hi - lo) / 2u;
        let q = listed(in_prev, mid);
        if q.x < p.x || (q.x == p.x && q.y < p.y) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo < len && all(listed(in_prev, lo) == p);
}

// The number of pairs in the previous frame's canonical list or in this frame's.
fn listed_count(in_prev: bool) -> u32 {
    return select(now_count[0], min(prev_count[0], ev.prev_cap), in_prev);
}

// flags[s] = 1 when pair s of one list (the previous frame's: `from_prev`; len: its slots) is
// not in the other.
fn mark(s: u32, len: u32, from_prev: bool) {
    if s >= len {
        return;
    }
    var f = 0u;
    if s < listed_count(from_prev)
        && !contains(listed(from_prev, s), !from_prev, listed_count(!from_prev)) {
        f = 1u;
    }
    flags[s] = f;
}

// Found: this frame's pairs that the previous list lacks.
@compute @workgroup_size(WG)
fn mark_found(inv: Invocation) {
    mark(flat_id(inv), ev.cap, false);
}

// Lost: the previous frame's pairs that this frame's list lacks.
@compute @workgroup_size(WG)
fn mark_lost(inv: Invocation) {
    mark(flat_id(inv), ev.prev_cap, true);
}

// After the scan: flagged pairs to their offsets, in list order (len: ev.cap for found,
// ev.prev_cap for lost; `from_prev` picks the list).
fn scatter(s: u32, len: u32, from_prev: bool) {
    if s >= len {
        return;
    }
    let next = select(flag_total[0], flags[s + 1u], s + 1u < len);
    if next > flags[s] {
        out[flags[s]] = listed(from_prev, s);
    }
}

@compute @workgroup_size(WG)
fn scatter_found(inv: Invocation) {
    scatter(flat_id(inv), ev.cap, false);
}

@compute @workgroup_size(WG)
fn scatter_lost(inv: Invocation) {
    scatter(flat_id(inv), ev.prev_cap, true);
}
