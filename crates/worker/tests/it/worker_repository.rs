//! The worker's model-repository extension on loopback: a variant unloaded stops taking
//! queries, leaves the load reports and reads as unavailable; loaded again, it answers as
//! before.

use continuum_testkit::worker::*;
use hyper::{Request, StatusCode};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unload_and_load_a_variant_through_the_repository_extension() {
    let w = start(config(
        &[("s1", "cnn-s", 1, 0.0), ("m1", "cnn-m", 1, 0.0)],
        json!({}),
    ))
    .await;
    let a = w.http_addr();
    let infer = || post_json(a, "/v2/models/s1/infer", &infer_json(1));
    let state = |a| async move {
        let (st, _, body) = http(a, post_json(a, "/v2/repository/index", &json!({}))).await;
        assert_eq!(st, StatusCode::OK);
        let v: Value = serde_json::from_slice(&body).unwrap();
        let s1 = v
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "s1")
            .cloned();
        s1.unwrap()["state"].as_str().unwrap().to_string()
    };
    assert_eq!(http(a, infer()).await.0, StatusCode::OK);
    assert_eq!(state(a).await, "READY");

    let (st, _, body) = http(
        a,
        post_json(a, "/v2/repository/models/s1/unload", &json!({})),
    )
    .await;
    assert_eq!(st, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    let (st, _, body) = http(a, infer()).await;
    assert_eq!(st, StatusCode::SERVICE_UNAVAILABLE, "{}", error_of(&body));
    assert_eq!(
        http(a, get(a, "/v2/models/s1/ready")).await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );
    assert_eq!(state(a).await, "UNAVAILABLE");
    let names: Vec<String> = w
        .inner()
        .report()
        .variants
        .into_iter()
        .map(|v| v.variant)
        .collect();
    assert_eq!(names, ["m1"], "an unloaded variant leaves the load reports");
    // The other variant is untouched.
    let (st, _, _) = http(a, post_json(a, "/v2/models/m1/infer", &infer_json(1))).await;
    assert_eq!(st, StatusCode::OK);

    // Loading twice is loading once; the answers are the model's again.
    for _ in 0..2 {
        let (st, _, body) =
            http(a, post_json(a, "/v2/repository/models/s1/load", &json!({}))).await;
        assert_eq!(st, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    }
    let (st, _, body) = http(a, infer()).await;
    assert_eq!(st, StatusCode::OK, "{}", error_of(&body));
    assert_close(&output_of(&body), &direct("cnn-s", 1), 1e-5);
    assert_eq!(state(a).await, "READY");
    assert_eq!(w.inner().report().variants.len(), 2);

    // Unknown models and wrong methods.
    let (st, _, body) = http(
        a,
        post_json(a, "/v2/repository/models/nope/load", &json!({})),
    )
    .await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert!(error_of(&body).contains("nope"), "{}", error_of(&body));
    let req = Request::get(format!("http://{a}/v2/repository/models/s1/unload"))
        .header("host", "localhost")
        .body(Default::default())
        .unwrap();
    assert_eq!(http(a, req).await.0, StatusCode::METHOD_NOT_ALLOWED);
    w.shutdown().await;
}
