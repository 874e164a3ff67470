// Pair emission for every method (src/gpu/pairs.rs): each thread walks one object's candidates,
// counts its sphere tests and touching pairs (totals kept as u64), and with FLAG_STORE appends
// each touching pair (i < j) at an atomic slot. Slots past params.cap are counted, not written:
// the host sees the total and re-runs with a larger list, so no pair is ever lost.

@group(0) @binding(3) var<storage, read> spheres: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> sorted: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> keys: array<u32>;
@group(0) @binding(6) var<storage, read> values: array<u32>;
@group(0) @binding(7) var<storage, read_write> pairs: array<vec2<u32>>;
@group(0) @binding(8) var<storage, read> starts: array<u32>;
// min_axis: (m, axis) per sorted position of the owner walk's axis.
@group(0) @binding(9) var<storage, read> choice: array<vec2<u32>>;

// lavapipe (llvmpipe) silently ends any single loop after 65,535 iterations, so every walk that
// can be longer is an outer loop over chunks of CHUNK candidates (both loops stay below the cap
// for n < 2^28; real GPUs do not care).
const CHUNK: u32 = 4096u;

// End of the chunk starting at q, within [q, end].
fn chunk_end(q: u32, end: u32) -> u32 {
    return select(end, q + CHUNK, end - q > CHUNK);
}

const SWEEP_AXIS: u32 = 0u;
const SWEEP_SAP: u32 = 1u;
const SWEEP_ORIGIN: u32 = 2u;

fn emit(i: u32, j: u32) {
    if (params.flags & FLAG_STORE) != 0u {
        let slot = atomicAdd(&counters[4], 1u);
        if slot < params.cap {
            pairs[slot] = vec2<u32>(min(i, j), max(i, j));
        }
    }
}

// brute_force: thread t takes rows t and n-2-t of the pair triangle (n tests per thread).
@compute @workgroup_size(256)
fn brute(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32) {
    let t = flat_id(wid, nwg, lid);
    let rows = max(params.n, 1u) - 1u;
    var tests = 0u;
    var hits = 0u;
    if t < (rows + 1u) / 2u {
        for (var half = 0u; half < 2u; half++) {
            let i = select(t, rows - 1u - t, half == 1u);
            if half == 1u && i == t {
                break;
            }
            let a = spheres[i];
            for (var base = i + 1u; base < params.n; base = chunk_end(base, params.n)) {
                let stop = chunk_end(base, params.n);
                for (var j = base; j < stop; j++) {
                    tests++;
                    if touches(a, spheres[j]) {
                        hits++;
                        emit(i, j);
                    }
                }
            }
        }
    }
    flush_counts(lid, 0u, tests, 2u, hits);
}

// Forward sweeps over the sorted order (sorted keys, gathered spheres):
// SWEEP_AXIS (x/xy/xyz last axis): while lo_q <= hi_p on params.axis, survivors only;
// SWEEP_SAP: same on the axis of largest spread, boxes must overlap on the other two axes;
// SWEEP_ORIGIN: keys are |c|, while D_q - D_p <= 2 r_max.
@compute @workgroup_size(256)
fn sweep(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32) {
    let p = flat_id(wid, nwg, lid);
    var tests = 0u;
    var hits = 0u;
    if p < params.n && keys[p] != NONE {
        let mode = params.mode;
        let s = sorted[p];
        let i = values[p];
        var a = params.axis;
        if mode == SWEEP_SAP {
            a = sap_axis();
        }
        let b = (a + 1u) % 3u;
        let c = (a + 2u) % 3u;
        let reach = select(hi_of(s, a), unordered(keys[p]), mode == SWEEP_ORIGIN);
        let limit = 2.0 * r_max();
        var done = false;
        for (var base = p + 1u; base < params.n && !done; base = chunk_end(base, params.n)) {
            let stop = chunk_end(base, params.n);
            for (var q = base; q < stop; q++) {
                let kq = keys[q];
                if kq == NONE {
                    done = true;
                    break;
                }
                if mode == SWEEP_ORIGIN {
                    if unordered(kq) - reach > limit {
                        done = true;
                        break;
                    }
                } else if unordered(kq) > reach {
                    done = true;
                    break;
                }
                let t = sorted[q];
                if mode == SWEEP_SAP {
                    let other = lo_of(s, b) <= hi_of(t, b) && lo_of(t, b) <= hi_of(s, b)
                        && lo_of(s, c) <= hi_of(t, c) && lo_of(t, c) <= hi_of(s, c);
                    if !other {
                        continue;
                    }
                }
                tests++;
                if touches(s, t) {
                    hits++;
                    emit(i, values[q]);
                }
            }
        }
    }
    flush_counts(lid, 0u, tests, 2u, hits);
}

// grid: keys are bucket ids (sorted), starts[b] = 1 + first position of bucket b. Each object
// visits the buckets of the 27 cells around its own and tests the objects j > i that lie in
// exactly that cell (a bucket may hold other cells too: they are skipped, not tested).
@compute @workgroup_size(256)
fn grid(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32) {
    let p = flat_id(wid, nwg, lid);
    var tests = 0u;
    var hits = 0u;
    if p < params.n {
        let s = sorted[p];
        let i = values[p];
        let origin = ext_min();
        let side = grid_side();
        let home = vec3<i32>(cell_of(s.xyz, origin, side));
        for (var nb = 0; nb < 27; nb++) {
            let c = home + vec3<i32>(nb % 3 - 1, (nb / 3) % 3 - 1, nb / 9 - 1);
            if any(c < vec3<i32>(0)) || any(c > vec3<i32>(1048575)) {
                continue;
            }
            let cell = vec3<u32>(c);
            let bucket = cell_hash(cell) & (params.buckets - 1u);
            let start = starts[bucket];
            if start == 0u {
                continue;
            }
            var done = false;
            for (var base = start - 1u; base < params.n && !done;
                base = chunk_end(base, params.n)) {
                let stop = chunk_end(base, params.n);
                for (var q = base; q < stop; q++) {
                    if keys[q] != bucket {
                        done = true;
                        break;
                    }
                    let j = values[q];
                    if j <= i {
                        continue;
                    }
                    let t = sorted[q];
                    if any(cell_of(t.xyz, origin, side) != cell) {
                        continue;
                    }
                    tests++;
                    if touches(s, t) {
                        hits++;
                        emit(i, j);
                    }
                }
            }
        }
    }
    flush_counts(lid, 0u, tests, 2u, hits);
}

fn owns(m: u32, o: u32, mj: u32, j: u32) -> bool {
    return m < mj || (m == mj && o < j);
}

// min_axis, run once per axis: keys/values/sorted/choice are in the lo order of params.axis.
// The object at position p, if its chosen axis is this one, tests the objects j overlapping it
// there whose priority (m, index) is larger: forward while lo_q <= hi_p, backward while lo_q can
// still reach lo_p (hi - lo <= 2 r_max, with a margin for rounding: every candidate is checked
// exactly, the margin only bounds the walk).
@compute @workgroup_size(256)
fn owner(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32) {
    let p = flat_id(wid, nwg, lid);
    var tests = 0u;
    var hits = 0u;
    if p < params.n && choice[p].y == params.axis {
        let a = params.axis;
        let s = sorted[p];
        let o = values[p];
        let lo = lo_of(s, a);
        let hi = hi_of(s, a);
        let m = choice[p].x;
        var done = false;
        for (var base = p + 1u; base < params.n && !done; base = chunk_end(base, params.n)) {
            let stop = chunk_end(base, params.n);
            for (var q = base; q < stop; q++) {
                if unordered(keys[q]) > hi {
                    done = true;
                    break;
                }
                let j = values[q];
                if owns(m, o, choice[q].x, j) {
                    tests++;
                    if touches(s, sorted[q]) {
                        hits++;
                        emit(o, j);
                    }
                }
            }
        }
        let span = 2.0 * r_max();
        let floor_lo = lo - (span + 1e-5 * (abs(lo) + span)) - 1e-30;
        // Backward: d = p - r counts 1, 2, ..., p.
        done = false;
        for (var base = 1u; base <= p && !done; base = chunk_end(base, p + 1u)) {
            let stop = chunk_end(base, p + 1u);
            for (var d = base; d < stop; d++) {
                let r = p - d;
                if unordered(keys[r]) < floor_lo {
                    done = true;
                    break;
                }
                let t = sorted[r];
                let j = values[r];
                if hi_of(t, a) >= lo && owns(m, o, choice[r].x, j) {
                    tests++;
                    if touches(s, t) {
                        hits++;
                        emit(o, j);
                    }
                }
            }
        }
    }
    flush_counts(lid, 0u, tests, 2u, hits);
}
