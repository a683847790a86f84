//! continuum's plotting helpers: one look for every SVG figure the tools write (`compare --out`,
//! `train`, `oga-bench --out`).
//!
//! A figure says what it is for through each series' [`Emphasis`]: the series it is about are
//! thick lines in colours of their own, drawn on top and listed first in the legend; the rest
//! are thin grey lines behind them. The y axis is zoomed to the data (a small margin around
//! it, not a fixed 0–1), tick labels print to the precision of their step, each axis names its
//! unit, and the legend stands in a column of its own right of the plot, so it covers no line.
//! Every figure uses the same font, sizes and colours.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

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
/// Height of a line of the legend, px (entries are a third of a line apart).
const LINE: f64 = 18.0;
/// Tick labels wanted on the x and y axes (at most).
const X_TICKS: usize = 10;
const Y_TICKS: usize = 7;
/// Series (but faint ones) with at most this many points also get a marker on each point.
const MARKER_MAX: usize = 40;
/// Lines of more points are drawn through every k-th of them (and the last), at most this many:
/// a thick line through points less than a pixel apart draws spikes at its joints.
const LINE_POINTS: usize = 500;
/// Fraction of the data's span added below and above it on a zoomed axis.
const MARGIN: f64 = 0.06;
/// Colours of the emphasised series, in legend order (Okabe–Ito: told apart with colour-blind
/// eyes too): blue, vermilion, bluish green, reddish purple, orange, sky blue.
const PALETTE: [RGBColor; 6] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
];
/// The colour of faint series.
const GREY: RGBColor = RGBColor(160, 160, 160);

/// How much a series stands out. The legend lists `Bold` series first, then `Normal`, then
/// `Faint`, each group in the order the series were given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Emphasis {
    /// What the figure is about: a thick line in a colour of its own, drawn on top.
    Bold,
    /// Worth telling apart: a thinner line in a colour of its own.
    Normal,
    /// Background for the others: a thin grey line, drawn below them.
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

/// An axis: its description, unit included (e.g. `time since start (s)`), and how its tick
/// labels print.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The description, unit included.
    pub desc: String,
    /// How tick labels print.
    pub format: Format,
}

impl Axis {
    /// An axis described by `desc` whose ticks print as `format`.
    pub fn new(desc: impl Into<String>, format: Format) -> Self {
        Axis {
            desc: desc.into(),
            format,
        }
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

/// The smallest and largest finite of `values`, if any.
fn extent(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(None, |e, v| match e {
            None => Some((v, v)),
            Some((a, b)) => Some((v.min(a), v.max(b))),
        })
}

/// The range an axis shows for `values`: their minimum and maximum widened by a small margin
/// on both sides (a constant gets a range around it; no finite value, 0–1).
pub fn zoomed_range(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    let Some((lo, hi)) = extent(values) else {
        return (0.0, 1.0);
    };
    let span = hi - lo;
    if span <= 1e-9 * hi.abs().max(1.0) {
        let d = if hi.abs() > 0.0 { 0.05 * hi.abs() } else { 0.5 };
        return (lo - d, hi + d);
    }
    (lo - MARGIN * span, hi + MARGIN * span)
}

/// [`zoomed_range`] of the y values of `series`.
fn y_range(series: &[Series]) -> (f64, f64) {
    zoomed_range(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)))
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

/// The indices of `series` in legend order: `Bold` first, then `Normal`, then `Faint`, each
/// group in the given order.
pub fn legend_order(series: &[Series]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..series.len()).collect();
    order.sort_by_key(|&i| series[i].emphasis);
    order
}

/// The decimals a tick label on an axis over `lo..hi` with at most `ticks` ticks needs, as
/// printed in `format`: those of the step between the ticks plotters draws there.
pub fn tick_decimals(lo: f64, hi: f64, ticks: usize, format: Format) -> usize {
    let keys = RangedCoordf64::from(lo..hi).key_points(ticks);
    let step = keys
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::INFINITY, f64::min);
    if !step.is_finite() || step <= 0.0 {
        return 2;
    }
    let step = match format {
        Format::Number => step,
        Format::Percent => step * 100.0,
    };
    (-step.log10() - 1e-6).ceil().max(0.0) as usize
}

/// A tick label: `v` printed in `format` with `decimals` decimals (never `-0`).
pub fn tick_label(v: f64, decimals: usize, format: Format) -> String {
    let (v, unit) = match format {
        Format::Number => (v, ""),
        Format::Percent => (v * 100.0, " %"),
    };
    let s = format!("{v:.decimals$}");
    let s = if s
        .trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        s.trim_start_matches('-').to_string()
    } else {
        s
    };
    format!("{s}{unit}")
}

/// The points a line is drawn through: all of `points` when they are at most `max`, else
/// every k-th of them (k the smallest that keeps at most `max`) and the last.
fn thin(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max {
        return points.to_vec();
    }
    let k = points.len().div_ceil(max - 1);
    let mut out: Vec<(f64, f64)> = points.iter().step_by(k).copied().collect();
    if (points.len() - 1) % k != 0 {
        out.extend(points.last());
    }
    out
}

/// How one series is drawn.
#[derive(Clone, Copy)]
struct Look {
    color: RGBAColor,
    width: u32,
    radius: u32,
}

/// Each series' look, by index: emphasised series take the palette's colours in legend order,
/// from its `first` colour on; faint ones are thin and grey.
fn looks(series: &[Series], first: usize) -> Vec<Look> {
    let (color, width, radius) = (GREY.to_rgba(), 1, 3);
    let mut out = vec![
        Look {
            color,
            width,
            radius
        };
        series.len()
    ];
    let shown = legend_order(series);
    let shown = shown
        .iter()
        .filter(|&&i| series[i].emphasis != Emphasis::Faint);
    for (k, &i) in shown.enumerate() {
        let bold = series[i].emphasis == Emphasis::Bold;
        out[i] = Look {
            color: PALETTE[(first + k) % PALETTE.len()].to_rgba(),
            width: if bold { 3 } else { 2 },
            radius: if bold { 5 } else { 4 },
        };
    }
    out
}

/// `name`, cut to `max` characters with an ellipsis.
fn fit(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        name.to_string()
    } else {
        let mut s: String = name.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// The lines of a legend entry at most `max` characters wide: the name, or when too long, the
/// name broken at its last space that leaves a first line short enough, the rest cut to fit.
fn legend_lines(name: &str, max: usize) -> Vec<String> {
    if name.chars().count() <= max {
        return vec![name.to_string()];
    }
    let space = name
        .char_indices()
        .take(max + 1)
        .filter(|&(_, c)| c == ' ')
        .map(|(k, _)| k)
        .last();
    match space {
        Some(k) if k > 0 => vec![name[..k].to_string(), fit(&name[k + 1..], max)],
        _ => vec![fit(name, max)],
    }
}

/// The legend column: one entry per series in legend order, from `top` down, with a sample of
/// the line (or marker) and the name (bold for bold series, grey for faint ones; a long name
/// on two lines).
fn legend(
    area: &DrawingArea<SVGBackend, Shift>,
    series: &[Series],
    looks: &[Look],
    top: i32,
    marker: bool,
) -> Result<(), String> {
    let order = legend_order(series);
    let text_px = LEGEND_WIDTH as f64 - 44.0 - 8.0;
    let entries: Vec<Vec<String>> = order
        .iter()
        .map(|&i| {
            // Estimated character widths of the legend font, px (bold is wider).
            let bold = series[i].emphasis == Emphasis::Bold;
            legend_lines(
                &series[i].name,
                (text_px / if bold { 7.8 } else { 7.0 }) as usize,
            )
        })
        .collect();
    let (_, h) = area.dim_in_pixel();
    let lines: usize = entries.iter().map(|e| e.len()).sum();
    let units = lines as f64 + order.len() as f64 / 3.0;
    let line = LINE.min((h as i32 - top) as f64 / units.max(1.0)) as i32;
    let gap = line / 3;
    let mut y = top;
    for (&i, text) in order.iter().zip(&entries) {
        let (look, emphasis) = (looks[i], series[i].emphasis);
        let mid = y + line / 2;
        let style = ShapeStyle {
            color: look.color,
            filled: emphasis != Emphasis::Faint || !marker,
            stroke_width: look.width,
        };
        if marker {
            area.draw(&Circle::new((22, mid), look.radius + 1, style))
                .map_err(err)?;
        } else {
            area.draw(&PathElement::new(vec![(10, mid), (36, mid)], style))
                .map_err(err)?;
        }
        let (weight, color) = match emphasis {
            Emphasis::Bold => (FontStyle::Bold, BLACK),
            Emphasis::Normal => (FontStyle::Normal, BLACK),
            Emphasis::Faint => (FontStyle::Normal, RGBColor(110, 110, 110)),
        };
        for (k, part) in text.iter().enumerate() {
            let font = FontDesc::new(FontFamily::Name(FONT), LEGEND_SIZE, weight)
                .color(&color)
                .pos(Pos::new(HPos::Left, VPos::Center));
            let x = if k == 0 { 44 } else { 56 };
            area.draw(&Text::new(part.clone(), (x, mid + line * k as i32), font))
                .map_err(err)?;
        }
        y += line * text.len() as i32 + gap;
    }
    Ok(())
}

/// Writes `fig` to `path` as SVG: each panel's series as lines (bold on top), its y axis
/// zoomed to its data, the legend right of it.
pub fn line_chart(path: &Path, fig: &Figure) -> Result<(), String> {
    let n = fig.panels.len().max(1);
    let height = HEIGHT + PANEL_HEIGHT * (n as u32 - 1);
    let root = SVGBackend::new(path, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let body = root.titled(&fig.title, (FONT, TITLE_SIZE)).map_err(err)?;
    let xs: Vec<f64> = (fig.panels.iter().flat_map(|p| &p.series))
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    // The x axis spans the data exactly (a range around a single x).
    let (x0, x1) = extent(xs.iter().copied())
        .filter(|(a, b)| a < b)
        .unwrap_or_else(|| zoomed_range(xs.iter().copied()));
    let xd = tick_decimals(x0, x1, X_TICKS, fig.x.format);
    let x_fmt = |v: &f64| tick_label(*v, xd, fig.x.format);
    let mut colours = 0;
    for (k, (panel, area)) in fig.panels.iter().zip(body.split_evenly((n, 1))).enumerate() {
        let last = k + 1 == n;
        let (plot, side) = area.split_horizontally(WIDTH - LEGEND_WIDTH);
        let (y0, y1) = y_range(&panel.series);
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
        // Each panel's emphasised series take the colours after the panels' above.
        let looks = looks(&panel.series, colours);
        colours += panel
            .series
            .iter()
            .filter(|s| s.emphasis != Emphasis::Faint)
            .count();
        // Faint lines first, the first legend entry last: emphasised lines lie on top.
        for &i in legend_order(&panel.series).iter().rev() {
            let (s, look) = (&panel.series[i], looks[i]);
            let style = ShapeStyle {
                color: look.color,
                filled: false,
                stroke_width: look.width,
            };
            chart
                .draw_series(LineSeries::new(thin(&s.points, LINE_POINTS), style))
                .map_err(err)?;
            if s.points.len() <= MARKER_MAX && s.emphasis != Emphasis::Faint {
                chart
                    .draw_series(
                        s.points
                            .iter()
                            .map(|&p| Circle::new(p, look.radius, style.filled())),
                    )
                    .map_err(err)?;
            }
        }
        legend(&side, &panel.series, &looks, 12, false)?;
    }
    root.present().map_err(err)
}

/// Writes `fig` to `path` as SVG, a dot chart of one value per category and series (e.g.
/// success ratio per application and policy): in each category's column, one marker per series
/// of `fig`'s first panel, side by side in legend order (emphasised ones large and coloured);
/// a point's x is the index of its category in `categories`, its y the value; `fig.x`
/// describes the categories; the legend stands right of the chart.
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
    let (y0, y1) = y_range(&panel.series);
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
    let looks = looks(&panel.series, 0);
    let order = legend_order(&panel.series);
    let spread = 0.8 / order.len().max(1) as f64;
    let offset = |slot: usize| (slot as f64 - (order.len() as f64 - 1.0) / 2.0) * spread;
    for (slot, &i) in order.iter().enumerate().rev() {
        let look = looks[i];
        let style = ShapeStyle {
            color: look.color,
            filled: panel.series[i].emphasis != Emphasis::Faint,
            stroke_width: look.width,
        };
        chart
            .draw_series(panel.series[i].points.iter().map(|&(c, v)| {
                Circle::new((c.round() + 0.5 + offset(slot), v), look.radius + 1, style)
            }))
            .map_err(err)?;
    }
    legend(&side, &panel.series, &looks, 12, true)?;
    root.present().map_err(err)
}

#[cfg(test)]
mod tests;
