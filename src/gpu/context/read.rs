//! Read-back: mapping staging buffers a submitted copy filled, with one host wait, and
//! copying small results to the host (docs/design.md §9.7).

use super::GpuContext;
use crate::error::{Error, Result};

impl GpuContext {
    /// Maps the first `bytes` of a `MAP_READ` staging buffer that a submitted copy fills, waits
    /// (one host wait) until the submission `after` has run (`None`: the queue idle, else a
    /// later submission may still be running: frames in flight, docs/design.md §9.16), and
    /// hands the mapped bytes to `read` without copying them first.
    ///
    /// On every path, an error of the wait included, the map's callback is received and the
    /// buffer unmapped before returning: a buffer left mapped (or with wgpu's record of a map
    /// still set) would make every later frame that copies into it fail with a validation error
    /// that names the copy, not the first failure (docs/design.md §9.7).
    pub(crate) fn map_read<T>(
        &self,
        staging: &wgpu::Buffer,
        bytes: u64,
        what: &str,
        after: Option<wgpu::SubmissionIndex>,
        read: impl FnOnce(&[u8]) -> T,
    ) -> Result<T> {
        let slice = staging.slice(..bytes);
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        // Dropped last, after any view of the mapping: unmaps on every return (and unwind).
        let _unmap = Unmap {
            ctx: self,
            buffer: staging,
        };
        // The wait runs the callback once its submission has run, whatever error it then
        // reports.
        let waited = self.wait_for(after);
        let mapped = if waited.is_ok() {
            // The map is resolved; its callback has run or is running on another thread whose
            // poll collected it (tests share a device): wait for it, boundedly.
            rx.recv_timeout(std::time::Duration::from_secs(60)).ok()
        } else {
            match rx.try_recv() {
                Ok(r) => Some(r),
                Err(_) => {
                    // A failed poll may have stopped before the callbacks: one more, non-blocking.
                    let _ = self.device.poll(wgpu::PollType::Poll);
                    rx.try_recv().ok()
                }
            }
        };
        waited?;
        let outcome = mapped.ok_or_else(|| {
            Error::gpu(
                crate::error::GpuFailure::ReadBack,
                format!("{what}: the map callback did not run"),
            )
        })?;
        self.read_mapped(slice, outcome, what, read)
    }

    /// [`Self::map_read`] as a future, for a browser's page (docs/design.md §8.5): there the map
    /// resolves when the browser has run the copy, and the page's thread is free meanwhile;
    /// natively it is [`Self::map_read`] (one blocking wait). Unmapped on every return, as
    /// there.
    pub(crate) async fn map_read_async<T>(
        &self,
        staging: &wgpu::Buffer,
        bytes: u64,
        what: &str,
        read: impl FnOnce(&[u8]) -> T,
    ) -> Result<T> {
        if !cfg!(target_arch = "wasm32") {
            return self.map_read(staging, bytes, what, None, read);
        }
        let slice = staging.slice(..bytes);
        let (mapped, deliver) = super::block::Delivery::new();
        slice.map_async(wgpu::MapMode::Read, deliver);
        let _unmap = Unmap {
            ctx: self,
            buffer: staging,
        };
        let outcome = mapped.await;
        self.check()?;
        self.read_mapped(slice, outcome, what, read)
    }

    /// After a map's callback: its outcome, then the mapped bytes handed to `read` (both
    /// [`Self::map_read`] and [`Self::map_read_async`]).
    fn read_mapped<T>(
        &self,
        slice: wgpu::BufferSlice<'_>,
        outcome: std::result::Result<(), wgpu::BufferAsyncError>,
        what: &str,
        read: impl FnOnce(&[u8]) -> T,
    ) -> Result<T> {
        // A map fails on a lost device: the loss is what the caller must act on.
        outcome.map_err(|e| {
            if self.is_lost()
                && let Err(lost) = self.check()
            {
                return lost;
            }
            Error::gpu(
                crate::error::GpuFailure::ReadBack,
                format!("map_async ({what}): {e}"),
            )
        })?;
        let view = slice.get_mapped_range().map_err(|e| {
            Error::gpu(
                crate::error::GpuFailure::ReadBack,
                format!("get_mapped_range ({what}): {e}"),
            )
        })?;
        self.note_bytes_to_host(slice.size());
        Ok(read(&view))
    }

    /// Unmaps `buffer` whatever its state: mapped, a map still pending (aborted), or a map that
    /// failed. The last leaves wgpu's device with nothing to unmap, and the "not mapped" error
    /// it then reports is caught here by a scope of its own, not recorded for [`Self::check`];
    /// the unmap still clears wgpu's record of the map, so the next `map_async` is accepted.
    fn unmap_quietly(&self, buffer: &wgpu::Buffer) {
        let _ = super::block::caught(&self.device, &[wgpu::ErrorFilter::Validation], || {
            buffer.unmap()
        });
    }

    /// Copies `bytes` from `offset` of `src` back to the host. One staging buffer per call:
    /// readback is off the hot path (final results and counts only).
    pub(crate) async fn read_bytes_async(
        &self,
        src: &wgpu::Buffer,
        offset: u64,
        bytes: u64,
    ) -> Result<Vec<u8>> {
        if bytes == 0 {
            return Ok(Vec::new());
        }
        let size = bytes.next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        let staging = self.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })?;
        let mut enc = self.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(src, offset, &staging, 0, size);
        self.submit(enc);
        let mut out = self
            .map_read_async(&staging, size, "readback", <[u8]>::to_vec)
            .await?;
        out.truncate(bytes as usize);
        Ok(out)
    }

    /// Reads `len` elements of `T` from the start of `src`.
    pub fn read<T: bytemuck::Pod>(&self, src: &wgpu::Buffer, len: usize) -> Result<Vec<T>> {
        super::block::block_on("a read-back", self.read_async(src, len))?
    }

    /// [`Self::read`] as a future, for a browser's page (docs/design.md §8.5).
    pub(crate) async fn read_async<T: bytemuck::Pod>(
        &self,
        src: &wgpu::Buffer,
        len: usize,
    ) -> Result<Vec<T>> {
        let bytes = self
            .read_bytes_async(src, 0, (len * std::mem::size_of::<T>()) as u64)
            .await?;
        Ok(bytemuck::pod_collect_to_vec(&bytes))
    }
}

/// Unmaps its buffer when dropped ([`GpuContext::map_read`]).
struct Unmap<'a> {
    ctx: &'a GpuContext,
    buffer: &'a wgpu::Buffer,
}

impl Drop for Unmap<'_> {
    fn drop(&mut self) {
        self.ctx.unmap_quietly(self.buffer);
    }
}
