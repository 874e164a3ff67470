//! The box pipeline's uploads: each frame's boxes or polygons staged for the device, their
//! sweep layout, and the sphere proxies of the sphere broad phase.

use super::{Broad, GpuBoxPipeline, PROXY_WIDENING, Uploaded, shape_count};
use crate::error::{Error, Result};
use crate::geom::obb::{Obb, ObbFrame, obb_frames, validate_obbs};
use crate::geom::polygon::{Polygon, PolygonSet};
use crate::geom::sphere::Sphere;
use crate::gpu::boxes::aabb_sap::SweepLayout;
use crate::gpu::boxes::uploads::{FRAMES, OFFSETS, VERTICES, bounding_circle, widened_length};

impl GpuBoxPipeline {
    pub(super) fn upload_obbs(&mut self, boxes: &[Obb]) -> Result<Uploaded> {
        validate_obbs(boxes)?;
        let n = shape_count(boxes.len())?;
        let frames = obb_frames(boxes);
        let bytes = bytemuck::cast_slice::<ObbFrame, u8>(&frames);
        self.shapes.frames(&self.ctx, bytes.len() as u64)?;
        self.uploads.stage(FRAMES, bytes);
        self.set_layout(|| SweepLayout::for_frames(&frames));
        if let Broad::Sphere { proxies, .. } = &mut self.broad {
            proxies.clear();
            proxies.extend(boxes.iter().map(|b| Sphere {
                center: b.center,
                radius: widened_length(b.half_extents, PROXY_WIDENING),
            }));
        }
        Ok(Uploaded::Obbs(n))
    }

    /// The sweep layout for this upload: `columns()` when columns are in use, else one column.
    pub(super) fn set_layout(&mut self, columns: impl FnOnce() -> SweepLayout) {
        self.layout = if self.use_columns {
            columns()
        } else {
            SweepLayout::single()
        };
    }

    pub(super) fn upload_polygons(&mut self, polygons: &[Polygon]) -> Result<Uploaded> {
        let sizes = polygons.iter().map(|p| p.vertices().len());
        crate::gpu::adapter_check::check_polygon_loops(&self.ctx, sizes)?;
        let set = PolygonSet::new(polygons)?;
        if set.is_empty() {
            return Err(Error::EmptyScene);
        }
        let n = shape_count(set.len())?;
        let (vertices, offsets): (&[u8], &[u8]) = (
            bytemuck::cast_slice(&set.vertices),
            bytemuck::cast_slice(&set.offsets),
        );
        let (vb, ob) = (vertices.len() as u64, offsets.len() as u64);
        self.shapes.polygons(&self.ctx, vb, ob)?;
        self.uploads.stage(VERTICES, vertices);
        self.uploads.stage(OFFSETS, offsets);
        self.set_layout(|| SweepLayout::for_polygons(&set));
        if let Broad::Sphere { proxies, .. } = &mut self.broad {
            proxies.clear();
            proxies.extend(
                polygons
                    .iter()
                    .map(|p| bounding_circle(p.vertices(), PROXY_WIDENING)),
            );
        }
        Ok(Uploaded::Polygons(n))
    }
}
