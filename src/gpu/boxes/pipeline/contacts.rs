//! [`GpuBoxPipeline`]'s contacts: the pairs and their contacts in one submission
//! (docs/design.md §4.8).

use super::{GpuBoxPipeline, Until, Uploaded};
use crate::broadphase::{Pair, Stats};
use crate::error::Result;
use crate::geom::contact::Contact;
use crate::geom::obb::Obb;
use crate::geom::polygon::Polygon;
use crate::gpu::boxes::sat::Exact;
use crate::gpu::context::block::blocking;
use web_time::Instant;

impl GpuBoxPipeline {
    blocking! {
        /// Every overlapping (or touching) pair of boxes and its contact (docs/design.md §4.8), in
        /// one submission from the upload through the broad phase, the SAT stage and the contacts
        /// (the pairs the device left unsure settled on the host, with their contacts): the pairs
        /// `(i, j)`, `i < j`, sorted, into `pairs` and their contacts in the same order into
        /// `contacts` (both cleared first). `Stats::tests` = SAT tests.
        pub fn obb_contacts = "a box contacts frame";
        pub async fn obb_contacts_async(
            &mut self,
            boxes: &[Obb],
            pairs: &mut Vec<Pair>,
            contacts: &mut Vec<Contact>,
        ) -> Result<Stats> {
            let upload = |pipeline: &mut Self| pipeline.upload_obbs(boxes);
            let exact = Exact::Boxes(boxes);
            self.contacts_frame(upload, exact, boxes.is_empty(), pairs, contacts)
                .await
        }
    }

    blocking! {
        /// The polygon equivalent of [`Self::obb_contacts`] (2D, in the plane z = 0).
        pub fn polygon_contacts = "a polygon contacts frame";
        pub async fn polygon_contacts_async(
            &mut self,
            polygons: &[Polygon],
            pairs: &mut Vec<Pair>,
            contacts: &mut Vec<Contact>,
        ) -> Result<Stats> {
            let upload = |pipeline: &mut Self| pipeline.upload_polygons(polygons);
            let exact = Exact::Polygons(polygons);
            self.contacts_frame(upload, exact, polygons.is_empty(), pairs, contacts)
                .await
        }
    }

    /// A frame of the shapes `upload` puts on the device (settled on `exact`; none where
    /// `empty`) through the broad phase, the SAT stage and the contacts.
    async fn contacts_frame(
        &mut self,
        upload: impl FnOnce(&mut Self) -> Result<Uploaded>,
        exact: Exact<'_>,
        empty: bool,
        pairs: &mut Vec<Pair>,
        contacts: &mut Vec<Contact>,
    ) -> Result<Stats> {
        if empty {
            contacts.clear();
            return self.empty_frame(Some(pairs)).await;
        }
        // Cleared first: a frame refused (a bad shape) leaves no list of the frame before.
        pairs.clear();
        contacts.clear();
        let start = Instant::now();
        let kind = upload(self)?;
        let until = Until::Sat {
            store: true,
            contacts: true,
        };
        let stats = self.run(kind, until, exact, Some(pairs), start).await?;
        std::mem::swap(contacts, &mut self.last_contacts);
        Ok(stats)
    }
}
