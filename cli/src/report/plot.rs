//! SVG line plots of the kind the papers show (time vs n, tests vs n, accuracy per bin).
//!
//! Text is laid out with plotters' built-in size estimate (no font files), so plots render the
//! same on a headless machine with no fonts installed.

use plotters::prelude::*;
use std::path::Path;
use sweepfan::error::{Error, Result};

/// One named line.
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Axis scaling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log10,
}

/// A line chart.
#[derive(Clone, Debug)]
pub struct LinePlot<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub x_scale: Scale,
    pub y_scale: Scale,
    pub series: Vec<Series>,
}

const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

impl LinePlot<'_> {
    /// Whether any point can be drawn on the chart's scales (finite, and positive on a log
    /// scale): a run of one object tests nothing, and zero has no place on a log axis.
    pub fn has_points(&self) -> bool {
        let usable = |v: f64, scale: Scale| v.is_finite() && (scale == Scale::Linear || v > 0.0);
        self.series
            .iter()
            .flat_map(|s| s.points.iter())
            .any(|&(x, y)| usable(x, self.x_scale) && usable(y, self.y_scale))
    }

    /// Writes the chart as an SVG file (800 x 500).
    pub fn write_svg(&self, path: &Path) -> Result<()> {
        let map = |e: String| Error::Config(format!("plot {}: {e}", path.display()));
        let pts = || self.series.iter().flat_map(|s| s.points.iter().copied());
        let usable = |v: f64, scale: Scale| v.is_finite() && (scale == Scale::Linear || v > 0.0);
        let xs: Vec<f64> = pts()
            .map(|p| p.0)
            .filter(|&v| usable(v, self.x_scale))
            .collect();
        let ys: Vec<f64> = pts()
            .map(|p| p.1)
            .filter(|&v| usable(v, self.y_scale))
            .collect();
        if xs.is_empty() || ys.is_empty() {
            return Err(map("no finite points to plot".into()));
        }
        let range = |v: &[f64], scale: Scale| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            match scale {
                Scale::Log10 => (lo / 1.5, hi * 1.5),
                Scale::Linear => {
                    let pad = ((hi - lo) * 0.05).max(1e-9);
                    (lo.min(0.0).min(lo - pad), hi + pad)
                }
            }
        };
        let (x0, x1) = range(&xs, self.x_scale);
        let (y0, y1) = range(&ys, self.y_scale);
        // Drawn into memory, then written through the output module (docs/design.md §8.3):
        // atomically for a file, in place for a device or FIFO.
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (800, 500)).into_drawing_area();
            root.fill(&WHITE).map_err(|e| map(e.to_string()))?;
            let mut builder = ChartBuilder::on(&root);
            builder
                .caption(self.title, ("sans-serif", 22))
                .margin(12)
                .x_label_area_size(45)
                .y_label_area_size(70);
            // plotters types the axes by their coordinate kind, so each scale pair is its own branch.
            macro_rules! draw {
                ($xr:expr, $yr:expr) => {{
                    let mut chart = builder
                        .build_cartesian_2d($xr, $yr)
                        .map_err(|e| map(e.to_string()))?;
                    chart
                        .configure_mesh()
                        .x_desc(self.x_label)
                        .y_desc(self.y_label)
                        .draw()
                        .map_err(|e| map(e.to_string()))?;
                    for (k, s) in self.series.iter().enumerate() {
                        let color = PALETTE[k % PALETTE.len()];
                        let points: Vec<(f64, f64)> = s
                            .points
                            .iter()
                            .copied()
                            .filter(|&(x, y)| usable(x, self.x_scale) && usable(y, self.y_scale))
                            .collect();
                        chart
                            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
                            .map_err(|e| map(e.to_string()))?
                            .label(s.name.clone())
                            .legend(move |(x, y)| {
                                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                            });
                        chart
                            .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
                            .map_err(|e| map(e.to_string()))?;
                    }
                    chart
                        .configure_series_labels()
                        .background_style(WHITE.mix(0.85))
                        .border_style(BLACK)
                        .position(SeriesLabelPosition::UpperLeft)
                        .draw()
                        .map_err(|e| map(e.to_string()))?;
                }};
            }
            match (self.x_scale, self.y_scale) {
                (Scale::Linear, Scale::Linear) => draw!(x0..x1, y0..y1),
                (Scale::Linear, Scale::Log10) => draw!(x0..x1, (y0..y1).log_scale()),
                (Scale::Log10, Scale::Linear) => draw!((x0..x1).log_scale(), y0..y1),
                (Scale::Log10, Scale::Log10) => draw!((x0..x1).log_scale(), (y0..y1).log_scale()),
            }
            root.present().map_err(|e| map(e.to_string()))?;
        }
        super::output::write_bytes(path, svg.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Zero tests (a run of one object) have no place on a log axis: nothing to draw, while a
    /// single positive point, or zero on a linear axis, is something.
    #[test]
    fn only_drawable_points_count() {
        let plot = |y_scale, points| LinePlot {
            title: "t",
            x_label: "x",
            y_label: "y",
            x_scale: Scale::Log10,
            y_scale,
            series: vec![Series {
                name: "s".into(),
                points,
            }],
        };
        assert!(!plot(Scale::Log10, vec![(1.0, 0.0), (2.0, f64::NAN)]).has_points());
        assert!(plot(Scale::Log10, vec![(1.0, 0.0), (2.0, 3.0)]).has_points());
        assert!(plot(Scale::Linear, vec![(1.0, 0.0)]).has_points());
        assert!(!plot(Scale::Linear, vec![(0.0, 1.0)]).has_points());
    }

    #[test]
    fn writes_an_svg_with_labels_and_lines() {
        let dir = crate::run::test_dir("plot");
        let path = dir.join("p.svg");
        let plot = LinePlot {
            title: "time vs n",
            x_label: "objects n",
            y_label: "ms per frame",
            x_scale: Scale::Log10,
            y_scale: Scale::Log10,
            series: vec![
                Series {
                    name: "brute_force".into(),
                    points: vec![(50.0, 0.1), (500.0, 10.0), (5000.0, 1000.0)],
                },
                Series {
                    name: "sap".into(),
                    points: vec![(50.0, 0.01), (500.0, 0.1), (5000.0, 0.0)],
                },
            ],
        };
        plot.write_svg(&path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"));
        for text in ["time vs n", "brute_force", "sap", "ms per frame"] {
            assert!(svg.contains(text), "missing {text}");
        }
        assert!(svg.matches("<polyline").count() >= 2);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn refuses_an_empty_plot() {
        let plot = LinePlot {
            title: "t",
            x_label: "x",
            y_label: "y",
            x_scale: Scale::Log10,
            y_scale: Scale::Linear,
            series: vec![Series {
                name: "s".into(),
                points: vec![(0.0, 1.0)],
            }],
        };
        let e = plot.write_svg(Path::new("/nonexistent/x.svg")).unwrap_err();
        assert!(e.to_string().contains("no finite points"));
    }
}
