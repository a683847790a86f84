//! Reading which variants a live worker serves (its model-repository index) and where each
//! sits among the scenario's candidate workers.

use crate::{HttpClient, Served, WorkerTarget, call};
use anyhow::{Context, anyhow};
use continuum_sim::Scenario;
use hyper::Method;
use std::time::Duration;

/// Why a worker's index could not be read.
pub(crate) enum IndexError {
    /// The worker did not answer, or answered with an error: try again later.
    Unreachable(anyhow::Error),
    /// It answered, but serves a variant the settings' scenario cannot place: a configuration
    /// error that retrying will not mend.
    Mismatch(anyhow::Error),
}

/// The variants worker `i` (`w`) serves, each with its candidate index in `sc`.
pub(crate) async fn index(
    client: &HttpClient,
    sc: &Scenario,
    i: usize,
    w: &WorkerTarget,
    timeout: Duration,
) -> Result<Vec<Served>, IndexError> {
    let url = format!("{}/v2/repository/index", w.url);
    let (st, body) = call(client, Method::POST, &url, "{}", timeout)
        .await
        .map_err(IndexError::Unreachable)?;
    if !st.is_success() {
        return Err(IndexError::Unreachable(anyhow!(
            "{url}: {st}: {}",
            String::from_utf8_lossy(&body)
        )));
    }
    let index: serde_json::Value = serde_json::from_slice(&body)
        .with_context(|| format!("{url}: not JSON"))
        .map_err(IndexError::Unreachable)?;
    let c = sc.topology.cluster_index(&w.cluster);
    let mut served = Vec::new();
    for m in index.as_array().into_iter().flatten() {
        let name = m["name"].as_str().unwrap_or_default().to_string();
        let v = sc.profiles.variant_id(&name);
        let candidate = sc
            .topology
            .workers
            .iter()
            .position(|x| Some(x.cluster) == c && Some(x.variant) == v)
            .ok_or_else(|| {
                IndexError::Mismatch(anyhow!(
                    "workers[{i}] ({}): variant `{name}` is not in the profiles or does not fit cluster `{}`",
                    w.url,
                    w.cluster
                ))
            })?;
        served.push(Served {
            worker: i,
            task: sc.profiles.variants[sc.topology.workers[candidate].variant].task,
            variant: name,
            candidate,
            loaded: m["state"] == "READY",
        });
    }
    Ok(served)
}
