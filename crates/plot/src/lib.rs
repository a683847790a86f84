//! continuum's plotting helpers: one look for every SVG figure the tools write (`compare --out`,
//! `train`, `oga-bench --out`).
//!
//! Every series has a look of its own, told apart without colour vision too: a colour of the
//! Okabe–Ito palette, a dash pattern (solid, dashed, dotted) and a marker shape (circle, square,
//! triangles, diamond, cross), so that up to 24 series differ in colour and dash and up to 144
//! in colour, dash and marker; the legend shows each series' colour, dash and marker. A figure
//! says what it is for through each series' [`Emphasis`]: the series it is about are thick
//! lines drawn on top and listed first in the legend; the rest are thin lines behind them. The
//! first rows of the legend are also named next to their last point. The x axis spans the data
//! (or a range the caller fixes, e.g. a run from 0 to its end); the y axis is zoomed to the data
//! (a small margin around it, not a fixed 0–1), tick labels print to the precision of their
//! step, each axis names its unit, and the legend stands in a column of its own right of the
//! plot, so it covers no line. Every figure uses the same font, sizes and palette.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

mod axis;
mod labels;
mod legend;
mod lines;
mod look;

pub use axis::{tick_decimals, tick_label, x_range, zoomed_range};
pub use look::legend_order;

use axis::{X_TICKS, Y_TICKS, y_range};
use labels::direct_labels;
use legend::{fit, legend};
use lines::draw_lines;
use look::{Look, looks, marker, style_indices};
use plotters::coord::Shift;
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ops::Range;
use std::path::Path;

/// The font family of every text.
const FONT: &str = "sans-serif";
/// Font sizes: a figure's title, axis descriptions, tick labels, legend entries.
const TITLE_SIZE: f64 = 22.0;
const AXIS_SIZE: f64 = 17.0;
const TICK_SIZE: f64 = 15.0;
const LEGEND_SIZE: f64 = 15.0;
/// Width of a figure and of its legend column, px; height of a one-panel figure and of each
/// further panel.
const WIDTH: u32 = 1100;
const LEGEND_WIDTH: u32 = 260;
const HEIGHT: u32 = 600;
const PANEL_HEIGHT: u32 = 280;

/// How much a series stands out. The legend lists `Bold` series first, then `Normal`, then
/// `Faint`, each group in the order the series were given. Whatever its emphasis, a series has a
/// colour, dash and marker of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Emphasis {
    /// What the figure is about: a thick line, drawn on top, its name in bold.
    Bold,
    /// Worth a closer look: a thinner line.
    Normal,
    /// Context for the others: a thin line with small markers, drawn below them.
    Faint,
}

/// How tick labels print a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The value itself, with the decimals its tick step needs.
    Number,
    /// A ratio as a percentage (0.95 prints `95 %`).
    Percent,
}

/// An axis: its description, unit included (e.g. `time since start (s)`), how its tick labels
/// print and, when the caller fixes it, the range it shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The description, unit included.
    pub desc: String,
    /// How tick labels print.
    pub format: Format,
    /// The range shown (low, high), when fixed (e.g. a run from 0 to its end); none: fitted to
    /// the data.
    pub range: Option<(f64, f64)>,
}

impl Axis {
    /// An axis described by `desc` whose ticks print as `format`, its range fitted to the data.
    pub fn new(desc: impl Into<String>, format: Format) -> Self {
        Axis {
            desc: desc.into(),
            format,
            range: None,
        }
    }

    /// This axis showing `lo..hi` whatever the data (ignored unless `lo < hi`, both finite).
    pub fn with_range(mut self, lo: f64, hi: f64) -> Self {
        self.range = Some((lo, hi));
        self
    }

    /// The fixed range, if a usable one.
    fn fixed(&self) -> Option<(f64, f64)> {
        self.range
            .filter(|&(lo, hi)| lo.is_finite() && hi.is_finite() && lo < hi)
    }
}

/// One named series of (x, y) points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Its legend entry.
    pub name: String,
    /// Its points, in drawing order (for [`category_chart`], x is the category's index).
    pub points: Vec<(f64, f64)>,
    /// How much it stands out.
    pub emphasis: Emphasis,
}

impl Series {
    /// A series named `name` of `points`, drawn with `emphasis`.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>, emphasis: Emphasis) -> Self {
        Series {
            name: name.into(),
            points,
            emphasis,
        }
    }
}

/// One panel of a [`Figure`]: a y axis, zoomed to its series, and the series.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Its y axis.
    pub y: Axis,
    /// Its lines.
    pub series: Vec<Series>,
}

/// A line chart: panels stacked over one shared x axis, each with its legend on its right.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The title above the panels.
    pub title: String,
    /// The x axis shared by the panels (described under the lowest one).
    pub x: Axis,
    /// The panels, top to bottom.
    pub panels: Vec<Panel>,
}

fn err<E: std::fmt::Display>(e: E) -> String {
    format!("cannot draw plot: {e}")
}

/// A chart on `area` over `x` × `y`, with every figure's margins, `x_px` px under it for the
/// x axis' labels.
fn chart_on<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    x: Range<f64>,
    y: Range<f64>,
    x_px: u32,
) -> Result<ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>, String> {
    ChartBuilder::on(area)
        .margin_top(12)
        .margin_left(8)
        .margin_right(24)
        .x_label_area_size(x_px)
        .y_label_area_size(96)
        .build_cartesian_2d(x, y)
        .map_err(err)
}

/// A line chart's coordinate system on the SVG backend.
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Writes `fig` to `path` as SVG: each panel's series as lines in their looks (bold on top), the
/// first rows named at their ends, the x axis over the data (or `fig.x`'s fixed range), each y
/// axis zoomed to its data, the legend right of it.
pub fn line_chart(path: &Path, fig: &Figure) -> Result<(), String> {
    let n = fig.panels.len().max(1);
    let height = HEIGHT + PANEL_HEIGHT * (n as u32 - 1);
    let root = SVGBackend::new(path, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let body = root.titled(&fig.title, (FONT, TITLE_SIZE)).map_err(err)?;
    let (x0, x1) = fig.x.fixed().unwrap_or_else(|| {
        x_range(
            (fig.panels.iter().flat_map(|p| &p.series)).flat_map(|s| s.points.iter().map(|p| p.0)),
        )
    });
    let xd = tick_decimals(x0, x1, X_TICKS, fig.x.format);
    let x_fmt = |v: &f64| tick_label(*v, xd, fig.x.format);
    let styles = style_indices(&fig.panels);
    for (k, (panel, area)) in fig.panels.iter().zip(body.split_evenly((n, 1))).enumerate() {
        let last = k + 1 == n;
        let (plot, side) = area.split_horizontally(WIDTH - LEGEND_WIDTH);
        let (y0, y1) = y_range(&panel.y, &panel.series);
        let yd = tick_decimals(y0, y1, Y_TICKS, panel.y.format);
        let y_fmt = |v: &f64| tick_label(*v, yd, panel.y.format);
        let mut chart = chart_on(&plot, x0..x1, y0..y1, if last { 54 } else { 32 })?;
        let mut mesh = chart.configure_mesh();
        mesh.x_labels(X_TICKS)
            .y_labels(Y_TICKS)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .label_style((FONT, TICK_SIZE))
            .axis_desc_style((FONT, AXIS_SIZE))
            .light_line_style(TRANSPARENT)
            .bold_line_style(BLACK.mix(0.1))
            .y_desc(panel.y.desc.as_str());
        if last {
            mesh.x_desc(fig.x.desc.as_str());
        }
        mesh.draw().map_err(err)?;
        let looks = looks(&panel.series, &styles[k]);
        draw_lines(&mut chart, &panel.series, &looks, &styles[k])?;
        direct_labels(&root, &chart, &panel.series, &looks)?;
        legend(&side, &panel.series, &looks, 12, true)?;
    }
    root.present().map_err(err)
}

/// Writes `fig` to `path` as SVG, a dot chart of one value per category and series (e.g.
/// success ratio per application and policy): in each category's column, one marker per series
/// of `fig`'s first panel, in its colour and shape, side by side in legend order (emphasised
/// ones larger); a point's x is the index of its category in `categories`, its y the value;
/// `fig.x` describes the categories; the legend stands right of the chart.
pub fn category_chart(path: &Path, fig: &Figure, categories: &[String]) -> Result<(), String> {
    let none = Panel {
        y: Axis::new("", Format::Number),
        series: Vec::new(),
    };
    let panel = fig.panels.first().unwrap_or(&none);
    let root = SVGBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let body = root.titled(&fig.title, (FONT, TITLE_SIZE)).map_err(err)?;
    let (plot, side) = body.split_horizontally(WIDTH - LEGEND_WIDTH);
    let n = categories.len().max(1);
    let (y0, y1) = y_range(&panel.y, &panel.series);
    let yd = tick_decimals(y0, y1, Y_TICKS, panel.y.format);
    let y_fmt = |v: &f64| tick_label(*v, yd, panel.y.format);
    let mut chart = chart_on(&plot, 0.0..n as f64, y0..y1, 54)?;
    chart
        .configure_mesh()
        .x_labels(0)
        .disable_x_mesh()
        .y_labels(Y_TICKS)
        .y_label_formatter(&y_fmt)
        .label_style((FONT, TICK_SIZE))
        .axis_desc_style((FONT, AXIS_SIZE))
        .light_line_style(TRANSPARENT)
        .bold_line_style(BLACK.mix(0.1))
        .x_desc(fig.x.desc.as_str())
        .y_desc(panel.y.desc.as_str())
        .draw()
        .map_err(err)?;
    // Column separators, and each category's name under the middle of its column.
    chart
        .draw_series(
            (1..n).map(|i| PathElement::new(vec![(i as f64, y0), (i as f64, y1)], BLACK.mix(0.15))),
        )
        .map_err(err)?;
    let (left, _) = chart.backend_coord(&(0.0, y0));
    let (right, _) = chart.backend_coord(&(1.0, y0));
    let max_chars = ((right - left) as usize / 8).max(4);
    for (i, name) in categories.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64 + 0.5, y0));
        let font = (FONT, TICK_SIZE)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top));
        root.draw(&Text::new(fit(name, max_chars), (x, y + 8), font))
            .map_err(err)?;
    }
    let styles = style_indices(std::slice::from_ref(panel));
    let looks: Vec<Look> = (looks(&panel.series, &styles[0]).into_iter())
        .map(|l| Look {
            radius: l.radius + 1,
            ..l
        })
        .collect();
    let order = legend_order(&panel.series);
    let spread = 0.8 / order.len().max(1) as f64;
    let offset = |slot: usize| (slot as f64 - (order.len() as f64 - 1.0) / 2.0) * spread;
    for (slot, &i) in order.iter().enumerate().rev() {
        let look = looks[i];
        chart
            .draw_series(
                (panel.series[i].points.iter())
                    .map(|&(c, v)| marker((c.round() + 0.5 + offset(slot), v), &look)),
            )
            .map_err(err)?;
    }
    legend(&side, &panel.series, &looks, 12, false)?;
    root.present().map_err(err)
}

#[cfg(test)]
mod tests;
