//! Oriented boxes and convex polygons on the GPU: the AABB sweep and prune ([`aabb_sap`]),
//! the separating-axis test ([`sat`]), and the pipeline that chains them ([`pipeline`]).

pub mod aabb_sap;
pub mod pipeline;
pub mod sat;
