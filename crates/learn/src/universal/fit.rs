//! Fitting the topology-free network to its samples: regression of every action's value on
//! the state (the Double-DQN learner with γ = 0, so each label is its own target and no
//! bootstrapping carries one network's error into another), over shuffled minibatches for a
//! number of passes. Reproducible: the shuffles come from a seeded stream.

use super::collect::Sample;
use crate::agent::{Batch, LearnSettings, Learner, copy_weights};
use anyhow::Result;
use candle_nn::VarMap;
use continuum_core::rng::{Purpose, stream_rng};
use continuum_infer::agent::{DqnConfig, NetShape};
use rand::seq::SliceRandom;

/// The fitted network and its last pass's mean loss.
pub struct Fitted {
    /// The online network's variables.
    pub vars: VarMap,
    /// Mean Huber loss of the last pass.
    pub loss: f32,
}

/// Fits a network of `shape` to `samples` for `epochs` passes, from `init` when given.
pub fn fit(
    samples: &[Sample],
    shape: NetShape,
    cfg: &DqnConfig,
    epochs: usize,
    seed: u64,
    init: Option<&VarMap>,
) -> Result<Fitted> {
    let settings = LearnSettings {
        gamma: 0.0,
        learning_rate: cfg.learning_rate,
        max_grad_norm: cfg.max_grad_norm,
        target_update_interval: u64::MAX,
        quantiles: 0,
    };
    let mut learner = Learner::new(shape, settings, seed)?;
    if let Some(v) = init {
        copy_weights(v, learner.online_vars())?;
    }
    let mut order: Vec<usize> = (0..samples.len()).collect();
    let mut rng = stream_rng(seed, Purpose::Other, 0x0066_6974, 0);
    let batch = cfg.batch_size.max(1);
    let mut loss = 0.0;
    for _ in 0..epochs {
        order.shuffle(&mut rng);
        let (mut total, mut steps) = (0.0, 0);
        for chunk in order.chunks(batch) {
            total += learner.train_step(&batch_of(samples, chunk, shape))?;
            steps += 1;
        }
        loss = total / steps.max(1) as f32;
    }
    let vars = VarMap::new();
    {
        let src = learner.online_vars().data().lock().expect("var map lock");
        let mut dst = vars.data().lock().expect("var map lock");
        for (name, var) in src.iter() {
            let copy = candle_core::Var::from_tensor(&var.as_tensor().copy()?)?;
            dst.insert(name.clone(), copy);
        }
    }
    Ok(Fitted { vars, loss })
}

/// The samples `idx` as a batch: every action's value known (weight 1), no next state.
fn batch_of(samples: &[Sample], idx: &[usize], shape: NetShape) -> Batch {
    let mut b = Batch::default();
    for &i in idx {
        let s = &samples[i];
        b.states.extend_from_slice(&s.state);
        b.next_states.extend_from_slice(&s.state);
        b.values.extend_from_slice(&s.values);
        b.weights.extend(std::iter::repeat_n(1.0, shape.actions));
        b.actions.push(0);
        b.dones.push(1.0);
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_learns_which_action_a_feature_favours() {
        // Feature 0 high: action 1 is worth more; low: action 0.
        let samples: Vec<Sample> = (0..400)
            .map(|i| {
                let x = (i % 2) as f32;
                Sample {
                    state: vec![x, 0.5],
                    values: vec![1.0 - 2.0 * x, 2.0 * x - 1.0],
                }
            })
            .collect();
        let shape = NetShape {
            features: 2,
            history: 1,
            conv_channels: 8,
            conv_kernel: 1,
            hidden: 8,
            actions: 2,
            classes: 1,
        };
        let cfg = DqnConfig {
            learning_rate: 1e-2,
            batch_size: 32,
            ..DqnConfig::default()
        };
        let f = fit(&samples, shape, &cfg, 30, 1, None).unwrap();
        assert!(f.loss < 0.05, "loss {}", f.loss);
        let w = crate::agent::weights_of(&f.vars).unwrap();
        let mut net = continuum_infer::agent::FastQNet::read(shape, &w).unwrap();
        let mut q = Vec::new();
        net.forward(&[1.0, 0.5], &mut q);
        assert!(q[1] > q[0]);
        net.forward(&[0.0, 0.5], &mut q);
        assert!(q[0] > q[1]);
    }
}
