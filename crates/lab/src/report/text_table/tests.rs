use super::super::{
    ActionShareReport, BoundReport, JobTail, JobsReport, Latency, PolicyResult, Report, SimSummary,
    WindowPoint,
};
use super::{to_text_table, to_time_series_text_table};
use crate::report::AppResult;

const LONG: &str = "per-class:/tmp/some/very/long/path/model.dqn";
const LONGER: &str = "tapfinger:/another/rather/long/checkpoint/directory/full-edge.tapfinger";

fn latency(p99: f64) -> Latency {
    Latency {
        p50: p99 / 3.0,
        p95: p99 / 1.5,
        p99,
    }
}

/// A row named `policy` with success ratio `ratio` over 10 000 queries and two apps.
fn row(policy: &str, ratio: f64) -> PolicyResult {
    let offered = 10_000;
    let success = (ratio * offered as f64).round() as u64;
    let app = |name: &str, r: f64| AppResult {
        app: name.to_string(),
        offered: offered / 2,
        success: (r * (offered / 2) as f64) as u64,
        failure: 0,
        rejected: 0,
        degraded: 0,
        success_ratio: r,
        latency_ms: latency(120.0),
    };
    PolicyResult {
        policy: policy.to_string(),
        offered,
        success,
        failure: 37,
        rejected: offered - success - 37,
        rejected_at_binding: 0,
        rejected_at_worker: 0,
        degraded: 0,
        success_ratio: ratio,
        latency_ms: latency(212.4),
        latency_mean_ms: 80.0,
        stream_tail_ms: latency(250.0),
        job_tail_ms: JobTail {
            mean: 140.0,
            p50: 130.0,
            p95: 200.0,
            p99: 240.0,
        },
        jobs: JobsReport {
            jobs: 10,
            on_time: 9,
            on_time_ratio: 0.9,
            triggered: 0,
        },
        mitigation: Default::default(),
        per_app: vec![
            app("ar-overlay", ratio - 0.05),
            app("video-surveillance", 1.0),
        ],
        per_window: (0..3)
            .map(|w| WindowPoint {
                t_s: 60.0 * w as f64,
                success_ratio: ratio - 0.01 * w as f64,
                offered: 100,
                success: 80,
                p99_ms: 200.0,
            })
            .collect(),
        actions: None,
        allocation: None,
        share_of_bound: None,
    }
}

fn report(results: Vec<PolicyResult>) -> Report {
    Report {
        topology: "full-edge".into(),
        seed: 7,
        lambda: 60.0,
        lambda_profile: "60".into(),
        duration_s: 600.0,
        own_bindings: String::new(),
        load_view: None,
        results,
        sim: SimSummary {
            queries: 1,
            events: 1,
            wall_s: 1.0,
            queries_per_core_s: 1.0,
            x_real_time_per_core: 1.0,
            threads: 1,
        },
        bound: None,
    }
}

fn bound() -> BoundReport {
    BoundReport {
        success_ratio: 0.95,
        offered: 10_000,
        served: 9_500.0,
        carried: 12.0,
        streams: 40,
        unservable: 0,
        slices: 10,
        fit: 2,
        lps: 8,
        columns: 300,
        pairs: 900,
        worst_gap: 0.0,
        slice_ms: 1000.0,
        wall_s: 0.5,
    }
}

/// The character offset just past `label` in `header` (labels are unique in their header).
fn end_of(header: &str, label: &str) -> usize {
    let at = header
        .find(label)
        .unwrap_or_else(|| panic!("`{label}` missing from {header:?}"));
    header[..at].chars().count() + label.chars().count()
}

/// The whitespace-delimited text of `line` that ends at character offset `end`, or a panic
/// naming the line when no cell ends exactly there.
fn cell_ending_at(line: &str, end: usize) -> String {
    let chars: Vec<char> = line.chars().collect();
    assert!(
        end <= chars.len() && chars[end - 1] != ' ' && chars.get(end).is_none_or(|c| *c == ' '),
        "no cell ends at column {end} of {line:?}"
    );
    let start = chars[..end]
        .iter()
        .rposition(|c| *c == ' ')
        .map_or(0, |i| i + 1);
    chars[start..end].iter().collect()
}

/// Asserts that in every line of `rows`, each of `labels`' columns (right-aligned) has a cell
/// ending exactly where its label ends in `header`; returns the cells, row by row.
fn right_aligned_cells(header: &str, rows: &[&str], labels: &[&str]) -> Vec<Vec<String>> {
    let ends: Vec<usize> = labels.iter().map(|l| end_of(header, l)).collect();
    rows.iter()
        .map(|line| ends.iter().map(|&e| cell_ending_at(line, e)).collect())
        .collect()
}

#[test]
fn rows_named_by_a_long_path_keep_every_column_under_its_header() {
    let mut r = report(vec![
        row("closest", 0.8423),
        row(LONG, 0.9),
        row(LONGER, 0.8765),
    ]);
    r.set_bound(bound());
    let text = to_text_table(&r);
    let lines: Vec<&str> = text.lines().collect();
    let h = lines.iter().position(|l| l.starts_with("policy")).unwrap();
    let header = lines[h];
    let rows = &lines[h + 1..h + 5];
    let labels = [
        "success",
        "share of bound",
        "failure",
        "reject",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "ar-overlay",
        "video-surveillance",
    ];
    let cells = right_aligned_cells(header, &rows[..3], &labels);
    // Read back: the long rows' figures are their own, in percent with two decimals.
    assert_eq!(cells[1][0], "90.00%", "{text}");
    assert_eq!(cells[1][1], "94.74%", "{text}");
    assert_eq!(cells[2][0], "87.65%", "{text}");
    assert_eq!(cells[0][2], "0.37%", "{text}");
    assert_eq!(cells[0][6], "212.4", "{text}");
    assert_eq!(cells[2][8], "100.00%", "{text}");
    for (line, name) in rows.iter().zip(["closest", LONG, LONGER, "bound"]) {
        assert!(line.starts_with(&format!("{name} ")), "{text}");
    }
    // Every policy row has the same number of cells; the bound's row has its success alone,
    // under the success column.
    let counts: Vec<usize> = rows.iter().map(|l| l.split_whitespace().count()).collect();
    assert_eq!(counts, [10, 10, 10, 2], "{text}");
    assert_eq!(
        right_aligned_cells(header, &rows[3..], &["success"])[0][0],
        "95.00%"
    );
    // The bound's column has a header of its own, explained under the table.
    assert!(
        header.contains("success  share of bound  failure"),
        "{text}"
    );
    assert!(
        lines[h + 5] == "share of bound: a row's success as a share of the bound's"
            && lines[h + 6]
                .starts_with("bound: the offline upper bound (docs/model.md §16): 9500 of 10000"),
        "{text}"
    );
    assert!(text.lines().all(|l| l == l.trim_end()), "{text:?}");
}

#[test]
fn the_time_series_the_gain_split_and_the_tails_line_up_with_long_names() {
    let tables = "tables:/tmp/a/rather/long/path/to/the/tables.yaml";
    let mut rows = vec![
        row("closest", 0.8423),
        row("dqn", 0.8701),
        row(tables, 0.8555),
        row(LONG, 0.81),
    ];
    rows[3].mitigation.reissued = 123_456;
    rows[1].actions = Some(ActionShareReport {
        classes: vec!["ar-overlay".into(), "a-much-longer-class-name".into()],
        actions: vec!["closest".into(), "farthest".into(), "never".into()],
        share: vec![vec![0.25, 0.75, 0.0], vec![1.0, 0.0, 0.0]],
    });
    let r = report(rows);

    let series = to_time_series_text_table(&r);
    let lines: Vec<&str> = series.lines().collect();
    let cells = right_aligned_cells(lines[0], &lines[1..], &["t_s", "dqn", LONG]);
    assert_eq!(cells[2], ["120.0", "85.01%", "79.00%"], "{series}");

    let text = to_text_table(&r);
    let lines: Vec<&str> = text.lines().collect();
    let at = |prefix: &str| lines.iter().position(|l| l.starts_with(prefix)).unwrap();
    let g = at("learned default against the best rule of this run (closest 84.23%):");
    let split = &lines[g + 1..g + 4];
    let end = end_of(split[0], "pp");
    let gains: Vec<String> = split.iter().map(|l| cell_ending_at(l, end)).collect();
    assert_eq!(gains, ["pp"; 3], "{text}");
    assert!(split[0].starts_with("  dqn ") && split[0].contains("+2.78 pp"));
    assert!(
        split[1].contains("+1.32 pp  its per-class tables alone"),
        "{text}"
    );
    assert!(
        split[2].contains("+1.46 pp  what the network adds"),
        "{text}"
    );

    let t = at("p99 ms of answered queries");
    let cells = right_aligned_cells(lines[t], &lines[t + 1..t + 5], &["stream", "reissued"]);
    assert_eq!(cells[3], ["250.0", "123456"], "{text}");

    let a = at("actions of dqn (share of decisions per class):");
    let header = lines[a + 1];
    assert!(!header.contains("never"), "{text}");
    let cells = right_aligned_cells(header, &lines[a + 2..a + 3], &["closest", "farthest"]);
    assert_eq!(cells[0], ["25.00%", "75.00%"], "{text}");
    let cells = right_aligned_cells(header, &lines[a + 3..a + 4], &["closest"]);
    assert_eq!(cells[0], ["100.00%"], "{text}");
    assert!(
        lines[a + 3].starts_with("  a-much-longer-class-name "),
        "{text}"
    );
}
