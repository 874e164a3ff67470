//! Slots of the counter buffers that Rust and WGSL both index, named once: the WGSL constants
//! are generated from [`SLOTS`] and composed where a shader writes `// #import slots.wgsl`
//! (`gpu::shader`), so `counters[SPHERE_APPEND]` means the same word on both sides. The sector
//! accuracy histograms' bins are indexed by the membership bits (`SECTOR_BITS`, feature
//! `paper`), generated the same way.

#[cfg(feature = "paper")]
use crate::geom::sector::classify::bits;

/// `pub const NAME: u32 = K;` for each slot, and [`SLOTS`], which lists them: each name is
/// written once.
macro_rules! slots {
    ($($(#[$doc:meta])* $name:ident = $slot:literal;)+) => {
        /// Every named slot, with its index (a u64 total takes its slot and the next).
        pub const SLOTS: [(&str, u32); [$($slot),+].len()] = [$((stringify!($name), $name)),+];
        $($(#[$doc])* pub const $name: u32 = $slot;)+
    };
}

slots! {
    /// The sphere frame's counters: sphere tests (u64).
    SPHERE_TESTS = 0;
    /// Touching pairs found (u64), also past the list's capacity.
    SPHERE_PAIRS = 2;
    /// The pair list's append slot (counts past capacity).
    SPHERE_APPEND = 4;
    /// Walks the device cut short (lavapipe's loop cap): an error, never a short list.
    SPHERE_CUT_SHORT = 5;
    /// The paper's min_axis test count (u64): the smallest forward counts summed.
    SPHERE_PAPER_MIN_AXIS = 6;
    /// The grid walk's bucket lookups (u64): neighbour cells whose occupancy bit was set.
    SPHERE_GRID_LOOKUPS = 8;
    /// The AABB sweep's counters (`boxes/aabb_sap.wgsl`): the candidate list's append slot.
    SWEEP_APPEND = 0;
    /// Times the append slot wrapped past 2^32 (the count's high word).
    SWEEP_WRAPS = 1;
    /// Loops the device cut short.
    SWEEP_CUT_SHORT = 2;
    /// Polygons with malformed vertex offsets.
    SWEEP_BAD_OFFSETS = 3;
}

/// Words of the sphere frame's counters.
pub const SPHERE_COUNTERS: u32 = 10;

/// The sector accuracy experiments' membership bits (`geom::sector::classify::bits`): a grid
/// point's mask is its histogram bin. `SECTOR` is the thesis's sector in its pose, the union
/// of the sub-piece sectors in the general one.
#[cfg(feature = "paper")]
pub const SECTOR_BITS: [(&str, u32); 6] = [
    ("REFERENCE", bits::REFERENCE),
    ("SPECULATIVE", bits::SPECULATIVE),
    ("SPECULATIVE_ENDPOINTS", bits::SPECULATIVE_ENDPOINTS),
    ("SECTOR", bits::SECTOR),
    ("CONSERVATIVE_SECTOR", bits::CONSERVATIVE_SECTOR),
    ("EXACT_SWEEP", bits::EXACT_SWEEP),
];

/// The WGSL text of [`SLOTS`] and, with `paper`, `SECTOR_BITS`: one `const NAME: u32 = Ku;` each.
pub fn wgsl() -> String {
    let mut text = String::from("// Generated from src/gpu/slots.rs.\n");
    #[cfg(feature = "paper")]
    let slots = SLOTS.iter().chain(&SECTOR_BITS);
    #[cfg(not(feature = "paper"))]
    let slots = SLOTS.iter();
    for (name, slot) in slots {
        text.push_str(&format!("const {name}: u32 = {slot}u;\n"));
    }
    text
}
