//! REINFORCE as DeepRM trains it (§3.2): for each jobset N rollouts of the current policy, the
//! return v_t of every step, a baseline b_t = the mean of v_t over the N rollouts at the same t
//! (shorter rollouts count as 0 there), and the step θ ← θ + α Σ_jobsets mean_t ∇log π(a_t|s_t)
//! (v_t − b_t). The improved variants add, each a switch: an entropy bonus, advantages normalised
//! over the batch, invalid actions masked out, a learned critic in place of the time baseline.

use super::env::{End, Env, EnvParams, EpisodeSummary, JobSet};
use super::net::{PgNet, Snapshot};
use super::objective::Objective;
use super::rmsprop::RmsProp;
use candle_core::backprop::GradStore;
use candle_core::{D, Device, Result, Tensor};
use candle_nn::{Optimizer, VarMap};
use continuum_core::rng::SimRng;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// How the policy gradient is taken.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PgVariant {
    /// Entropy bonus weight β (0: none).
    pub entropy: f64,
    /// Normalise the advantages over each update's batch to mean 0, sd 1.
    pub normalise: bool,
    /// Give slots that cannot be placed (empty, or no room in the horizon) probability 0.
    pub mask: bool,
    /// A learned critic V(s) in place of the time-step baseline (advantage actor-critic).
    pub critic: bool,
}

impl Default for PgVariant {
    fn default() -> Self {
        PgVariant::PLAIN
    }
}

impl PgVariant {
    /// The paper's REINFORCE with the time-step baseline.
    pub const PLAIN: PgVariant = PgVariant {
        entropy: 0.0,
        normalise: false,
        mask: false,
        critic: false,
    };

    /// The named presets: `plain`, `entropy`, `normalised`, `masked`, `improved` (each adds one
    /// switch to the one before), `critic` (improved with a learned critic).
    pub fn preset(name: &str) -> std::result::Result<PgVariant, String> {
        let e = PgVariant {
            entropy: 0.01,
            ..PgVariant::PLAIN
        };
        let n = PgVariant {
            normalise: true,
            ..e
        };
        let m = PgVariant { mask: true, ..n };
        Ok(match name {
            "plain" => PgVariant::PLAIN,
            "entropy" => e,
            "normalised" => n,
            "masked" | "improved" => m,
            "critic" => PgVariant { critic: true, ..m },
            _ => {
                return Err(format!(
                    "unknown variant `{name}`; expected plain, entropy, normalised, masked, improved or critic"
                ));
            }
        })
    }
}

/// Rows of equal length stored by their nonzero cells: most of DeepRM's image is empty, and a
/// rollout at high load sees thousands of them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SparseRows {
    ends: Vec<u32>,
    idx: Vec<u32>,
    val: Vec<f32>,
}

impl SparseRows {
    /// Appends a row.
    pub fn push(&mut self, row: &[f32]) {
        for (i, &x) in row.iter().enumerate() {
            if x != 0.0 {
                self.idx.push(i as u32);
                self.val.push(x);
            }
        }
        self.ends.push(self.idx.len() as u32);
    }

    /// Rows held.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether it holds no row.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Writes row `r`'s nonzero cells into `out` (a zeroed row of the full length).
    pub fn scatter(&self, r: usize, out: &mut [f32]) {
        let from = if r == 0 { 0 } else { self.ends[r - 1] as usize };
        let to = self.ends[r] as usize;
        for (&i, &x) in self.idx[from..to].iter().zip(&self.val[from..to]) {
            out[i as usize] = x;
        }
    }
}

/// One rollout: what the policy saw and did, and what it earned.
#[derive(Debug, Clone, Default)]
pub struct Trajectory {
    /// Observations, one per decision.
    pub obs: SparseRows,
    /// Share of the episode's arrival window left at each decision (the critic's extra input).
    pub left: Vec<f32>,
    /// Actions taken.
    pub actions: Vec<u32>,
    /// Reward of each action.
    pub rewards: Vec<f32>,
    /// Allowed actions at each decision (all true without masking), one after the other.
    pub allowed: Vec<bool>,
    /// The episode's figures.
    pub summary: EpisodeSummary,
}

/// The actions allowed in `env`: the void action always, slots only if placeable when
/// `mask`, every slot otherwise.
pub fn allowed_actions(env: &Env, mask: bool, out: &mut Vec<bool>) {
    out.clear();
    out.extend((0..env.p.num_nw).map(|a| !mask || env.placeable(a)));
    out.push(true);
}

/// Runs `policy` on `jobs` to the end, sampling its actions (or taking the most likely one
/// when `greedy`).
#[allow(clippy::too_many_arguments)]
pub fn rollout(
    p: EnvParams,
    jobs: &JobSet,
    objective: Objective,
    end: End,
    policy: &Snapshot,
    mask: bool,
    greedy: bool,
    rng: &mut SimRng,
) -> Trajectory {
    let mut env = Env::new(p, jobs.clone(), end, objective);
    let mut t = Trajectory::default();
    let (mut ob, mut allowed, mut probs) = (Vec::new(), Vec::new(), Vec::new());
    loop {
        env.observe(&mut ob);
        allowed_actions(&env, mask, &mut allowed);
        policy.probs(&ob, Some(&allowed), &mut probs);
        let a = if greedy {
            argmax(&probs)
        } else {
            sample(&probs, rng)
        };
        t.obs.push(&ob);
        t.left
            .push(1.0 - (env.time() as f32 / p.simu_len as f32).min(1.0));
        t.allowed.extend_from_slice(&allowed);
        t.actions.push(a as u32);
        let s = env.step(a);
        t.rewards.push(s.reward as f32);
        if s.done {
            break;
        }
    }
    t.summary = env.summary();
    t
}

fn argmax(p: &[f32]) -> usize {
    let mut b = 0;
    for (i, &x) in p.iter().enumerate() {
        if x > p[b] {
            b = i;
        }
    }
    b
}

fn sample(p: &[f32], rng: &mut SimRng) -> usize {
    let u: f32 = rng.random();
    let mut acc = 0.0;
    for (i, &x) in p.iter().enumerate() {
        acc += x;
        if u < acc && x > 0.0 {
            return i;
        }
    }
    // Rounding left u above the total: the last action with probability.
    p.iter().rposition(|&x| x > 0.0).unwrap_or(0)
}

/// Discounted returns v_t = Σ_{k ≥ t} γ^{k−t} r_k.
pub fn returns(rewards: &[f32], gamma: f64) -> Vec<f32> {
    let mut out = vec![0.0; rewards.len()];
    let mut acc = 0.0f64;
    for (i, r) in rewards.iter().enumerate().rev() {
        acc = f64::from(*r) + gamma * acc;
        out[i] = acc as f32;
    }
    out
}

/// The time-step baseline: b_t = mean over the rollouts of v_t, a rollout shorter than t
/// counting 0 (the public code pads with zeros).
pub fn time_baseline(returns: &[Vec<f32>]) -> Vec<f32> {
    let len = returns.iter().map(Vec::len).max().unwrap_or(0);
    let n = returns.len().max(1) as f32;
    (0..len)
        .map(|t| returns.iter().filter_map(|r| r.get(t)).sum::<f32>() / n)
        .collect()
}

/// What one update measured.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UpdateStats {
    /// Mean return of the rollouts (first step).
    pub mean_return: f64,
    /// Mean policy entropy over the batch's decisions.
    pub entropy: f64,
    /// Decisions in the batch.
    pub decisions: usize,
}

/// Rows (decisions) per forward and backward pass of [`update`]. The loss is a sum over rows,
/// so the batch is cut into chunks whose gradients add up to the whole batch's. A batch at high
/// load holds tens of thousands of decisions of a few thousand inputs each; in one pass, its
/// copy and the gradient candle's matmul also computes for the (constant) observations each
/// take about a gigabyte of fresh memory per update, and zeroing those pages cost more than
/// the arithmetic. A chunk of 512 rows is a few MB, reused. (512 is an assumption, not tuned;
/// the result does not depend on it beyond rounding.)
pub(crate) const CHUNK_ROWS: usize = 512;

/// One policy-gradient step of `net` on `batches` (the rollouts of each jobset).
pub fn update(
    net: &PgNet,
    opt: &mut RmsProp,
    batches: &[Vec<Trajectory>],
    variant: &PgVariant,
    gamma: f64,
    return_scale: f32,
) -> Result<UpdateStats> {
    update_in_chunks(net, opt, batches, variant, gamma, return_scale, CHUNK_ROWS)
}

/// [`update`] with `chunk` rows per pass.
pub(crate) fn update_in_chunks(
    net: &PgNet,
    opt: &mut RmsProp,
    batches: &[Vec<Trajectory>],
    variant: &PgVariant,
    gamma: f64,
    return_scale: f32,
    chunk: usize,
) -> Result<UpdateStats> {
    let (mut rets, mut weights, mut adv) = (Vec::new(), Vec::new(), Vec::new());
    let mut first_returns = 0.0f64;
    let mut episodes = 0usize;
    for batch in batches {
        let rs: Vec<Vec<f32>> = batch.iter().map(|t| returns(&t.rewards, gamma)).collect();
        let base = time_baseline(&rs);
        let n: usize = batch.iter().map(|t| t.actions.len()).sum();
        for r in &rs {
            first_returns += f64::from(r.first().copied().unwrap_or(0.0));
            episodes += 1;
            for (i, v) in r.iter().enumerate() {
                rets.push(*v / return_scale);
                adv.push((*v - base[i]) / return_scale);
                weights.push(1.0 / n as f32);
            }
        }
    }
    let m = rets.len();
    if m == 0 {
        return Ok(UpdateStats::default());
    }
    let trajs: Vec<&Trajectory> = batches.iter().flatten().collect();
    let plan = chunk_plan(&trajs, chunk.max(1));
    if variant.critic {
        let mut at = 0;
        for chunk in &plan {
            let c = Chunk::build(&trajs, chunk, net)?;
            let v = net.value(&c.with_left()?)?.expect("a critic network");
            for (k, v) in v.to_vec1::<f32>()?.into_iter().enumerate() {
                adv[at + k] = rets[at + k] - v;
            }
            at += c.rows;
        }
    }
    if variant.normalise {
        let mean = adv.iter().sum::<f32>() / m as f32;
        let sd = (adv.iter().map(|a| (a - mean).powi(2)).sum::<f32>() / m as f32).sqrt();
        for a in &mut adv {
            *a = (*a - mean) / (sd + 1e-6);
        }
    }
    let coef: Vec<f32> = adv.iter().zip(&weights).map(|(a, w)| a * w).collect();
    let jobsets = batches.len().max(1) as f64;
    let critic = variant.critic.then_some(&rets[..]);
    let entropy_sum = descend(
        net,
        opt,
        &trajs,
        &plan,
        &coef,
        critic,
        variant.entropy,
        jobsets,
    )?;
    Ok(UpdateStats {
        mean_return: first_returns / episodes.max(1) as f64,
        entropy: entropy_sum / m as f64,
        decisions: m,
    })
}

/// One optimiser step on the loss −Σ_rows coef · log π(a|s), minus `entropy` × `jobsets` ×
/// the rows' mean entropy, plus (with `critic`'s targets) `jobsets` × the critic's mean squared
/// error, its gradient summed over `plan`'s chunks. Returns the rows' summed entropy.
#[allow(clippy::too_many_arguments)]
pub(crate) fn descend(
    net: &PgNet,
    opt: &mut RmsProp,
    trajs: &[&Trajectory],
    plan: &[Vec<(usize, usize, usize)>],
    coef: &[f32],
    critic: Option<&[f32]>,
    entropy_bonus: f64,
    jobsets: f64,
) -> Result<f64> {
    let m = coef.len();
    let (mut grads, mut entropy_sum, mut at) = (None::<GradStore>, 0.0f64, 0usize);
    for chunk in plan {
        let c = Chunk::build(trajs, chunk, net)?;
        let dev = Device::Cpu;
        let rows = c.rows;
        let logits = (net.logits(&c.x)? + Tensor::from_slice(&c.bias, (rows, c.actions), &dev)?)?;
        let logp = candle_nn::ops::log_softmax(&logits, D::Minus1)?;
        let chosen = logp
            .gather(&Tensor::from_slice(&c.acts, (rows, 1), &dev)?, 1)?
            .squeeze(1)?;
        let mut loss = (chosen * Tensor::from_slice(&coef[at..at + rows], rows, &dev)?)?
            .sum_all()?
            .neg()?;
        // Σ over the chunk's rows of the policy's entropy; the batch's mean is Σ / m.
        let entropy = (logp.exp()? * &logp)?.sum_all()?.neg()?;
        entropy_sum += f64::from(entropy.to_scalar::<f32>()?);
        if entropy_bonus > 0.0 {
            loss = (loss - (&entropy * (entropy_bonus * jobsets / m as f64))?)?;
        }
        if let Some(rets) = critic {
            let v = net.value(&c.with_left()?)?.expect("a critic network");
            let target = Tensor::from_slice(&rets[at..at + rows], rows, &dev)?;
            loss = (loss + ((v - target)?.sqr()?.sum_all()? * (jobsets / m as f64))?)?;
        }
        let g = loss.backward()?;
        grads = Some(match grads {
            None => g,
            Some(mut total) => {
                for var in opt.vars() {
                    if let Some(x) = g.get(var.as_tensor()) {
                        let sum = match total.get(var.as_tensor()) {
                            Some(y) => (y + x)?,
                            None => x.clone(),
                        };
                        total.insert(var.as_tensor(), sum);
                    }
                }
                total
            }
        });
        at += rows;
    }
    if let Some(g) = &grads {
        opt.step(g)?;
    }
    Ok(entropy_sum)
}

/// The rows of each chunk, as (trajectory, first step, end step) pieces in row order: every
/// chunk but the last holds exactly `rows` decisions.
pub(crate) fn chunk_plan(trajs: &[&Trajectory], rows: usize) -> Vec<Vec<(usize, usize, usize)>> {
    let mut plan = vec![Vec::new()];
    let mut room = rows;
    for (i, t) in trajs.iter().enumerate() {
        let mut from = 0;
        let len = t.actions.len();
        while from < len {
            if room == 0 {
                plan.push(Vec::new());
                room = rows;
            }
            let to = len.min(from + room);
            plan.last_mut().expect("a chunk").push((i, from, to));
            room -= to - from;
            from = to;
        }
    }
    plan
}

/// One chunk's inputs, copied out of its trajectories.
struct Chunk {
    rows: usize,
    actions: usize,
    x: Tensor,
    left: Vec<f32>,
    acts: Vec<u32>,
    bias: Vec<f32>,
}

impl Chunk {
    fn build(trajs: &[&Trajectory], pieces: &[(usize, usize, usize)], net: &PgNet) -> Result<Self> {
        let (input, actions) = (net.shape().input, net.shape().actions);
        let rows: usize = pieces.iter().map(|(_, a, b)| b - a).sum();
        let (mut obs, mut left) = (vec![0.0f32; rows * input], Vec::with_capacity(rows));
        let mut row = 0;
        let (mut acts, mut bias) = (Vec::with_capacity(rows), Vec::with_capacity(rows * actions));
        for &(i, from, to) in pieces {
            let t = trajs[i];
            for r in from..to {
                t.obs.scatter(r, &mut obs[row * input..(row + 1) * input]);
                row += 1;
            }
            left.extend_from_slice(&t.left[from..to]);
            acts.extend_from_slice(&t.actions[from..to]);
            bias.extend(
                t.allowed[from * actions..to * actions]
                    .iter()
                    .map(|&ok| if ok { 0.0f32 } else { -1e9 }),
            );
        }
        Ok(Self {
            rows,
            actions,
            x: Tensor::from_vec(obs, (rows, input), &Device::Cpu)?,
            left,
            acts,
            bias,
        })
    }

    /// The observations with the share of the episode left appended (the critic's input).
    fn with_left(&self) -> Result<Tensor> {
        let l = Tensor::from_slice(&self.left, (self.rows, 1), &Device::Cpu)?;
        Tensor::cat(&[&self.x, &l], 1)
    }
}

/// The optimiser over `vars` at learning rate `lr`.
pub fn optimiser(vars: &VarMap, lr: f64) -> Result<RmsProp> {
    RmsProp::new(
        vars.all_vars(),
        super::rmsprop::RmsPropParams {
            lr,
            ..Default::default()
        },
    )
}
