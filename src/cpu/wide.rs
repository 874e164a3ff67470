//! Intervals far wider than the rest, set aside from a sweep's window (docs/design.md §2.5):
//! a walk that looks back for the intervals reaching a point must look as far back as the
//! widest one, so one sphere spanning the scene made every walk scan the whole axis. The few
//! widest are looked at by every walker instead, and the window is as wide as the rest.

/// Most intervals [`wide_threshold`] sets aside.
const WIDE_MAX: usize = 4096;

/// The width past which intervals are set aside, for `widths` (scratch: reordered) whose low
/// ends span `extent`. Sets aside the `k` widest, `k` in 0, 1, 2, 4, ... up to 4,096, that
/// cost a walker least: the `k` it then looks at one by one, plus the intervals a window as
/// wide as the next widest holds at the mean density (at most all of them). Returns that next
/// widest width (the widest when `k` is 0): the intervals wider than it are the ones set
/// aside, and it bounds the others. (Set aside first: those wider than twice the 33rd widest,
/// which left 33 boulders among 100,000 grains to the whole-axis walk, 1.5 s against 56 ms.)
pub(crate) fn wide_threshold(widths: &mut [f32], extent: f32) -> f32 {
    let n = widths.len();
    if n == 0 {
        return 0.0;
    }
    let top = n.min(WIDE_MAX + 1);
    let descending = |a: &f32, b: &f32| b.total_cmp(a);
    if top < n {
        widths.select_nth_unstable_by(top - 1, descending);
    }
    widths[..top].sort_unstable_by(descending);
    let walk = |w: f32| -> f64 {
        if extent > 0.0 {
            (n as f64 * f64::from(w) / f64::from(extent)).min(n as f64)
        } else if w > 0.0 {
            n as f64
        } else {
            0.0
        }
    };
    let (mut best, mut chosen) = (walk(widths[0]), 0);
    let mut k = 1;
    while k < top {
        let cost = k as f64 + walk(widths[k]);
        if cost < best {
            (best, chosen) = (cost, k);
        }
        k *= 2;
    }
    widths[chosen]
}

#[cfg(test)]
mod tests {
    use super::wide_threshold;

    /// Nothing set aside among equals; one, 33 or 1,000 boulders among grains set aside; a
    /// spread of widths left whole where setting aside would not pay.
    #[test]
    fn the_wide_are_set_aside_where_it_pays() {
        let grains = |n: usize| vec![2.0f32; n];
        assert_eq!(wide_threshold(&mut grains(10_000), 1000.0), 2.0);
        assert_eq!(wide_threshold(&mut [], 1.0), 0.0);
        for boulders in [1usize, 33, 1000] {
            let mut w = grains(100_000);
            w.extend(std::iter::repeat_n(900.0, boulders));
            assert_eq!(wide_threshold(&mut w, 1000.0), 2.0, "{boulders} boulders");
        }
        // Widths 1..=5000 spread over 50,000: each one set aside costs a look and saves a
        // tenth of one, so none is.
        let mut spread: Vec<f32> = (1..=5000).map(|w| w as f32).collect();
        assert_eq!(wide_threshold(&mut spread, 50_000.0), 5000.0);
        // Every low end at one point: only zero widths make the window free.
        assert_eq!(wide_threshold(&mut [0.0, 0.0, 3.0], 0.0), 0.0);
    }
}
