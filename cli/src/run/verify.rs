//! Pair-set comparison: every method, on every backend, is checked against a reference.
//!
//! The touch is decided exactly on the inputs' values on every device (docs/design.md §9.6a), so
//! any difference fails a check. Differences within a relative 1e-5 of touching are listed apart
//! (they point at a rounding problem, not a walk that missed a candidate), and fail too.

use serde::Serialize;
use sweepfan::broadphase::Pair;
use sweepfan::geom::sphere::Sphere;

/// Relative tolerance on |c_i - c_j| - (r_i + r_j) below which a disagreement is "near touching".
pub const NEAR_TOUCHING_RELATIVE: f64 = 1e-5;

/// The first `most` of `pairs`, each as `show` writes it, space-separated (for a log line).
pub fn first_pairs(pairs: &[Pair], most: usize, show: impl Fn(&Pair) -> String) -> String {
    pairs
        .iter()
        .take(most)
        .map(show)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The outcome of comparing a candidate pair list with a reference one.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Comparison {
    pub reference_pairs: usize,
    pub candidate_pairs: usize,
    /// In the reference, not in the candidate, and not near touching: real misses.
    pub missing: Vec<Pair>,
    /// In the candidate, not in the reference, and not near touching (or malformed: i >= j,
    /// duplicates, out-of-range indices).
    pub extra: Vec<Pair>,
    /// Differences within a relative 1e-5 of touching (either direction): listed apart, and
    /// failures like the others (the touch is exact).
    pub near_touching: Vec<Pair>,
    /// Only the totals were compared (count-only runs): then they must be equal.
    pub counts_only: bool,
    /// The frame compared (0: the first).
    pub frame: usize,
}

impl Comparison {
    pub fn is_ok(&self) -> bool {
        if self.counts_only {
            return self.reference_pairs == self.candidate_pairs;
        }
        self.missing.is_empty() && self.extra.is_empty() && self.near_touching.is_empty()
    }

    /// Compares totals only (for count-only runs, where no pair list exists).
    pub fn of_counts(reference_pairs: u64, candidate_pairs: u64) -> Self {
        Self {
            reference_pairs: reference_pairs as usize,
            candidate_pairs: candidate_pairs as usize,
            counts_only: true,
            ..Default::default()
        }
    }

    /// One-line summary for logs and error messages.
    pub fn summary(&self) -> String {
        let show = |v: &[Pair]| first_pairs(v, 5, |p| format!("({},{})", p[0], p[1]));
        let frame = match self.frame {
            0 => String::new(),
            f => format!("frame {f}: "),
        };
        format!(
            "{frame}reference {} pairs, candidate {} pairs: {} missing [{}], {} extra [{}], {} \
             near touching",
            self.reference_pairs,
            self.candidate_pairs,
            self.missing.len(),
            show(&self.missing),
            self.extra.len(),
            show(&self.extra),
            self.near_touching.len()
        )
    }
}

/// True when the pair's separation is within [`NEAR_TOUCHING_RELATIVE`] of touching (in f64).
pub fn near_touching(spheres: &[Sphere], p: Pair) -> bool {
    let (a, b) = (&spheres[p[0] as usize], &spheres[p[1] as usize]);
    let d = (a.center.as_dvec3() - b.center.as_dvec3()).length();
    let s = a.radius as f64 + b.radius as f64;
    (d - s).abs() <= NEAR_TOUCHING_RELATIVE * s.max(f64::MIN_POSITIVE)
}

/// Compares two canonical (sorted, i < j) pair lists. A malformed candidate (unsorted,
/// duplicated, i >= j or out-of-range pairs) shows up as extra pairs.
pub fn compare_pairs(spheres: &[Sphere], reference: &[Pair], candidate: &[Pair]) -> Comparison {
    // Pair indices are u32: a longer scene cannot be indexed past u32::MAX anyway.
    let n = u32::try_from(spheres.len()).unwrap_or(u32::MAX);
    let mut c = Comparison {
        reference_pairs: reference.len(),
        candidate_pairs: candidate.len(),
        ..Default::default()
    };
    let (mut i, mut j) = (0, 0);
    let mut last: Option<Pair> = None;
    while i < reference.len() || j < candidate.len() {
        let take_ref = j >= candidate.len() || (i < reference.len() && reference[i] < candidate[j]);
        let take_both = i < reference.len() && j < candidate.len() && reference[i] == candidate[j];
        if take_both {
            last = Some(candidate[j]);
            i += 1;
            j += 1;
        } else if take_ref {
            let p = reference[i];
            if near_touching(spheres, p) {
                c.near_touching.push(p);
            } else {
                c.missing.push(p);
            }
            i += 1;
        } else {
            let p = candidate[j];
            let malformed = p[0] >= p[1] || p[1] >= n || last.is_some_and(|l| l >= p);
            if !malformed && near_touching(spheres, p) {
                c.near_touching.push(p);
            } else {
                c.extra.push(p);
            }
            last = Some(p);
            j += 1;
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn spheres() -> Vec<Sphere> {
        vec![
            Sphere::new(Vec3::ZERO, 1.0),
            Sphere::new(Vec3::new(1.0, 0.0, 0.0), 1.0),
            // Exactly touching sphere 0 (distance 2 = 1 + 1): near touching.
            Sphere::new(Vec3::new(2.0, 0.0, 0.0), 1.0),
            Sphere::new(Vec3::new(10.0, 0.0, 0.0), 1.0),
        ]
    }

    #[test]
    fn equal_lists_agree() {
        let s = spheres();
        let p = vec![[0, 1], [0, 2], [1, 2]];
        assert!(compare_pairs(&s, &p, &p).is_ok());
    }

    #[test]
    fn every_difference_fails_near_touching_listed_apart() {
        let s = spheres();
        let reference = vec![[0, 1], [0, 2], [1, 2]];
        let c = compare_pairs(&s, &reference, &[[0, 1], [1, 2]]);
        assert!(!c.is_ok(), "{}", c.summary());
        assert_eq!(c.near_touching, vec![[0, 2]]);
        assert!(c.missing.is_empty());
        let c = compare_pairs(&s, &reference, &[[0, 2], [1, 2]]);
        assert_eq!(c.missing, vec![[0, 1]]);
        let c = compare_pairs(&s, &reference, &[[0, 1], [0, 2], [1, 2], [2, 3]]);
        assert_eq!(c.extra, vec![[2, 3]]);
        assert!(!c.is_ok());
    }

    #[test]
    fn malformed_candidates_are_extra() {
        let s = spheres();
        let reference = vec![[0, 1]];
        for bad in [
            vec![[0, 1], [0, 1]],
            vec![[0, 1], [1, 0]],
            vec![[0, 1], [3, 9]],
        ] {
            let c = compare_pairs(&s, &reference, &bad);
            assert!(!c.is_ok(), "{bad:?}");
        }
    }
}
