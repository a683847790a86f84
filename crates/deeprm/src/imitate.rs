//! Pre-training by imitating SJF, the public code's supervised step (`pg_su.py`) before
//! REINFORCE: SJF runs the training jobsets, every state it meets is labelled with its action,
//! and the policy network is fitted to those labels by cross-entropy (an RMSProp step per
//! minibatch of [`MINIBATCH`] decisions, in order), starting REINFORCE from a policy that
//! already behaves like SJF.

use super::env::{Env, EnvParams, JobSet};
use super::heuristics::Heuristic;
use super::net::PgNet;
use super::net::build;
use super::objective::Objective;
use super::reinforce::{Trajectory, allowed_actions, chunk_plan, descend, optimiser};
use super::train::{PgConfig, train_jobsets};
use anyhow::Result;
use candle_nn::VarMap;
use continuum_core::rng::{Purpose, stream_rng};
use continuum_learn::agent::{flat, set_flat};

/// Decisions per supervised step (assumption: small batches, as the public code's supervised
/// step takes; not tuned).
pub const MINIBATCH: usize = 64;

/// What imitation reached.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Imitation {
    /// Labelled decisions.
    pub decisions: usize,
    /// Share of them where the network's most likely action is SJF's, after the last epoch.
    pub agreement: f64,
}

/// SJF on `jobs` until the episode ends as `cfg` ends it: every state, what is allowed there
/// and SJF's action.
fn demonstration(p: EnvParams, jobs: &JobSet, cfg: &PgConfig, seed: u64, i: u64) -> Trajectory {
    let mut env = Env::new(p, jobs.clone(), cfg.end, Objective::Slowdown);
    let mut rng = stream_rng(seed, Purpose::Policy, 0x696d_6974, i);
    let mut t = Trajectory::default();
    let (mut ob, mut allowed) = (Vec::new(), Vec::new());
    loop {
        env.observe(&mut ob);
        allowed_actions(&env, cfg.variant.mask, &mut allowed);
        let a = Heuristic::Sjf.act(&env, &mut rng);
        t.obs.push(&ob);
        t.left.push(0.0);
        t.allowed.extend_from_slice(&allowed);
        t.actions.push(a as u32);
        if env.step(a).done {
            break;
        }
    }
    t
}

/// Fits `net` (whose variables are `vars`) to SJF's actions on `jobsets` for `epochs` epochs,
/// with an optimiser of its own.
pub fn imitate_sjf(
    vars: &VarMap,
    net: &PgNet,
    cfg: &PgConfig,
    jobsets: &[JobSet],
    epochs: usize,
    seed: u64,
) -> Result<Imitation> {
    let demos: Vec<Trajectory> = jobsets
        .iter()
        .enumerate()
        .map(|(i, j)| demonstration(cfg.env, j, cfg, seed, i as u64))
        .collect();
    let trajs: Vec<&Trajectory> = demos.iter().collect();
    let plan = chunk_plan(&trajs, MINIBATCH);
    let m: usize = demos.iter().map(|t| t.actions.len()).sum();
    let mut opt = optimiser(vars, cfg.learning_rate)?;
    for _ in 0..epochs {
        for batch in plan.chunks(1) {
            let rows: usize = batch[0].iter().map(|(_, a, b)| b - a).sum();
            let coef = vec![1.0 / rows.max(1) as f32; rows];
            descend(net, &mut opt, &trajs, batch, &coef, None, 0.0, 1.0)?;
        }
    }
    let snap = net.snapshot()?;
    let (mut agree, mut row, mut probs) = (0usize, vec![0.0f32; cfg.env.input_len()], Vec::new());
    let actions = cfg.env.actions();
    for t in &demos {
        for r in 0..t.actions.len() {
            row.iter_mut().for_each(|x| *x = 0.0);
            t.obs.scatter(r, &mut row);
            snap.probs(
                &row,
                Some(&t.allowed[r * actions..(r + 1) * actions]),
                &mut probs,
            );
            let best = (0..probs.len()).fold(0, |b, k| if probs[k] > probs[b] { k } else { b });
            agree += usize::from(best == t.actions[r] as usize);
        }
    }
    Ok(Imitation {
        decisions: m,
        agreement: agree as f64 / m.max(1) as f64,
    })
}

/// The weights REINFORCE starts from when `cfg.imitate_sjf` > 0: the network of `seed` (or
/// `init`) after that many epochs of imitating SJF on the first iteration's training jobsets.
pub fn pretrain(cfg: &PgConfig, seed: u64, init: Option<&[f32]>) -> Result<(Vec<f32>, Imitation)> {
    let (vars, net) = build(cfg.shape(), seed)?;
    if let Some(w) = init {
        set_flat(&vars, w)?;
    }
    let jobsets = train_jobsets(cfg, seed, 0);
    let im = imitate_sjf(&vars, &net, cfg, &jobsets, cfg.imitate_sjf, seed)?;
    Ok((flat(&vars)?, im))
}
