//! What the CLI, the examples and the benches share: the method registry, running frames and
//! measuring them ([`bench`](mod@bench)), the stress loop, and verification against the CPU oracle
//! (spheres in [`verify`], boxes and polygons in [`verify_shapes`]).

pub mod auto_bench;
pub mod bench;
pub mod boxes;
pub mod contact_bench;
pub mod gpu;
pub mod in_flight;
pub mod methods;
pub mod output;
pub mod resident;
pub mod row;
pub mod scene_size;
pub mod sort_bench;
pub mod stress;
pub mod verify;
pub mod verify_shapes;
pub mod worlds_bench;

/// `n` as the u32 count the GPU kernels index with, or `Error::TooLarge` naming `what`.
pub fn count_u32(what: &str, n: usize) -> sweepfan::Result<u32> {
    u32::try_from(n).map_err(|_| {
        sweepfan::Error::past_u32(
            n as u64,
            format!(
                "{n} {what}: the GPU kernels index with 32 bits, so at most {} fit",
                u32::MAX
            ),
        )
    })
}

/// Refuses `count` items of `per_item` bytes each before they are allocated, when they do not fit
/// in what this process may use (`sweepfan::broadphase::limits::check_fits_or`, docs/design.md
/// §9.14); the error names `what` and ends with `hint(how many items fit)`.
pub fn check_count_fits(
    what: &str,
    count: usize,
    per_item: u64,
    hint: impl FnOnce(u64) -> String,
) -> sweepfan::error::Result<()> {
    sweepfan::broadphase::limits::check_fits_or(
        what,
        (count as u64).saturating_mul(per_item),
        |usable| hint(usable / per_item),
    )
}

/// Bytes a timed frame's record keeps until the run's medians are taken: its time, tests and
/// pairs, its stage times, device counts and events (about 20 words; 256 bounds them).
const BYTES_PER_FRAME: u64 = 256;

/// Refuses `frames` timed frames whose records do not fit in what this process may use, before
/// the first frame (`--frames 1099511627776` grew the records by tens of MB a second to an
/// abort).
pub fn check_frames(frames: usize) -> sweepfan::error::Result<()> {
    check_count_fits(
        &format!("{frames} frames"),
        frames,
        BYTES_PER_FRAME,
        |fit| {
            format!(
                "use fewer frames (about {fit} fit: each frame's times are kept for the medians)"
            )
        },
    )
}

/// `Err(Error::Interrupted)` once the tool's token is cancelled: frame loops look between
/// frames, as a frame that makes no long wait and no long candidate loop (a GPU frame of 10
/// spheres, the sector CCD's frame) reaches none of the library's checks.
pub fn stop_if_interrupted() -> sweepfan::error::Result<()> {
    if interrupted() {
        Err(sweepfan::Error::Interrupted)
    } else {
        Ok(())
    }
}

/// The tool's cancellation: the token its SIGINT handler cancels
/// (`run::output::stop_calls_on_interrupt`) and its `main` gives every library call
/// (`sweepfan::Limits`, docs/design.md §9.18). One per process.
pub fn stop_token() -> sweepfan::CancelToken {
    STOP.get_or_init(sweepfan::CancelToken::new).clone()
}

/// Whether the tool's token was cancelled (a SIGINT came): work the tool runs between library
/// calls (the selftest's checks) stops there.
pub fn interrupted() -> bool {
    STOP.get().is_some_and(sweepfan::CancelToken::is_cancelled)
}

static STOP: std::sync::OnceLock<sweepfan::CancelToken> = std::sync::OnceLock::new();

/// A unit test's scratch directory, created: `sweepfan-NAME-PID` under the system's temporary
/// directory (the test removes it when done).
#[cfg(test)]
pub(crate) fn test_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sweepfan-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
