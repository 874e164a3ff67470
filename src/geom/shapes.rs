//! Shapes as data: one slice of one kind of shape, named by index, which the narrow phase tests
//! and computes contacts of (docs/design.md §4.9).

use crate::geom::obb::Obb;
use crate::geom::polygon::Polygon;
use crate::geom::sphere::Sphere;

/// One slice of shapes of one kind, each named by its index: what a narrow phase
/// (`NarrowPhase`) tests and computes the contacts of. Made from a slice, an array or a `Vec`
/// of spheres, oriented boxes or convex polygons with `From`:
///
/// ```
/// use sweepfan::{Obb, Shapes};
/// use glam::Vec3;
///
/// let boxes = vec![Obb::axis_aligned(Vec3::ZERO, Vec3::ONE)];
/// let shapes = Shapes::from(&boxes);
/// assert!(matches!(shapes, Shapes::Obbs(_)));
/// assert_eq!((shapes.len(), shapes.kind()), (1, "boxes"));
/// ```
#[derive(Clone, Copy, Debug)]
pub enum Shapes<'a> {
    /// Spheres: a pair touches where the centres lie at most the sum of the radii apart.
    Spheres(&'a [Sphere]),
    /// Oriented boxes.
    Obbs(&'a [Obb]),
    /// Convex polygons, in the plane z = 0.
    Polygons(&'a [Polygon]),
}

impl Shapes<'_> {
    /// How many shapes.
    pub fn len(&self) -> usize {
        match self {
            Shapes::Spheres(s) => s.len(),
            Shapes::Obbs(b) => b.len(),
            Shapes::Polygons(p) => p.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `"spheres"`, `"boxes"` or `"polygons"`, as errors and reports name them.
    pub fn kind(&self) -> &'static str {
        match self {
            Shapes::Spheres(_) => "spheres",
            Shapes::Obbs(_) => "boxes",
            Shapes::Polygons(_) => "polygons",
        }
    }
}

macro_rules! shapes_from {
    ($shape:ty => $variant:ident) => {
        impl<'a> From<&'a [$shape]> for Shapes<'a> {
            fn from(shapes: &'a [$shape]) -> Self {
                Shapes::$variant(shapes)
            }
        }

        impl<'a> From<&'a Vec<$shape>> for Shapes<'a> {
            fn from(shapes: &'a Vec<$shape>) -> Self {
                Shapes::$variant(shapes)
            }
        }

        impl<'a, const N: usize> From<&'a [$shape; N]> for Shapes<'a> {
            fn from(shapes: &'a [$shape; N]) -> Self {
                Shapes::$variant(shapes)
            }
        }
    };
}

shapes_from!(Sphere => Spheres);
shapes_from!(Obb => Obbs);
shapes_from!(Polygon => Polygons);
