//! The legend column: series in legend order (bold, normal, faint), each with a sample of its
//! line and marker and its name, long names wrapped or cut to fit.

use crate::look::{Look, legend_order, marker};
use crate::{Emphasis, FONT, LEGEND_SIZE, LEGEND_WIDTH, Series, err};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Height of a line of the legend, px (entries are a third of a line apart).
const LINE: f64 = 18.0;

/// `name`, cut to `max` characters with an ellipsis.
pub(crate) fn fit(name: &str, max: usize) -> String {
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
pub(crate) fn legend_lines(name: &str, max: usize) -> Vec<String> {
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

/// The legend column: one entry per series in legend order, from `top` down: a sample of the
/// line in its look (colour, width, dash; with `lines`) with its marker, and the name (bold for
/// bold series, dark grey for faint ones; a long name on two lines).
pub(crate) fn legend(
    area: &DrawingArea<SVGBackend, Shift>,
    series: &[Series],
    looks: &[Look],
    top: i32,
    lines: bool,
) -> Result<(), String> {
    let order = legend_order(series);
    let text_px = LEGEND_WIDTH as f64 - 48.0 - 8.0;
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
    let rows: usize = entries.iter().map(|e| e.len()).sum();
    let units = rows as f64 + order.len() as f64 / 3.0;
    let line = LINE.min((h as i32 - top) as f64 / units.max(1.0)) as i32;
    let gap = line / 3;
    let mut y = top;
    for (&i, text) in order.iter().zip(&entries) {
        let (look, emphasis) = (looks[i], series[i].emphasis);
        let mid = y + line / 2;
        if lines {
            let sample = vec![(6, mid), (40, mid)];
            match look.dash.pattern() {
                None => area.draw(&PathElement::new(sample, look.line())),
                Some((on, off)) => area.draw(&DashedPathElement::new(sample, on, off, look.line())),
            }
            .map_err(err)?;
        }
        area.draw(&marker((23, mid), &look)).map_err(err)?;
        let (weight, color) = match emphasis {
            Emphasis::Bold => (FontStyle::Bold, BLACK),
            Emphasis::Normal => (FontStyle::Normal, BLACK),
            Emphasis::Faint => (FontStyle::Normal, RGBColor(90, 90, 90)),
        };
        for (k, part) in text.iter().enumerate() {
            let font = FontDesc::new(FontFamily::Name(FONT), LEGEND_SIZE, weight)
                .color(&color)
                .pos(Pos::new(HPos::Left, VPos::Center));
            let x = if k == 0 { 48 } else { 60 };
            area.draw(&Text::new(part.clone(), (x, mid + line * k as i32), font))
                .map_err(err)?;
        }
        y += line * text.len() as i32 + gap;
    }
    Ok(())
}
