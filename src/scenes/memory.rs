//! How much memory the machine has, so that a request too large for it is refused with a clear
//! error before anything is allocated (an allocation failure aborts the process, and the kernel
//! kills a process that overcommits).

use crate::error::{Error, Result};

/// Bytes of memory available to new allocations (`MemAvailable` of `/proc/meminfo`), or `None`
/// where the system does not say.
pub fn available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// [`available_bytes`] read once per process: for hot paths (each frame's pair stage), where
/// reading `/proc/meminfo` would cost more than the frame's own work on small scenes.
pub fn available_bytes_once() -> Option<u64> {
    static ONCE: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *ONCE.get_or_init(available_bytes)
}

/// `Ok` when `bytes` (an estimate for `what`) fits in the memory available, with a quarter kept
/// back for everything else; else [`Error::TooLarge`] naming both sizes.
pub fn check_fits(what: &str, bytes: u64) -> Result<()> {
    let Some(available) = available_bytes() else {
        return Ok(());
    };
    let usable = available / 4 * 3;
    if bytes > usable {
        return Err(Error::TooLarge(format!(
            "{what} needs about {} of memory; {} is available (at most {} is used)",
            human(bytes),
            human(available),
            human(usable)
        )));
    }
    Ok(())
}

/// Bytes as `12.3 GB`.
pub fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_larger_than_memory_is_too_large() {
        if available_bytes().is_none() {
            return; // not Linux: nothing to check against
        }
        let e = check_fits("a test", u64::MAX / 2).unwrap_err().to_string();
        assert!(e.contains("a test") && e.contains("available"), "{e}");
        assert!(check_fits("a test", 1 << 20).is_ok());
    }
}
