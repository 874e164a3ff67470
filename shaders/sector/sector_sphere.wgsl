// Batched exact sector-vs-sphere tests (docs/design.md §5.3): one (sector, sphere) index pair per thread,
// hit = signed distance of the sphere centre to the annular sector <= radius, the distance of
// `Sector::signed_distance` (src/geom/sector/distance.rs, sector/sector2d.rs; equal up to rounding);
// sin and cos of the half-angle come precomputed from the CPU. Lengths are `scaled_length`s
// (math.wgsl's m_length2 of components scaled to a largest of 1, docs/design.md §5.3, §9.11).

// #import dispatch.wgsl
// #import math.wgsl
// #import sector/sector_sphere_params.wgsl

struct GpuSector {
    origin_cos: vec4<f32>,     // O, cos(theta)
    axis_sin: vec4<f32>,       // U, sin(theta)
    centre_axis_h: vec4<f32>,  // A, half-thickness h
    radii: vec4<f32>,          // r, R, theta, full ring (1 or 0)
}

@group(0) @binding(0) var<storage, read> sectors: array<GpuSector>;
@group(0) @binding(1) var<storage, read> spheres: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> pairs: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read_write> hits: array<u32>;
@group(0) @binding(4) var<uniform> params: Params;

// 64 threads: a multiple of every common SIMD width (8 on lavapipe, 32, 64); each thread is
// independent, so the size only needs to fill the hardware.
const WG: u32 = 64u;

// geom::primitives2d::scaled_length: the length from components scaled to a largest of 1 (no
// square underflows at any accepted size).
fn scaled_length(v: vec2<f32>) -> f32 {
    let largest = max(abs(v.x), abs(v.y));
    if (largest == 0.0) {
        return 0.0;
    }
    return largest * m_length2(vec2<f32>(m_div(v.x, largest), m_div(v.y, largest)));
}

fn ring_sector_distance(px: f32, py: f32, s: GpuSector) -> f32 {
    let p = vec2<f32>(px, abs(py));
    let rho = scaled_length(p);
    let r = s.radii.x;
    let outer = s.radii.y;
    if (s.radii.w != 0.0) {
        if (r > 0.0) {
            return max(r - rho, rho - outer);
        }
        return rho - outer;
    }
    let c = s.origin_cos.w;
    let edge = vec2<f32>(c, s.axis_sin.w);
    // Sector2::in_wedge_local: |y| cos <= x sin (cos rounds to 1 at small half-angles), and
    // x >= 0 below a right angle (at a half-angle of 0 the side test holds behind the centre).
    let in_wedge = p.y * c <= p.x * s.axis_sin.w && (p.x >= 0.0 || c < 0.0);
    let t = clamp(dot(p, edge), r, outer);
    let to_edge = scaled_length(p - t * edge);
    var d = to_edge;
    if (in_wedge) {
        d = min(d, min(abs(rho - r), abs(rho - outer)));
    }
    if (in_wedge && rho >= r && rho <= outer) {
        return -d;
    }
    return d;
}

fn sector_signed_distance(s: GpuSector, p: vec3<f32>) -> f32 {
    let u = s.axis_sin.xyz;
    let a = s.centre_axis_h.xyz;
    let d = p - s.origin_cos.xyz;
    let q = vec3<f32>(dot(d, a), dot(d, cross(u, a)), dot(d, u));
    let d2 = ring_sector_distance(q.x, q.y, s);
    let dz = abs(q.z) - s.centre_axis_h.w;
    return min(max(d2, dz), 0.0) + scaled_length(vec2<f32>(max(d2, 0.0), max(dz, 0.0)));
}

@compute @workgroup_size(WG)
fn test_pairs(inv: Invocation) {
    let i = flat_id(inv);
    if (i >= params.pair_count) {
        return;
    }
    let pair = pairs[i];
    // Indices are validated on the CPU; guard anyway so a bad index cannot read out of bounds.
    if (pair.x >= params.sector_count || pair.y >= params.sphere_count) {
        hits[i] = 0u;
        return;
    }
    let sphere = spheres[pair.y];
    hits[i] = select(0u, 1u, sector_signed_distance(sectors[pair.x], sphere.xyz) <= sphere.w);
}
