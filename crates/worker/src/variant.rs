//! One served variant: input checks, admission, a FIFO queue and a batching thread that runs
//! the model on up to B items at a time (dynamic batching: a batch runs when it holds B items or
//! when its first query has waited `max_queue_delay`, whichever comes first).

use super::config::VariantConfig;
use super::load::{Meter, VariantLoad};
use super::metrics::{Metrics, ModelLabel};
use super::queue_state::QueueState;
use crate::inference::{InferenceError, Model};
use continuum_wire::Tensor;
pub use continuum_wire::{Answer, InferRequest, QueryError};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

struct Job {
    items: usize,
    data: Vec<f32>,
    arrived: Instant,
    reply: oneshot::Sender<Result<Answer, QueryError>>,
}

struct Shared {
    meter: Mutex<Meter>,
    queued: AtomicUsize,
    running_end: Mutex<Option<Instant>>,
    batch1_ns: AtomicU64,
    batch_full_ns: AtomicU64,
    metrics: Arc<Metrics>,
    label: ModelLabel,
    /// Least time a batch holds the session (`min_batch_ms`).
    floor: Duration,
}

/// What a held batch waits by yielding rather than sleeping: a thread's sleep ends up to a few
/// hundred µs late (timer slack, wake-up latency), which would slow an emulated 8 ms device by
/// ~4 % (measured: 8.3 ms per batch with a plain sleep). assumption: 0.5 ms covers the wake-up.
const HOLD_SPIN: Duration = Duration::from_micros(500);

/// Runs one batch of `n` items and holds the session until `floor` has passed since `start`,
/// the batch's start on the emulated device (an emulated slower device: the thread sleeps the
/// rest, then yields through the last [`HOLD_SPIN`] so that it ends on time). Returns the output
/// and the batch's end on the device, `start + floor`.
fn run_held(
    model: &mut Model,
    n: usize,
    data: &[f32],
    start: Instant,
    floor: Duration,
) -> (Result<Tensor, InferenceError>, Instant) {
    let out = model.run(n, data);
    let target = start + floor;
    if let Some(left) = target
        .checked_duration_since(Instant::now())
        .and_then(|l| l.checked_sub(HOLD_SPIN))
    {
        std::thread::sleep(left);
    }
    while Instant::now() < target {
        std::thread::yield_now();
    }
    (out, target)
}

/// When a batch starts on the emulated device (`min_batch_ms`): once the device is free
/// (`free_at`, the previous batch's end on the device) and the batch is `ready` (its last query
/// arrived, or its batching delay ran out), never later than `now`, when the host runs it. A
/// device with a queue starts its next batch as its last one ends; the host's thread wakes up
/// and ends each hold a few hundred µs late (measured on the live fleet: 8.22 ms per 8 ms
/// `cnn-m` batch), and counting from the device's clock keeps that lateness from taking the
/// emulated device's capacity.
fn device_start(free_at: Option<Instant>, ready: Instant, now: Instant) -> Instant {
    free_at.map_or(ready, |f| f.max(ready)).min(now)
}

/// A variant being served.
pub struct Variant {
    /// Variant name.
    pub name: String,
    /// Model name.
    pub model: String,
    /// Batch size B.
    pub max_batch: usize,
    /// Name of the input tensor.
    pub input_name: String,
    /// Name of the output tensor.
    pub output_name: String,
    /// Shape of one input item.
    pub item_shape: Vec<usize>,
    /// Shape of one output item.
    pub output_item_shape: Vec<usize>,
    max_queue: usize,
    max_queue_delay: Duration,
    tx: Mutex<Option<Sender<Job>>>,
    shared: Arc<Shared>,
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

impl Variant {
    /// Starts serving `model`: warms it up at batch 1 and B (which also gives the first batch
    /// time estimates and the output shape), then starts its batching thread.
    pub fn start(
        cfg: &VariantConfig,
        mut model: Model,
        window: Duration,
        metrics: Arc<Metrics>,
    ) -> Result<Self, String> {
        let item_shape = model.item_shape().to_vec();
        let (input_name, output_name) = (
            model.input_name().to_string(),
            model.output_name().to_string(),
        );
        let floor = Duration::from_secs_f64(cfg.min_batch_ms / 1e3);
        let mut time = |n: usize| -> Result<(Duration, Tensor), String> {
            let data = vec![0.0f32; n * model.item_len()];
            let mut ts = Vec::new();
            let mut out = None;
            for _ in 0..3 {
                let t = Instant::now();
                let (o, _) = run_held(&mut model, n, &data, t, floor);
                out = Some(o.map_err(|e| e.to_string())?);
                ts.push(t.elapsed());
            }
            Ok((median(ts), out.expect("three runs")))
        };
        let (b1, out) = time(1)?;
        let (bf, _) = time(cfg.max_batch)?;
        let label = Metrics::label(&cfg.name);
        let shared = Arc::new(Shared {
            meter: Mutex::new(Meter::new(window)),
            queued: AtomicUsize::new(0),
            running_end: Mutex::new(None),
            batch1_ns: AtomicU64::new(b1.as_nanos() as u64),
            batch_full_ns: AtomicU64::new(bf.as_nanos() as u64),
            metrics,
            label,
            floor,
        });
        let (tx, rx) = std::sync::mpsc::channel();
        let max_queue_delay = Duration::from_secs_f64(cfg.max_queue_delay_ms / 1000.0);
        let (sh, max_batch) = (shared.clone(), cfg.max_batch);
        std::thread::Builder::new()
            .name(format!("batch-{}", cfg.name))
            .spawn(move || batch_loop(model, rx, sh, max_batch, max_queue_delay))
            .map_err(|e| format!("cannot start the batching thread: {e}"))?;
        tracing::info!(variant = %cfg.name, model = %cfg.model, max_batch, batch1_ms = b1.as_secs_f64() * 1e3,
            batch_full_ms = bf.as_secs_f64() * 1e3, "variant ready");
        Ok(Self {
            name: cfg.name.clone(),
            model: cfg.model.clone(),
            max_batch,
            output_item_shape: out.shape[1..].to_vec(),
            input_name,
            output_name,
            item_shape,
            max_queue: cfg.max_queue,
            max_queue_delay,
            tx: Mutex::new(Some(tx)),
            shared,
        })
    }

    /// Checks a request's shape and length against this variant.
    pub fn check(&self, shape: &[usize], len: usize) -> Result<usize, QueryError> {
        let want = || {
            let dims: Vec<String> = self.item_shape.iter().map(|d| d.to_string()).collect();
            format!("[n, {}] with 1 <= n <= {}", dims.join(", "), self.max_batch)
        };
        if shape.len() != self.item_shape.len() + 1 || shape[1..] != self.item_shape[..] {
            return Err(QueryError::BadInput(format!(
                "wrong shape {shape:?} for `{}`: expected {}",
                self.name,
                want()
            )));
        }
        let n = shape[0];
        if n == 0 || n > self.max_batch {
            return Err(QueryError::BadInput(format!(
                "batch of {n} items for `{}`: expected {}",
                self.name,
                want()
            )));
        }
        let expect = shape.iter().product::<usize>();
        if len != expect {
            return Err(QueryError::BadInput(format!(
                "shape {shape:?} needs {expect} values, got {len}"
            )));
        }
        Ok(n)
    }

    fn queue_state(&self, now: Instant) -> QueueState {
        let running_left = self
            .shared
            .running_end
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map_or(Duration::ZERO, |end| end.saturating_duration_since(now));
        QueueState {
            queued_items: self.shared.queued.load(Ordering::Acquire),
            running_left,
            max_batch: self.max_batch,
            batch1: Duration::from_nanos(self.shared.batch1_ns.load(Ordering::Relaxed)),
            batch_full: Duration::from_nanos(self.shared.batch_full_ns.load(Ordering::Relaxed)),
            max_queue_delay: self.max_queue_delay,
        }
    }

    fn reject(&self, items: usize, e: QueryError) -> Result<Answer, QueryError> {
        self.shared
            .meter
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .rejection(items);
        self.shared
            .metrics
            .rejected
            .get_or_create(&self.shared.label)
            .inc();
        Err(e)
    }

    /// Checks, admits and queues a query, then waits for its answer.
    pub async fn infer(&self, req: InferRequest) -> Result<Answer, QueryError> {
        let items = self.check(&req.shape, req.data.len())?;
        let now = Instant::now();
        self.shared
            .meter
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .arrival(now, items, req.stream);
        let state = self.queue_state(now);
        if state.queued_items + items > self.max_queue {
            return self.reject(
                items,
                QueryError::Rejected(format!(
                    "queue of `{}` is full ({} items queued, bound {})",
                    self.name, state.queued_items, self.max_queue
                )),
            );
        }
        if let Some(d) = req.deadline {
            let est = state.estimate(items);
            if est > d {
                return self.reject(
                    items,
                    QueryError::Rejected(format!(
                        "deadline of {:.1} ms cannot be met: about {:.1} ms of queued work on `{}`",
                        d.as_secs_f64() * 1e3,
                        est.as_secs_f64() * 1e3,
                        self.name
                    )),
                );
            }
        }
        let (reply, rx) = oneshot::channel();
        let job = Job {
            items,
            data: req.data,
            arrived: now,
            reply,
        };
        {
            let tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
            let Some(tx) = tx.as_ref() else {
                return self.reject(items, QueryError::Unavailable);
            };
            self.shared.queued.fetch_add(items, Ordering::AcqRel);
            if tx.send(job).is_err() {
                self.shared.queued.fetch_sub(items, Ordering::AcqRel);
                return Err(QueryError::Internal(
                    "the batching thread has stopped".into(),
                ));
            }
        }
        rx.await.unwrap_or_else(|_| {
            Err(QueryError::Internal(
                "the batching thread dropped the query".into(),
            ))
        })
    }

    /// Closes the queue: queued queries are still answered, then the batching thread ends and
    /// drops the model (an unload).
    pub fn close(&self) {
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    /// Whether the variant takes queries (not closed).
    pub fn is_loaded(&self) -> bool {
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }

    /// Serves again after [`Self::close`], with `model` freshly loaded (and warmed up by the
    /// caller): a new queue and batching thread; meters and counters carry on. `Ok(false)`
    /// when it was still loaded (`model` is dropped).
    pub fn reopen(&self, model: Model) -> Result<bool, String> {
        let mut tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
        if tx.is_some() {
            return Ok(false);
        }
        let (t, rx) = std::sync::mpsc::channel();
        let (sh, max_batch, max_queue_delay) =
            (self.shared.clone(), self.max_batch, self.max_queue_delay);
        std::thread::Builder::new()
            .name(format!("batch-{}", self.name))
            .spawn(move || batch_loop(model, rx, sh, max_batch, max_queue_delay))
            .map_err(|e| format!("cannot start the batching thread: {e}"))?;
        *tx = Some(t);
        Ok(true)
    }

    /// The variant's load now; also refreshes its gauges.
    pub fn load(&self, now: Instant) -> VariantLoad {
        let mut m = self.shared.meter.lock().unwrap_or_else(|e| e.into_inner());
        let (incoming_qps, throughput_qps, open_streams) = m.rates(now);
        let queue_len = self.shared.queued.load(Ordering::Acquire);
        let mx = &self.shared.metrics;
        let l = &self.shared.label;
        mx.pending.get_or_create(l).set(queue_len as i64);
        mx.incoming_qps.get_or_create(l).set(incoming_qps);
        mx.throughput_qps.get_or_create(l).set(throughput_qps);
        mx.open_streams.get_or_create(l).set(open_streams as i64);
        VariantLoad {
            variant: self.name.clone(),
            incoming_qps,
            throughput_qps,
            open_streams,
            queue_len,
            max_batch: self.max_batch,
            served_total: m.served_total,
            rejected_total: m.rejected_total,
        }
    }
}

/// Moving average weight of a new batch time. assumption: 0.2 follows drift within ~5 batches.
const EWMA: f64 = 0.2;

fn batch_loop(
    mut model: Model,
    rx: Receiver<Job>,
    sh: Arc<Shared>,
    max_batch: usize,
    max_queue_delay: Duration,
) {
    let mut carry: Option<Job> = None;
    // The emulated device's end of its last batch (`min_batch_ms`; see `device_start`).
    let mut free_at: Option<Instant> = None;
    loop {
        let first = match carry.take() {
            Some(j) => j,
            None => match rx.recv() {
                Ok(j) => j,
                Err(_) => return,
            },
        };
        if cancelled(&first, &sh) {
            continue;
        }
        let until = first.arrived + max_queue_delay;
        let mut items = first.items;
        let mut batch = vec![first];
        while items < max_batch {
            let left = until.saturating_duration_since(Instant::now());
            let next = if left.is_zero() {
                rx.try_recv().ok()
            } else {
                // Timeout or a closed queue: run what we have.
                rx.recv_timeout(left).ok()
            };
            let Some(j) = next else { break };
            if cancelled(&j, &sh) {
                continue;
            }
            if items + j.items > max_batch {
                carry = Some(j);
                break;
            }
            items += j.items;
            batch.push(j);
        }
        // Ready when it filled (its last query, or the one that did not fit, arrived), or when
        // its batching delay ran out.
        let ready = match items >= max_batch || carry.is_some() {
            true => batch.iter().chain(&carry).map(|j| j.arrived).max(),
            false => None,
        };
        let ready = ready.unwrap_or(until);
        // Requesters may have gone while the batch filled.
        batch.retain(|j| !cancelled(j, &sh));
        let items = batch.iter().map(|j| j.items).sum();
        if items > 0 {
            let start = device_start(free_at, ready, Instant::now());
            free_at = Some(run_batch(&mut model, batch, items, &sh, max_batch, start));
        }
    }
}

/// Whether `job`'s requester went away (its answer would go nowhere): then it leaves the queue
/// unprocessed and is counted as cancelled.
fn cancelled(job: &Job, sh: &Shared) -> bool {
    if !job.reply.is_closed() {
        return false;
    }
    sh.queued.fetch_sub(job.items, Ordering::AcqRel);
    sh.metrics.cancelled.get_or_create(&sh.label).inc();
    true
}

/// Runs `batch` (`items` items) on the host now and on the emulated device from `device_start`;
/// returns the batch's end on the device.
fn run_batch(
    model: &mut Model,
    batch: Vec<Job>,
    items: usize,
    sh: &Shared,
    max_batch: usize,
    device_start: Instant,
) -> Instant {
    let item_len = model.item_len();
    let mut data = Vec::with_capacity(items * item_len);
    for j in &batch {
        data.extend_from_slice(&j.data);
    }
    let start = Instant::now();
    let (b1, bf) = (
        sh.batch1_ns.load(Ordering::Relaxed) as f64,
        sh.batch_full_ns.load(Ordering::Relaxed) as f64,
    );
    let guess = if max_batch > 1 {
        b1 + (bf - b1).max(0.0) * (items - 1) as f64 / (max_batch - 1) as f64
    } else {
        b1
    };
    *sh.running_end.lock().unwrap_or_else(|e| e.into_inner()) =
        Some(start + Duration::from_nanos(guess as u64));
    sh.queued.fetch_sub(items, Ordering::AcqRel);
    let (result, device_end) = run_held(model, items, &data, device_start, sh.floor);
    let dt = start.elapsed();
    *sh.running_end.lock().unwrap_or_else(|e| e.into_inner()) = None;
    let ewma = |a: &AtomicU64| {
        let old = a.load(Ordering::Relaxed) as f64;
        a.store(
            (old * (1.0 - EWMA) + dt.as_nanos() as f64 * EWMA) as u64,
            Ordering::Relaxed,
        );
    };
    if items == 1 {
        ewma(&sh.batch1_ns);
    }
    if items == max_batch {
        ewma(&sh.batch_full_ns);
    }
    let compute_us = dt.as_micros() as u64;
    let mx = &sh.metrics;
    mx.exec_count.get_or_create(&sh.label).inc();
    mx.compute_us.get_or_create(&sh.label).inc_by(compute_us);
    match result {
        Ok(out) => {
            sh.meter
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .completion(Instant::now(), items);
            mx.inference_count
                .get_or_create(&sh.label)
                .inc_by(items as u64);
            let per_item = out.data.len() / items;
            let mut off = 0;
            for j in batch {
                let n = j.items * per_item;
                let mut shape = out.shape.clone();
                shape[0] = j.items;
                let queue_us = start.saturating_duration_since(j.arrived).as_micros() as u64;
                mx.queue_us.get_or_create(&sh.label).inc_by(queue_us);
                mx.success.get_or_create(&sh.label).inc();
                let _ = j.reply.send(Ok(Answer {
                    output: Tensor {
                        shape,
                        data: out.data[off..off + n].to_vec(),
                    },
                    queue_us,
                    compute_us,
                    batch_items: items,
                }));
                off += n;
            }
        }
        Err(e) => {
            tracing::error!(error = %e, "batch failed");
            for j in batch {
                mx.failure.get_or_create(&sh.label).inc();
                let _ = j.reply.send(Err(QueryError::Internal(e.to_string())));
            }
        }
    }
    device_end
}

impl continuum_wire::oip::OipModel for Variant {
    fn model_name(&self) -> &str {
        &self.name
    }
    fn input_name(&self) -> &str {
        &self.input_name
    }
    fn output_name(&self) -> &str {
        &self.output_name
    }
}

#[cfg(test)]
mod device_clock_tests {
    use super::device_start;
    use std::time::{Duration, Instant};

    /// A free device starts a batch when it is ready; a busy one when it frees, so a host that
    /// reaches the batch late does not delay it on the device; never after the host runs it.
    #[test]
    fn a_batch_starts_when_both_the_device_and_the_batch_are_ready() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let now = t0 + ms(10);
        // Idle device (first batch, or its last batch ended before this one was ready).
        assert_eq!(device_start(None, t0 + ms(2), now), t0 + ms(2));
        assert_eq!(device_start(Some(t0 + ms(1)), t0 + ms(2), now), t0 + ms(2));
        // Busy device: the batch waited for it, and starts as the last one ends.
        assert_eq!(device_start(Some(t0 + ms(8)), t0 + ms(2), now), t0 + ms(8));
        // Never later than the host's run.
        assert_eq!(device_start(Some(t0 + ms(12)), t0 + ms(2), now), now);
        assert_eq!(device_start(None, t0 + ms(15), now), now);
    }
}
