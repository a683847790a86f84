//! The gateway as an OIP v2 server (the shared [`OipCore`]): its tasks are its models, a
//! one-shot query binds a stream of one query (counting the request's batch items), and a
//! query naming an open stream (`parameters.stream_id`, the stream's token) goes to that
//! stream. The HTTP routes ([`crate::front::api`]) and the gRPC service
//! ([`continuum_wire::grpc`]) both answer from here.

use crate::control::ControlPlane;
use crate::decide::Decider;
use crate::error::ApiError;
use crate::forward::Forwarder;
use crate::forward::relay::Relayed;
use crate::forward::relay::Wire;
use crate::plan::{Plan, TaskSpec};
use crate::state::streams::{OpenRequest, Stream};
use crate::state::token::TokenError;
use bytes::Bytes;
use continuum_wire::oip::{self, ParsedInfer};
use continuum_wire::oip_core::{
    EXTENSIONS, InferOutput, ModelInfo, ModelStats, OipCore, OipError, ServerInfo,
};
use hyper::StatusCode;
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

impl From<ApiError> for OipError {
    fn from(e: ApiError) -> Self {
        let msg = e.body["error"]
            .as_str()
            .map_or_else(|| e.body.to_string(), str::to_string);
        OipError::new(e.status, msg)
    }
}

impl ControlPlane {
    /// The task's model description: the largest batch size among the variants serving it,
    /// ready when a worker serving it is up.
    pub(crate) fn task_info(&self, plan: &Plan, spec: &TaskSpec) -> ModelInfo {
        let snap = self.state.snapshot();
        let max_batch = plan
            .fleet
            .workers
            .iter()
            .filter(|w| w.task == spec.id)
            .map(|w| w.batch as usize)
            .max()
            .unwrap_or(1);
        let ready = snap
            .reach
            .iter()
            .any(|r| snap.plan.fleet.workers[r.worker as usize].task == spec.id);
        ModelInfo {
            name: spec.name.clone(),
            platform: "continuum-gateway".into(),
            input: spec.io.input.clone(),
            output: spec.io.output.clone(),
            item_shape: spec.io.shape.clone(),
            output_item_shape: spec.io.output_shape.clone(),
            max_batch,
            ready,
        }
    }

    /// The stream a client names by its token: the open one, or (token verified, stream not
    /// held here and not closed) the stream re-bound from the token's requirements.
    pub(crate) fn stream_of(&self, token: &str) -> Result<Arc<Stream>, ApiError> {
        let st = &self.state;
        let claims = st
            .stream_key()
            .verify(token)
            .map_err(|e| self.unknown_stream(token, Some(e)))?;
        let nonce = claims.nonce().expect("verified tokens have a nonce");
        if let Some(s) = st.streams().get(nonce) {
            return Ok(s);
        }
        if st.streams().is_closed(nonce) {
            return Err(self.unknown_stream(token, None));
        }
        Decider::new(st).resume(token, claims).map(|(s, _)| s)
    }

    /// Closes the stream a client names by its token; whether it was open (a verified token
    /// of a stream this gateway does not hold is closed too).
    pub(crate) fn close_stream(&self, token: &str) -> Result<(), ApiError> {
        let claims = self
            .state
            .stream_key()
            .verify(token)
            .map_err(|e| self.unknown_stream(token, Some(e)))?;
        let nonce = claims.nonce().expect("verified tokens have a nonce");
        if self.state.streams().is_closed(nonce) {
            return Err(self.unknown_stream(token, None));
        }
        Decider::new(&self.state).close(nonce);
        Ok(())
    }

    /// 404 for a stream id that is not a valid token, or names a closed stream.
    pub(crate) fn unknown_stream(&self, id: &str, why: Option<TokenError>) -> ApiError {
        self.state
            .metrics()
            .bad_requests
            .get_or_create(&crate::metrics::ResultLabel {
                result: "unknown_stream",
            })
            .inc();
        let shown: String = id.chars().take(48).collect();
        let why = match why {
            Some(e) => e.to_string(),
            None => "the stream was closed".into(),
        };
        ApiError::new(
            StatusCode::NOT_FOUND,
            format!("unknown stream `{shown}`: {why}"),
        )
    }

    /// A one-shot query: a stream of one query of the request's items, bound (with
    /// `max_delay_ms` / `min_accuracy` from the request's parameters), forwarded, dropped.
    pub(crate) async fn one_shot(
        &self,
        plan: &Plan,
        spec: &TaskSpec,
        parsed: ParsedInfer,
        body: Bytes,
        header_len: Option<usize>,
        t0: Instant,
    ) -> Result<Relayed, ApiError> {
        let num = |k: &'static str| parsed.parameters.get(k).map(|v| v.as_f64().ok_or(k));
        let (max_delay, min_acc) = match (num("max_delay_ms"), num("min_accuracy")) {
            (Some(Err(k)), _) | (_, Some(Err(k))) => {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("parameters.{k} must be a number"),
                ));
            }
            (d, a) => (
                d.and_then(Result::ok)
                    .unwrap_or(plan.cfg.upstream_timeout_ms as f64),
                a.and_then(Result::ok).unwrap_or(0.0),
            ),
        };
        let items = parsed.shape.first().copied().unwrap_or(1);
        let open = OpenRequest {
            task: spec.name.clone(),
            app: Some("oneshot".into()),
            max_delay_ms: max_delay,
            min_accuracy: min_acc,
            // One query: its rate is one per its deadline at most. assumption: 1 qps.
            rate_qps: 1.0,
            frame_kb: (body.len() as f64 / 1024.0).max(1e-3),
            access_ms: Some(0.0),
            tx_ms: Some(0.0),
            items: Some(u32::try_from(items).unwrap_or(u32::MAX).max(1)),
        };
        open.validate()
            .map_err(|m| ApiError::new(StatusCode::BAD_REQUEST, format!("parameters.{m}")))?;
        let seq = self.state.query_count();
        let rng = continuum_core::rng::stream_rng(
            plan.cfg.seed,
            continuum_core::rng::Purpose::Other,
            plan.sched as u64,
            seq,
        );
        let stream = Stream::new(0, Arc::from(""), open, Arc::from("oneshot"), 0.0, 0, rng);
        Forwarder::new(&self.state)
            .forward(&stream, Some(parsed), body, Wire::Oip(header_len), t0)
            .await
    }
}

fn output(spec: &TaskSpec, id: Option<String>, r: Relayed) -> Result<InferOutput, OipError> {
    let (shape, data, mut parameters) = oip::decode_answer(&r.body, r.header_len)?;
    parameters.insert("outcome".into(), Value::from(r.outcome));
    parameters.insert("variant".into(), Value::from(&*r.variant));
    parameters.insert("cluster".into(), Value::from(&*r.cluster));
    Ok(InferOutput {
        model: spec.name.clone(),
        id,
        output: spec.io.output.clone(),
        shape,
        data,
        parameters,
    })
}

impl OipCore for ControlPlane {
    fn server(&self) -> ServerInfo {
        ServerInfo {
            name: "continuum-gateway",
            version: env!("CARGO_PKG_VERSION"),
            extensions: EXTENSIONS,
        }
    }

    fn ready(&self) -> bool {
        !self.state.snapshot().reach.is_empty()
    }

    fn models(&self) -> Vec<ModelInfo> {
        let plan = self.plan();
        plan.tasks
            .iter()
            .map(|t| self.task_info(&plan, t))
            .collect()
    }

    fn model(&self, name: &str) -> Result<ModelInfo, OipError> {
        let plan = self.plan();
        let spec = plan.task(name).ok_or_else(|| {
            OipError::new(
                StatusCode::NOT_FOUND,
                format!(
                    "unknown model `{name}`; served tasks: {}",
                    crate::state::task_list(&plan)
                ),
            )
        })?;
        Ok(self.task_info(&plan, spec))
    }

    fn stats(&self, name: Option<&str>) -> Result<Vec<ModelStats>, OipError> {
        if let Some(n) = name {
            self.model(n)?;
        }
        let plan = self.plan();
        Ok(plan
            .tasks
            .iter()
            .filter(|t| name.is_none_or(|n| n == t.name))
            .map(|t| self.state.task_stats(&t.name).snapshot(&t.name))
            .collect())
    }

    async fn infer(&self, model: &str, parsed: ParsedInfer) -> Result<InferOutput, OipError> {
        let t0 = Instant::now();
        let plan = self.plan();
        let spec = plan
            .task(model)
            .ok_or_else(|| OipError::unknown_model(model))?;
        let (body, n) = oip::encode_request(spec, &parsed);
        // The tensor follows the JSON header in the new body, as binary data.
        let mut parsed = parsed;
        parsed.raw = Some(n..body.len());
        let id = parsed.id.clone();
        let r = match parsed.parameters.get("stream_id") {
            Some(Value::String(token)) => {
                let s = self.stream_of(token)?;
                if s.req().task != spec.name {
                    return Err(OipError::new(
                        StatusCode::BAD_REQUEST,
                        format!("stream is for task `{}`, not `{}`", s.req().task, spec.name),
                    ));
                }
                Forwarder::new(&self.state)
                    .forward(&s, Some(parsed), Bytes::from(body), Wire::Oip(Some(n)), t0)
                    .await?
            }
            _ => {
                self.one_shot(&plan, spec, parsed, Bytes::from(body), Some(n), t0)
                    .await?
            }
        };
        output(spec, id, r)
    }
}
