//! Uploads through a staging buffer kept across frames (docs/design.md §9.16): the host writes
//! into it while it is mapped, the frame's encoder copies it to its target, and after the
//! submission it is mapped again, which the frame's own wait resolves. `queue.write_buffer`
//! would allocate fresh staging memory for every call (256 MB a frame at 16M spheres).

use crate::error::Result;
use crate::gpu::context::GpuContext;
use std::sync::{Arc, Mutex};

/// Where the kept buffer's mapping stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mapping {
    /// Unmapped, no map asked for (after a write, or after a map that failed).
    Idle,
    /// A map asked for, not yet resolved.
    Pending,
    /// Mapped for writing: the next upload writes into it.
    Mapped,
}

/// One target's uploads ([`Upload::write`] each frame, [`Upload::after_submit`] after it).
pub struct Upload {
    label: &'static str,
    staging: Option<wgpu::Buffer>,
    mapping: Arc<Mutex<Mapping>>,
    /// Uploads that went through the kept buffer, and those that could not (tests).
    pub kept: u64,
    /// Uploads that went through `queue.write_buffer` instead.
    pub direct: u64,
}

impl Upload {
    /// No staging buffer yet; `label` names it once made.
    pub fn new(label: &'static str) -> Self {
        Self {
            label,
            staging: None,
            mapping: Arc::new(Mutex::new(Mapping::Idle)),
            kept: 0,
            direct: 0,
        }
    }

    fn state(&self) -> Mapping {
        *self.mapping.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn set(&self, m: Mapping) {
        *self.mapping.lock().unwrap_or_else(|p| p.into_inner()) = m;
    }

    /// Copies `data` to `target` at `offset` as the first command of `encoder`'s frame: through
    /// the kept buffer when it is mapped and large enough; through a new kept buffer (a quarter
    /// larger, mapped at creation) when there is none or it is too small; else (its map not
    /// resolved: a frame that never waited) with `queue.write_buffer`.
    pub fn write(
        &mut self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::Buffer,
        offset: u64,
        data: &[u8],
    ) -> Result<()> {
        let bytes = data.len() as u64;
        if bytes == 0 {
            return Ok(());
        }
        if !bytes.is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT) {
            self.direct += 1;
            ctx.write_buffer(target, offset, data);
            return Ok(());
        }
        let fits = self.staging.as_ref().is_some_and(|s| s.size() >= bytes);
        if !fits {
            // Dropped, and remade larger; a map pending on the old one resolves harmlessly.
            let size = (bytes + bytes / 4).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
            self.staging = Some(ctx.create_buffer(&wgpu::BufferDescriptor {
                label: Some(self.label),
                size,
                usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: true,
            })?);
            self.mapping = Arc::new(Mutex::new(Mapping::Mapped));
        }
        let staging = self.staging.as_ref().expect("made above");
        if self.state() != Mapping::Mapped {
            self.direct += 1;
            ctx.write_buffer(target, offset, data);
            return Ok(());
        }
        match staging.slice(..bytes).get_mapped_range_mut() {
            Ok(mut view) => view.copy_from_slice(data),
            Err(_) => {
                self.direct += 1;
                self.set(Mapping::Idle);
                ctx.write_buffer(target, offset, data);
                return Ok(());
            }
        }
        staging.unmap();
        self.set(Mapping::Idle);
        ctx.note_bytes_from_host(bytes);
        encoder.copy_buffer_to_buffer(staging, 0, target, offset, bytes);
        self.kept += 1;
        Ok(())
    }

    /// After the submission of the frame that copied from the kept buffer: asks for it to be
    /// mapped again; the frame's wait (any poll) resolves the map before the next frame.
    pub fn after_submit(&mut self) {
        let Some(staging) = &self.staging else {
            return;
        };
        if self.state() != Mapping::Idle {
            return;
        }
        self.set(Mapping::Pending);
        let mapping = self.mapping.clone();
        staging.map_async(wgpu::MapMode::Write, .., move |r| {
            *mapping.lock().unwrap_or_else(|p| p.into_inner()) = match r {
                Ok(()) => Mapping::Mapped,
                Err(_) => Mapping::Idle,
            };
        });
    }
}
