//! Tests of the gateway's settings: defaults, overrides and what is refused.
use super::*;

fn cfg(listen: &str, token: Option<&str>) -> GatewayConfig {
    let mut v = serde_json::json!({
        "topology": "t.yaml", "profiles": "p.yaml", "scheduler": "a",
        "http": {"listen": listen},
        "workers": [{"name": "w", "cluster": "c", "protocol": "quic", "address": "127.0.0.1:1"}],
        "tasks": {},
    });
    if let Some(t) = token {
        v["admin_token"] = serde_json::json!(t);
    }
    serde_json::from_value(v).unwrap()
}

#[test]
fn the_example_admin_token_is_refused_off_loopback() {
    assert!(cfg("127.0.0.1:0", Some("change-me")).validate().is_ok());
    assert!(cfg("[::1]:0", Some("change-me")).validate().is_ok());
    let open = |token| {
        let mut c = cfg("0.0.0.0:8080", token);
        c.http.allow_plaintext = true;
        c
    };
    let e = open(Some("change-me")).validate().unwrap_err();
    assert!(e.starts_with("admin_token"), "{e}");
    assert!(open(Some("a-real-secret-token")).validate().is_ok());
    assert!(open(None).validate().is_ok());
}

#[test]
fn plaintext_off_loopback_needs_tls_or_the_flag() {
    let e = cfg("0.0.0.0:8080", None).validate().unwrap_err();
    assert!(
        e.starts_with("http.listen:") && e.contains("http.allow_plaintext"),
        "{e}"
    );
    let mut c = cfg("0.0.0.0:8080", None);
    c.http.tls =
        serde_json::from_value(serde_json::json!({"cert": "c.pem", "key": "k.pem"})).unwrap();
    assert!(c.validate().is_ok());
    let mut c = cfg("127.0.0.1:0", None);
    c.grpc = Some(serde_json::from_value(serde_json::json!({"listen": "10.0.0.1:8001"})).unwrap());
    let e = c.validate().unwrap_err();
    assert!(e.starts_with("grpc.listen:"), "{e}");
    let e = serde_json::from_value::<continuum_wire::GrpcConfig>(
        serde_json::json!({"listen": "127.0.0.1:1", "tls": {"cert": "c", "key": "k", "ca": "x"}}),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("unknown field `ca`"), "{e}");
}

#[test]
fn https_workers_need_tls_and_tls_needs_https() {
    let worker = |address: &str, tls: serde_json::Value| {
        let mut c = cfg("127.0.0.1:0", None);
        c.workers = serde_json::from_value(serde_json::json!([{"name": "w", "cluster": "c",
            "protocol": "http", "address": address, "tls": tls}]))
        .unwrap();
        c.validate()
    };
    assert!(worker("https://127.0.0.1:1", serde_json::json!({"ca": "ca.pem"})).is_ok());
    let e = worker("https://127.0.0.1:1", serde_json::Value::Null).unwrap_err();
    assert!(e.contains("needs workers[0].tls"), "{e}");
    let e = worker("http://127.0.0.1:1", serde_json::json!({"ca": "ca.pem"})).unwrap_err();
    assert!(e.contains("https://"), "{e}");
    let e = worker(
        "https://127.0.0.1:1",
        serde_json::json!({"ca": "c", "cert": "x"}),
    )
    .unwrap_err();
    assert!(e.starts_with("workers[0].tls: give both"), "{e}");
}

#[test]
fn the_mitigation_is_checked_and_read() {
    let mut c = cfg("127.0.0.1:0", None);
    assert_eq!(c.mitigation(), continuum_core::mitigation::Mitigation::None);
    c.mitigation = "discard@0.9".into();
    assert!(c.validate().is_ok());
    assert_eq!(
        c.mitigation(),
        continuum_core::mitigation::Mitigation::Discard { ratio: 0.9 }
    );
    c.mitigation = "hedge@0.9".into();
    let e = c.validate().unwrap_err();
    assert!(e.starts_with("mitigation:") && e.contains("hedge"), "{e}");
    for m in ["restart@0.8", "tdp@0.7"] {
        c.mitigation = m.into();
        let e = c.validate().unwrap_err();
        assert!(
            e.starts_with("mitigation:") && e.contains(m) && e.contains("simulator-only"),
            "{e}"
        );
    }
}

#[test]
fn http_limits_are_read_and_unknown_keys_refused() {
    let mut v = serde_json::json!({"listen": "127.0.0.1:0", "max_body_bytes": 10,
                                   "header_read_timeout_ms": 5});
    let h: HttpConfig = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(
        (h.limits.max_body_bytes, h.limits.header_read_timeout_ms),
        (10, 5)
    );
    v["max_body_byte"] = serde_json::json!(1);
    let h: HttpConfig = serde_json::from_value(v).unwrap();
    let e = h.limits.validate().unwrap_err();
    assert!(e.starts_with("http.max_body_byte:"), "{e}");
}
