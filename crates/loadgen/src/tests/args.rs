//! The load generator's options as the command line gives them: gateway URLs and lists, the
//! TLS flags towards https:// gateways, progress flags; each error names its flag.

use super::WORKLOAD;
use crate::*;
use continuum_core::fixtures;

#[test]
fn gateway_urls_are_checked() {
    assert_eq!(
        check_gateway("http://127.0.0.1:8080/").unwrap(),
        "http://127.0.0.1:8080"
    );
    assert_eq!(check_gateway("http://gw").unwrap(), "http://gw");
    assert_eq!(check_gateway("https://gw:443/").unwrap(), "https://gw:443");
    for bad in [
        "ftp://gw:21",
        "127.0.0.1:8080",
        "http://gw/v2",
        "https://gw/v2",
        "not a url",
        "",
    ] {
        assert!(check_gateway(bad).is_err(), "{bad}");
    }
    // https is accepted only with the authorities of the gateway's certificate.
    let sc = fixtures::scenario(fixtures::TOPOLOGY, WORKLOAD);
    let mut o = LoadOptions::new("https://gw:443", sc.workload.clone(), &sc.profiles).unwrap();
    let e = o.gateway_tls_config().unwrap_err().to_string();
    assert!(
        e.contains("https://gw:443") && e.contains("--gateway-ca"),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    let pki = continuum_wire::dev_pki::generate(dir.path(), "").unwrap();
    o.gateway_tls = Some(ClientTls {
        ca: pki.ca.clone(),
        cert: None,
        key: None,
    });
    let cfg = o
        .gateway_tls_config()
        .unwrap()
        .expect("a TLS configuration");
    assert!(cfg.alpn_protocols.is_empty(), "the connector sets ALPN");
    // …and a CA only with an https gateway.
    o.set_gateways(&["http://gw:80"]).unwrap();
    let e = o.gateway_tls_config().unwrap_err().to_string();
    assert!(e.starts_with("--gateway-ca: only with an https://"), "{e}");
    o.gateway_tls = None;
    assert!(o.gateway_tls_config().unwrap().is_none());
}

/// `--gateway`, `--gateway-ca`, `--gateway-cert` and `--gateway-key` as `from_args` checks
/// them, before any request: each error names its flag.
#[test]
fn gateway_tls_flags_are_checked_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let pki = continuum_wire::dev_pki::generate(dir.path(), "").unwrap();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let (ca, cert, key) = (
        pki.ca.to_str().unwrap(),
        pki.client_cert.to_str().unwrap(),
        pki.client_key.to_str().unwrap(),
    );
    let opts = |extra: &[&str]| {
        let profiles = format!("{root}/profiles/local.yaml");
        let workload = format!("{root}/workloads/live.yaml");
        let mut argv = vec!["--profiles", &profiles, "--workload", &workload, "--quiet"];
        argv.extend_from_slice(extra);
        LoadOptions::from_args(&gateway_args(&argv).unwrap())
    };
    let err = |extra: &[&str]| format!("{:#}", opts(extra).unwrap_err());
    let https = ["--gateway", "https://127.0.0.1:8443"];
    fn with<'a>(more: &[&'a str]) -> Vec<&'a str> {
        [&["--gateway", "https://127.0.0.1:8443"][..], more].concat()
    }
    let e = err(&https);
    assert!(e.contains("https needs --gateway-ca"), "{e}");
    let e = err(&["--gateway", "http://127.0.0.1:8080", "--gateway-ca", ca]);
    assert!(e.starts_with("--gateway-ca: only with an https://"), "{e}");
    let e = err(&with(&["--gateway-ca", ca, "--gateway-cert", cert]));
    assert!(
        e.starts_with("--gateway-cert: expected --gateway-key"),
        "{e}"
    );
    let e = err(&with(&["--gateway-ca", ca, "--gateway-key", key]));
    assert!(
        e.starts_with("--gateway-key: expected --gateway-cert"),
        "{e}"
    );
    let e = err(&with(&["--gateway-cert", cert, "--gateway-key", key]));
    assert!(e.contains("expected --gateway-ca"), "{e}");
    let e = err(&with(&["--gateway-ca", "no/such.pem"]));
    assert!(
        e.starts_with("--gateway-ca no/such.pem: cannot read it"),
        "{e}"
    );
    // A key is no certificate; a certificate is no key.
    let e = err(&with(&["--gateway-ca", key]));
    assert!(
        e.starts_with("--gateway-ca") && e.contains("no certificate"),
        "{e}"
    );
    let e = err(&with(&[
        "--gateway-ca",
        ca,
        "--gateway-cert",
        cert,
        "--gateway-key",
        ca,
    ]));
    assert!(
        e.starts_with("--gateway-cert") && e.contains("--gateway-key"),
        "{e}"
    );
    // The whole set, with a fleet of two https gateways.
    let o = opts(&[
        "--gateway",
        "https://127.0.0.1:8443,https://localhost:8444",
        "--gateway-ca",
        ca,
        "--gateway-cert",
        cert,
        "--gateway-key",
        key,
        "--http2",
    ])
    .unwrap();
    assert_eq!(o.gateways.len(), 2);
    let t = o.gateway_tls.as_ref().unwrap();
    assert_eq!(
        (t.ca.as_path(), t.cert.as_deref()),
        (pki.ca.as_path(), Some(pki.client_cert.as_path()))
    );
    assert!(o.gateway_tls_config().unwrap().is_some());
}

/// The `--gateway` list as clap reads it, comma-separated or repeated.
fn gateway_args(argv: &[&str]) -> Result<LoadgenArgs, clap::Error> {
    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        a: LoadgenArgs,
    }
    let argv = std::iter::once("loadgen").chain(argv.iter().copied());
    <Cli as clap::Parser>::try_parse_from(argv).map(|c| c.a)
}

#[test]
fn a_gateway_list_is_read_and_bad_entries_name_the_flag() {
    let a = gateway_args(&[
        "--gateway",
        "http://a:1,http://b:2",
        "--gateway",
        "http://c:3",
    ])
    .unwrap();
    assert_eq!(a.gateway, ["http://a:1", "http://b:2", "http://c:3"]);
    assert_eq!(a.assign, Assign::Spread);
    let one = gateway_args(&[]).unwrap();
    assert_eq!(one.gateway, ["http://127.0.0.1:8080"]);
    assert_eq!(
        gateway_args(&["--assign", "first"]).unwrap().assign,
        Assign::First
    );
    assert!(gateway_args(&["--assign", "nearest"]).is_err());

    let sc = fixtures::scenario(fixtures::TOPOLOGY, WORKLOAD);
    let mut o = LoadOptions::new("http://a:1", sc.workload.clone(), &sc.profiles).unwrap();
    assert_eq!((o.gateway.as_str(), o.gateways.len()), ("http://a:1", 1));
    o.set_gateways(&["http://a:1/", " http://b:2"]).unwrap();
    assert_eq!(o.gateways, ["http://a:1", "http://b:2"]);
    assert_eq!(o.run_config().gateway, "http://a:1,http://b:2");
    for (bad, says) in [
        (vec!["http://a:1", ""], "entry 2 of the list is empty"),
        (vec!["http://a:1", "http://a:1/"], "listed twice"),
        (vec!["http://a:1", "b:2"], "expected http://host:port"),
        (vec![], "at least one"),
    ] {
        let e = o.set_gateways(&bad).unwrap_err().to_string();
        assert!(
            e.starts_with("--gateway") && e.contains(says),
            "{bad:?}: {e}"
        );
    }
}

#[test]
fn progress_flags_read_as_every_long_commands_and_the_former_period_warns() {
    use continuum_term::ProgressArgs;
    let secs = |s: f64| Some(Duration::from_secs_f64(s));
    /// Arguments, the flags they mean, the period of lines on a terminal and elsewhere, and
    /// whether they warn.
    type Case = (
        &'static [&'static str],
        ProgressArgs,
        Option<Duration>,
        Option<Duration>,
        bool,
    );
    let cases: [Case; 8] = [
        (&[], ProgressArgs::default(), secs(5.0), None, false),
        (
            &["--progress"],
            ProgressArgs {
                quiet: false,
                progress: true,
            },
            secs(5.0),
            secs(5.0),
            false,
        ),
        (&["--quiet"], ProgressArgs::QUIET, None, None, false),
        (
            &["--progress-every", "2"],
            ProgressArgs::default(),
            secs(2.0),
            None,
            false,
        ),
        (
            &["--progress", "--progress-every", "0.5", "--format", "json"],
            ProgressArgs {
                quiet: false,
                progress: true,
            },
            secs(0.5),
            secs(0.5),
            false,
        ),
        // The former form: a period, which showed lines whatever standard error was.
        (
            &["--progress", "7", "--format", "json"],
            ProgressArgs {
                quiet: false,
                progress: true,
            },
            secs(7.0),
            secs(7.0),
            true,
        ),
        (&["--progress", "0"], ProgressArgs::QUIET, None, None, true),
        (
            &["--progress", "0.0"],
            ProgressArgs::QUIET,
            None,
            None,
            true,
        ),
    ];
    for (argv, flags, tty, elsewhere, warns) in cases {
        let a = gateway_args(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
        assert_eq!(a.progress_args(), flags, "{argv:?}");
        let (on_tty, w) = a.progress_lines(true).unwrap();
        assert_eq!(on_tty, tty, "{argv:?} on a terminal");
        let (off_tty, w2) = a.progress_lines(false).unwrap();
        assert_eq!(off_tty, elsewhere, "{argv:?} off a terminal");
        assert_eq!(w, w2);
        assert_eq!(w.is_some(), warns, "{argv:?}: {w:?}");
        if let Some(w) = w {
            let v = argv[1];
            assert!(w.starts_with(&format!("warning: --progress {v}:")), "{w}");
            let new = if v.parse::<f64>() == Ok(0.0) {
                "--quiet".to_string()
            } else {
                format!("--progress --progress-every {v}")
            };
            assert!(w.contains(&format!("write {new}")), "{w}");
        }
    }
    // Refused: both switches, a period given twice, a bad value of either.
    assert!(gateway_args(&["--quiet", "--progress"]).is_err());
    assert!(gateway_args(&["--quiet", "--progress", "5"]).is_err());
    for (argv, says) in [
        (
            &["--progress", "5", "--progress-every", "2"][..],
            "give the period once",
        ),
        (&["--progress", "soon"][..], "--progress-every <s>"),
        (
            &["--progress-every", "0"][..],
            "--progress-every: expected seconds > 0",
        ),
        (
            &["--progress-every", "-1"][..],
            "--progress-every: expected seconds > 0",
        ),
    ] {
        let a = gateway_args(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
        let e = a.progress_lines(false).unwrap_err().to_string();
        assert!(e.contains(says), "{argv:?}: {e}");
    }
}
