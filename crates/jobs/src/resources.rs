//! The resource vector every node, task and job is measured in: CPU cores, GPUs and memory in
//! GB, the three resources EdgeTuner's nodes and tasks carry (its problem formulation, "State").

use serde::Serialize;

/// Index of CPU cores in a [`Res`]'s array form.
pub(crate) const CPU: usize = 0;
/// Index of GPUs.
pub(crate) const GPU: usize = 1;
/// Index of memory, GB.
pub(crate) const MEM: usize = 2;
/// The resource names, in index order, as topology files write them.
pub(crate) const NAMES: [&str; 3] = ["cpu", "gpu", "mem_gb"];

/// An amount of each resource: CPU cores, GPUs (fractions allowed: a share of a device) and
/// memory, GB.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Res {
    /// CPU cores.
    pub cpu: f64,
    /// GPUs.
    pub gpu: f64,
    /// Memory, GB.
    pub mem_gb: f64,
}

impl Res {
    /// Nothing of anything.
    pub const ZERO: Res = Res {
        cpu: 0.0,
        gpu: 0.0,
        mem_gb: 0.0,
    };

    /// A vector from its three amounts.
    pub const fn new(cpu: f64, gpu: f64, mem_gb: f64) -> Self {
        Self { cpu, gpu, mem_gb }
    }

    /// The amounts in index order ([`CPU`], [`GPU`], [`MEM`]).
    #[inline]
    pub(crate) fn arr(&self) -> [f64; 3] {
        [self.cpu, self.gpu, self.mem_gb]
    }

    /// The vector of an array in index order.
    #[inline]
    pub(crate) fn from_arr(a: [f64; 3]) -> Self {
        Self::new(a[CPU], a[GPU], a[MEM])
    }

    /// `self + o`, resource by resource.
    #[inline]
    pub(crate) fn add(&self, o: &Res) -> Res {
        Res::new(self.cpu + o.cpu, self.gpu + o.gpu, self.mem_gb + o.mem_gb)
    }

    /// `self − o`, resource by resource.
    #[inline]
    pub(crate) fn sub(&self, o: &Res) -> Res {
        Res::new(self.cpu - o.cpu, self.gpu - o.gpu, self.mem_gb - o.mem_gb)
    }

    /// Whether every amount of `self` is at most that of `o` (within a rounding tolerance, so
    /// that a node filled exactly by sums of fractions still fits the last one).
    #[inline]
    pub(crate) fn fits_in(&self, o: &Res) -> bool {
        const EPS: f64 = 1e-9;
        self.cpu <= o.cpu + EPS && self.gpu <= o.gpu + EPS && self.mem_gb <= o.mem_gb + EPS
    }

    /// The larger amount of each resource.
    #[inline]
    pub(crate) fn max(&self, o: &Res) -> Res {
        Res::new(
            self.cpu.max(o.cpu),
            self.gpu.max(o.gpu),
            self.mem_gb.max(o.mem_gb),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_and_fit() {
        let a = Res::new(1.0, 0.5, 2.0);
        let b = Res::new(2.0, 0.5, 4.0);
        assert_eq!(a.add(&b), Res::new(3.0, 1.0, 6.0));
        assert_eq!(b.sub(&a), Res::new(1.0, 0.0, 2.0));
        assert!(a.fits_in(&b));
        assert!(!b.fits_in(&a));
        assert_eq!(Res::from_arr(a.arr()), a);
        assert_eq!(a.max(&Res::new(0.0, 1.0, 0.0)), Res::new(1.0, 1.0, 2.0));
        // Three thirds fill one core.
        let third = Res::new(1.0 / 3.0, 0.0, 0.0);
        let used = third.add(&third);
        assert!(third.fits_in(&Res::new(1.0, 0.0, 0.0).sub(&used)));
    }
}
