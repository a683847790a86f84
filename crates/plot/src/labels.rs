//! Direct labels: the first rows of the legend named next to their last point in the plot,
//! placed away from their line's last stretch and moved apart where they would overlap.

use crate::legend::legend_lines;
use crate::look::Look;
use crate::look::legend_order;
use crate::{Chart, Emphasis, FONT, LEGEND_SIZE, Series, err};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Series named next to their last point, per panel: the first of the legend.
pub(crate) const LABELLED: usize = 3;
/// Characters of a direct label's line (a longer name breaks as in the legend), and the
/// height of its lines, px.
const LABEL_CHARS: usize = 26;
const LABEL_LINE: i32 = 16;

/// `c` dark enough to read as text on white: light colours (the palette's yellow) darkened,
/// the others as they are.
fn text_color(c: RGBAColor) -> RGBColor {
    let RGBAColor(r, g, b, _) = c;
    let luma = 0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b);
    if luma <= 170.0 {
        return RGBColor(r, g, b);
    }
    let dark = |v: u8| (f64::from(v) * 0.65) as u8;
    RGBColor(dark(r), dark(g), dark(b))
}

/// Moves boxes `(top, height)`, sorted by top, apart vertically so that none overlaps the next
/// (2 px between them), within `lo..hi` where they fit.
pub(crate) fn spread(boxes: &mut [(i32, i32)], lo: i32, hi: i32) {
    let mut floor = lo;
    for b in boxes.iter_mut() {
        b.0 = b.0.max(floor);
        floor = b.0 + b.1 + 2;
    }
    let mut ceil = hi;
    for b in boxes.iter_mut().rev() {
        b.0 = b.0.min(ceil - b.1);
        ceil = b.0 - 2;
    }
}

/// A direct label: the index of its series, the x of the series' last point, px, its lines,
/// and its place (top, height), px.
struct Label {
    series: usize,
    x: i32,
    lines: Vec<String>,
    place: (i32, i32),
}

/// Names the first [`LABELLED`] series with a point of a panel of two or more, in legend order,
/// next to their last point on `root`, in their colour on a pale box: left of the point (right
/// of it where the plot has no room on its left), above it, or below where the line comes down
/// to it, moved apart vertically where they would overlap.
pub(crate) fn direct_labels(
    root: &DrawingArea<SVGBackend, Shift>,
    chart: &Chart,
    series: &[Series],
    looks: &[Look],
) -> Result<(), String> {
    if series.len() < 2 {
        return Ok(());
    }
    let (xs, ys) = chart.plotting_area().get_pixel_range();
    let mut labels: Vec<Label> = legend_order(series)
        .into_iter()
        .filter_map(|i| {
            let mut back = (series[i].points.iter().rev())
                .filter(|p| p.0.is_finite() && p.1.is_finite())
                .map(|p| chart.backend_coord(p));
            let (x, y) = back.next()?;
            let lines = legend_lines(&series[i].name, LABEL_CHARS);
            let h = LABEL_LINE * lines.len() as i32;
            // Away from the line's last stretch: below the point if it comes from above.
            let below = back.next().is_some_and(|(_, before)| before < y);
            let top = if below { y + 6 } else { y - 6 - h };
            Some(Label {
                series: i,
                x,
                lines,
                place: (top, h),
            })
        })
        .take(LABELLED)
        .collect();
    labels.sort_by_key(|l| l.place.0);
    let mut boxes: Vec<(i32, i32)> = labels.iter().map(|l| l.place).collect();
    spread(&mut boxes, ys.start, ys.end);
    for (label, (top, h)) in labels.into_iter().zip(boxes) {
        let (i, px, lines) = (label.series, label.x, label.lines);
        let bold = series[i].emphasis == Emphasis::Bold;
        let chars = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        let w = (chars as f64 * if bold { 7.8 } else { 7.0 }) as i32;
        let (x, hpos, left) = if px - 8 - w >= xs.start {
            (px - 8, HPos::Right, px - 8 - w)
        } else {
            (px + 8, HPos::Left, px + 8)
        };
        let pale = WHITE.mix(0.75).filled();
        root.draw(&Rectangle::new(
            [(left - 3, top - 1), (left + w + 3, top + h + 1)],
            pale,
        ))
        .map_err(err)?;
        let weight = if bold {
            FontStyle::Bold
        } else {
            FontStyle::Normal
        };
        let color = text_color(looks[i].color);
        for (k, line) in lines.into_iter().enumerate() {
            let font = FontDesc::new(FontFamily::Name(FONT), LEGEND_SIZE, weight)
                .color(&color)
                .pos(Pos::new(hpos, VPos::Center));
            let y = top + LABEL_LINE * k as i32 + LABEL_LINE / 2;
            root.draw(&Text::new(line, (x, y), font)).map_err(err)?;
        }
    }
    Ok(())
}
