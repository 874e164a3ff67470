//! Sorting building blocks: exclusive scan, the radix sorts (tiled, portable, subgroup), and the
//! key kernels of the sphere broad phase.

pub(crate) mod keys;
pub mod radix_sort;
pub mod radix_sort_subgroup;
pub mod radix_tiles;
pub(crate) mod scan;
