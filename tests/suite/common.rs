//! Independent oracles shared by the broad-phase tests: naive O(n^2) pair lists and test
//! counts written from each method's definition (docs/design.md §2.9), never from the code under test.

use glam::Vec3;
use sweepfan::{Method, Pair, Sphere};

pub fn lo(s: &Sphere, a: usize) -> f32 {
    s.center[a] - s.radius
}
pub fn hi(s: &Sphere, a: usize) -> f32 {
    s.center[a] + s.radius
}
pub fn overlap(s: &Sphere, t: &Sphere, a: usize) -> bool {
    lo(s, a) <= hi(t, a) && lo(t, a) <= hi(s, a)
}

pub fn all_pairs(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).flat_map(move |i| (i + 1..n).map(move |j| (i, j)))
}

/// Whether two spheres touch in real arithmetic on their f32 values: in f64 where the margin
/// clearly exceeds f64's rounding, else in big integers (every f32 is an integer over 2^149).
pub fn touch_oracle(a: &Sphere, b: &Sphere) -> bool {
    let d = a.center.as_dvec3() - b.center.as_dvec3();
    let s = a.radius as f64 + b.radius as f64;
    let (dd, ss) = (d.length_squared(), s * s);
    if (dd - ss).abs() > 1e-12 * (dd + ss) {
        return dd < ss;
    }
    use num_bigint::BigInt;
    let int = exact_int;
    let (ca, cb) = (a.center.to_array(), b.center.to_array());
    let dd: BigInt = (0..3)
        .map(|k| {
            let x = int(ca[k]) - int(cb[k]);
            &x * &x
        })
        .sum();
    let s = int(a.radius) + int(b.radius);
    dd <= &s * &s
}

/// `v * 2^149` exactly (every f32 is an integer over 2^149), through the f32's integer
/// significand and exponent.
pub fn exact_int(v: f32) -> num_bigint::BigInt {
    use num_bigint::BigInt;
    let bits = v.to_bits();
    let exponent = ((bits >> 23) & 0xff) as i64;
    let fraction = BigInt::from(bits & 0x7f_ffff);
    let magnitude = if exponent == 0 {
        fraction
    } else {
        (fraction + BigInt::from(1u32 << 23)) << (exponent - 1) as usize
    };
    if bits >> 31 == 1 {
        -magnitude
    } else {
        magnitude
    }
}

/// Whether two convex counter-clockwise polygons overlap (closed), in exact integers: no edge
/// of either has every vertex of the other strictly on its outer side.
pub fn polygon_oracle(p: &[glam::Vec2], q: &[glam::Vec2]) -> bool {
    let separated_by = |p: &[glam::Vec2], q: &[glam::Vec2]| {
        (0..p.len()).any(|i| {
            let (a, b) = (p[(i + p.len() - 1) % p.len()], p[i]);
            q.iter().all(|v| {
                let (ex, ey) = (
                    exact_int(b.x) - exact_int(a.x),
                    exact_int(b.y) - exact_int(a.y),
                );
                let (dx, dy) = (
                    exact_int(v.x) - exact_int(a.x),
                    exact_int(v.y) - exact_int(a.y),
                );
                ex * dy - ey * dx < num_bigint::BigInt::ZERO
            })
        })
    };
    !separated_by(p, q) && !separated_by(q, p)
}

/// Pairs of triangles at contact in real arithmetic, a vertex of one on a slanted edge of the
/// other (exactly: the edge runs from the origin to `2 (p, q)`, the vertex at `(p, q)`, with
/// `|p|, |q|` between 2^22 and 2^23, so that f32's products of differences round by about the
/// orientation one lowest bit makes), the whole scaled by `scale` (a power of two). Two pairs in
/// three have the touching vertex moved by one lowest bit of a coordinate: apart or overlapping
/// by a hair. Polygons `2k` and `2k + 1` make pair `k`; all lie around the origin.
pub fn hairline_polygons(pairs: usize, seed: u64, scale: f32) -> Vec<sweepfan::Polygon> {
    use glam::Vec2;
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(2 * pairs);
    let big = |rng: &mut rand_chacha::ChaCha8Rng| {
        let m = rng.random_range((1 << 22)..(1 << 23)) as f32;
        if rng.random() { m } else { -m }
    };
    for k in 0..pairs {
        let (p, q) = (big(&mut rng), big(&mut rng));
        let a = [Vec2::ZERO, Vec2::new(2.0 * p, 2.0 * q), Vec2::new(-q, p)];
        let (touch, out_dir) = (Vec2::new(p, q), Vec2::new(q, -p) * 0.25);
        let mut v = touch;
        let mut nudge = |x: f32| match rng.random() {
            true => f32::from_bits(x.to_bits() + 1),
            false => f32::from_bits(x.to_bits() - 1),
        };
        match k % 3 {
            1 => v.x = nudge(v.x),
            2 => v.y = nudge(v.y),
            _ => {}
        }
        let along = touch * 0.125;
        let b = [v, touch + out_dir + along, touch + out_dir - along];
        for shape in [&a[..], &b[..]] {
            let scaled: Vec<Vec2> = shape.iter().map(|v| *v * scale).collect();
            out.push(sweepfan::Polygon::new(&scaled).unwrap());
        }
    }
    out
}

/// Pairs of spheres at contact in real arithmetic where f32's squares round (docs/design.md
/// §9.6a): the centres of each pair an integer Pythagorean quadruple `(a, b, c)`, `a^2 + b^2 +
/// c^2 = d^2`, times an odd `k` (so the squared distance, near 2^32, is not an f32), the radii
/// two integers summing to `d k`, each pair on its own lattice point, the whole scaled by
/// `scale` (a power of two keeps every value exact). Every third pair is moved by one lowest
/// bit of a coordinate or a radius: exactly apart or overlapping by a hair.
pub fn exact_contact_scene(pairs: usize, seed: u64, scale: f32) -> Vec<Sphere> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let side = (pairs as f64).cbrt().ceil() as i32;
    let mut out = Vec::with_capacity(2 * pairs);
    for p in 0..pairs as i32 {
        let [m, n, u, w] = [(); 4].map(|_| rng.random_range(0i32..4));
        let (m, n) = (m + 1, n);
        let mut abc = [
            m * m + n * n - u * u - w * w,
            2 * (m * w + n * u),
            2 * (n * w - m * u),
        ];
        let d = m * m + n * n + u * u + w * w;
        abc.swap(0, rng.random_range(0..3));
        let k = rng.random_range(64i32..1024) | 1;
        let lattice = [p % side, p / side % side, p / (side * side)].map(|i| (i - side / 2) << 18);
        let r1 = rng.random_range(1..d * k);
        let at = |o: [i32; 3]| Vec3::new(o[0] as f32, o[1] as f32, o[2] as f32) * scale;
        let mut a = Sphere::new(at(lattice), r1 as f32 * scale);
        let mut b = Sphere::new(
            at([0, 1, 2].map(|i| lattice[i] + abc[i] * k)),
            (d * k - r1) as f32 * scale,
        );
        // One lowest bit up or down in magnitude (zeros stay: a nudged zero is no accepted value).
        let nudge = |v: f32, up: bool| match (v == 0.0, up) {
            (true, _) => v,
            (false, true) => f32::from_bits(v.to_bits() + 1),
            (false, false) => f32::from_bits(v.to_bits() - 1),
        };
        match p % 6 {
            2 => b.center.x = nudge(b.center.x, rng.random()),
            4 => a.radius = nudge(a.radius, rng.random()),
            _ => {}
        }
        out.extend([a, b]);
    }
    out
}

/// How many pairs of `s` the plain f32 formula (squared distance against squared radius sum)
/// decides otherwise than real arithmetic: a scene meant for the exact rule has some.
pub fn f32_touch_errors(s: &[Sphere]) -> usize {
    all_pairs(s.len())
        .filter(|&(i, j)| {
            let d = s[i].center - s[j].center;
            let r = s[i].radius + s[j].radius;
            (d.x * d.x + d.y * d.y + d.z * d.z <= r * r) != touch_oracle(&s[i], &s[j])
        })
        .count()
}

pub fn oracle_pairs(s: &[Sphere]) -> Vec<Pair> {
    all_pairs(s.len())
        .filter(|&(i, j)| touch_oracle(&s[i], &s[j]))
        .map(|(i, j)| [i as u32, j as u32])
        .collect()
}

pub fn r_max(s: &[Sphere]) -> f32 {
    s.iter().fold(0.0f32, |m, x| m.max(x.radius))
}

/// The cascade: drop objects overlapping no other survivor on each axis but the last, then
/// count survivor pairs overlapping on the last.
pub fn oracle_cascade_tests(s: &[Sphere], axes: usize) -> u64 {
    let mut alive: Vec<usize> = (0..s.len()).collect();
    for a in 0..axes - 1 {
        alive = alive
            .iter()
            .copied()
            .filter(|&i| alive.iter().any(|&j| j != i && overlap(&s[i], &s[j], a)))
            .collect();
    }
    let last = axes - 1;
    all_pairs(alive.len())
        .filter(|&(p, q)| overlap(&s[alive[p]], &s[alive[q]], last))
        .count() as u64
}

pub fn oracle_origin_distance_tests(s: &[Sphere]) -> u64 {
    let reach = 2.0 * r_max(s);
    all_pairs(s.len())
        .filter(|&(i, j)| {
            let (a, b) = (s[i].center.length(), s[j].center.length());
            // The walk's slack for rounded keys (sweepfan::geom::sphere::ORIGIN_KEY_SLACK).
            a.max(b) - a.min(b) <= reach + 1e-5 * a.max(b)
        })
        .count() as u64
}

pub fn oracle_min_axis_tests(s: &[Sphere]) -> u64 {
    let n = s.len();
    let chosen: Vec<(usize, usize)> = (0..n)
        .map(|i| {
            let counts: Vec<usize> = (0..3)
                .map(|a| {
                    (0..n)
                        .filter(|&j| j != i && overlap(&s[i], &s[j], a))
                        .count()
                })
                .collect();
            let m = *counts.iter().min().unwrap();
            (m, counts.iter().position(|&c| c == m).unwrap())
        })
        .collect();
    all_pairs(n)
        .filter(|&(i, j)| {
            let owner = if (chosen[i].0, i) < (chosen[j].0, j) {
                i
            } else {
                j
            };
            overlap(&s[i], &s[j], chosen[owner].1)
        })
        .count() as u64
}

pub fn oracle_sap_tests(s: &[Sphere]) -> u64 {
    all_pairs(s.len())
        .filter(|&(i, j)| (0..3).all(|a| overlap(&s[i], &s[j], a)))
        .count() as u64
}

/// The largest integer `k` with `k s <= d` (real arithmetic), for `0 <= d`, `s > 0`, below
/// 2^26: the products `k s` of a 26-bit integer and a 24-bit significand are exact in f64.
pub fn real_floor_quotient(d: f32, s: f32) -> i64 {
    let (d, s) = (d as f64, s as f64);
    let bound = f64::from(1u32 << 25);
    let mut k = (d / s).floor().clamp(-bound, bound) as i64;
    while k as f64 * s > d {
        k -= 1;
    }
    while (k + 1) as f64 * s <= d {
        k += 1;
    }
    k
}

/// The grid's cell on one axis (docs/design.md §9.2): the real floor of `c / side` below 2^24
/// cells, beyond that `±(2^24 + the number of f32 values from 2^24 side up to |c|)`.
pub fn oracle_grid_cell(c: f32, side: f32) -> i64 {
    let far = side.to_bits() + (24 << 23);
    if c.abs().to_bits() >= far {
        let magnitude = (1i64 << 24) + i64::from(c.abs().to_bits() - far);
        return if c < 0.0 { -magnitude } else { magnitude };
    }
    real_floor_quotient(c, side)
}

/// The library's cell-wall scene (`scenes::walls`), checked here to hold walls where the f32
/// quotient floors to another cell than the real one (by this file's own exact floor).
pub fn cell_wall_scene() -> Vec<Sphere> {
    let v = sweepfan_scenes::walls::grid_cell_walls(4000);
    let side = 0.3f32;
    let across = v
        .iter()
        .filter(|s| (s.center.x / side).floor() as i64 != real_floor_quotient(s.center.x, side))
        .count();
    assert!(
        across > 20,
        "only {across} centres where f32 division rounds across a wall"
    );
    v
}

/// The grid's test count by its definition (docs/design.md §2.7): giants by the exponent-bin
/// rule (at most a sixteenth of the objects above a bin, 32 to 4,096, and more than 1,024 only
/// where the largest radius is more than 8 times the bin's; the largest radius more than twice
/// the bin's), cells of the others by [`oracle_grid_cell`] with side twice the largest other
/// radius (for points, from the bounds);
/// pairs of others in neighbouring cells, each giant with the others whose cell lies in its
/// reach `[cell(c - r) - 1, cell(c + r) + 1]` on every axis and with the giants whose reach
/// overlaps its own on every axis.
pub fn oracle_grid_tests(s: &[Sphere]) -> u64 {
    let bin = |r: f32| (r.to_bits() & 0x7fff_ffff) >> 23;
    let mut bins = std::collections::BTreeMap::<u32, (u32, f32)>::new();
    for x in s {
        let e = bins.entry(bin(x.radius)).or_insert((0, 0.0));
        e.0 += 1;
        e.1 = e.1.max(x.radius.abs());
    }
    // (exponent, count, largest) from the top.
    let top: Vec<(u32, u32, f32)> = bins.iter().rev().map(|(&b, &(c, m))| (b, c, m)).collect();
    let mut split = None;
    let mut above = 0;
    // Set aside where at most a sixteenth of the objects (32 to 4,096) lie above, more than
    // 1,024 only past 8 times the rest's radius, and the largest radius is more than twice the
    // rest's (written here again, in f64, as the oracle's own).
    let most = ((s.len() / 16) as u32).clamp(32, 4096);
    let overall = top.first().map_or(0.0, |t| t.2);
    for (w, &(b, count, largest)) in top.iter().enumerate() {
        let (overall, largest) = (f64::from(overall), f64::from(largest));
        let few_or_far = above <= 1024 || overall > 8.0 * largest;
        if w > 0 && above <= most && overall > 2.0 * largest && few_or_far {
            split = Some((b, largest as f32));
        }
        above += count;
    }
    let r = split.map_or(r_max(s), |(_, largest)| largest);
    let side = if 2.0 * r >= f32::MIN_POSITIVE {
        2.0 * r
    } else {
        // Points: the bounds' longest side (of every centre, giants too) over 2^k, k the bits
        // of the count over three rounded up; 1 below 2^-100.
        let span = (0..3)
            .map(|a| {
                let (lo, hi) = s.iter().fold((f32::MAX, f32::MIN), |(lo, hi), x| {
                    (lo.min(x.center[a]), hi.max(x.center[a]))
                });
                hi - lo
            })
            .fold(0.0f32, f32::max);
        let k = (usize::BITS - s.len().leading_zeros()).div_ceil(3) as i32;
        let side = span * 2f32.powi(-k);
        if f64::from(side) >= 2f64.powi(-100) {
            side
        } else {
            1.0
        }
    };
    let giant = |x: &Sphere| split.is_some_and(|(b, _)| bin(x.radius) > b);
    let cell = |c: Vec3| -> [i64; 3] { [0, 1, 2].map(|a| oracle_grid_cell(c[a], side)) };
    let cells: Vec<[i64; 3]> = s.iter().map(|x| cell(x.center)).collect();
    let reach: Vec<([i64; 3], [i64; 3])> = s
        .iter()
        .map(|x| {
            let (lo, hi) = (
                cell(x.center - Vec3::splat(x.radius)),
                cell(x.center + Vec3::splat(x.radius)),
            );
            (lo.map(|k| k - 1), hi.map(|k| k + 1))
        })
        .collect();
    all_pairs(s.len())
        .filter(|&(i, j)| match (giant(&s[i]), giant(&s[j])) {
            (false, false) => (0..3).all(|a| (cells[i][a] - cells[j][a]).abs() <= 1),
            (true, true) => {
                (0..3).all(|a| reach[i].0[a] <= reach[j].1[a] && reach[j].0[a] <= reach[i].1[a])
            }
            (true, false) => {
                (0..3).all(|a| reach[i].0[a] <= cells[j][a] && cells[j][a] <= reach[i].1[a])
            }
            (false, true) => {
                (0..3).all(|a| reach[j].0[a] <= cells[i][a] && cells[i][a] <= reach[j].1[a])
            }
        })
        .count() as u64
}

pub fn oracle_tests(method: Method, s: &[Sphere]) -> u64 {
    let n = s.len() as u64;
    match method {
        Method::BruteForce => n * n.saturating_sub(1) / 2,
        Method::OriginDistance => oracle_origin_distance_tests(s),
        Method::X => oracle_cascade_tests(s, 1),
        Method::Xy => oracle_cascade_tests(s, 2),
        Method::Xyz => oracle_cascade_tests(s, 3),
        Method::MinAxis => oracle_min_axis_tests(s),
        Method::Sap => oracle_sap_tests(s),
        Method::Grid => oracle_grid_tests(s),
        Method::Auto => panic!("auto tests what the rule it chose tests: ask for that one"),
    }
}

/// A fresh directory for one test's files, unique to this process.
pub fn temp_dir(area: &str, name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("sweepfan-{area}-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every `.rs` file under `dir`, recursively (the source checks: layers, counters).
pub fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The test adapter twice (docs/design.md §9.17): as it is, with the subgroup appends and walk
/// ends where it offers `SUBGROUP`, and opened without `SUBGROUP`, with the portable ones
/// (workgroup barriers, no subgroup operation). `None` only where `test_gpu` gives none.
pub fn both_appends() -> Option<[sweepfan::gpu::GpuContext; 2]> {
    use sweepfan::gpu::{GpuContext, GpuOptions};
    let default = test_gpu()?;
    let portable = GpuContext::new(&GpuOptions {
        without_subgroups: true,
        ..test_options()
    })
    .expect("the test adapter, opened without SUBGROUP");
    assert!(!portable.has_subgroups());
    Some([default, portable])
}

/// The test adapter (`test_gpu`) behind an `Arc`, as broad phases share it; `None` where
/// `test_gpu` gives none.
pub fn shared_gpu() -> Option<std::sync::Arc<sweepfan::gpu::GpuContext>> {
    test_gpu().map(std::sync::Arc::new)
}

/// Three frames of a broad phase tracking events, each run by `frame` (one frame of the objects
/// it is given: its stats and events): `scene`'s finds `want`; an empty frame then stores no
/// pair and loses every pair, finding and keeping none; `scene`'s again finds every pair again.
/// `what` names the broad phase.
pub fn assert_an_empty_frame_loses_every_pair<T>(
    scene: &[T],
    want: &[Pair],
    what: &str,
    mut frame: impl FnMut(&[T]) -> (sweepfan::Stats, sweepfan::FrameEvents),
) {
    assert_eq!(frame(scene).1.found, want, "{what}");
    let (stats, gone) = frame(&[]);
    assert_eq!(stats.pairs, 0, "{what}");
    assert_eq!((gone.found.len(), gone.persisting), (0, 0), "{what}");
    assert_eq!(gone.lost, want, "{what}: the empty frame loses every pair");
    let back = frame(scene).1;
    assert_eq!(
        (back.found.as_slice(), back.lost.len()),
        (want, 0),
        "{what}: found again"
    );
}

/// The CPU grid's pairs on `spheres`, canonical: the reference the device's pairs must equal.
pub fn cpu_grid_pairs(spheres: &[Sphere]) -> Vec<Pair> {
    let mut out = Vec::new();
    sweepfan::cpu::broad_phase(Method::Grid)
        .find_pairs(spheres, Some(&mut out))
        .unwrap();
    sweepfan::canonicalize(&mut out);
    out
}

/// Every pair `[i, j]` (`i < j`, in that order) of `items` that `overlap` says overlap, by
/// testing all of them.
pub fn brute_pairs<T>(items: &[T], overlap: impl Fn(&T, &T) -> bool) -> Vec<Pair> {
    all_pairs(items.len())
        .filter(|&(i, j)| overlap(&items[i], &items[j]))
        .map(|(i, j)| [i as u32, j as u32])
        .collect()
}

/// The GPU options the environment asks for (`GpuOptions::from_vars`: backends, expected
/// adapter, math): the library reads no variable, the tests map them as the tool does.
pub fn test_options() -> sweepfan::gpu::GpuOptions {
    sweepfan::gpu::GpuOptions::from_vars(|name| std::env::var(name).ok())
        .expect("the environment's GPU options")
}

/// The test adapter (`test_gpu_with` on the environment): `None` only where
/// `SWEEPFAN_NO_GPU=1` opts out; a missing or unexpected adapter fails the test.
pub fn test_gpu() -> Option<sweepfan::gpu::GpuContext> {
    sweepfan::gpu::test_gpu_with(|name| std::env::var(name).ok())
}

/// A device of its own at the smallest binding cap a context may set (`MIN_BINDING_CAP`: 8,192
/// pairs a list), or `None` where the tests run without a GPU (as [`shared_gpu`]).
pub fn gpu_at_the_smallest_binding_cap() -> Option<std::sync::Arc<sweepfan::gpu::GpuContext>> {
    use sweepfan::gpu::{GpuContext, GpuOptions, MIN_BINDING_CAP};
    shared_gpu()?;
    let ctx = GpuContext::new(&GpuOptions {
        max_binding_bytes: Some(MIN_BINDING_CAP),
        ..test_options()
    })
    .unwrap();
    Some(std::sync::Arc::new(ctx))
}

/// A context on a device of the test adapter opened as a simulation opens its own with default
/// settings (`wgpu::DeviceDescriptor::default()`): WebGPU's guaranteed limits (8 storage
/// buffers a stage, 16 KiB of workgroup memory, 128 MiB a binding) and no optional feature
/// (no SUBGROUP), through `GpuContext::from_device`. `None` as [`shared_gpu`].
pub fn gpu_at_webgpus_default_limits() -> Option<std::sync::Arc<sweepfan::gpu::GpuContext>> {
    let adapter = shared_gpu()?.adapter().clone();
    let (device, queue) =
        pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default()))
            .expect("a device at WebGPU's default limits");
    assert_eq!(device.limits().max_storage_buffers_per_shader_stage, 8);
    Some(std::sync::Arc::new(sweepfan::gpu::GpuContext::from_device(
        adapter, device, queue,
    )))
}

/// Unit cubes at the integer cells of a `k x k x k` lattice, every third turned 180 degrees
/// about z (axes exactly -x, -y, z; every value exact in f32), with their cells: two touch
/// exactly when their cells are neighbours, faces, edges and corners included.
pub fn cube_lattice(k: i32) -> (Vec<sweepfan::Obb>, Vec<[i32; 3]>) {
    use glam::{Quat, Vec3};
    let cells: Vec<[i32; 3]> = (0..k * k * k)
        .map(|i| [i % k, (i / k) % k, i / (k * k)])
        .collect();
    let boxes = cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let turn = if i % 3 == 0 {
                Quat::from_xyzw(0.0, 0.0, 1.0, 0.0)
            } else {
                Quat::IDENTITY
            };
            let centre = Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32);
            sweepfan::Obb::new(centre, Vec3::splat(0.5), turn)
        })
        .collect();
    (boxes, cells)
}
