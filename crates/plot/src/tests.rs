//! Unit tests of the plotting helpers: ranges, ticks, legend order, thinning, SVG output.

use super::*;

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
    let looks = looks(&series, 0);
    assert_eq!(looks[1].color, PALETTE[0].to_rgba());
    assert_eq!(looks[4].color, PALETTE[1].to_rgba());
    assert_eq!(looks[2].color, PALETTE[2].to_rgba());
    assert_eq!(looks[0].color, GREY.to_rgba());
    assert!(looks[1].width > looks[0].width);
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
    let circles = svg.matches("<circle").count();
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
            .matches("<circle")
            .count()
    };
    assert_eq!(circles, legend_only + 4, "{svg}");
    std::fs::remove_dir_all(&dir).unwrap();
}
