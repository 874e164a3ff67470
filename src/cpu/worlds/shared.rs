//! A batch's shared objects against each world's own (docs/design.md §2.13): indexed once a
//! call by the low ends of their x intervals, so that each of a world's objects tests the
//! shared ones whose x intervals overlap its own, and the shared objects' pairs with each other
//! are found once, not again in every world.

use crate::geom::sphere::Sphere;

/// The shared spheres by the low end of their x interval, the few far wider than the rest
/// apart ([`crate::cpu::wide::wide_threshold`]: a shared ground sphere of radius 1e6 made
/// every object's window the whole axis, 10 times slower).
#[derive(Default)]
pub(super) struct SharedIndex {
    /// `(lo, hi, slot)`: the x interval `[c - r, c + r]` (rounded f32 sums) and the sphere's
    /// place in the shared list, ascending by `lo` (then slot), the wide ones left out.
    by_lo: Vec<(f32, f32, u32)>,
    /// The wide ones, each looked at by every object.
    wide: Vec<(f32, f32, u32)>,
    /// The widest computed interval, `hi - lo`, of `by_lo`.
    widest: f32,
    widths: Vec<f32>,
}

impl SharedIndex {
    /// Indexes `shared` (validated spheres); reuses the storage.
    pub fn build(&mut self, shared: &[Sphere]) {
        self.by_lo.clear();
        self.wide.clear();
        self.by_lo.extend(shared.iter().enumerate().map(|(t, s)| {
            let (c, r) = (s.center.x, s.radius);
            (c - r, c + r, t as u32)
        }));
        self.by_lo
            .sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
        self.widths.clear();
        self.widths.extend(self.by_lo.iter().map(|e| e.1 - e.0));
        let extent = match (self.by_lo.first(), self.by_lo.last()) {
            (Some(first), Some(last)) => last.0 - first.0,
            _ => 0.0,
        };
        let threshold = crate::cpu::wide::wide_threshold(&mut self.widths, extent);
        let wide = &mut self.wide;
        self.by_lo.retain(|e| {
            let keep = e.1 - e.0 <= threshold;
            if !keep {
                wide.push(*e);
            }
            keep
        });
        self.widest = self.by_lo.iter().fold(0.0, |m, e| m.max(e.1 - e.0));
    }

    /// Tests `s` against every shared sphere whose x interval overlaps its own (closed), calling
    /// `found` with the slot of each one it touches; returns the tests. Exact: two touching
    /// spheres have `c_a - r_a <= c_b + r_b`, which the monotone rounding of both sums keeps.
    #[inline]
    pub fn meet(&self, s: &Sphere, shared: &[Sphere], mut found: impl FnMut(u32)) -> u64 {
        let (lo, hi) = (s.center.x - s.radius, s.center.x + s.radius);
        // An interval reaching `lo` starts at most the widest width below it (the margins far
        // past the rounding of the widths and of this difference).
        let floor = lo - 1.0001 * self.widest - 1e-6 * lo.abs();
        let from = self.by_lo.partition_point(|e| e.0 < floor);
        let mut tests = 0;
        let mut test = |t: u32| {
            tests += 1;
            if s.touches(&shared[t as usize]) {
                found(t);
            }
        };
        for &(l, h, t) in &self.by_lo[from..] {
            if l > hi {
                break;
            }
            if h >= lo {
                test(t);
            }
        }
        for &(l, h, t) in &self.wide {
            if l <= hi && h >= lo {
                test(t);
            }
        }
        tests
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    /// Every shared sphere a sphere touches is met, whatever its width among the others (one
    /// far wider than the rest, ties at the same low end, exact contacts at an interval's
    /// end), and only those whose x intervals overlap are tested.
    #[test]
    fn every_touching_shared_sphere_is_met() {
        let mut shared: Vec<Sphere> = (0..50)
            .map(|k| Sphere::new(Vec3::new(k as f32 * 3.0, (k % 7) as f32, 0.0), 1.0))
            .collect();
        shared.push(Sphere::new(Vec3::new(-500.0, 0.0, 0.0), 600.0));
        shared.push(Sphere::new(Vec3::new(3.0, 5.0, 0.0), 1.0)); // same lo as slot 1
        let mut index = SharedIndex::default();
        index.build(&shared);
        assert_eq!(index.wide.len(), 1, "the wide sphere is set aside");
        assert_eq!(index.widest, 2.0);
        let mut state = 7u32;
        let mut next = || {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 8) as f32 / 16_777_216.0
        };
        let mut probes: Vec<Sphere> = (0..400)
            .map(|_| {
                let c = Vec3::new(next() * 200.0 - 20.0, next() * 8.0, next() - 0.5);
                Sphere::new(c, 0.2 + next())
            })
            .collect();
        // Touching slot 2 (centre 6, radius 1) exactly at its interval's end.
        probes.push(Sphere::new(Vec3::new(8.5, 2.0, 0.0), 0.5));
        let mut met_total = 0;
        for s in &probes {
            let mut met = Vec::new();
            let tests = index.meet(s, &shared, |t| met.push(t));
            met.sort_unstable();
            let want: Vec<u32> = (0..shared.len() as u32)
                .filter(|&t| s.touches(&shared[t as usize]))
                .collect();
            assert_eq!(met, want, "{s:?}");
            let overlapping = shared
                .iter()
                .filter(|o| {
                    let (a, b) = (s.center.x - s.radius, s.center.x + s.radius);
                    o.center.x - o.radius <= b && a <= o.center.x + o.radius
                })
                .count() as u64;
            assert_eq!(tests, overlapping, "{s:?}");
            met_total += met.len();
        }
        assert!(met_total > 300, "{met_total}");
    }
}
