//! The one definition of each kind of option value, used by every subcommand, so that a value is
//! accepted or refused with the same words wherever its flag appears (issue 28, item 3).
//!
//! Each parser is a clap `value_parser`: a refused value ends the run with exit 2 and
//! `error: invalid value 'V' for '--flag <FLAG>': <the range accepted>`. Every numeric flag of a
//! subcommand also allows negative numbers (set once, by `negative_numbers_reach_parsers` in
//! `args`), so that `--radius -1` reaches the parser (and is refused as negative) instead of
//! being read as an unknown flag.
//!
//! Options that a scene or shape does not use are refused in [`ignored_by_scene`] rather than
//! silently dropped; their defaults are applied where they are used (`Option` fields), so a
//! default never counts as "given".

use sweepfan_scenes::MAX_VOLUME_FRACTION;
use sweepfan_scenes::SceneKind;

/// Why `s`, which does not parse as a whole number, is refused: "is negative", ...
fn not_whole(s: &str) -> &'static str {
    match s.parse::<f64>() {
        Ok(x) if x < 0.0 => "is negative",
        Ok(x) if x.is_nan() => "is NaN, not a whole number",
        Ok(x) if x.is_infinite() => "is infinite, not a whole number",
        Ok(x) if x.fract() != 0.0 => "is not a whole number",
        Ok(x) if x > u64::MAX as f64 => "is too large",
        // Digits past the parser's type (u32 for some flags): out of range, not malformed.
        Ok(_) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => "is too large",
        // "1e3", "-0": a whole number, but not in digits.
        Ok(_) => "is not written as a whole number (digits only)",
        Err(_) if s.trim() != s => "has spaces around it",
        Err(_) => "is not a number",
    }
}

/// A whole number in `min..=max` (`max == u64::MAX`: no upper limit); `why_min` follows the
/// lower limit in the message.
fn whole(s: &str, min: u64, max: u64, why_min: &str) -> Result<u64, String> {
    let range = if max == u64::MAX && min > 0 {
        format!("at least {min}{why_min}")
    } else {
        format!("in {min}..={max}{why_min}")
    };
    match s.parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        Ok(_) => Err(format!("must be {range}")),
        // "1e20" for a flag without an upper limit: say which limit it passed.
        Err(_) if not_whole(s) == "is too large" => {
            Err(format!("is too large: must be at most {max}"))
        }
        Err(_) => Err(format!("{}: must be {range}", not_whole(s))),
    }
}

/// A count of at least 1: frames, repetitions, rotations, timed runs.
pub fn count(s: &str) -> Result<usize, String> {
    whole(s, 1, usize::MAX as u64, "").map(|n| n as usize)
}

/// A count of at least 1 that fits 32 bits (`dist --frames`).
pub fn count_u32(s: &str) -> Result<u32, String> {
    whole(s, 1, u32::MAX.into(), "").map(|n| n as u32)
}

/// A number of objects, at least 1: `--n`, `--boxes`, `--start-n`, `--max-n`. Upper limits (the
/// 32-bit pair indices, the memory available) are checked with the scene's size
/// (`broadphase::limits::check_scene_size`), where they are known.
pub fn objects(s: &str) -> Result<usize, String> {
    const MOST: u64 = u32::MAX as u64 - 1;
    match whole(s, 1, u64::MAX, " (an empty scene has nothing to test)") {
        Ok(n) if n <= MOST => Ok(n as usize),
        // Past the 32-bit indices of pairs, or past any number ("1e20").
        Ok(_) => Err(format!(
            "is too large: must be at most {MOST} (pairs index objects with 32 bits)"
        )),
        Err(e) if e.starts_with("is too large") => Err(format!(
            "is too large: must be at most {MOST} (pairs index objects with 32 bits)"
        )),
        Err(e) => Err(e),
    }
}

/// `dist --n`: a scene across ranks indexes its objects with 64 bits (docs/design.md §2.11),
/// so it may pass 2^32 objects; at most 2^48 (each rank's own objects and ghosts stay under
/// 2^32, which its memory check and the run enforce).
pub fn global_objects(s: &str) -> Result<usize, String> {
    const MOST: u64 = 1 << 48;
    let n = whole(s, 1, MOST, " (an empty scene has nothing to test)")?;
    usize::try_from(n)
        .map_err(|_| format!("is too large for this machine's {}-bit sizes", usize::BITS))
}

/// `--adapter`: an index from `sweepfan info` or part of an adapter's name; an empty (or blank)
/// name would match every adapter, so it is refused.
pub fn adapter(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err(
            "is empty: name an adapter by its index in `sweepfan info` or part of \
                    its name"
                .into(),
        );
    }
    Ok(s.to_string())
}

/// `--seed`: any whole number from 0 to 2^64 - 1, refused in the words of the other numbers.
pub fn seed(s: &str) -> Result<u64, String> {
    whole(s, 0, u64::MAX, "")
}

/// `--threads`: a rayon pool of 1 to 1024 threads.
pub fn threads(s: &str) -> Result<u32, String> {
    whole(s, 1, 1024, "").map(|n| n as u32)
}

/// Mebibytes, at least 1 (`shaders --max-rss-mb`).
pub fn mebibytes(s: &str) -> Result<u64, String> {
    whole(s, 1, u64::MAX >> 20, "")
}

/// `--max-binding-bytes`: at least the kernels' fixed tables (`gpu::MIN_BINDING_CAP`),
/// a multiple of 4 (every buffer size is).
pub fn binding_bytes(s: &str) -> Result<u64, String> {
    let min = sweepfan::gpu::MIN_BINDING_CAP;
    let n = whole(s, min, u64::MAX, " bytes")?;
    if n % 4 != 0 {
        return Err(format!("must be a multiple of 4 (at least {min})"));
    }
    Ok(n)
}

/// `shaders --subgroup-size`: a power of two in 4..=128 (the sizes GPUs have).
pub fn subgroup_size(s: &str) -> Result<u32, String> {
    let range = "a power of two in 4..=128 (4, 8, 16, 32, 64 or 128)";
    match s.parse::<u64>() {
        Ok(n) if (4..=128).contains(&n) && n.is_power_of_two() => Ok(n as u32),
        Ok(_) => Err(format!("must be {range}")),
        Err(_) => Err(format!("{}: must be {range}", not_whole(s))),
    }
}

/// Why a text is not a finite number (`None`: it is one).
fn not_finite(s: &str, x: Result<f64, std::num::ParseFloatError>) -> Option<&'static str> {
    match x {
        Err(_) if s.trim() != s => Some("has spaces around it"),
        Err(_) => Some("is not a number"),
        Ok(x) if x.is_nan() => Some("is NaN"),
        Ok(x) if x.is_infinite() => Some("is infinite"),
        Ok(_) => None,
    }
}

/// A positive, finite length up to the largest coordinate a sphere may reach
/// (`MAX_COORDINATE`): `--radius`. (A radius near f32's largest made the generators' boxes
/// infinite, and their sampler panicked.)
pub fn positive_length(s: &str) -> Result<f32, String> {
    let range = "a finite number above 0";
    let most = sweepfan::geom::sphere::MAX_COORDINATE;
    if s.parse::<f32>().is_ok_and(|x| x.is_finite() && x > most) {
        return Err(format!(
            "is too large: must be {range} up to {most:e} (f32 squared distances would \
             overflow past it)"
        ));
    }
    if let Some(what) = not_finite(s, s.parse::<f64>()) {
        return Err(format!("{what}: must be {range}"));
    }
    let x: f32 = s.parse().map_err(|_| format!("must be {range}"))?;
    if x.is_infinite() {
        return Err(format!(
            "overflows f32: must be {range} up to {:e}",
            f32::MAX
        ));
    }
    if x <= 0.0 {
        let what = if x < 0.0 {
            "is negative"
        } else if s.parse::<f64>().is_ok_and(|d| d != 0.0) {
            "rounds to 0 in f32"
        } else {
            "is zero"
        };
        return Err(format!("{what}: must be {range}"));
    }
    Ok(x)
}

/// A positive, finite number of seconds: `--budget-s`, `--max-seconds`.
pub fn seconds(s: &str) -> Result<f64, String> {
    let range = "a finite number of seconds above 0";
    let x = s.parse::<f64>();
    if let Some(what) = not_finite(s, x.clone()) {
        return Err(format!("{what}: must be {range}"));
    }
    match x {
        Ok(x) if x > 0.0 => Ok(x),
        Ok(x) if x < 0.0 => Err(format!("is negative: must be {range}")),
        _ => Err(format!("is zero: must be {range}")),
    }
}

/// The volume fraction of the density and clusters scenes (`bench`, `stress`): strictly between
/// 0 and [`MAX_VOLUME_FRACTION`] (equal spheres cannot fill more than about 0.7405 of space;
/// docs/design.md §3.4), the same rule as `run::scene_size::scene_params`.
pub fn volume_fraction(s: &str) -> Result<f32, String> {
    let range = format!("in (0, {MAX_VOLUME_FRACTION}), above 0 and below the densest packing");
    if let Some(what) = not_finite(s, s.parse::<f64>()) {
        return Err(format!("{what}: must be {range}"));
    }
    let x: f32 = s.parse().map_err(|_| format!("must be {range}"))?;
    if x > 0.0 && x < MAX_VOLUME_FRACTION {
        Ok(x)
    } else if x == 0.0 && s.parse::<f64>().is_ok_and(|d| d > 0.0) {
        Err(format!("rounds to 0 in f32: must be {range}"))
    } else {
        Err(format!("must be {range}"))
    }
}

/// Scene options and the scenes that use them, for [`ignored_by_scene`].
pub enum SceneOption {
    /// `--radius`: the sphere radius of density, clusters and line-x.
    Radius,
    /// `--volume-fraction`: density and clusters.
    VolumeFraction,
    /// `--boxes`: the rotating scene's boxes (sphere shape only).
    Boxes,
    /// `--boulders`: the boulders scene's boulders.
    Boulders,
}

impl SceneOption {
    pub fn flag(&self) -> &'static str {
        match self {
            SceneOption::Radius => "--radius",
            SceneOption::VolumeFraction => "--volume-fraction",
            SceneOption::Boxes => "--boxes",
            SceneOption::Boulders => "--boulders",
        }
    }

    fn used_by(&self, kind: SceneKind) -> bool {
        match self {
            SceneOption::Radius => kind.uses_radius(),
            SceneOption::VolumeFraction => kind.uses_volume_fraction(),
            SceneOption::Boxes => kind == SceneKind::Rotating,
            SceneOption::Boulders => kind == SceneKind::Boulders,
        }
    }

    /// "the density, clusters and line-x scenes".
    fn scenes(&self) -> String {
        let names: Vec<&str> = SceneKind::ALL
            .iter()
            .filter(|&&k| self.used_by(k))
            .map(|k| k.name())
            .collect();
        match names.as_slice() {
            [one] => format!("the {one} scene"),
            [rest @ .., last] => format!("the {} and {last} scenes", rest.join(", ")),
            [] => "no scene".into(),
        }
    }
}

/// Refuses a scene option given (`given`) where the run does not use it: `scene` is the
/// generated scene (`None`: a `--scene-file`), `spheres` whether the run is on spheres (the
/// rotating scene's boxes exist on the sphere path only). A flag left out is never refused: its
/// default applies only where it is used.
pub fn ignored_by_scene(
    option: SceneOption,
    given: bool,
    scene: Option<SceneKind>,
    spheres: bool,
) -> anyhow::Result<()> {
    if !given {
        return Ok(());
    }
    let flag = option.flag();
    let used_by = option.scenes();
    match scene {
        None => anyhow::bail!(
            "{flag} applies to {used_by} only; a --scene-file fixes every sphere, so it would be \
             ignored"
        ),
        Some(kind) if !option.used_by(kind) => anyhow::bail!(
            "{flag} applies to {used_by} only; the {} scene would ignore it",
            kind.name()
        ),
        Some(_) if matches!(option, SceneOption::Boxes) && !spheres => anyhow::bail!(
            "{flag} applies to {used_by} with --shape sphere only; --shape obb|polygon place one \
             shape per sphere of the scene, so it would be ignored"
        ),
        Some(_) => Ok(()),
    }
}

/// Checks `--method NAME` (one method) for a shape. Spheres take any broad-phase method (and the
/// peers, which need `--features peers`); boxes and polygons run one pipeline, an AABB sweep
/// then SAT on its candidates (docs/design.md §4.4-4.5), named `sap`.
pub fn method_for_shape(flag: &str, name: &str, shape: crate::args::Shape) -> anyhow::Result<()> {
    use sweepfan::registry::PEER_NAMES;
    let shown = sweepfan::error::shown(name);
    match shape {
        crate::args::Shape::Sphere => {
            if sweepfan_cli::run::methods::is_method_name(name) {
                return Ok(());
            }
            let mut known: Vec<&str> = sweepfan::Method::ALL.iter().map(|m| m.name()).collect();
            known.push(sweepfan::registry::AUTO);
            anyhow::bail!(
                "{flag} {shown}: unknown method; sphere methods are {} (and {} with --features \
                 peers)",
                known.join(", "),
                PEER_NAMES.join(", ")
            )
        }
        other => {
            if name == SHAPE_METHOD {
                return Ok(());
            }
            anyhow::bail!(
                "{flag} {shown}: --shape {} runs one method, {SHAPE_METHOD} (an AABB sweep, then \
                 SAT on its candidates); give {flag} {SHAPE_METHOD} or leave {flag} out",
                other.name()
            )
        }
    }
}

/// The one method of the box and polygon pipelines (see [`method_for_shape`]).
pub const SHAPE_METHOD: &str = "sap";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_name_the_range() {
        assert_eq!(count("3"), Ok(3));
        for (bad, what) in [
            ("0", "must be at least 1"),
            ("-1", "is negative: must be at least 1"),
            ("1.5", "is not a whole number"),
            ("NaN", "is NaN"),
            ("inf", "is infinite"),
            ("x", "is not a number"),
            ("1e3", "digits only"),
        ] {
            let e = count(bad).unwrap_err();
            assert!(e.contains(what) && e.contains("at least 1"), "{bad}: {e}");
        }
        // Past the type: the limit it passed is named, not the lower one.
        for bad in ["99999999999999999999999", "1e20"] {
            let e = count(bad).unwrap_err();
            assert!(e.contains("too large: must be at most 1844"), "{bad}: {e}");
        }
        assert!(
            objects("1e20")
                .unwrap_err()
                .contains("too large: must be at most 4294967294")
        );
        assert!(objects("0").unwrap_err().contains("empty scene"));
        assert_eq!(threads("1025").unwrap_err(), "must be in 1..=1024");
        assert_eq!(subgroup_size("32"), Ok(32));
        assert!(subgroup_size("24").unwrap_err().contains("power of two"));
        assert!(subgroup_size("256").unwrap_err().contains("4..=128"));
    }

    #[test]
    fn reals_are_positive_and_finite() {
        assert_eq!(positive_length("0.5"), Ok(0.5));
        assert_eq!(positive_length("1e18"), Ok(1e18));
        for big in ["1.1e18", "1e38", "3e38"] {
            let e = positive_length(big).unwrap_err();
            assert!(e.contains("too large") && e.contains("1e18"), "{big}: {e}");
        }
        for bad in ["0", "-1", "NaN", "inf", "-inf", "1e39", "1e-50", "x"] {
            assert!(positive_length(bad).is_err(), "{bad}");
        }
        assert_eq!(seconds("2.5"), Ok(2.5));
        for bad in ["0", "-0", "-3", "NaN", "inf"] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(volume_fraction("0.01"), Ok(0.01));
        let e = volume_fraction("1e-46").unwrap_err();
        assert!(
            e.starts_with("rounds to 0 in f32: must be in (0, 0.74)"),
            "{e}"
        );
        for bad in ["0", "0.74", "1", "1e30", "-0.1", "NaN", "inf"] {
            let e = volume_fraction(bad).unwrap_err();
            assert!(e.contains("(0, 0.74)"), "{bad}: {e}");
        }
    }

    #[test]
    fn scene_options_name_the_scenes_that_use_them() {
        let e = ignored_by_scene(SceneOption::Radius, true, Some(SceneKind::Paper), true)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "--radius applies to the density, clusters, line-x and boulders scenes only; the \
             paper scene would ignore it"
        );
        assert!(ignored_by_scene(SceneOption::Radius, false, Some(SceneKind::Paper), true).is_ok());
        assert!(
            ignored_by_scene(SceneOption::Boxes, true, Some(SceneKind::Rotating), true).is_ok()
        );
        assert!(
            ignored_by_scene(SceneOption::Boxes, true, Some(SceneKind::Rotating), false).is_err()
        );
    }
}
