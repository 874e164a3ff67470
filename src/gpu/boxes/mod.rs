//! Oriented boxes and convex polygons on the GPU: the AABB sweep and prune ([`aabb_sap`]),
//! the separating-axis test ([`sat`]) and the pipeline that chains them ([`pipeline`]).

pub mod aabb_sap;
mod after_sat;
pub mod pipeline;
pub mod sat;
mod sat_exact;
mod uploads;

impl crate::broadphase::aabbs::AabbOverlaps for pipeline::GpuBoxPipeline {
    fn name(&self) -> String {
        "gpu_aabb_sap".into()
    }

    fn backend(&self) -> crate::broadphase::Backend {
        crate::broadphase::Backend::Gpu
    }

    fn aabb_overlaps_unordered(
        &mut self,
        boxes: &[crate::geom::aabb::Aabb],
        out: &mut Vec<crate::broadphase::Pair>,
    ) -> crate::error::Result<crate::broadphase::Stats> {
        let run = pipeline::GpuBoxPipeline::aabb_overlaps_unordered_async(self, boxes, out);
        crate::gpu::context::block_on("a box frame", run)?
    }

    fn aabb_overlaps_unordered_async<'a>(
        &'a mut self,
        boxes: &'a [crate::geom::aabb::Aabb],
        out: &'a mut Vec<crate::broadphase::Pair>,
    ) -> std::pin::Pin<Box<dyn Future<Output = crate::error::Result<crate::broadphase::Stats>> + 'a>>
    {
        Box::pin(pipeline::GpuBoxPipeline::aabb_overlaps_unordered_async(
            self, boxes, out,
        ))
    }
}

impl crate::broadphase::shapes::ShapeOverlaps for pipeline::GpuBoxPipeline {
    fn obb_overlaps(
        &mut self,
        boxes: &[crate::geom::obb::Obb],
        out: Option<&mut Vec<crate::broadphase::Pair>>,
    ) -> crate::error::Result<crate::broadphase::Stats> {
        pipeline::GpuBoxPipeline::obb_overlaps(self, boxes, out)
    }

    fn polygon_overlaps(
        &mut self,
        polygons: &[crate::geom::polygon::Polygon],
        out: Option<&mut Vec<crate::broadphase::Pair>>,
    ) -> crate::error::Result<crate::broadphase::Stats> {
        pipeline::GpuBoxPipeline::polygon_overlaps(self, polygons, out)
    }
}
