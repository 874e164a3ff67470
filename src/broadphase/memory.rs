//! How much memory this process may still allocate, so that a request too large for it is
//! refused with a clear error before anything is allocated: an allocation failure aborts the
//! process (exit 134), and the kernel kills one that overcommits (docs/design.md §9.14).
//!
//! The figure is the smallest of three limits, any of which a run can reach first:
//! * `MemAvailable` of `/proc/meminfo`: what the machine can give without swapping;
//! * the address-space limit (`ulimit -v`, `prlimit --as`: `RLIMIT_AS`) less the process's
//!   current size (`VmSize` of `/proc/self/status`);
//! * the memory limit of the process's cgroup, or of any cgroup above it, less its usage (v2:
//!   `memory.max` - `memory.current`; v1: `memory.limit_in_bytes` - `memory.usage_in_bytes`;
//!   `max` means none). The usage counts the page cache, whose inactive part the kernel reclaims
//!   before it fails an allocation: that part (`inactive_file` of `memory.stat`) counts as free,
//!   or a container whose build filled its cache would refuse everything.
//!
//! A request is checked against three quarters of it ([`Available::usable`]), the rest kept back
//! for everything else the run holds. The parsers are pure functions of the files' texts.

use crate::error::{Error, Exceeds, Result};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A limit at or above this many bytes is no limit: cgroup v1 writes "unlimited" as
/// 0x7FFFFFFFFFFFF000 (the largest page-aligned signed value).
const UNLIMITED: u64 = 1 << 62;

/// Where a figure of available memory comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// `MemAvailable` in `/proc/meminfo`.
    MemAvailable,
    /// `RLIMIT_AS` less the process's `VmSize`.
    AddressSpace,
    /// The cgroup's memory limit less its usage.
    Cgroup,
    /// The caller's budget ([`crate::MemoryBudget::Bytes`]).
    Given,
}

impl Limit {
    /// The limit as a message names it.
    pub fn describe(self) -> &'static str {
        match self {
            Limit::MemAvailable => "MemAvailable in /proc/meminfo",
            Limit::AddressSpace => "under the address-space limit, ulimit -v",
            Limit::Cgroup => "under the memory limit of the process's cgroup",
            Limit::Given => "the caller's budget",
        }
    }
}

/// Bytes this process may still allocate, and the limit that binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Available {
    /// Bytes that may still be allocated.
    pub bytes: u64,
    /// The limit those bytes come from.
    pub limit: Limit,
}

impl Available {
    /// The smallest of the figures known (`None` when none is).
    pub fn smallest(figures: impl IntoIterator<Item = Option<Available>>) -> Option<Available> {
        figures.into_iter().flatten().min_by_key(|a| a.bytes)
    }

    /// What one request may use: of a system figure three quarters, a quarter kept back for
    /// the rest of the run; of the caller's budget the whole.
    pub fn usable(&self) -> u64 {
        match self.limit {
            Limit::Given => self.bytes,
            _ => self.bytes / 4 * 3,
        }
    }

    /// The bytes a refusal's hint counts with ("about 23,000,000 objects fit"): [`Self::usable`]
    /// less 1%, since the figure moves between runs by the process's own size (a few KB), and a
    /// retry at the count named must pass.
    pub fn hinted(&self) -> u64 {
        let usable = self.usable();
        usable - usable / 100
    }

    /// `17.6 GB (three quarters of the 23.5 GB available, MemAvailable in /proc/meminfo)`;
    /// `1.0 GB (the caller's budget)`.
    pub fn describe(&self) -> String {
        if self.limit == Limit::Given {
            return format!("{} ({})", human(self.bytes), self.limit.describe());
        }
        format!(
            "{} (three quarters of the {} available, {})",
            human(self.usable()),
            human(self.bytes),
            self.limit.describe()
        )
    }
}

/// What the calling thread's calls may allocate now: the figure of the [`crate::MemoryBudget`]
/// they run under ([`crate::Limits::run`]; `None`, no budget, by default).
pub fn available() -> Option<Available> {
    super::limits::current().memory.available()
}

/// The memory this process may allocate now: the smallest of the three limits (module docs),
/// or `None` where the system states none (not Linux, no `/proc`). Read only where a caller
/// asks for it ([`crate::MemoryBudget::System`]).
pub fn system_available() -> Option<Available> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let figure = |limit: Limit| move |bytes: u64| Available { bytes, limit };
    let mem = read("/proc/meminfo")
        .as_deref()
        .and_then(parse_mem_available)
        .map(figure(Limit::MemAvailable));
    let vm_size = read("/proc/self/status")
        .as_deref()
        .and_then(parse_vm_size)
        .unwrap_or(0);
    let address_space = address_space_limit()
        .map(|limit| limit.saturating_sub(vm_size))
        .map(figure(Limit::AddressSpace));
    let cgroup = match (read("/proc/self/cgroup"), read("/proc/self/mountinfo")) {
        (Some(cgroups), Some(mounts)) => cgroup_memory_dirs(&cgroups, &mounts)
            .iter()
            .flat_map(CgroupDir::files)
            .filter_map(|(limit, usage, stat)| {
                let limit = std::fs::read_to_string(limit).ok()?;
                let usage = std::fs::read_to_string(usage).unwrap_or_default();
                let stat = std::fs::read_to_string(stat).unwrap_or_default();
                cgroup_left(&limit, &usage, &stat)
            })
            .min()
            .map(figure(Limit::Cgroup)),
        _ => None,
    };
    Available::smallest([mem, address_space, cgroup])
}

/// Bytes the calling thread's calls may allocate now ([`available`]'s figure).
pub fn available_bytes() -> Option<u64> {
    available().map(|a| a.bytes)
}

/// `Ok` when `bytes` (an estimate for `what`) fits in what the calling thread's budget allows
/// ([`available`], [`Available::usable`]); else [`Error::TooLarge`] naming both sizes and the limit that binds.
pub fn check_fits(what: &str, bytes: u64) -> Result<()> {
    check_fits_or(what, bytes, |_| String::new())
}

/// [`check_fits`], the error ending with `hint(bytes)` ([`Available::hinted`]): how to proceed (`use fewer
/// --rotations (about 53600000 fit)`).
pub fn check_fits_or(what: &str, bytes: u64, hint: impl FnOnce(u64) -> String) -> Result<()> {
    match available() {
        Some(a) if bytes > a.usable() => Err(too_large(what, bytes, &a, &hint(a.hinted()))),
        _ => Ok(()),
    }
}

/// Room in `list` for `n` more items, or the host-memory error naming `what` where the
/// calling thread's budget ([`check_fits`]) or the allocator refuses it: a refused growth would
/// abort the process.
pub fn reserve<T>(list: &mut Vec<T>, n: usize, what: &str) -> Result<()> {
    let needed = (n as u64).saturating_mul(std::mem::size_of::<T>() as u64);
    // As a lazy budget: the system's figure is not read for small amounts (a read is about a
    // dozen /proc and cgroup files).
    LazyBudget::new().check(what, needed)?;
    if list.try_reserve_exact(n).is_ok() {
        return Ok(());
    }
    Err(refused(what, needed))
}

/// Host bytes of one box in the CPU's box paths (its AABB, its frame, its sweep's entries and
/// order), as [`HOST_BYTES_PER_OBJECT`] is a sphere's.
pub const HOST_BYTES_PER_BOX: u64 = 256;

/// The CPU box paths' buffers for `n` boxes within the caller's budget (read lazily: not for
/// small scenes), refused naming the boxes and how many fit; fewer than two need none. 10^7
/// boxes under `ulimit -v` aborted in those buffers' growth.
pub fn check_boxes(n: usize) -> Result<()> {
    if n < 2 {
        return Ok(());
    }
    let needed = (n as u64).saturating_mul(HOST_BYTES_PER_BOX);
    LazyBudget::new().check_or(&format!("{n} boxes"), needed, |fit| {
        format!("about {} boxes fit", fit / HOST_BYTES_PER_BOX)
    })
}

/// Room in the pair list `list` for `more` pairs, `pairs` found in all: the whole list within
/// the budget and the allocator's room (nothing checked where the list holds them already), a
/// refusal an [`Exceeds::PairListMemory`] whose message says that counting them alone avoids
/// it.
pub fn reserve_pairs<T>(list: &mut Vec<T>, more: usize, pairs: u64) -> Result<()> {
    let whole = list.len().saturating_add(more);
    if whole <= list.capacity() {
        return Ok(());
    }
    let what = format!("{pairs} touching pairs as a list");
    let hint = "ask for their count alone (no pair list) instead";
    let needed = (whole as u64).saturating_mul(std::mem::size_of::<T>() as u64);
    LazyBudget::new()
        .check_or(&what, needed, |_| hint.to_string())
        .map_err(|e| for_pair_list(e, pairs))?;
    // Amortized (a list appended chunk by chunk grows by doubling, not by each chunk; an empty
    // list gets `more` exactly).
    list.try_reserve(more).map_err(|_| {
        Error::too_large(
            Exceeds::PairListMemory {
                pairs,
                needed,
                usable: available().map(|a| a.usable()),
            },
            format!(
                "{what}: about {} of memory needed, which the allocator refused; {hint}",
                human(needed)
            ),
        )
    })
}

/// [`refused`] for a pair list of `pairs` pairs: an [`Exceeds::PairListMemory`].
pub fn pairs_refused(what: &str, pairs: u64, needed: u64) -> Error {
    for_pair_list(refused(what, needed), pairs)
}

/// `e` with a host-memory refusal ([`Exceeds::HostMemory`]) turned into the pair list's
/// ([`Exceeds::PairListMemory`]): what the memory refused was the list of `pairs` pairs.
pub fn for_pair_list(e: Error, pairs: u64) -> Error {
    match e {
        Error::TooLarge {
            exceeds: Exceeds::HostMemory { needed, usable },
            message,
        } => Error::too_large(
            Exceeds::PairListMemory {
                pairs,
                needed,
                usable,
            },
            message,
        ),
        e => e,
    }
}

/// The host-memory error of `needed` bytes for `what` that the allocator refused.
pub fn refused(what: &str, needed: u64) -> Error {
    let usable = available().map(|a| a.usable());
    Error::too_large(
        Exceeds::HostMemory { needed, usable },
        format!(
            "{what}: about {} of memory needed, which the allocator refused",
            human(needed)
        ),
    )
}

/// Pushes `item`, growing `list` (doubling) only where the calling thread's budget and the
/// allocator allow: false, nothing pushed, where they refuse (an infallible growth would abort
/// the process). For lists that grow pair by pair inside a walk.
#[inline(always)]
pub fn try_push<T>(list: &mut Vec<T>, item: T) -> bool {
    if list.len() == list.capacity() && !grow(list) {
        return false;
    }
    list.push(item);
    true
}

#[cold]
fn grow<T>(list: &mut Vec<T>) -> bool {
    reserve(list, list.len().max(64), "").is_ok()
}

/// Host bytes per object of a run that checks its results (a benchmark, a Python call), estimated: the scene (sphere and velocity, 28 B),
/// a method's sorted copies, keys and indices (up to about 64 B), the reference's as many, and
/// room for a few pairs per object (8 B each).
pub const HOST_BYTES_PER_OBJECT: u64 = 256;

/// Host bytes per object of one CPU method's frame alone, estimated: its sorted copies, keys and
/// indices (up to about 64 B) and room for a few pairs. Every CPU method checks its scene
/// against the calling thread's budget at this figure before it allocates (read lazily: not
/// for small scenes), so a caller that did not check the scene size first (`check_scene_size`,
/// a run that also checks its results) is refused, not aborted: `sweepfan verify` of 10^6
/// spheres under `ulimit -v 150000` aborted in the grid's sort scratch.
pub(crate) const METHOD_HOST_BYTES_PER_OBJECT: u64 = 128;

/// [`check_scene_size_with`] at [`METHOD_HOST_BYTES_PER_OBJECT`] for `spheres`, the budget read
/// only where the scene needs more than [`LazyBudget::UNCHECKED_BYTES`] (a frame of a small
/// scene reads no `/proc` file; a larger one under [`crate::MemoryBudget::System`] reads it each
/// call, tens of microseconds beside a frame of milliseconds). An empty scene passes (it has no
/// pairs); bad input refused here is the call's error as the method's validation words it.
pub(crate) fn check_method_scene(spheres: &[crate::geom::sphere::Sphere]) -> Result<()> {
    let n = spheres.len();
    let bytes = (n as u64).saturating_mul(METHOD_HOST_BYTES_PER_OBJECT);
    if n == 0 || LazyBudget::new().allows(bytes) {
        return Ok(());
    }
    crate::geom::sphere::validate_spheres(spheres)?;
    check_scene_size_with(n, METHOD_HOST_BYTES_PER_OBJECT)
}

/// Refuses a scene size before anything is allocated: zero objects, more than the u32 indices
/// of pairs hold, or more than the calling thread's memory budget holds (see
/// [`HOST_BYTES_PER_OBJECT`]; the budget of [`crate::Limits`]: none by default,
/// [`crate::MemoryBudget::System`] for the smallest of available memory, the address-space
/// limit and the cgroup's, docs/design.md §9.14), naming what it would need and how many
/// objects fit.
pub fn check_scene_size(n: usize) -> Result<()> {
    check_scene_size_with(n, HOST_BYTES_PER_OBJECT)
}

/// [`check_scene_size`] at `bytes_per_object`.
pub fn check_scene_size_with(n: usize, bytes_per_object: u64) -> Result<()> {
    if n == 0 {
        return Err(Error::EmptyScene);
    }
    if n as u64 > u32::MAX as u64 {
        return Err(Error::past_u32(
            n as u64,
            format!(
                "{n} objects: pairs index objects with 32 bits, so at most {} fit",
                u32::MAX
            ),
        ));
    }
    check_fits_or(
        &format!("a scene of {n} objects"),
        (n as u64).saturating_mul(bytes_per_object),
        |usable| {
            format!(
                "use a smaller n (about {} objects fit)",
                usable / bytes_per_object
            )
        },
    )
}

/// The error for a request of `needed` bytes (at least) that `available` cannot hold:
/// `{what}: about {needed} of memory needed, but this run may use {available}; {hint}`.
pub fn too_large(what: &str, needed: u64, available: &Available, hint: &str) -> Error {
    let hint = if hint.is_empty() {
        String::new()
    } else {
        format!("; {hint}")
    };
    Error::too_large(
        Exceeds::HostMemory {
            needed,
            usable: Some(available.usable()),
        },
        format!(
            "{what}: about {} of memory needed, but this run may use {}{hint}",
            human(needed),
            available.describe()
        ),
    )
}

/// The memory budget of one computation that allocates as it goes (the CPU pair buffers): the
/// calling thread's [`crate::MemoryBudget`], taken when the computation begins (its work may run
/// on other threads), every growth checked against it before it is made. The system's figure is
/// read once, when the computation has allocated more than [`LazyBudget::UNCHECKED_BYTES`]
/// (small runs never read `/proc`).
#[derive(Debug)]
pub struct LazyBudget {
    budget: crate::broadphase::limits::MemoryBudget,
    read: OnceLock<Option<Available>>,
}

impl Default for LazyBudget {
    fn default() -> Self {
        Self::new()
    }
}

impl LazyBudget {
    /// Allocations up to this many bytes in all are not checked against the system's figure.
    pub const UNCHECKED_BYTES: u64 = 16 << 20;

    /// The calling thread's budget, not yet read.
    pub fn new() -> Self {
        Self::of(super::limits::current().memory)
    }

    /// `budget`, not yet read.
    pub fn of(budget: crate::broadphase::limits::MemoryBudget) -> Self {
        Self {
            budget,
            read: OnceLock::new(),
        }
    }

    /// Whether the computation may have allocated `bytes` in all.
    pub fn allows(&self, bytes: u64) -> bool {
        use crate::broadphase::limits::MemoryBudget;
        match self.budget {
            MemoryBudget::Unchecked => true,
            MemoryBudget::System if bytes <= Self::UNCHECKED_BYTES => true,
            _ => self.available().is_none_or(|a| bytes <= a.usable()),
        }
    }

    /// The figure checked against (read now if it was not yet).
    pub fn available(&self) -> Option<Available> {
        *self.read.get_or_init(|| self.budget.available())
    }

    /// [`check_fits`] against this budget: `bytes` for `what` allowed ([`Self::allows`]), or
    /// the host-memory error naming them.
    pub fn check(&self, what: &str, bytes: u64) -> Result<()> {
        self.check_or(what, bytes, |_| String::new())
    }

    /// [`Self::check`], the error ending with `hint(bytes)` as [`check_fits_or`]'s.
    pub fn check_or(&self, what: &str, bytes: u64, hint: impl FnOnce(u64) -> String) -> Result<()> {
        if self.allows(bytes) {
            return Ok(());
        }
        match self.available() {
            Some(a) => Err(too_large(what, bytes, &a, &hint(a.hinted()))),
            None => Ok(()),
        }
    }
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
pub fn parse_mem_available(meminfo: &str) -> Option<u64> {
    kib_field(meminfo, "MemAvailable:")
}

/// `VmSize` (the address space in use) of a `/proc/self/status` text, in bytes.
pub fn parse_vm_size(status: &str) -> Option<u64> {
    kib_field(status, "VmSize:")
}

/// The value of a `Name:   1234 kB` line, in bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// An rlimit's current value in bytes: `None` for no limit (`infinity`, `RLIM_INFINITY`).
#[cfg(any(unix, test))]
pub fn rlimit_bytes(current: u64, infinity: u64) -> Option<u64> {
    (current != infinity && current < UNLIMITED).then_some(current)
}

/// The address-space limit of this process (`RLIMIT_AS`), `None` when there is none.
#[cfg(unix)]
#[allow(clippy::unnecessary_cast)] // rlim_t is u64 on Linux, not on every Unix
fn address_space_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one `rlimit` through a pointer to a live local.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } != 0 {
        return None;
    }
    rlimit_bytes(r.rlim_cur as u64, libc::RLIM_INFINITY as u64)
}

#[cfg(not(unix))]
fn address_space_limit() -> Option<u64> {
    None
}

/// What a cgroup may still use, from the texts of its limit file (`memory.max`, v1
/// `memory.limit_in_bytes`), usage file (`memory.current`, `memory.usage_in_bytes`) and
/// `memory.stat`: the limit less the usage, the inactive page cache (`inactive_file`, v1
/// `total_inactive_file`) not counted as used. `None` for no limit (`max`, or v1's "unlimited"
/// near 2^63) or a limit that does not parse; a usage or stat that does not parse counts as 0.
pub fn cgroup_left(limit: &str, usage: &str, stat: &str) -> Option<u64> {
    let limit: u64 = limit.trim().parse().ok()?;
    if limit >= UNLIMITED {
        return None;
    }
    let field = |key: &str| {
        stat.lines().find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            if k == key {
                v.trim().parse::<u64>().ok()
            } else {
                None
            }
        })
    };
    let reclaimable = field("total_inactive_file")
        .or_else(|| field("inactive_file"))
        .unwrap_or(0);
    let usage: u64 = usage.trim().parse().unwrap_or(0);
    Some(limit.saturating_sub(usage.saturating_sub(reclaimable)))
}

/// The process's cgroup directory in one hierarchy that has the memory controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupDir {
    /// cgroup v2 (`memory.max`) rather than v1 (`memory.limit_in_bytes`).
    pub v2: bool,
    /// Where the hierarchy is mounted.
    pub mount: PathBuf,
    /// The process's cgroup in it.
    pub dir: PathBuf,
}

impl CgroupDir {
    /// The (limit, usage, stat) files of the process's cgroup and of every cgroup above it up to
    /// the mount (a parent's limit binds its children too).
    pub fn files(&self) -> Vec<(PathBuf, PathBuf, PathBuf)> {
        let (limit, usage) = if self.v2 {
            ("memory.max", "memory.current")
        } else {
            ("memory.limit_in_bytes", "memory.usage_in_bytes")
        };
        self.dir
            .ancestors()
            .take_while(|d| d.starts_with(&self.mount))
            .map(|d| (d.join(limit), d.join(usage), d.join("memory.stat")))
            .collect()
    }
}

/// The memory cgroups of a process, from the texts of `/proc/self/cgroup` (`0::/path` for v2,
/// `N:...,memory,...:/path` for v1) and `/proc/self/mountinfo` (where each hierarchy is mounted,
/// and which of its cgroups is the mount's root).
pub fn cgroup_memory_dirs(proc_self_cgroup: &str, mountinfo: &str) -> Vec<CgroupDir> {
    let mounts: Vec<Mount> = mountinfo.lines().filter_map(Mount::parse).collect();
    let mut dirs = Vec::new();
    for line in proc_self_cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let v2 = id == "0" && controllers.is_empty();
        if !v2 && !controllers.split(',').any(|c| c == "memory") {
            continue;
        }
        let found = mounts.iter().find_map(|m| {
            let kind = if v2 {
                m.fstype == "cgroup2"
            } else {
                m.fstype == "cgroup" && m.options.split(',').any(|o| o == "memory")
            };
            let inside = Path::new(path).strip_prefix(&m.root).ok()?;
            kind.then(|| CgroupDir {
                v2,
                mount: m.point.clone(),
                dir: m.point.join(inside),
            })
        });
        dirs.extend(found);
    }
    dirs
}

/// One line of `/proc/self/mountinfo`: `id parent dev root point options [optional...] - fstype
/// source super-options`.
struct Mount {
    root: PathBuf,
    point: PathBuf,
    fstype: String,
    options: String,
}

impl Mount {
    fn parse(line: &str) -> Option<Mount> {
        let (left, right) = line.split_once(" - ")?;
        let left: Vec<&str> = left.split(' ').collect();
        let mut right = right.split(' ');
        let fstype = right.next()?.to_string();
        let options = right.nth(1).unwrap_or("").to_string();
        Some(Mount {
            root: PathBuf::from(unescape(left.get(3)?)),
            point: PathBuf::from(unescape(left.get(4)?)),
            fstype,
            options,
        })
    }
}

/// A mountinfo path field: space, tab, newline and backslash are written as `\040`, `\011`,
/// `\012`, `\134`.
fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) if b[i] == b'\\' => {
                out.push(
                    d.iter()
                        .fold(0u8, |v, c| v.wrapping_mul(8).wrapping_add(c - b'0')),
                );
                i += 4;
            }
            _ => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Bytes as `12.3 GB`.
pub fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e12 {
        format!("{:.1} TB", b / 1e12)
    } else if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests;
