//! The gateway's QUIC front end on loopback with real workers: a stream opened over HTTP takes
//! its queries as QUIC frames, relayed to a QUIC worker and to an HTTP worker with outputs
//! equal to direct inference, and every bad frame gets the error frame an HTTP client would
//! get as a status.

use continuum_testkit::gateway::*;
use continuum_wire::QuicClient;
use continuum_wire::frame::{self, InferFrame, Response};
use continuum_worker::inference::{Tensor, reference_input};
use serde_json::json;

fn query(name: &str, item: &[usize]) -> InferFrame {
    let mut shape = vec![1];
    shape.extend_from_slice(item);
    InferFrame {
        stream_id: 0,
        deadline_us: 0,
        model: name.into(),
        input: Tensor {
            data: reference_input(1, item),
            shape,
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quic_clients_query_their_streams_through_the_gateway() {
    // The central office over QUIC, the cloud over HTTP: both relays from a frame.
    let l = live(true, json!({"quic": {"listen": "127.0.0.1:0"}})).await;
    let a = l.addr();
    let cert = l.gw.quic_certificate().expect("a QUIC endpoint").clone();
    let c = QuicClient::connect(l.gw.quic_addr().unwrap(), &[cert])
        .await
        .unwrap();
    let near = open(a, &stream_req(2000.0, 0.2)).await;
    assert_eq!(near["cluster"], "co-0");
    let far = open(a, &stream_req(2000.0, 0.5)).await;
    assert_eq!(far["cluster"], "cloud");
    for (s, model) in [(&near, "cnn-s"), (&far, "cnn-l")] {
        let id = s["stream_id"].as_str().unwrap();
        match c.infer(&query(id, &ITEM)).await.unwrap() {
            Response::Ok {
                output,
                batch_items,
                ..
            } => {
                assert_close(&output, &direct(model, 1), 1e-4);
                assert_eq!(batch_items, 1, "{model}");
            }
            r => panic!("{model}: {r:?}"),
        }
    }

    // Unknown and closed streams: NOT_FOUND, with the HTTP answer's message.
    let (st, m) = error_frame(c.infer(&query("no-such-stream", &ITEM)).await.unwrap());
    assert_eq!(st, 3, "{m}");
    assert!(m.contains("unknown stream"), "{m}");
    let id = near["stream_id"].as_str().unwrap();
    let (st, _, _) = http(
        a,
        request(a, "DELETE", &format!("/v1/streams/{id}"), None, None),
    )
    .await;
    assert_eq!(st, 204);
    let (st, m) = error_frame(c.infer(&query(id, &ITEM)).await.unwrap());
    assert_eq!(st, 3, "{m}");

    // Malformed frames, a SUBSCRIBE and an input the worker refuses: BAD_REQUEST.
    let far_id = far["stream_id"].as_str().unwrap();
    let good = frame::encode_infer(&query(far_id, &ITEM));
    let (st, m) = error_frame(c.send_raw(&good[..good.len() - 1]).await.unwrap());
    assert_eq!(st, 2, "{m}");
    assert!(m.contains("malformed frame"), "{m}");
    let (st, m) = error_frame(c.send_raw(&frame::encode_subscribe(0)).await.unwrap());
    assert_eq!(st, 2, "{m}");
    assert!(m.contains("SUBSCRIBE"), "{m}");
    let (st, m) = error_frame(c.infer(&query(far_id, &[3, 32, 32])).await.unwrap());
    assert_eq!(st, 2, "{m}");
    assert!(m.contains("refused the input"), "{m}");

    // The two answered queries are counted as HTTP ones are.
    let (_, _, m) = http(a, get(a, "/metrics")).await;
    let m = String::from_utf8(m.to_vec()).unwrap();
    assert_eq!(
        metric_sum(&m, "continuum_gateway_queries_total{outcome=\"success\""),
        2.0,
        "{m}"
    );
    assert!(
        metric_sum(
            &m,
            "continuum_gateway_bad_requests_total{result=\"malformed\""
        ) >= 1.0,
        "{m}"
    );
    c.close().await;
    l.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_over_the_limit_are_refused_whole() {
    let l = live(
        false,
        json!({"quic": {"listen": "127.0.0.1:0", "max_frame_bytes": 1024}}),
    )
    .await;
    let cert = l.gw.quic_certificate().unwrap().clone();
    let c = QuicClient::connect(l.gw.quic_addr().unwrap(), &[cert])
        .await
        .unwrap();
    let s = open(l.addr(), &stream_req(2000.0, 0.2)).await;
    let (st, m) = error_frame(
        c.infer(&query(s["stream_id"].as_str().unwrap(), &ITEM))
            .await
            .unwrap(),
    );
    assert_eq!(st, 4, "{m}");
    assert!(m.contains("1024"), "{m}");
    c.close().await;
    l.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_load_generator_sends_its_queries_over_quic() {
    use continuum_core::profiles::Profiles;
    use continuum_core::workload::{Lambda, Workload};
    use continuum_loadgen::{self as loadgen, LoadOptions, QuicTarget};
    let l = live(false, json!({"quic": {"listen": "127.0.0.1:0"}})).await;
    let profiles = Profiles::load(&repo("profiles/local.yaml")).unwrap();
    let mut workload = Workload::load(&repo("workloads/live.yaml"), &profiles).unwrap();
    // assumption: 60 clients/min for 3 s offers a few hundred queries, enough to count.
    workload.lambda = Lambda::Constant(60.0);
    let mut o = LoadOptions::new(&format!("http://{}", l.addr()), workload, &profiles).unwrap();
    o.duration_s = 3.0;
    o.seed = 7;
    let cert = l.dir.path().join("gateway.der");
    std::fs::write(&cert, l.gw.quic_certificate().unwrap()).unwrap();
    let q = l.gw.quic_addr().unwrap();
    o.quic = Some(QuicTarget::new(&format!("127.0.0.1:{}", q.port()), &cert).unwrap());
    let r = loadgen::run(&o).await.unwrap();
    assert!(r.queries.conserved(), "{:?}", r.queries);
    assert!(r.sent > 20, "{}", r.to_text_table());
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.config.body, "quic-frame");
    // Every query the generator sent reached the gateway over QUIC and was judged there.
    let (_, _, m) = http(l.addr(), get(l.addr(), "/metrics")).await;
    let m = String::from_utf8(m.to_vec()).unwrap();
    let judged = metric_sum(&m, "continuum_gateway_queries_total{");
    assert_eq!(judged, r.sent as f64, "{m}");
    assert_eq!(
        r.infer_status.get("200").copied().unwrap_or(0) as f64,
        metric_sum(&m, "continuum_gateway_queries_total{outcome=\"success\"")
            + metric_sum(&m, "continuum_gateway_queries_total{outcome=\"failure\""),
        "{m}"
    );
    l.stop().await;
}
