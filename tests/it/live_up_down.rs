//! `continuum live up | down | status` with the built binary: two workers and a gateway on
//! free loopback ports (settings written to a temporary folder), started in the background and
//! reported ready only once the gateway sees both workers; one stopped by name, then the rest;
//! a set that cannot start leaves no process behind.

use crate::gateway_support::{free_addr, models_dir, repo};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_continuum");

fn live(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("live")
        .args(args)
        .current_dir(repo(""))
        .output()
        .expect("runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn write(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(v).unwrap()).unwrap();
}

/// Settings of a worker named `name` serving `variants` (name, model), certificate in `dir`;
/// its QUIC address.
fn worker(dir: &Path, name: &str, variants: &[(&str, &str)]) -> std::net::SocketAddr {
    let quic = free_addr(true);
    let vs: Vec<Value> = variants
        .iter()
        .map(|(n, m)| json!({"name": n, "model": m, "max_batch": 1}))
        .collect();
    write(
        &dir.join(format!("{name}.yaml")),
        &json!({
            "name": name, "backend": std::env::var("CONTINUUM_BACKEND").unwrap_or_else(|_| "auto".into()),
            "models_dir": models_dir(), "http": {"listen": free_addr(false)},
            "quic": {"listen": quic, "dev_cert_out": dir.join(format!("{name}.der"))},
            "load_report_ms": 50, "variants": vs,
        }),
    );
    quic
}

/// Worker and gateway settings in `dir`; the gateway's HTTP address.
fn settings(dir: &Path) -> std::net::SocketAddr {
    let co = worker(dir, "w-co", &[("cnn-s-b1", "cnn-s"), ("cnn-m-b1", "cnn-m")]);
    let cloud = worker(dir, "w-cloud", &[("cnn-l-b1", "cnn-l")]);
    let http = free_addr(false);
    let up = |name: &str, cluster: &str, addr: std::net::SocketAddr| {
        json!({"name": name, "cluster": cluster, "protocol": "quic", "address": addr,
               "cert": dir.join(format!("{name}.der"))})
    };
    write(
        &dir.join("gw.yaml"),
        &json!({
            "name": "gw", "topology": repo("topologies/live.yaml"),
            "profiles": repo("profiles/local.yaml"), "scheduler": "ant-00",
            "http": {"listen": http}, "admin_token": "s3cret", "publish_ms": 50,
            "stream_key_file": dir.join("gw.key"),
            "workers": [up("w-co", "co-0", co), up("w-cloud", "cloud", cloud)],
            "tasks": {"object-detection": {"input": "input", "output": "output",
                                            "shape": [3, 64, 64], "output_shape": [16]}},
        }),
    );
    http
}

fn up_args(dir: &Path) -> Vec<String> {
    let p = |f: &str| dir.join(f).display().to_string();
    vec![
        "up".into(),
        "--worker".into(),
        p("w-co.yaml"),
        "--worker".into(),
        p("w-cloud.yaml"),
        "--gateway".into(),
        p("gw.yaml"),
        "--state".into(),
        p("state"),
    ]
}

/// The recorded ids, by name.
fn pids(dir: &Path) -> Vec<(String, i32)> {
    std::fs::read_to_string(dir.join("state/pids"))
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].to_string(), f[2].parse().unwrap())
        })
        .collect()
}

fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(") ")
            .is_some_and(|(_, r)| !r.starts_with('Z') && !r.starts_with('X'))
    })
}

#[test]
fn live_up_waits_for_every_process_and_live_down_stops_exactly_those_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let http = settings(dir.path());
    let args = up_args(dir.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let state = dir.path().join("state").display().to_string();
    let o = live(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("gw (gateway) ready"), "{}", text(&o));
    let ids = pids(dir.path());
    assert_eq!(
        ids.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["w-co", "w-cloud", "gw"]
    );
    assert!(ids.iter().all(|(_, p)| running(*p)), "{ids:?}");
    // Ready means the gateway already sees both workers up.
    let body = ureq_like_get(http, "/v1/workers");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert!(
        v["workers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| w["up"] == true),
        "{v}"
    );

    // A second set is refused while this one runs.
    let again = live(&args);
    assert!(!again.status.success());
    assert!(text(&again).contains("already up"), "{}", text(&again));

    // One by name (a typo is refused with a suggestion), then the rest.
    let typo = live(&["down", "w-c0", "--state", &state]);
    assert!(
        text(&typo).contains("did you mean `w-co`"),
        "{}",
        text(&typo)
    );
    let o = live(&["down", "w-co", "--state", &state]);
    assert!(o.status.success(), "{}", text(&o));
    let now: Vec<bool> = ids.iter().map(|(_, p)| running(*p)).collect();
    assert_eq!(now, [false, true, true], "{ids:?}: {}", text(&o));
    let st = live(&["status", "--state", &state]);
    assert!(text(&st).contains("gw (gateway) pid"), "{}", text(&st));
    let o = live(&["down", "--state", &state]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(ids.iter().all(|(_, p)| !running(*p)), "{ids:?}");
    assert!(!dir.path().join("state/pids").exists());
}

#[test]
fn a_set_that_cannot_start_is_taken_down_with_the_log_of_the_one_that_failed() {
    let dir = tempfile::tempdir().unwrap();
    settings(dir.path());
    // The cloud worker's HTTP port is taken: it exits at start.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let path = dir.path().join("w-cloud.yaml");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    v["http"]["listen"] = json!(taken.local_addr().unwrap());
    write(&path, &v);
    let args = up_args(dir.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = live(&args);
    assert!(!o.status.success());
    let t = text(&o);
    assert!(t.contains("w-cloud") && t.contains("w-cloud.log"), "{t}");
    assert!(t.contains("every process it started is stopped"), "{t}");
    assert!(!dir.path().join("state/pids").exists(), "{t}");
    // The central office's worker started first (its log is there); it is gone now.
    assert!(dir.path().join("state/w-co.log").exists(), "{t}");
    let left = Command::new("pgrep")
        .args(["-f", &dir.path().join("w-co.yaml").display().to_string()])
        .output();
    if let Ok(left) = left {
        assert!(
            left.stdout.is_empty(),
            "still running: {}",
            String::from_utf8_lossy(&left.stdout)
        );
    }
}

/// A plain HTTP GET's body.
fn ureq_like_get(addr: std::net::SocketAddr, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut t = String::new();
    s.read_to_string(&mut t).unwrap();
    t.split_once("\r\n\r\n").unwrap().1.to_string()
}
