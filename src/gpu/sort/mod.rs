//! Sorting building blocks: exclusive scan, the radix sorts (tiled, portable, subgroup), and the
//! key kernels of the sphere broad phase.

pub(crate) mod keys;
pub mod radix_sort;
pub mod radix_sort_subgroup;
pub mod radix_tiles;
pub(crate) mod scan;

/// An [`Error::InvalidArgument`](crate::Error::InvalidArgument) of `n` unless `buffer` holds
/// `bytes` (its `n` elements); `message(size)`, `size` the buffer's, says so for people.
pub(crate) fn check_holds(
    buffer: &wgpu::Buffer,
    bytes: u64,
    message: impl FnOnce(u64) -> String,
) -> crate::error::Result<()> {
    if buffer.size() < bytes {
        return Err(crate::error::Error::invalid_argument(
            "n",
            message(buffer.size()),
        ));
    }
    Ok(())
}
