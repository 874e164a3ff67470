//! Sorting building blocks: exclusive scan, the portable and the subgroup radix sort, and the
//! key kernels of the sphere broad phase.

pub(crate) mod keys;
pub mod radix_sort;
pub mod radix_sort_subgroup;
pub(crate) mod scan;
