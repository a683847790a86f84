//! BINPACKING (Kubernetes' `MostAllocated` node scoring, as OGASched's §4 defines it: "it
//! scores the computing instances based on the utilization of resources, favoring the ones with
//! higher allocation"). The ports that have a job this slot are served in index order; each
//! job's whole request a_l goes to **one** instance — [`BinPacking::scored`], `binpacking`:
//!
//! 1. filter (kube-scheduler's `NodeResourcesFit`): the port's linked instances whose free
//!    capacity holds every resource of the request;
//! 2. score (`NodeResourcesFit` with the `MostAllocated` strategy, every resource weight 1):
//!    score(r) = (1/K) Σ_k (c_r^k − free_r^k + a_l^k) / c_r^k, a resource the instance lacks
//!    (c_r^k = 0) scoring 0;
//! 3. the highest score takes the request (ties: the lower instance index; kube-scheduler
//!    breaks ties at random).
//!
//! When no linked instance holds the whole request (kube-scheduler would leave the pod
//! pending), the best-scored linked instance gives min(a_l^k, free) of every resource — the
//! authors' prototype's fallback (the instance with the most left gives all it has), so that a
//! job is not dropped. [`super::Spreading`] is the same with `LeastAllocated` scoring.
//!
//! The ablation [`BinPacking::per_channel`] (`binpacking-per-channel`, this reproduction's
//! previous headline reading) gives each port min(a_l^k, free) on **every** channel (port,
//! instance) — what the polytope Y allows. The visiting order then cannot change what a port
//! gets, so it and `spreading-per-channel` allocate the same.
//!
//! Instances are those linked to the port: the authors' prototype looks at every node, which
//! allocates on pairs that the bipartite model does not have.

use super::Allocator;
use super::problem::{Allocation, Problem};

/// Most-allocated scoring: fuller instances first.
#[derive(Debug, Clone)]
pub struct BinPacking(Placer);

impl BinPacking {
    /// `binpacking`: one instance per job, chosen by `MostAllocated` scoring.
    pub fn scored() -> Self {
        Self(Placer::new(Reach::Scored(Score::MostAllocated)))
    }

    /// `binpacking-per-channel`: every channel up to the port's request (the ablation).
    pub fn per_channel() -> Self {
        Self(Placer::new(Reach::PerChannel))
    }
}

impl Allocator for BinPacking {
    fn name(&self) -> &'static str {
        match self.0.reach {
            Reach::Scored(_) => "binpacking",
            Reach::PerChannel => "binpacking-per-channel",
        }
    }

    fn allocate(&mut self, p: &Problem, demand: &[f64], out: &mut Allocation) {
        self.0.place(p, demand, out);
    }
}

/// kube-scheduler's two `NodeResourcesFit` scoring strategies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Score {
    /// (used + request) / capacity, averaged over the resources: favours fuller instances.
    MostAllocated,
    /// (free − request) / capacity, averaged over the resources: favours emptier instances.
    LeastAllocated,
}

impl Score {
    /// The score of placing request `a` (length K) on an instance with capacities `c` and
    /// free capacities `free`: the mean over the resources, each in [0, 1], a resource the
    /// instance lacks or cannot hold scoring 0 (kube-scheduler's rule).
    pub(crate) fn of(self, a: &[f64], c: &[f64], free: &[f64]) -> f64 {
        let per = a.iter().zip(c).zip(free).map(|((&a, &c), &f)| {
            if c <= 0.0 || a > f {
                return 0.0;
            }
            match self {
                Score::MostAllocated => (c - f + a) / c,
                Score::LeastAllocated => (f - a) / c,
            }
        });
        per.sum::<f64>() / a.len() as f64
    }
}

/// Where a job's request goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// One instance, the best by the score (the paper's reading).
    Scored(Score),
    /// Every channel (port, instance) up to the request (the ablation).
    PerChannel,
}

/// The placement rule BINPACKING and SPREADING share, and its scratch.
#[derive(Debug, Clone)]
pub(crate) struct Placer {
    reach: Reach,
    free: Vec<f64>,
    request: Vec<f64>,
    cap: Vec<f64>,
}

impl Placer {
    pub(crate) fn new(reach: Reach) -> Self {
        Self {
            reach,
            free: Vec::new(),
            request: Vec::new(),
            cap: Vec::new(),
        }
    }

    pub(crate) fn reach(&self) -> Reach {
        self.reach
    }

    /// Serves the ports with demand in index order (see the module doc).
    pub(crate) fn place(&mut self, p: &Problem, demand: &[f64], out: &mut Allocation) {
        out.clear();
        p.fill_capacities(&mut self.free);
        let nk = p.resources();
        for l in (0..p.ports()).filter(|&l| demand[l] > 0.0) {
            self.request.clear();
            self.request.extend((0..nk).map(|k| p.request(l, k)));
            match self.reach {
                Reach::PerChannel => {
                    for &e in p.port_links(l) {
                        self.give(p, e, out);
                    }
                }
                Reach::Scored(score) => {
                    if let Some(e) = self.choose(p, l, score) {
                        self.give(p, e, out);
                    }
                }
            }
        }
    }

    /// The link of port `l` whose instance takes the job: the best score among those that
    /// hold the whole request, else the best score among all (ties: the lower instance).
    fn choose(&mut self, p: &Problem, l: usize, score: Score) -> Option<usize> {
        let nk = p.resources();
        let links = p.links();
        let mut best_fit: Option<(f64, usize)> = None;
        let mut best_any: Option<(f64, usize)> = None;
        for &e in p.port_links(l) {
            let r = links[e].instance;
            let free = &self.free[r * nk..(r + 1) * nk];
            self.cap.clear();
            self.cap.extend((0..nk).map(|k| p.capacity(r, k)));
            let s = score.of(&self.request, &self.cap, free);
            let fits = self.request.iter().zip(free).all(|(&a, &f)| a <= f);
            if fits && best_fit.is_none_or(|(b, _)| s > b) {
                best_fit = Some((s, e));
            }
            if best_any.is_none_or(|(b, _)| s > b) {
                best_any = Some((s, e));
            }
        }
        best_fit.or(best_any).map(|(_, e)| e)
    }

    /// Link `e` takes min(request, free) of every resource.
    fn give(&mut self, p: &Problem, e: usize, out: &mut Allocation) {
        let nk = p.resources();
        let r = p.links()[e].instance;
        for k in 0..nk {
            let f = &mut self.free[r * nk + k];
            let take = self.request[k].min(*f);
            if take > 0.0 {
                out.set(e, k, take);
                *f -= take;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::tests::two_by_two;

    #[test]
    fn kube_scores_match_the_formulas() {
        // c = (10, 4), free = (6, 4), a = (2, 1): most = ((10−6+2)/10 + (4−4+1)/4) / 2.
        let (a, c, f) = ([2.0, 1.0], [10.0, 4.0], [6.0, 4.0]);
        let most = Score::MostAllocated.of(&a, &c, &f);
        assert!((most - (0.6 + 0.25) / 2.0).abs() < 1e-12);
        let least = Score::LeastAllocated.of(&a, &c, &f);
        assert!((least - (0.4 + 0.75) / 2.0).abs() < 1e-12);
        // A resource the instance lacks, or cannot hold, scores 0.
        assert_eq!(Score::MostAllocated.of(&[1.0], &[0.0], &[0.0]), 0.0);
        assert_eq!(Score::LeastAllocated.of(&[5.0], &[4.0], &[4.0]), 0.0);
    }

    #[test]
    fn the_most_allocated_instance_that_holds_the_job_takes_it_all() {
        // Port 0 (a = 2) has only instance 0 (c = 7): it takes 2 there (5 left, 2/7 used).
        // Port 1 (a = 3) fits on instance 0 (score (2 + 3)/7 = 0.714) and on instance 1
        // (c = 4, score 3/4 = 0.75): the fuller after placing, instance 1, takes all 3.
        let p = two_by_two(&[2.0, 3.0], &[7.0, 4.0]);
        let mut y = Allocation::zeros(&p);
        BinPacking::scored().allocate(&p, &[1.0, 1.0], &mut y);
        // Links: 0 = (port 0, inst 0), 1 = (port 1, inst 0), 2 = (port 1, inst 1).
        assert_eq!(y.values(), &[2.0, 0.0, 3.0]);
        // SPREADING: the emptier after placing, instance 0 ((5 − 3)/7 = 0.29 against
        // (4 − 3)/4 = 0.25).
        let mut z = Allocation::zeros(&p);
        crate::alloc::Spreading::scored().allocate(&p, &[1.0, 1.0], &mut z);
        assert_eq!(z.values(), &[2.0, 3.0, 0.0]);
        p.check_feasible(&z, Some(&[1.0, 1.0]), 0.0).unwrap();
    }

    #[test]
    fn a_job_no_instance_holds_gets_what_the_best_scored_one_has() {
        // Port 1 asks 5; after port 0's 2, instance 0 has 4 free of 6, instance 1 4 of 4.
        // Neither holds 5; both score 0 (cannot hold), so the lower index gives its 4.
        let p = two_by_two(&[2.0, 5.0], &[6.0, 4.0]);
        let mut y = Allocation::zeros(&p);
        BinPacking::scored().allocate(&p, &[1.0, 1.0], &mut y);
        assert_eq!(y.values(), &[2.0, 4.0, 0.0]);
        p.check_feasible(&y, Some(&[1.0, 1.0]), 0.0).unwrap();
    }

    #[test]
    fn the_per_channel_ablation_takes_up_to_the_request_on_every_channel() {
        // Port 0 (a = 2) first: 2 of instance 0 (c = 7). Port 1 (a = 5): 5 of the 5 left on
        // instance 0 and 4 of instance 1 (all it has).
        let p = two_by_two(&[2.0, 5.0], &[7.0, 4.0]);
        let mut y = Allocation::zeros(&p);
        BinPacking::per_channel().allocate(&p, &[1.0, 1.0], &mut y);
        assert_eq!(y.values(), &[2.0, 5.0, 4.0]);
        let mut z = Allocation::zeros(&p);
        crate::alloc::Spreading::per_channel().allocate(&p, &[1.0, 1.0], &mut z);
        assert_eq!(z.values(), y.values());
    }
}
