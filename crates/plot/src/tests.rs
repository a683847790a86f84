//! Unit tests of the plotting helpers: ranges, ticks, legend order, looks, thinning, label
//! placement, SVG output (read back: every series' colour, dash and marker).

use super::*;
use crate::labels::{LABELLED, spread};
use crate::legend::legend_lines;
use crate::lines::{SPARSE_MARKERS, marked, thin};
use crate::look::PALETTE;
use std::collections::{BTreeMap, BTreeSet};

fn s(name: &str, emphasis: Emphasis) -> Series {
    Series::new(name, vec![(0.0, 1.0)], emphasis)
}

#[test]
fn zoomed_range_hugs_the_data() {
    let (lo, hi) = zoomed_range([0.9, 0.95, 1.0, f64::NAN]);
    assert!((lo - 0.894).abs() < 1e-9, "{lo}");
    assert!((hi - 1.006).abs() < 1e-9, "{hi}");
    assert_eq!(zoomed_range([]), (0.0, 1.0));
    let (lo, hi) = zoomed_range([20.0, 20.0]);
    assert!(lo < 20.0 && hi > 20.0 && hi - lo < 3.0, "{lo}..{hi}");
}

#[test]
fn legend_lists_emphasised_series_first_in_given_order() {
    let series = [
        s("static-a", Emphasis::Faint),
        s("dqn", Emphasis::Bold),
        s("ctx", Emphasis::Normal),
        s("static-b", Emphasis::Faint),
        s("oracle", Emphasis::Bold),
    ];
    let names: Vec<&str> = legend_order(&series)
        .into_iter()
        .map(|i| series[i].name.as_str())
        .collect();
    assert_eq!(names, ["dqn", "oracle", "ctx", "static-a", "static-b"]);
    let panel = Panel {
        y: Axis::new("y", Format::Number),
        series: series.to_vec(),
    };
    let looks = looks(&series, &style_indices(&[panel])[0]);
    // Colours in legend order, the faint series too.
    assert_eq!(looks[1].color, PALETTE[0].to_rgba());
    assert_eq!(looks[4].color, PALETTE[1].to_rgba());
    assert_eq!(looks[2].color, PALETTE[2].to_rgba());
    assert_eq!(looks[0].color, PALETTE[3].to_rgba());
    assert_eq!(looks[3].color, PALETTE[4].to_rgba());
    assert!(looks[1].width > looks[2].width && looks[2].width > looks[0].width);
}

#[test]
fn long_lines_are_thinned_and_keep_their_ends() {
    let pts: Vec<(f64, f64)> = (0..2000).map(|i| (i as f64, 0.0)).collect();
    let t = thin(&pts, 500);
    assert!(t.len() <= 500, "{}", t.len());
    assert_eq!(t.first(), Some(&(0.0, 0.0)));
    assert_eq!(t.last(), Some(&(1999.0, 0.0)));
    assert_eq!(thin(&pts[..10], 500).len(), 10);
    // Every third point (0, 3, …, 999) and the last.
    assert_eq!(thin(&pts[..1001], 500).len(), 335);
}

#[test]
fn long_legend_names_wrap_at_a_space() {
    assert_eq!(legend_lines("oracle", 20), ["oracle"]);
    assert_eq!(
        legend_lines("random-proportional-load (best static)", 26),
        ["random-proportional-load", "(best static)"]
    );
    assert_eq!(legend_lines("abcdefghij", 5), ["abcd…"]);
}

#[test]
fn tick_labels_print_to_the_step() {
    assert_eq!(tick_decimals(0.894, 1.006, Y_TICKS, Format::Percent), 0);
    assert_eq!(tick_decimals(0.894, 1.006, Y_TICKS, Format::Number), 2);
    assert_eq!(tick_decimals(0.0, 120.0, X_TICKS, Format::Number), 0);
    assert_eq!(tick_label(0.95, 0, Format::Percent), "95 %");
    assert_eq!(tick_label(-0.0001, 2, Format::Number), "0.00");
    assert_eq!(tick_label(12.5, 1, Format::Number), "12.5");
}

#[test]
fn charts_write_svg() {
    let dir = std::env::temp_dir().join(format!("continuum-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fig = Figure {
        title: "t".into(),
        x: Axis::new("time (s)", Format::Number),
        panels: vec![Panel {
            y: Axis::new("success ratio (%)", Format::Percent),
            series: vec![
                Series::new("a", vec![(0.0, 0.9), (10.0, 0.95)], Emphasis::Faint),
                Series::new("dqn", vec![(0.0, 0.97), (10.0, 0.99)], Emphasis::Bold),
            ],
        }],
    };
    line_chart(&dir.join("l.svg"), &fig).unwrap();
    let svg = std::fs::read_to_string(dir.join("l.svg")).unwrap();
    assert!(svg.contains("90 %") && svg.contains("dqn"), "{svg}");
    // One value per category (x: the category's index) and series.
    let by_category = Figure {
        title: "per app".into(),
        x: Axis::new("application", Format::Number),
        panels: vec![Panel {
            y: Axis::new("success ratio (%)", Format::Percent),
            series: vec![
                Series::new("a", vec![(0.0, 0.9), (1.0, 0.95)], Emphasis::Faint),
                Series::new("dqn", vec![(0.0, 0.97), (1.0, 0.99)], Emphasis::Bold),
            ],
        }],
    };
    let categories = ["cat-alpha".to_string(), "cat-beta".to_string()];
    category_chart(&dir.join("c.svg"), &by_category, &categories).unwrap();
    let svg = std::fs::read_to_string(dir.join("c.svg")).unwrap();
    // Each category's name under its column, the title, the axes and the legend.
    for text in [
        "cat-alpha",
        "cat-beta",
        "per app",
        "application",
        "dqn",
        "90 %",
    ] {
        assert!(
            svg.lines().any(|l| l.trim() == text),
            "no text {text} in:\n{svg}"
        );
    }
    // A marker per point: the 4 points drawn in the chart, beyond the legend's markers.
    let circles = svg.matches("<polygon").count();
    let legend_only = {
        let empty = Figure {
            panels: vec![Panel {
                y: Axis::new("success ratio (%)", Format::Percent),
                series: vec![
                    Series::new("a", vec![], Emphasis::Faint),
                    Series::new("dqn", vec![], Emphasis::Bold),
                ],
            }],
            ..by_category.clone()
        };
        category_chart(&dir.join("e.svg"), &empty, &categories).unwrap();
        std::fs::read_to_string(dir.join("e.svg"))
            .unwrap()
            .matches("<polygon")
            .count()
    };
    assert_eq!(circles, legend_only + 4, "{svg}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_lone_x_gets_a_range_of_its_own_unit_never_crossing_zero() {
    assert_eq!(x_range([0.0]), (0.0, 1.0));
    assert_eq!(x_range([1.0, 1.0]), (0.0, 2.0));
    assert_eq!(x_range([7.0]), (6.0, 8.0));
    assert_eq!(x_range([300.0]), (200.0, 400.0));
    let (lo, hi) = x_range([0.5]);
    assert!(
        (lo - 0.4).abs() < 1e-12 && (hi - 0.6).abs() < 1e-12,
        "{lo}..{hi}"
    );
    assert_eq!(x_range([-3.0]), (-4.0, -2.0));
    assert_eq!(x_range([f64::NAN]), (0.0, 1.0));
    // Several x: their extent exactly.
    assert_eq!(x_range([2.5, 27.5, 10.0]), (2.5, 27.5));
}

/// The rendered tick labels of the x axis of `svg` (text under the plot, left of the legend).
fn x_tick_labels(svg: &str) -> Vec<String> {
    let els = elements(svg);
    let bottom = els
        .iter()
        .filter(|e| e.tag == "line")
        .map(|e| num(e, "y1").max(num(e, "y2")))
        .fold(f64::MIN, f64::max);
    els.iter()
        .filter(|e| e.tag == "text" && num(e, "y") > bottom && num(e, "y") < bottom + 30.0)
        .map(|e| e.text.clone())
        .collect()
}

#[test]
fn a_one_point_curve_shows_no_negative_x() {
    let dir = tempdir("one-point");
    let fig = Figure {
        title: "Training".into(),
        x: Axis::new("episode", Format::Number),
        panels: vec![Panel {
            y: Axis::new("success ratio (%)", Format::Percent),
            series: vec![Series::new("episode", vec![(0.0, 0.93)], Emphasis::Bold)],
        }],
    };
    let path = dir.join("one.svg");
    line_chart(&path, &fig).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    let ticks = x_tick_labels(&svg);
    assert!(ticks.len() >= 2, "{ticks:?}");
    assert!(ticks.iter().all(|t| !t.starts_with('-')), "{ticks:?}");
    assert_eq!(ticks.first().map(String::as_str), Some("0.0"), "{ticks:?}");
    // The lone point has its marker.
    assert!(svg.contains("<polygon"), "{svg}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_fixed_x_range_is_shown_whatever_the_data() {
    let dir = tempdir("fixed");
    let fig = Figure {
        title: "t".into(),
        x: Axis::new("time since start (s)", Format::Number).with_range(0.0, 30.0),
        panels: vec![Panel {
            y: Axis::new("y", Format::Number),
            series: vec![Series::new(
                "a",
                (0..6).map(|i| (2.5 + 5.0 * i as f64, 1.0)).collect(),
                Emphasis::Bold,
            )],
        }],
    };
    let path = dir.join("fixed.svg");
    line_chart(&path, &fig).unwrap();
    let ticks = x_tick_labels(&std::fs::read_to_string(&path).unwrap());
    assert_eq!(ticks.first().map(String::as_str), Some("0"), "{ticks:?}");
    assert_eq!(ticks.last().map(String::as_str), Some("30"), "{ticks:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn looks_differ_in_colour_and_dash_up_to_24_and_in_all_three_up_to_144() {
    let key = |l: &Look| (l.color.rgb(), l.dash, l.marker);
    let looks: Vec<Look> = (0..144).map(|k| Look::of(k, Emphasis::Faint)).collect();
    let all: BTreeSet<_> = looks.iter().map(|l| format!("{:?}", key(l))).collect();
    assert_eq!(all.len(), 144);
    let two = |f: &dyn Fn(&Look) -> String| looks[..24].iter().map(f).collect::<BTreeSet<_>>();
    assert_eq!(
        two(&|l| format!("{:?}{:?}", l.color.rgb(), l.dash)).len(),
        24
    );
    assert_eq!(
        two(&|l| format!("{:?}{:?}", l.color.rgb(), l.marker)).len(),
        24
    );
    // Emphasis changes the width and size only.
    let (b, f) = (Look::of(5, Emphasis::Bold), Look::of(5, Emphasis::Faint));
    assert_eq!(key(&b), key(&f));
    assert!(b.width > f.width && b.radius > f.radius);
}

#[test]
fn a_name_keeps_its_look_across_panels() {
    let panel = |names: &[&str]| Panel {
        y: Axis::new("y", Format::Number),
        series: names.iter().map(|n| s(n, Emphasis::Normal)).collect(),
    };
    let idx = style_indices(&[panel(&["a", "b"]), panel(&["b", "c", "a"])]);
    assert_eq!(idx, [vec![0, 1], vec![1, 2, 0]]);
}

#[test]
fn long_series_get_sparse_staggered_markers() {
    let pts: Vec<(f64, f64)> = (0..600).map(|i| (i as f64, 0.0)).collect();
    let a = marked(&pts, 0);
    let b = marked(&pts, 1);
    assert!(
        (SPARSE_MARKERS - 1..=SPARSE_MARKERS + 1).contains(&a.len()),
        "{}",
        a.len()
    );
    assert!(a.iter().all(|p| !b.contains(p)));
    assert_eq!(marked(&pts[..10], 3).len(), 10);
}

#[test]
fn labels_move_apart_and_stay_in_the_plot() {
    let mut boxes = [(100, 16), (105, 16), (108, 32)];
    spread(&mut boxes, 0, 1000);
    assert_eq!(boxes, [(100, 16), (118, 16), (136, 32)]);
    let mut low = [(90, 16), (95, 16)];
    spread(&mut low, 0, 100);
    assert_eq!(low, [(66, 16), (84, 16)]);
    let mut high = [(-20, 16)];
    spread(&mut high, 10, 100);
    assert_eq!(high, [(10, 16)]);
}

/// A fresh temporary directory for one test.
fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("continuum-plot-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One element of an SVG: its tag, attributes and the text right after its opening tag.
struct Element {
    tag: String,
    attrs: BTreeMap<String, String>,
    text: String,
}

/// The elements of `svg`, in document order (a parser just good enough for plotters' output).
fn elements(svg: &str) -> Vec<Element> {
    svg.split('<')
        .skip(1)
        .filter(|c| !c.starts_with('/'))
        .filter_map(|chunk| {
            let end = chunk.find('>')?;
            let head = chunk[..end].trim_end_matches('/');
            let (tag, mut rest) = head.split_once(char::is_whitespace).unwrap_or((head, ""));
            let mut attrs = BTreeMap::new();
            while let Some(eq) = rest.find("=\"") {
                let value = &rest[eq + 2..];
                let close = value.find('"')?;
                attrs.insert(rest[..eq].trim().to_string(), value[..close].to_string());
                rest = &value[close + 1..];
            }
            let text = chunk[end + 1..].trim().to_string();
            Some(Element {
                tag: tag.to_string(),
                attrs,
                text,
            })
        })
        .collect()
}

/// The number in attribute `name` of `e` (NaN if none).
fn num(e: &Element, name: &str) -> f64 {
    e.attrs
        .get(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

/// The points of a polyline or polygon.
fn points(e: &Element) -> Vec<(i32, i32)> {
    (e.attrs.get("points").map_or("", String::as_str))
        .split_whitespace()
        .filter_map(|p| {
            let (x, y) = p.split_once(',')?;
            Some((x.parse().ok()?, y.parse().ok()?))
        })
        .collect()
}

/// How one row of a chart is drawn, as read back from the SVG: the colour and width of its
/// line, its dash (`solid`, or the first dash's length and the gap after it, px) and its
/// marker (fill colour and outline, relative to the outline's top left corner).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Drawn {
    stroke: String,
    width: String,
    dash: String,
    marker: String,
}

/// The row of `els` drawn along pixel row `y` with x in `xs`: its horizontal polylines and
/// the markers (polygons) on it.
fn drawn_at(els: &[Element], y: i32, xs: std::ops::Range<i32>) -> Drawn {
    let inside = |p: &[(i32, i32)]| !p.is_empty() && p.iter().all(|q| xs.contains(&q.0));
    let mut segments: Vec<(i32, i32, &Element)> = els
        .iter()
        .filter(|e| e.tag == "polyline" && e.attrs.get("opacity").map(String::as_str) == Some("1"))
        .filter_map(|e| {
            let p = points(e);
            (inside(&p) && p.iter().all(|q| q.1 == y)).then(|| (p[0].0, p[p.len() - 1].0, e))
        })
        .collect();
    segments.sort_by_key(|s| s.0);
    assert!(!segments.is_empty(), "no line at y = {y}");
    let dash = match segments.as_slice() {
        [_] => "solid".to_string(),
        [a, b, ..] => format!("{} {}", a.1 - a.0, b.0 - a.1),
        [] => unreachable!(),
    };
    let first = segments[0].2;
    let mut markers: BTreeSet<String> = els
        .iter()
        .filter(|e| e.tag == "polygon")
        .filter_map(|e| {
            let p = points(e);
            let (x0, y0) = (p.iter().map(|q| q.0).min()?, p.iter().map(|q| q.1).min()?);
            let y1 = p.iter().map(|q| q.1).max()?;
            (inside(&p) && y0 <= y && y <= y1).then(|| {
                let rel: Vec<(i32, i32)> = p.iter().map(|q| (q.0 - x0, q.1 - y0)).collect();
                format!("{} {rel:?}", e.attrs["fill"])
            })
        })
        .collect();
    assert_eq!(markers.len(), 1, "markers at y = {y}: {markers:?}");
    Drawn {
        stroke: first.attrs["stroke"].clone(),
        width: first.attrs["stroke-width"].clone(),
        dash,
        marker: markers.pop_first().unwrap(),
    }
}

/// A chart of `n` rows (the first bold, the second normal, the rest faint) named
/// `policy-<i>`, row `i` a level line at `i` through 6 points.
fn many_rows(n: usize) -> Figure {
    let series: Vec<Series> = (0..n)
        .map(|i| {
            let e = match i {
                0 => Emphasis::Bold,
                1 => Emphasis::Normal,
                _ => Emphasis::Faint,
            };
            let pts = (0..6).map(|x| (x as f64, i as f64)).collect();
            Series::new(format!("policy-{i}"), pts, e)
        })
        .collect();
    Figure {
        title: "many rows".into(),
        x: Axis::new("time (s)", Format::Number),
        panels: vec![Panel {
            y: Axis::new("value", Format::Number),
            series,
        }],
    }
}

/// The pixel rows of the level lines of `els` with x in `xs` (lines with markers on them, not
/// axes), from the lowest on the page up.
fn level_rows(els: &[Element], xs: std::ops::Range<i32>) -> Vec<i32> {
    let inside = |p: &[(i32, i32)]| p.iter().all(|q| xs.contains(&q.0));
    let marked_rows: Vec<(i32, i32)> = (els.iter().filter(|e| e.tag == "polygon"))
        .map(points)
        .filter(|p| inside(p))
        .filter_map(|p| Some((p.iter().map(|q| q.1).min()?, p.iter().map(|q| q.1).max()?)))
        .collect();
    let rows: BTreeSet<i32> = (els.iter().filter(|e| e.tag == "polyline"))
        .map(points)
        .filter(|p| p.len() >= 2 && inside(p) && p.iter().all(|q| q.1 == p[0].1))
        .map(|p| p[0].1)
        .filter(|y| marked_rows.iter().any(|r| (r.0..=r.1).contains(y)))
        .collect();
    // Pixel rows grow downwards.
    rows.into_iter().rev().collect()
}

#[test]
fn every_row_of_a_chart_of_many_is_drawn_its_own_way_in_plot_and_legend() {
    // 20 rows, each a level line at its own height.
    let n = 20;
    let fig = many_rows(n);
    let dir = tempdir("many");
    let path = dir.join("many.svg");
    line_chart(&path, &fig).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    let els = elements(&svg);
    // The plot spans from its left edge (where the grid starts) to the legend column.
    let split = (WIDTH - LEGEND_WIDTH) as i32;
    let left = (els.iter().filter(|e| e.tag == "line"))
        .map(|e| num(e, "x1") as i32)
        .min()
        .unwrap();
    let names: Vec<String> = (0..n).map(|i| format!("policy-{i}")).collect();
    let text_at = |name: &str, legend: bool| -> Vec<i32> {
        (els.iter())
            .filter(|e| {
                e.tag == "text" && e.text == name && (num(e, "x") as i32 >= split) == legend
            })
            .map(|e| num(e, "y") as i32)
            .collect()
    };
    // The legend: each name once, with a sample of its line and marker on its row.
    let legend: Vec<Drawn> = names
        .iter()
        .map(|name| {
            let ys = text_at(name, true);
            assert_eq!(ys.len(), 1, "{name} in the legend {ys:?}");
            drawn_at(&els, ys[0], split..WIDTH as i32)
        })
        .collect();
    // The plot: the line of each row, at the pixel row of its level (row 0 the lowest).
    let levels = level_rows(&els, left..split);
    assert_eq!(levels.len(), n, "{levels:?}");
    let plot: Vec<Drawn> = levels
        .iter()
        .map(|&y| drawn_at(&els, y, left..split))
        .collect();
    // Each row is drawn in the plot as its legend entry shows it …
    assert_eq!(plot, legend);
    // … and no two rows alike, however faint: not in colour + dash + marker …
    assert_eq!(
        legend.iter().collect::<BTreeSet<_>>().len(),
        n,
        "{legend:#?}"
    );
    // … nor even in colour and dash, with the palette's 8 colours all used, none grey.
    let colour_dash: BTreeSet<_> = legend.iter().map(|d| (&d.stroke, &d.dash)).collect();
    assert_eq!(colour_dash.len(), n);
    let colours: BTreeSet<_> = legend.iter().map(|d| d.stroke.as_str()).collect();
    assert_eq!(colours.len(), PALETTE.len(), "{colours:?}");
    assert!(!colours.contains("#A0A0A0"), "{colours:?}");
    // The bold row stands out: the thickest line, first in the legend.
    let widths: Vec<u32> = legend.iter().map(|d| d.width.parse().unwrap()).collect();
    assert!(widths[1..].iter().all(|&w| w < widths[0]), "{widths:?}");
    let first = (els.iter())
        .filter(|e| e.tag == "text" && names.contains(&e.text) && num(e, "x") as i32 >= split)
        .min_by_key(|e| num(e, "y") as i32)
        .unwrap();
    assert_eq!(first.text, "policy-0");
    // The first three rows are named in the plot too, next to their last point; no other.
    for (i, name) in names.iter().enumerate() {
        let labels = text_at(name, false);
        assert_eq!(
            labels.len(),
            usize::from(i < LABELLED),
            "{name}: {labels:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
