//! RMSProp (Tieleman & Hinton 2012), the optimiser of DeepRM's public code, as a candle
//! [`Optimizer`]: a running mean of squared gradients scales each step,
//! `a ← ρa + (1−ρ)g²`, `θ ← θ − η g / √(a + ε)`.

use candle_core::backprop::GradStore;
use candle_core::{Result, Tensor, Var};
use candle_nn::Optimizer;

/// RMSProp's settings (the public code's ρ = 0.9, ε = 1e-9).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RmsPropParams {
    /// Learning rate η.
    pub lr: f64,
    /// Decay ρ of the squared-gradient average.
    pub rho: f64,
    /// ε under the square root.
    pub eps: f64,
}

impl Default for RmsPropParams {
    fn default() -> Self {
        Self {
            lr: 1e-3,
            rho: 0.9,
            eps: 1e-9,
        }
    }
}

/// The optimiser's state: each variable with its squared-gradient average.
pub struct RmsProp {
    vars: Vec<(Var, Tensor)>,
    params: RmsPropParams,
}

impl RmsProp {
    /// The variables it steps, in a fixed order.
    pub fn vars(&self) -> impl Iterator<Item = &Var> {
        self.vars.iter().map(|(v, _)| v)
    }
}

impl Optimizer for RmsProp {
    type Config = RmsPropParams;

    fn new(vars: Vec<Var>, params: RmsPropParams) -> Result<Self> {
        let vars = vars
            .into_iter()
            .map(|v| {
                let z = v.as_tensor().zeros_like()?;
                Ok((v, z))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { vars, params })
    }

    fn step(&mut self, grads: &GradStore) -> Result<()> {
        let p = self.params;
        for (var, acc) in &mut self.vars {
            if let Some(g) = grads.get(var.as_tensor()) {
                let a = ((&*acc * p.rho)? + (g.sqr()? * (1.0 - p.rho))?)?;
                let denom = (&a + p.eps)?.sqrt()?;
                let next = (var.as_tensor() - ((g / denom)? * p.lr)?)?;
                var.set(&next)?;
                *acc = a;
            }
        }
        Ok(())
    }

    fn learning_rate(&self) -> f64 {
        self.params.lr
    }

    fn set_learning_rate(&mut self, lr: f64) {
        self.params.lr = lr;
    }
}
