//! The jobs workload schema: a valid file read whole, the shipped files read, and bad input
//! refused with `file:line:col`, the field and what is wrong.

use super::*;
use crate::nodes::Nodes;
use continuum_core::config::Source;
use continuum_core::profiles::Profiles;
use continuum_core::topology::Topology;
use std::path::Path;

const GOOD: &str = r#"schema: 1
arrivals: {day_per_min: 2, night_per_min: 6, night_from_h: 0, night_to_h: 6, start_h: 12}
nodes:
  default: {cpu: 8, gpu: 1, mem_gb: 32}
  per_layer:
    access: {cpu: 16, mem_gb: 64, speed: 0.5}
  per_cluster:
    cloud: [{cpu: 32, gpu: 8, mem_gb: 256}, {cpu: 32, gpu: 8, mem_gb: 256}]
kinds:
  - name: dag
    share: 1
    tasks: {lognormal: {mean: 60, std: 120}}
    dag: {stages: {uniform: [1, 5]}, shape: chain}
    cpu_request: {choice: [0.5, 1]}
    cpu_limit: 2
    mem_request_gb: 2
    duration_s: {lognormal: {mean: 70, std: 300}}
  - name: ai
    share: 0.5
    tasks: 20
    cpu_request: 4
    mem_request_gb: 16
    mem_limit_gb: 32
    gpu: {choice: [0, 0.5, 1]}
    work_cpu_s: 4000
    slowdown: {choice: {values: [1, 2], weights: [0.9, 0.1]}}
    sla_waiting_s: 600
    work_per: stage
"#;

fn parse(text: &str) -> Result<JobsWorkload, ConfigError> {
    JobsWorkload::from_source(&Source::inline("jobs.yaml", text))
}

#[test]
fn a_valid_file_is_read_whole() {
    let w = parse(GOOD).expect("valid");
    assert_eq!(w.kinds.len(), 2);
    assert!(matches!(w.arrivals, Arrivals::Diurnal { start_h, .. } if start_h == 12.0));
    assert!((w.mean_per_min() - (0.25 * 6.0 + 0.75 * 2.0)).abs() < 1e-12);
    let dag = w.kinds[0].dag.as_ref().expect("dag");
    assert_eq!(dag.shape, DagShape::Chain);
    assert!(matches!(w.kinds[0].work, Work::DurationS(_)));
    assert!(w.kinds[1].dag.is_none() && w.kinds[1].slowdown.is_some());
    assert!(w.kinds[1].work_per_stage && !w.kinds[0].work_per_stage);
    // Sampled jobs: an `ai` job's tasks share one work; a `dag` job's stages follow a chain.
    let jobs = w.sample_jobs(4, 3600.0);
    assert!(jobs.iter().any(|j| j.kind == 0) && jobs.iter().any(|j| j.kind == 1));
    for j in &jobs {
        let works = &j.stages[0].work_cpu_s;
        if j.kind == 1 {
            assert_eq!(j.stages.len(), 1);
            assert!(works.iter().all(|x| *x == works[0]));
        } else {
            assert!(
                j.stages
                    .iter()
                    .enumerate()
                    .all(|(k, s)| s.parents == if k == 0 { vec![] } else { vec![k - 1] })
            );
            assert!(j.stages.len() <= j.tasks() && (1..=5).contains(&j.stages.len()));
        }
        assert!(
            j.stages.iter().all(
                |s| s.request.cpu > 0.0 && (s.limit.cpu == 0.0 || s.limit.cpu >= s.request.cpu)
            )
        );
    }
    assert!(jobs.windows(2).all(|p| p[0].arrival_s < p[1].arrival_s));
    assert_eq!(w.nodes.default.capacity, Res::new(8.0, 1.0, 32.0));
    assert_eq!(
        w.nodes.per_layer["access"],
        NodeDecl::Shape(NodeShape {
            capacity: Res::new(16.0, 0.0, 64.0),
            speed: 0.5
        })
    );
    assert!(matches!(&w.nodes.per_cluster["cloud"], NodeDecl::List(l) if l.len() == 2));
    // A constant rate and no `nodes:` (the default shape).
    let w = parse("arrivals: {per_min: 3}\nkinds: [{name: k, share: 1, tasks: 1, cpu_request: 1, mem_request_gb: 0, work_cpu_s: 1}]").unwrap();
    assert_eq!(w.arrivals, Arrivals::Constant { per_min: 3.0 });
    assert_eq!(w.nodes.default, crate::nodes::DEFAULT_SHAPE);
}

/// `text` is refused at `line:col` for `field`, with `words` in the message.
fn refused(text: &str, line: usize, col: usize, field: &str, words: &str) {
    let e = parse(text).expect_err("refused");
    assert_eq!((e.line, e.column), (line, col), "{e}");
    assert_eq!(e.field, field, "{e}");
    assert!(e.message.contains(words), "{e}");
    assert!(
        e.to_string()
            .starts_with(&format!("jobs.yaml:{line}:{col}: ")),
        "{e}"
    );
}

/// GOOD with the line starting `old` replaced by `new`.
fn good_with(old: &str, new: &str) -> String {
    GOOD.lines()
        .map(|l| {
            if l.trim_start().starts_with(old) {
                new
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn bad_input_is_refused_at_its_place() {
    refused(
        &good_with("share: 0.5", "    share: -1"),
        19,
        12,
        "kinds[1].share",
        "expected a share >= 0",
    );
    refused(
        &good_with("cpu_request: {choice", "    cpu_request: {uniform: [0, 1]}"),
        14,
        18,
        "kinds[0].cpu_request",
        "expected values > 0",
    );
    refused(
        &good_with("tasks: 20", "    tasks: 0"),
        20,
        12,
        "kinds[1].tasks",
        "expected a count >= 1",
    );
    refused(
        &good_with("dag:", "    dag: {stages: 0}"),
        13,
        19,
        "kinds[0].dag.stages",
        "expected a count >= 1",
    );
    refused(
        &good_with(
            "work_cpu_s: 4000",
            "    work_cpu_s: 4000\n    duration_s: 5",
        ),
        26,
        17,
        "kinds[1].duration_s",
        "give the work once",
    );
    refused(
        &good_with("work_cpu_s: 4000", ""),
        18,
        11,
        "kinds[1].work_cpu_s",
        "missing",
    );
    refused(
        &good_with(
            "gpu: {choice",
            "    gpu: {normal: {mean: 1, std: 1, min: -1}}",
        ),
        24,
        10,
        "kinds[1].gpu",
        "below 0",
    );
    refused(
        &good_with("access:", "    access: {cpu: -16}"),
        6,
        13,
        "nodes.per_layer.access",
        "expected amounts >= 0",
    );
    refused(
        &good_with("access:", "    access: {cpu: 4, speed: 0}"),
        6,
        13,
        "nodes.per_layer.access.speed",
        "expected a speed > 0",
    );
    refused(
        &good_with("arrivals:", "arrivals: {per_min: 2, night_per_min: 3}"),
        2,
        11,
        "arrivals.per_min",
        "give either",
    );
    refused(
        &good_with(
            "arrivals:",
            "arrivals: {day_per_min: 2, night_per_min: 3, night_to_h: 25}",
        ),
        2,
        11,
        "arrivals.night_to_h",
        "an hour in [0, 24)",
    );
    refused(
        &good_with("schema:", "schema: 2"),
        1,
        9,
        "schema",
        "schema 2",
    );
    refused(
        &good_with("- name: ai", "  - name: dag"),
        18,
        11,
        "kinds[1].name",
        "duplicate kind `dag`",
    );
}

#[test]
fn unknown_fields_and_shapes_are_refused_with_their_place() {
    // An unknown key (a typo) is refused by the parser at its line.
    let e = parse(&good_with("cpu_limit: 2", "    cpu_limt: 2")).unwrap_err();
    assert_eq!(e.line, 15, "{e}");
    assert!(e.message.contains("cpu_limt"), "{e}");
    // Every share 0 and no kind at all are refused for the file.
    let e = parse(&good_with("share: 1", "    share: 0").replace("share: 0.5", "share: 0"))
        .unwrap_err();
    assert_eq!(e.field, "kinds");
    let e = parse("arrivals: {per_min: 1}\nkinds: []").unwrap_err();
    assert!(e.message.contains("at least one job kind"), "{e}");
}

#[test]
fn the_shipped_workloads_load_and_split_full_edge() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let profiles = Profiles::load(&root.join("profiles/object-detection.yaml")).expect("profiles");
    let topo =
        Topology::load(&root.join("topologies/full-edge.yaml"), &profiles).expect("topology");
    for f in ["daytime.yaml", "night.yaml"] {
        let w = JobsWorkload::load(&root.join("workloads/jobs").join(f)).expect(f);
        let nodes = Nodes::from_topology(&topo, &w.nodes).expect(f);
        // Full-edge holds 1024 cores, 128 GPUs, 4096 GB in all.
        assert_eq!(nodes.total(), Res::new(1024.0, 128.0, 4096.0), "{f}");
        assert_eq!(w.kinds.len(), 2, "{f}");
    }
}

#[test]
fn one_kind_alone_keeps_its_rate() {
    let src = "schema: 1\narrivals: {per_min: 6}\nkinds:\n  - {name: a, share: 2, tasks: 1, cpu_request: 1, mem_request_gb: 1, work_cpu_s: 1}\n  - {name: b, share: 1, tasks: 1, cpu_request: 1, mem_request_gb: 1, work_cpu_s: 1}\n";
    let w = JobsWorkload::from_source(&Source::inline("w.yaml", src)).unwrap();
    let b = w.only_kind("b").unwrap();
    assert!((b.mean_per_min() - 2.0).abs() < 1e-12);
    assert_eq!((b.kinds[0].share, b.kinds[1].share), (0.0, 1.0));
    let jobs = b.sample_jobs(3, 3600.0);
    assert!(!jobs.is_empty() && jobs.iter().all(|j| j.kind == 1));
    let e = w.only_kind("c").unwrap_err().to_string();
    assert!(e.contains("kind `c`") && e.contains("a, b"), "{e}");
}
