//! The memory budget's readers and checks (docs/design.md §9.14).

use super::*;

use crate::broadphase::limits::{Limits, MemoryBudget};

#[cfg(target_os = "linux")]
#[test]
fn a_request_larger_than_memory_is_too_large() {
    let system = Limits::new().with_memory(MemoryBudget::System);
    assert!(system.run(available).is_some(), "Linux states its memory");
    let e = system
        .run(|| check_fits_or("a test", u64::MAX / 2, |usable| format!("{usable} fit")))
        .unwrap_err();
    assert!(
        matches!(e, Error::TooLarge { exceeds: Exceeds::HostMemory { needed, usable: Some(u) }, .. }
            if needed == u64::MAX / 2 && u < needed),
        "{e:?}"
    );
    let e = e.to_string();
    assert!(e.starts_with("too large: a test: about "), "{e}");
    assert!(e.contains(" available, "), "{e}");
    assert!(e.ends_with(" fit"), "{e}");
    assert!(check_fits("a test", 1 << 20).is_ok());
}

#[test]
fn meminfo_and_status_fields_parse_in_bytes() {
    let meminfo = "MemTotal:       24684084 kB\nMemFree:  100 kB\nMemAvailable:   23531880 kB\n";
    assert_eq!(parse_mem_available(meminfo), Some(23531880 * 1024));
    assert_eq!(parse_mem_available("MemTotal: 5 kB\n"), None);
    assert_eq!(parse_mem_available("MemAvailable: lots\n"), None);
    let status = "Name:\tsweepfan\nVmPeak:\t    4000 kB\nVmSize:\t    3892 kB\n";
    assert_eq!(parse_vm_size(status), Some(3892 * 1024));
    assert_eq!(parse_vm_size(""), None);
}

#[test]
fn rlimit_infinity_is_no_limit() {
    let infinity = u64::MAX; // RLIM_INFINITY on Linux
    assert_eq!(rlimit_bytes(infinity, infinity), None);
    assert_eq!(rlimit_bytes(2 << 30, infinity), Some(2 << 30));
    assert_eq!(rlimit_bytes(0, infinity), Some(0));
    // A platform whose infinity is another value, and a limit too large to mean anything.
    assert_eq!(rlimit_bytes(i64::MAX as u64, i64::MAX as u64), None);
    assert_eq!(rlimit_bytes(u64::MAX - 1, infinity), None);
}

#[test]
fn cgroup_limits_parse_max_numbers_and_v1_unlimited() {
    assert_eq!(cgroup_left("max\n", "123\n", ""), None);
    assert_eq!(
        cgroup_left("1073741824\n", "73741824\n", ""),
        Some(1_000_000_000)
    );
    // Usage above the limit (reclaim pending): nothing left, not an overflow.
    assert_eq!(cgroup_left("100", "200", ""), Some(0));
    assert_eq!(cgroup_left("9223372036854771712\n", "16113664\n", ""), None);
    assert_eq!(cgroup_left("", "0", ""), None);
    assert_eq!(cgroup_left("500", "garbage", "garbage"), Some(500));
    // The inactive page cache counts as free: v2 names it `inactive_file`, v1's hierarchy
    // `total_inactive_file` (its `inactive_file` is the cgroup's own).
    let v2 = "anon 300\nfile 600\nactive_file 200\ninactive_file 400\n";
    assert_eq!(cgroup_left("1000", "900", v2), Some(500));
    let v1 = "cache 700\ninactive_file 10\ntotal_inactive_file 600\n";
    assert_eq!(cgroup_left("1000", "900", v1), Some(700));
    assert_eq!(
        cgroup_left("1000", "100", "inactive_file 400\n"),
        Some(1000)
    );
}

#[test]
fn the_smallest_limit_binds_and_is_named() {
    let a = |bytes, limit| Some(Available { bytes, limit });
    let s = Available::smallest([
        a(8 << 30, Limit::MemAvailable),
        a(1 << 30, Limit::AddressSpace),
        None,
        a(2 << 30, Limit::Cgroup),
    ])
    .unwrap();
    assert_eq!(s.limit, Limit::AddressSpace);
    assert_eq!(s.usable(), 3 << 28);
    assert!(s.describe().contains("ulimit -v"), "{}", s.describe());
    assert_eq!(Available::smallest([None, None]), None);
    let e = too_large("x", 2_000_000_000, &s, "use less").to_string();
    assert_eq!(
        e,
        "too large: x: about 2.0 GB of memory needed, but this run may use 805.3 MB (three \
         quarters of the 1.1 GB available, under the address-space limit, ulimit -v); use less"
    );
}

#[test]
fn cgroup_dirs_follow_the_mounts() {
    // cgroup v1, the memory hierarchy mounted at its root (this machine's layout), plus an
    // empty v2 hierarchy in hybrid mode.
    let cgroup = "9:name=systemd:/\n4:memory:/process_api/fb9d\n1:cpu:/\n0::/\n";
    let mountinfo = "\
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    let dirs = cgroup_memory_dirs(cgroup, mountinfo);
    assert_eq!(
        dirs,
        [
            CgroupDir {
                v2: false,
                mount: "/sys/fs/cgroup/memory".into(),
                dir: "/sys/fs/cgroup/memory/process_api/fb9d".into(),
            },
            CgroupDir {
                v2: true,
                mount: "/sys/fs/cgroup/unified".into(),
                dir: "/sys/fs/cgroup/unified".into(),
            },
        ]
    );
    let files = dirs[0].files();
    assert_eq!(files.len(), 3);
    assert_eq!(
        files[1].2,
        Path::new("/sys/fs/cgroup/memory/process_api/memory.stat")
    );
    assert_eq!(
        files[0].0,
        Path::new("/sys/fs/cgroup/memory/process_api/fb9d/memory.limit_in_bytes")
    );
    assert_eq!(
        files[2].1,
        Path::new("/sys/fs/cgroup/memory/memory.usage_in_bytes")
    );

    // cgroup v2 in a container: a namespaced path under a mount whose root is that cgroup,
    // and a mount point with an escaped space.
    let cgroup = "0::/user.slice/app\n";
    let mountinfo = "\
25 1 0:22 /user.slice /sys/fs/my\\040cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate
26 1 0:23 / /proc rw - proc proc rw
";
    let dirs = cgroup_memory_dirs(cgroup, mountinfo);
    assert_eq!(dirs.len(), 1);
    assert!(dirs[0].v2);
    assert_eq!(dirs[0].dir, Path::new("/sys/fs/my cgroup/app"));
    let files = dirs[0].files();
    assert_eq!(files.len(), 2);
    assert_eq!(files[1].0, Path::new("/sys/fs/my cgroup/memory.max"));
    assert_eq!(files[1].1, Path::new("/sys/fs/my cgroup/memory.current"));

    // No memory hierarchy, or texts that are not what they should be: nothing.
    assert!(cgroup_memory_dirs("1:cpu:/\n", mountinfo).is_empty());
    assert!(cgroup_memory_dirs("garbage", "more garbage").is_empty());
    assert!(cgroup_memory_dirs("", "").is_empty());
}

#[test]
fn a_lazy_budget_reads_nothing_for_small_runs() {
    let budget = LazyBudget::of(MemoryBudget::System);
    assert!(budget.allows(LazyBudget::UNCHECKED_BYTES));
    assert!(budget.read.get().is_none());
    assert!(!budget.allows(u64::MAX) || system_available().is_none());
}

/// Without a budget nothing is refused and nothing read; a budget of bytes refuses past
/// itself, whole, even below the system's unchecked 16 MiB, naming the caller's budget.
#[test]
fn the_callers_budget_is_what_requests_are_checked_against() {
    assert_eq!(available(), None);
    assert!(check_fits("a test", u64::MAX / 2).is_ok());
    let unchecked = LazyBudget::new();
    assert!(unchecked.allows(u64::MAX) && unchecked.read.get().is_none());

    let given = Limits::new().with_memory(MemoryBudget::Bytes(1 << 20));
    given.run(|| {
        assert!(check_fits("a test", 1 << 20).is_ok());
        let e = check_fits("a test", (1 << 20) + 1).unwrap_err();
        assert!(e.to_string().contains("the caller's budget"), "{e}");
        let lazy = LazyBudget::new();
        assert!(lazy.allows(1 << 20) && !lazy.allows((1 << 20) + 1));
    });
    // Taken when the computation begins, not where its work runs.
    let lazy = given.run(LazyBudget::new);
    std::thread::scope(|s| {
        s.spawn(|| assert!(!lazy.allows(2 << 20)));
    });
}
