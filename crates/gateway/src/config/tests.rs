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
    let e = cfg("0.0.0.0:8080", Some("change-me"))
        .validate()
        .unwrap_err();
    assert!(e.starts_with("admin_token"), "{e}");
    assert!(
        cfg("0.0.0.0:8080", Some("a-real-secret-token"))
            .validate()
            .is_ok()
    );
    assert!(cfg("0.0.0.0:8080", None).validate().is_ok());
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
