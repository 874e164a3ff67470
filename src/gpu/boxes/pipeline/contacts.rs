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
        pub fn obb_contacts(
            &mut self,
            boxes: &[Obb],
            pairs: &mut Vec<Pair>,
            contacts: &mut Vec<Contact>,
        ) -> Result<Stats>
            = obb_contacts_async, "a box contacts frame";
    }

    /// [`Self::obb_contacts`] as a future, for a browser's page (docs/design.md §8.5).
    pub async fn obb_contacts_async(
        &mut self,
        boxes: &[Obb],
        pairs: &mut Vec<Pair>,
        contacts: &mut Vec<Contact>,
    ) -> Result<Stats> {
        if boxes.is_empty() {
            contacts.clear();
            return self.empty_frame(Some(pairs)).await;
        }
        let start = Instant::now();
        let kind = self.upload_obbs(boxes)?;
        self.contacts_frame(kind, Exact::Boxes(boxes), pairs, contacts, start)
            .await
    }

    blocking! {
        /// The polygon equivalent of [`Self::obb_contacts`] (2D, in the plane z = 0).
        pub fn polygon_contacts(
            &mut self,
            polygons: &[Polygon],
            pairs: &mut Vec<Pair>,
            contacts: &mut Vec<Contact>,
        ) -> Result<Stats>
            = polygon_contacts_async, "a polygon contacts frame";
    }

    /// [`Self::polygon_contacts`] as a future, for a browser's page (docs/design.md §8.5).
    pub async fn polygon_contacts_async(
        &mut self,
        polygons: &[Polygon],
        pairs: &mut Vec<Pair>,
        contacts: &mut Vec<Contact>,
    ) -> Result<Stats> {
        if polygons.is_empty() {
            contacts.clear();
            return self.empty_frame(Some(pairs)).await;
        }
        let start = Instant::now();
        let kind = self.upload_polygons(polygons)?;
        self.contacts_frame(kind, Exact::Polygons(polygons), pairs, contacts, start)
            .await
    }

    async fn contacts_frame(
        &mut self,
        kind: Uploaded,
        exact: Exact<'_>,
        pairs: &mut Vec<Pair>,
        contacts: &mut Vec<Contact>,
        start: Instant,
    ) -> Result<Stats> {
        let until = Until::Sat {
            store: true,
            contacts: true,
        };
        contacts.clear();
        let stats = self.run(kind, until, exact, Some(pairs), start).await?;
        std::mem::swap(contacts, &mut self.last_contacts);
        Ok(stats)
    }
}
