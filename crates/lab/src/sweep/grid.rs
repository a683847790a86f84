//! A grid file and its expansion into reports and jobs (docs/scale-out.md).
//!
//! A grid names `compare` options shared by every report, axes whose every combination is one
//! report, and jobs (`train` or `table` runs) that write files the reports read. Each report is
//! exactly one `continuum compare …` command line; each of its rows is one cell.
//!
//! ```yaml
//! name: small
//! compare: {duration: 120, policies: "closest,least-impedance"}
//! axes:
//!   - topology: [full-edge, co-dc-cloud]   # a name: topologies/<name>.yaml; or a path
//!   - load: [{name: "60", lambda: 60}, {name: diurnal, workload: workloads/diurnal.yaml}]
//!   - seed: [101, 102]
//! jobs:
//!   - {command: table, topology: "{topology}", axes: [{topology: [full-edge]}], out: "out/{topology}.yaml"}
//! ```

use super::CommandLine;
use anyhow::{Context, Result, bail};
use continuum_core::config::Source;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Options the sweep sets itself, which a grid may not name.
const RESERVED: [&str; 3] = ["format", "out", "threads"];

/// Threads of a job when its grid does not say (a training's result depends on its thread
/// count, so local and distributed runs must use the same number).
pub const DEFAULT_JOB_THREADS: usize = 1;

/// The grid file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GridFile {
    name: String,
    #[serde(default)]
    compare: BTreeMap<String, Value>,
    #[serde(default)]
    axes: Vec<BTreeMap<String, Vec<Value>>>,
    #[serde(default)]
    jobs: Vec<BTreeMap<String, Value>>,
}

/// One report of a grid: one `compare` command line.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportSpec {
    /// Unique, file-name safe: the axis labels joined by `.` (e.g. `full-edge.60.101`).
    pub key: String,
    /// Each axis's name and this report's label on it, in axis order.
    pub labels: Vec<(String, String)>,
    /// The command line after the program name (`compare <topology> --k v …`).
    pub argv: Vec<String>,
}

/// One job of a grid: a `train` or `table` run that writes `out`.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    /// Unique: `job-<index>`.
    pub key: String,
    /// The file it writes.
    pub out: PathBuf,
    /// The command line after the program name.
    pub argv: Vec<String>,
}

/// An expanded grid.
#[derive(Debug, Clone)]
pub struct Grid {
    /// The grid's name.
    pub name: String,
    /// The file it was read from.
    pub path: PathBuf,
    /// Reports, axes' combinations in order (the first axis outermost).
    pub reports: Vec<ReportSpec>,
    /// Jobs, in file order (each expanded over its own axes).
    pub jobs: Vec<JobSpec>,
    /// SHA-256 of the expanded command lines (hex, 16 digits): what a cell file must carry to
    /// be merged into this grid's reports.
    pub digest: String,
}

impl Grid {
    /// Reads and expands a grid file; every report's and job's command line is checked as the
    /// command line parser would (unknown options and malformed values are refused, naming the
    /// entry). Files the reports read are checked when the cells are planned.
    pub fn load(path: &Path, cl: &dyn CommandLine) -> Result<Self> {
        let src = Source::read(path)?;
        let file: GridFile = src.parse()?;
        let at = |what: String, msg: String| anyhow::anyhow!("{}: {what}: {msg}", path.display());
        if file.name.trim().is_empty() {
            return Err(at("name".into(), "expected a non-empty name".into()));
        }
        let mut reports = Vec::new();
        // A grid of jobs alone has no reports.
        let combos = if file.compare.is_empty() && file.axes.is_empty() {
            Vec::new()
        } else {
            expand(&file.compare, &file.axes, "axes").map_err(|(w, m)| at(w, m))?
        };
        for combo in combos {
            let argv = command_line("compare", &combo.flags, &combo.templates)
                .map_err(|m| at(combo.entry.clone(), m))?;
            cl.check(&argv).map_err(|m| at(combo.entry.clone(), m))?;
            reports.push(ReportSpec {
                key: combo.key(),
                labels: combo.labels,
                argv,
            });
        }
        let mut jobs = Vec::new();
        for (j, job) in file.jobs.iter().enumerate() {
            let mut flags = job.clone();
            let entry = format!("jobs[{j}]");
            let command = match flags.remove("command") {
                Some(Value::String(c)) if c == "train" || c == "table" => c,
                other => {
                    return Err(at(
                        format!("{entry}.command"),
                        format!("expected `train` or `table`, got {other:?}"),
                    ));
                }
            };
            let axes: Vec<BTreeMap<String, Vec<Value>>> = match flags.remove("axes") {
                None => Vec::new(),
                Some(v) => serde_json::from_value(v).map_err(|e| {
                    at(
                        format!("{entry}.axes"),
                        format!("expected a list of {{axis: [values]}}: {e}"),
                    )
                })?,
            };
            if command == "train" && !flags.contains_key("threads") {
                flags.insert("threads".into(), Value::from(DEFAULT_JOB_THREADS));
            }
            for combo in
                expand(&flags, &axes, &format!("{entry}.axes")).map_err(|(w, m)| at(w, m))?
            {
                let entry = format!(
                    "{entry}{}",
                    combo.entry.strip_prefix("report").unwrap_or("")
                );
                let out = match combo.flags.get("out") {
                    Some(Value::String(o)) => PathBuf::from(template(o, &combo.templates)),
                    _ => return Err(at(entry, "expected `out`: the file the job writes".into())),
                };
                let argv = command_line(&command, &combo.flags, &combo.templates)
                    .map_err(|m| at(entry.clone(), m))?;
                cl.check(&argv).map_err(|m| at(entry.clone(), m))?;
                jobs.push(JobSpec {
                    key: format!("job-{}", jobs.len()),
                    out,
                    argv,
                });
            }
        }
        // Jobs run side by side (on Ray, at once): none may read what another writes.
        for j in &jobs {
            let out = j.out.to_string_lossy();
            if let Some(k) = jobs
                .iter()
                .find(|k| k.key != j.key && k.argv[1..].iter().any(|x| *x == out))
            {
                bail!(
                    "{}: {} reads {}, which {} writes: jobs run side by side, so a job may not read another's output",
                    path.display(),
                    k.key,
                    out,
                    j.key
                );
            }
        }
        let mut seen = std::collections::HashSet::new();
        for r in &reports {
            if !seen.insert(&r.key) {
                bail!(
                    "{}: two reports have the key `{}`: give the axes' map values distinct `name`s",
                    path.display(),
                    r.key
                );
            }
        }
        let mut lines: Vec<String> = vec![file.name.clone()];
        lines.extend(reports.iter().map(|r| r.argv.join("\u{1f}")));
        lines.extend(jobs.iter().map(|j| j.argv.join("\u{1f}")));
        let digest = ring::digest::digest(&ring::digest::SHA256, lines.join("\n").as_bytes());
        let digest: String = digest.as_ref()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok(Self {
            name: file.name,
            path: path.to_path_buf(),
            reports,
            jobs,
            digest,
        })
    }

    /// The report with key `key`.
    pub fn report(&self, key: &str) -> Result<(usize, &ReportSpec)> {
        self.reports
            .iter()
            .enumerate()
            .find(|(_, r)| r.key == key)
            .with_context(|| format!("grid `{}` has no report `{key}`", self.name))
    }
}

/// One combination of axis values: the flags it sets, its labels and template values.
struct Combo {
    entry: String,
    flags: BTreeMap<String, Value>,
    labels: Vec<(String, String)>,
    templates: BTreeMap<String, String>,
}

impl Combo {
    fn key(&self) -> String {
        if self.labels.is_empty() {
            return "all".into();
        }
        let parts: Vec<String> = self.labels.iter().map(|(_, l)| safe(l)).collect();
        parts.join(".")
    }
}

/// A label made file-name safe.
fn safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_+@".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Every combination of `axes` over `base` (the first axis outermost).
fn expand(
    base: &BTreeMap<String, Value>,
    axes: &[BTreeMap<String, Vec<Value>>],
    field: &str,
) -> std::result::Result<Vec<Combo>, (String, String)> {
    let mut combos = vec![Combo {
        entry: "report".into(),
        flags: base.clone(),
        labels: Vec::new(),
        templates: BTreeMap::new(),
    }];
    if let Some(t) = base.get("topology").and_then(Value::as_str) {
        combos[0]
            .templates
            .insert("topology".into(), topology_stem(t));
    }
    for (i, axis) in axes.iter().enumerate() {
        let (name, values) = match axis.iter().next() {
            Some(kv) if axis.len() == 1 => kv,
            _ => {
                return Err((
                    format!("{field}[{i}]"),
                    "expected one axis per entry: `- <name>: [values]`".into(),
                ));
            }
        };
        if values.is_empty() {
            return Err((
                format!("{field}[{i}].{name}"),
                "expected at least one value".into(),
            ));
        }
        let mut next = Vec::new();
        for c in &combos {
            for (v, value) in values.iter().enumerate() {
                let mut c2 = Combo {
                    entry: format!("{}, {field}[{i}].{name}[{v}]", c.entry),
                    flags: c.flags.clone(),
                    labels: c.labels.clone(),
                    templates: c.templates.clone(),
                };
                let label = match value {
                    Value::Object(m) => {
                        for (k, x) in m {
                            if k != "name" {
                                c2.flags.insert(k.clone(), x.clone());
                            }
                        }
                        match m.get("name") {
                            Some(n) => scalar(n)
                                .map_err(|e| (format!("{field}[{i}].{name}[{v}].name"), e))?,
                            None => v.to_string(),
                        }
                    }
                    x => {
                        let s = scalar(x).map_err(|e| (format!("{field}[{i}].{name}[{v}]"), e))?;
                        c2.flags.insert(name.clone(), x.clone());
                        if name == "topology" {
                            topology_stem(&s)
                        } else {
                            s
                        }
                    }
                };
                if let Some(t) = c2.flags.get("topology").and_then(Value::as_str) {
                    c2.templates.insert("topology".into(), topology_stem(t));
                }
                c2.templates.insert(name.clone(), label.clone());
                c2.labels.push((name.clone(), label));
                next.push(c2);
            }
        }
        combos = next;
    }
    Ok(combos)
}

/// A scalar value as text.
fn scalar(v: &Value) -> std::result::Result<String, String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        other => Err(format!("expected a string, number or boolean, got {other}")),
    }
}

/// A topology value as a path: a bare name is `topologies/<name>.yaml`.
pub fn topology_path(t: &str) -> String {
    if t.contains('/') || t.ends_with(".yaml") || t.ends_with(".yml") || t.ends_with(".json") {
        t.to_string()
    } else {
        format!("topologies/{t}.yaml")
    }
}

fn topology_stem(t: &str) -> String {
    Path::new(&topology_path(t))
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or(t)
        .to_string()
}

/// `{name}` in `s` replaced by each template's value.
fn template(s: &str, templates: &BTreeMap<String, String>) -> String {
    let mut s = s.to_string();
    for (k, v) in templates {
        s = s.replace(&format!("{{{k}}}"), v);
    }
    s
}

/// The command line of `command` with `flags`: the topology first (positional), then each
/// flag as `--name value` (`true`: the bare flag; `false`: left out; a list: repeated).
fn command_line(
    command: &str,
    flags: &BTreeMap<String, Value>,
    templates: &BTreeMap<String, String>,
) -> std::result::Result<Vec<String>, String> {
    let topology = match flags.get("topology") {
        Some(Value::String(t)) => topology_path(&template(t, templates)),
        Some(other) => return Err(format!("topology: expected a name or a path, got {other}")),
        None => {
            let typo = flags
                .keys()
                .find(|k| continuum_core::config::closest_name(k, ["topology"]).is_some())
                .map_or_else(String::new, |k| {
                    format!("; `{k}` is not an option (did you mean `topology`?)")
                });
            return Err(format!(
                "expected a `topology` (in the options or an axis){typo}"
            ));
        }
    };
    let mut argv = vec![command.to_string(), topology];
    for (k, v) in flags {
        if k == "topology" {
            continue;
        }
        let flag = k.replace('_', "-");
        if command == "compare" && RESERVED.contains(&flag.as_str()) {
            return Err(format!("`{k}`: the sweep sets it itself"));
        }
        let values = match v {
            Value::Array(xs) => xs.clone(),
            x => vec![x.clone()],
        };
        for x in values {
            match x {
                Value::Bool(true) => argv.push(format!("--{flag}")),
                Value::Bool(false) => {}
                x => {
                    let s = scalar(&x).map_err(|e| format!("`{k}`: {e}"))?;
                    argv.push(format!("--{flag}"));
                    argv.push(template(&s, templates));
                }
            }
        }
    }
    Ok(argv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::RunArgs;
    use crate::runner::Runner;
    use clap::Parser;

    /// The two commands a grid writes, with the options these tests name.
    #[derive(Parser)]
    enum TestCli {
        Compare {
            topology: String,
            #[arg(long)]
            duration: Option<f64>,
            #[arg(long)]
            lambda: Option<f64>,
            #[arg(long)]
            seed: Option<u64>,
            #[arg(long)]
            agent: Vec<String>,
        },
        Train {
            topology: String,
            #[arg(long)]
            seed: Option<u64>,
            #[arg(long)]
            init: Option<String>,
            #[arg(long)]
            out: String,
            #[arg(long)]
            threads: usize,
        },
    }

    /// Checks command lines with [`TestCli`]; runs nothing.
    struct Checker;

    impl CommandLine for Checker {
        fn check(&self, argv: &[String]) -> std::result::Result<(), String> {
            let full = std::iter::once("continuum".to_string()).chain(argv.iter().cloned());
            TestCli::try_parse_from(full)
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
        fn compare(&self, _: &[String]) -> Result<(RunArgs, Vec<Runner>)> {
            bail!("not in these tests")
        }
        fn run(&self, _: &[String]) -> Result<()> {
            bail!("not in these tests")
        }
    }

    fn grid(text: &str) -> Result<Grid> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("g.yaml");
        std::fs::write(&p, text).unwrap();
        Grid::load(&p, &Checker)
    }

    #[test]
    fn axes_expand_first_outermost_with_labels_and_templates() {
        let g = grid(
            "name: t\ncompare: {duration: 60, agent: ['models/{topology}.dqn']}\naxes:\n  - topology: [full-edge, topologies/dc-cloud.yaml]\n  - load: [{name: low, lambda: 20}, {lambda: 60}]\n  - seed: [1, 2]\n",
        )
        .unwrap();
        assert_eq!(g.reports.len(), 8);
        let keys: Vec<_> = g.reports.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys[0], "full-edge.low.1");
        assert_eq!(keys[3], "full-edge.1.2");
        assert_eq!(keys[7], "dc-cloud.1.2");
        let a = &g.reports[7].argv;
        assert_eq!(a[..2], ["compare", "topologies/dc-cloud.yaml"]);
        let s = a.join(" ");
        assert!(s.contains("--agent models/dc-cloud.dqn"), "{s}");
        assert!(s.contains("--lambda 60") && s.contains("--seed 2"), "{s}");
    }

    #[test]
    fn unknown_keys_and_reserved_options_are_refused_naming_the_entry() {
        let e = grid("name: t\ncompare: {topology: full-edge, lamda: 3}\n").unwrap_err();
        assert!(format!("{e:#}").contains("--lamda"), "{e:#}");
        let e = grid("name: t\naxes:\n  - topology: [full-edge]\n  - seed: [1, x]\n").unwrap_err();
        let m = format!("{e:#}");
        assert!(m.contains("axes[1].seed[1]") && m.contains("--seed"), "{m}");
        let e = grid("name: t\ncompare: {topology: a, threads: 2}\n").unwrap_err();
        assert!(format!("{e:#}").contains("`threads`"), "{e:#}");
        let e = grid("name: t\nfoo: 1\n").unwrap_err();
        assert!(format!("{e:#}").contains("foo"), "{e:#}");
        // A mistyped axis that leaves no topology says so, with the name it was meant to be.
        let e = grid("name: t\naxes:\n  - {topolgy: [full-edge]}\n").unwrap_err();
        let m = format!("{e:#}");
        assert!(
            m.contains("`topolgy` is not an option (did you mean `topology`?)"),
            "{m}"
        );
    }

    #[test]
    fn the_digest_follows_the_command_lines() {
        let a = grid("name: t\naxes: [{topology: [a]}, {seed: [1, 2]}]\n").unwrap();
        let b = grid("name: t\naxes: [{topology: [a]}, {seed: [1, 3]}]\n").unwrap();
        let c = grid("name: t\naxes: [{topology: [a]}, {seed: [1, 2]}]\n").unwrap();
        assert_ne!(a.digest, b.digest);
        assert_eq!(a.digest, c.digest);
    }

    #[test]
    fn jobs_expand_over_their_axes_and_need_an_output() {
        let g = grid(
            "name: t\njobs:\n  - {command: train, axes: [{topology: [a, b]}], seed: 3, out: 'm/{topology}.dqn'}\n",
        )
        .unwrap();
        assert_eq!(g.jobs.len(), 2);
        assert_eq!(g.jobs[1].out, PathBuf::from("m/b.dqn"));
        assert!(g.jobs[1].argv.join(" ").contains("--threads 1"));
        let e = grid("name: t\njobs: [{command: train, topology: a}]\n").unwrap_err();
        assert!(format!("{e:#}").contains("out"), "{e:#}");
        let e = grid("name: t\njobs: [{command: simulate, topology: a}]\n").unwrap_err();
        assert!(format!("{e:#}").contains("jobs[0].command"), "{e:#}");
        let e = grid(
            "name: t\njobs:\n  - {command: train, topology: a, out: m.dqn}\n  - {command: train, topology: a, init: m.dqn, out: n.dqn}\n",
        )
        .unwrap_err();
        assert!(
            format!("{e:#}").contains("job-1 reads m.dqn, which job-0 writes"),
            "{e:#}"
        );
    }
}
