//! `continuum live up | down | status`: the loopback system of the README (workers, a
//! gateway, optionally the allocator) as background processes of this binary. `up` starts
//! them, writes their ids and logs under a state folder, and returns once every one answers
//! (workers ready, the gateway seeing every worker up); `down` stops the processes it
//! recorded, by their ids, and nothing else.

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long `down` waits for a process to exit after SIGTERM before SIGKILL. Assumption: above
/// a worker's shutdown grace (its queued queries answered) on a loaded machine.
const TERM_GRACE: Duration = Duration::from_secs(10);
/// The name of the file of process ids in the state folder.
const PIDS: &str = "pids";

/// `continuum live …`.
#[derive(Subcommand, Debug)]
pub enum LiveCmd {
    /// Start the workers, the gateway (and the allocator, if given) in the background; return
    /// once every one answers. Process ids and logs go to the state folder.
    Up(UpArgs),
    /// Stop the processes `live up` started (all, or those named), by their recorded ids.
    Down {
        /// Names of processes to stop (a worker's or gateway's `name`, or `allocator`);
        /// default: every one.
        names: Vec<String>,
        /// The state folder `live up` wrote.
        #[arg(long, default_value = "out/state")]
        state: PathBuf,
    },
    /// List the recorded processes and whether each runs.
    Status {
        /// The state folder `live up` wrote.
        #[arg(long, default_value = "out/state")]
        state: PathBuf,
    },
}

/// `continuum live up`'s options.
#[derive(Args, Debug)]
pub struct UpArgs {
    /// Worker settings, one per worker (started first, in order).
    #[arg(long = "worker", default_values = ["config/worker-co.yaml", "config/worker-cloud.yaml"])]
    workers: Vec<PathBuf>,
    /// Gateway settings (started once the workers are ready).
    #[arg(long, default_value = "config/gateway.yaml")]
    gateway: PathBuf,
    /// Allocator settings: also run the allocator (started last).
    #[arg(long)]
    allocator: Option<PathBuf>,
    /// Where process ids (`pids`) and logs (`<name>.log`) go. The shipped settings write
    /// their development certificates and the gateway's stream key there too.
    #[arg(long, default_value = "out/state")]
    state: PathBuf,
    /// Seconds to wait for every process to answer before taking them all down again.
    #[arg(long, default_value_t = 60.0)]
    timeout_s: f64,
}

/// One process to start and how to tell it is ready.
struct Member {
    name: String,
    kind: &'static str,
    config: PathBuf,
    ready: Ready,
}

/// What "ready" means for a member.
enum Ready {
    /// `GET /v2/health/ready` answers 200.
    Worker(SocketAddr),
    /// `GET /v1/workers` lists `n` workers, every one up.
    Gateway(SocketAddr, usize),
    /// Still running a moment after its start (it prints its own errors).
    Running,
}

/// A recorded process: its name, kind and id.
#[derive(Debug, Clone, PartialEq)]
struct Record {
    name: String,
    kind: String,
    pid: i32,
}

/// Runs `continuum live …`.
pub(crate) fn execute(cmd: &LiveCmd) -> Result<()> {
    match cmd {
        LiveCmd::Up(a) => up(a),
        LiveCmd::Down { names, state } => down(state, names),
        LiveCmd::Status { state } => status(state),
    }
}

fn members(a: &UpArgs) -> Result<Vec<Member>> {
    let mut out = Vec::new();
    for w in &a.workers {
        let cfg = continuum_worker::WorkerConfig::load(w)?;
        out.push(Member {
            name: cfg.name.clone(),
            kind: "worker",
            config: w.clone(),
            ready: Ready::Worker(loopback(cfg.http.listen)),
        });
    }
    let g = continuum_gateway::GatewayConfig::load(&a.gateway)?;
    out.push(Member {
        name: g.name.clone(),
        kind: "gateway",
        config: a.gateway.clone(),
        ready: Ready::Gateway(loopback(g.http.listen), g.workers.len()),
    });
    if let Some(p) = &a.allocator {
        continuum_alloc_live::AllocatorConfig::load(p)?;
        out.push(Member {
            name: "allocator".into(),
            kind: "allocator",
            config: p.clone(),
            ready: Ready::Running,
        });
    }
    for (i, m) in out.iter().enumerate() {
        if out[..i].iter().any(|x| x.name == m.name) {
            bail!(
                "two processes are named `{}` ({} and {}): give each its own `name`",
                m.name,
                out[..i]
                    .iter()
                    .find(|x| x.name == m.name)
                    .unwrap()
                    .config
                    .display(),
                m.config.display()
            );
        }
    }
    Ok(out)
}

/// Where to reach a listener bound to `a` (an unspecified address is reached on loopback).
fn loopback(a: SocketAddr) -> SocketAddr {
    if a.ip().is_unspecified() {
        SocketAddr::from(([127, 0, 0, 1], a.port()))
    } else {
        a
    }
}

fn up(a: &UpArgs) -> Result<()> {
    if !(a.timeout_s > 0.0 && a.timeout_s <= 3600.0) {
        bail!(
            "--timeout-s: expected seconds in (0, 3600], got {}",
            a.timeout_s
        );
    }
    let running: Vec<Record> = read_records(&a.state)?
        .into_iter()
        .filter(|r| is_ours(r.pid))
        .collect();
    if !running.is_empty() {
        bail!(
            "already up: {} (ids in {}); run `continuum live down{}` first",
            names(&running),
            a.state.join(PIDS).display(),
            state_flag(&a.state)
        );
    }
    let members = members(a)?;
    std::fs::create_dir_all(&a.state)
        .with_context(|| format!("--state: cannot create {}", a.state.display()))?;
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    let deadline = Instant::now() + Duration::from_secs_f64(a.timeout_s);
    let mut started: Vec<Record> = Vec::new();
    for m in &members {
        let result = start(&exe, m, &a.state).and_then(|mut child| {
            started.push(Record {
                name: m.name.clone(),
                kind: m.kind.into(),
                pid: child.id() as i32,
            });
            write_records(&a.state, &started)?;
            wait_ready(&mut child, m, &a.state, deadline)
        });
        if let Err(e) = result {
            stop_all(&started);
            let _ = std::fs::remove_file(a.state.join(PIDS));
            return Err(e.context("live up failed; every process it started is stopped"));
        }
        println!(
            "{} ({}) ready: pid {}",
            m.name,
            m.kind,
            started.last().unwrap().pid
        );
    }
    println!(
        "up: ids in {}, logs in {}/<name>.log; stop with `continuum live down{}`",
        a.state.join(PIDS).display(),
        a.state.display(),
        state_flag(&a.state)
    );
    Ok(())
}

fn state_flag(state: &Path) -> String {
    if state == Path::new("out/state") {
        String::new()
    } else {
        format!(" --state {}", state.display())
    }
}

fn names(r: &[Record]) -> String {
    r.iter()
        .map(|r| format!("{} (pid {})", r.name, r.pid))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Starts `m` in its own process group (a terminal's Ctrl-C does not reach it), output to its
/// log.
fn start(exe: &Path, m: &Member, state: &Path) -> Result<Child> {
    let log_path = state.join(format!("{}.log", m.name));
    let log = std::fs::File::create(&log_path)
        .with_context(|| format!("cannot write {}", log_path.display()))?;
    Command::new(exe)
        .arg(m.kind)
        .arg("--config")
        .arg(&m.config)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .process_group(0)
        .spawn()
        .with_context(|| format!("cannot start {} {}", m.kind, m.name))
}

fn wait_ready(child: &mut Child, m: &Member, state: &Path, deadline: Instant) -> Result<()> {
    let since = Instant::now();
    loop {
        if let Some(st) = child.try_wait()? {
            bail!(
                "{} {} exited ({st}) before it was ready; the end of {}:\n{}",
                m.kind,
                m.name,
                state.join(format!("{}.log", m.name)).display(),
                log_tail(&state.join(format!("{}.log", m.name)), 12)
            );
        }
        let ok = match &m.ready {
            Ready::Worker(addr) => get(*addr, "/v2/health/ready").is_some_and(|(st, _)| st == 200),
            Ready::Gateway(addr, n) => {
                get(*addr, "/v1/workers").is_some_and(|(st, body)| st == 200 && all_up(&body, *n))
            }
            Ready::Running => since.elapsed() >= Duration::from_secs(1),
        };
        if ok {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!(
                "{} {} not ready within the timeout (--timeout-s); the end of its log:\n{}",
                m.kind,
                m.name,
                log_tail(&state.join(format!("{}.log", m.name)), 12)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Whether a gateway's `/v1/workers` body lists `n` workers, every one up.
fn all_up(body: &str, n: usize) -> bool {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(body) else {
        return false;
    };
    let list = v.get("workers").unwrap_or(&v);
    list.as_array()
        .is_some_and(|w| w.len() == n && w.iter().all(|x| x["up"] == true))
}

/// A plain HTTP/1.1 GET on loopback: the status and body, `None` if nothing answers.
fn get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let t = Duration::from_secs(1);
    let mut s = TcpStream::connect_timeout(&addr, t).ok()?;
    s.set_read_timeout(Some(t)).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let status = text.split(' ').nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string())?;
    Some((status, body))
}

fn log_tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn read_records(state: &Path) -> Result<Vec<Record>> {
    let path = state.join(PIDS);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f[..] {
                [name, kind, pid] => Ok(Record {
                    name: name.into(),
                    kind: kind.into(),
                    pid: pid.parse().ok().filter(|&p| p > 0).with_context(|| {
                        format!("{}:{}: `{pid}` is not a process id", path.display(), i + 1)
                    })?,
                }),
                _ => bail!(
                    "{}:{}: expected `<name> <kind> <pid>`, got `{l}`",
                    path.display(),
                    i + 1
                ),
            }
        })
        .collect()
}

fn write_records(state: &Path, r: &[Record]) -> Result<()> {
    let text: String = r
        .iter()
        .map(|r| format!("{} {} {}\n", r.name, r.kind, r.pid))
        .collect();
    let path = state.join(PIDS);
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Whether `pid` runs and is a `continuum` process started by `live up` (its command line
/// has `--config`): a recorded id that now belongs to another program is never signalled.
fn is_ours(pid: i32) -> bool {
    let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let args: Vec<&[u8]> = cmd.split(|&b| b == 0).collect();
    let exe = std::env::current_exe().ok();
    let stem = exe
        .as_ref()
        .and_then(|e| e.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "continuum".into());
    args.first()
        .is_some_and(|a| String::from_utf8_lossy(a).ends_with(&stem))
        && args.contains(&b"--config".as_slice())
        && alive(pid)
}

/// Whether process `pid` exists and has not ended (neither a zombie nor dead). A process that
/// is exiting may already show an empty command line: liveness is read from its state.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(") ")
                .map(|(_, r)| !r.starts_with('Z') && !r.starts_with('X'))
        })
        .unwrap_or(false)
}

fn signal(pid: i32, sig: libc::c_int) {
    // SAFETY: kill(2) takes any pid and signal number; it only reports an error.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// Stops each recorded process (last started first): SIGTERM, then SIGKILL after
/// [`TERM_GRACE`].
fn stop_all(r: &[Record]) {
    for rec in r.iter().rev() {
        if !is_ours(rec.pid) {
            continue;
        }
        signal(rec.pid, libc::SIGTERM);
        let t = Instant::now();
        while alive(rec.pid) && t.elapsed() < TERM_GRACE {
            std::thread::sleep(Duration::from_millis(50));
        }
        if is_ours(rec.pid) {
            signal(rec.pid, libc::SIGKILL);
            while alive(rec.pid) && t.elapsed() < 2 * TERM_GRACE {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

fn down(state: &Path, which: &[String]) -> Result<()> {
    let records = read_records(state)?;
    if records.is_empty() {
        println!(
            "nothing recorded in {}: nothing to stop",
            state.join(PIDS).display()
        );
        return Ok(());
    }
    for n in which {
        if !records.iter().any(|r| &r.name == n) {
            let known: Vec<&str> = records.iter().map(|r| r.name.as_str()).collect();
            bail!(
                "no process named `{n}` in {}{}; recorded: {}",
                state.join(PIDS).display(),
                continuum_core::config::did_you_mean(n, known.iter().copied()),
                known.join(", ")
            );
        }
    }
    let (stop, keep): (Vec<Record>, Vec<Record>) = records
        .into_iter()
        .partition(|r| which.is_empty() || which.contains(&r.name));
    stop_all(&stop);
    for r in &stop {
        println!("stopped {} (pid {})", r.name, r.pid);
    }
    if keep.is_empty() {
        std::fs::remove_file(state.join(PIDS))
            .with_context(|| format!("cannot remove {}", state.join(PIDS).display()))?;
    } else {
        write_records(state, &keep)?;
    }
    Ok(())
}

fn status(state: &Path) -> Result<()> {
    let records = read_records(state)?;
    if records.is_empty() {
        println!("nothing recorded in {}", state.join(PIDS).display());
    }
    for r in records {
        let how = if is_ours(r.pid) { "running" } else { "gone" };
        println!("{} ({}) pid {}: {how}", r.name, r.kind, r.pid);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_bad_lines_name_their_place() {
        let dir = tempfile::tempdir().unwrap();
        let r = vec![
            Record {
                name: "worker-co".into(),
                kind: "worker".into(),
                pid: 12,
            },
            Record {
                name: "gw".into(),
                kind: "gateway".into(),
                pid: 34,
            },
        ];
        write_records(dir.path(), &r).unwrap();
        assert_eq!(read_records(dir.path()).unwrap(), r);
        std::fs::write(dir.path().join(PIDS), "a worker 1\nb worker x\n").unwrap();
        let e = read_records(dir.path()).unwrap_err().to_string();
        assert!(e.contains("pids:2") && e.contains("`x`"), "{e}");
        assert!(read_records(&dir.path().join("none")).unwrap().is_empty());
    }

    #[test]
    fn a_gateway_is_ready_when_it_lists_every_worker_up() {
        let two = r#"{"workers":[{"name":"a","up":true},{"name":"b","up":true}]}"#;
        assert!(all_up(two, 2));
        assert!(!all_up(two, 3));
        assert!(!all_up(&two.replacen("true", "false", 1), 2));
        assert!(!all_up("not json", 0));
    }

    #[test]
    fn an_id_not_of_this_program_is_never_ours() {
        // This test process runs without `--config`; pid 1 is not a continuum process.
        assert!(!is_ours(std::process::id() as i32));
        assert!(!is_ours(1));
        assert!(!is_ours(i32::MAX));
    }
}
