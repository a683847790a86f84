//! How each series looks: its colour of the palette, dash pattern and marker shape, its width
//! and marker size by emphasis, one look per series name across a figure's panels, and the
//! markers themselves.

use crate::{Emphasis, Panel, Series};
use plotters::prelude::*;

/// The indices of `series` in legend order: `Bold` first, then `Normal`, then `Faint`, each
/// group in the given order.
pub fn legend_order(series: &[Series]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..series.len()).collect();
    order.sort_by_key(|&i| series[i].emphasis);
    order
}

/// The series' colours, in order (Okabe–Ito: told apart with colour-blind eyes too): blue,
/// vermilion, bluish green, reddish purple, orange, sky blue, black, yellow.
pub(crate) const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];

/// How a line is dashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dash {
    Solid,
    Dashed,
    Dotted,
}

impl Dash {
    /// Its dash and gap lengths, px; none for a solid line.
    pub(crate) fn pattern(self) -> Option<(u32, u32)> {
        match self {
            Dash::Solid => None,
            Dash::Dashed => Some((9, 5)),
            Dash::Dotted => Some((2, 4)),
        }
    }
}

/// The dash patterns, in order: the palette's colours go round once with each.
const DASHES: [Dash; 3] = [Dash::Solid, Dash::Dashed, Dash::Dotted];

/// The shape of the markers on a line's points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Cross,
}

/// The marker shapes, in order.
const MARKERS: [Marker; 6] = [
    Marker::Circle,
    Marker::Square,
    Marker::TriangleUp,
    Marker::Diamond,
    Marker::TriangleDown,
    Marker::Cross,
];

/// How one series is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Look {
    pub(crate) color: RGBAColor,
    pub(crate) width: u32,
    pub(crate) radius: i32,
    pub(crate) dash: Dash,
    pub(crate) marker: Marker,
}

impl Look {
    /// The look of a figure's `k`-th series drawn with `emphasis` (width and marker size by
    /// emphasis): colour `k` of the palette, the dash pattern of the palette's `k / 8`-th round
    /// and a marker that moves on with each series and once more every 24. No two of the first
    /// 24 series share colour and dash, nor colour and marker; no two of the first 144 share
    /// colour, dash and marker.
    pub(crate) fn of(k: usize, emphasis: Emphasis) -> Look {
        let (width, radius) = match emphasis {
            Emphasis::Bold => (3, 5),
            Emphasis::Normal => (2, 4),
            Emphasis::Faint => (1, 3),
        };
        Look {
            color: PALETTE[k % PALETTE.len()].to_rgba(),
            width,
            radius,
            dash: DASHES[(k / PALETTE.len()) % DASHES.len()],
            marker: MARKERS[(k + k / 24) % MARKERS.len()],
        }
    }

    /// The style of its line.
    pub(crate) fn line(&self) -> ShapeStyle {
        ShapeStyle {
            color: self.color,
            filled: false,
            stroke_width: self.width,
        }
    }
}

/// For each of `panels`, each series' index among the figure's distinct series names, taken
/// panel after panel, each in legend order: its [`Look::of`] index (a name in several panels
/// keeps one look).
pub(crate) fn style_indices(panels: &[Panel]) -> Vec<Vec<usize>> {
    let mut names: Vec<&str> = Vec::new();
    panels
        .iter()
        .map(|p| {
            let mut index = vec![0; p.series.len()];
            for i in legend_order(&p.series) {
                let name = p.series[i].name.as_str();
                index[i] = match names.iter().position(|n| *n == name) {
                    Some(k) => k,
                    None => {
                        names.push(name);
                        names.len() - 1
                    }
                };
            }
            index
        })
        .collect()
}

/// The looks of `series`, whose [`Look::of`] indices are `index`.
pub(crate) fn looks(series: &[Series], index: &[usize]) -> Vec<Look> {
    (series.iter().zip(index))
        .map(|(s, &k)| Look::of(k, s.emphasis))
        .collect()
}

/// The outline of a marker of `shape` and radius `r` around (0, 0), px (y down): every marker
/// is a filled polygon, the circle a 12-gon, the cross two bars.
fn outline(shape: Marker, r: i32) -> Vec<(i32, i32)> {
    match shape {
        Marker::Circle => (0..12)
            .map(|k| {
                let a = f64::from(k) * std::f64::consts::PI / 6.0;
                let (s, c) = a.sin_cos();
                (
                    (f64::from(r) * c).round() as i32,
                    (f64::from(r) * s).round() as i32,
                )
            })
            .collect(),
        Marker::Square => {
            let q = r - 1;
            vec![(-q, -q), (q, -q), (q, q), (-q, q)]
        }
        Marker::TriangleUp => vec![(0, -r - 1), (r + 1, r), (-r - 1, r)],
        Marker::Diamond => vec![(0, -r - 1), (r + 1, 0), (0, r + 1), (-r - 1, 0)],
        Marker::TriangleDown => vec![(0, r + 1), (-r - 1, -r), (r + 1, -r)],
        Marker::Cross => {
            let d = (r + 1) / 3;
            vec![
                (0, -d),
                (r - d, -r),
                (r, d - r),
                (d, 0),
                (r, r - d),
                (r - d, r),
                (0, d),
                (d - r, r),
                (-r, r - d),
                (-d, 0),
                (-r, d - r),
                (d - r, -r),
            ]
        }
    }
}

/// A marker drawn at a point in coordinates `C`: a filled polygon in pixels around it.
type Mark<C, DB> = <EmptyElement<C, DB> as std::ops::Add<Polygon<(i32, i32)>>>::Output;

/// A marker of `look` centred on `at`: its shape and colour, `look.radius` in size, filled.
pub(crate) fn marker<C, DB: DrawingBackend>(at: C, look: &Look) -> Mark<C, DB> {
    EmptyElement::at(at) + Polygon::new(outline(look.marker, look.radius), look.color.filled())
}
