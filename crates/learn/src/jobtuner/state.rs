//! EdgeTuner's state ("State"): per node the 9-tuple (CPU, memory and GPU each used, requested
//! and capacity), the first waiting tasks as 7-tuples (CPU request and limit, memory request
//! and limit, GPUs, work, job) and running tasks as 6-tuples (work, node, CPU limit, GPUs,
//! elapsed time, job), and the last `history` such states stacked ("history length 8").
//!
//! Scaling (ours; the paper gives raw values): CPU, memory and GPU amounts over the largest
//! node's capacity of that resource; work and times as ln(1 + x) / 10 (x in CPU-seconds and
//! seconds: 1 hour ≈ 0.82); a node as its index over the node count; a job as the rank of its
//! first appearance among the tuples over their count (the paper's job ID says which tasks
//! belong together; a raw ID's size means nothing). An absent tuple is all zeros. The running
//! tasks shown are the longest-running ones (the tail eq. 4 rewards).

use continuum_jobs::Nodes;
use continuum_jobs::sim::Observation;
use std::collections::VecDeque;

/// Features of one state of `nodes` nodes with `waiting` and `running` task tuples.
pub(crate) fn features(nodes: usize, waiting: usize, running: usize) -> usize {
    9 * nodes + 7 * waiting + 6 * running
}

/// Turns observations into the network's input.
#[derive(Debug, Clone)]
pub(crate) struct Encoder {
    nodes: usize,
    waiting: usize,
    running: usize,
    history: usize,
    /// The largest node's CPU, memory and GPU (1 where no node has any).
    scale: [f64; 3],
    /// The last `history` feature vectors, oldest first.
    past: VecDeque<Vec<f32>>,
}

/// The rank of `job`'s first appearance in `seen` (adding it), over `of`.
fn rank(seen: &mut Vec<u32>, job: u32, of: usize) -> f32 {
    let r = seen.iter().position(|&j| j == job).unwrap_or_else(|| {
        seen.push(job);
        seen.len() - 1
    });
    r as f32 / of.max(1) as f32
}

fn log_time(x: f64) -> f32 {
    ((1.0 + x.max(0.0)).ln() / 10.0) as f32
}

impl Encoder {
    /// An encoder for `nodes` with `waiting` and `running` tuples and `history` states.
    pub(crate) fn new(nodes: &Nodes, waiting: usize, running: usize, history: usize) -> Self {
        let max = |f: fn(&continuum_jobs::Node) -> f64| {
            let m = nodes.nodes().iter().map(f).fold(0.0, f64::max);
            if m > 0.0 { m } else { 1.0 }
        };
        Self {
            nodes: nodes.len(),
            waiting,
            running,
            history,
            scale: [
                max(|n| n.capacity.cpu),
                max(|n| n.capacity.mem_gb),
                max(|n| n.capacity.gpu),
            ],
            past: VecDeque::with_capacity(history),
        }
    }

    /// Floats per window.
    pub(crate) fn features(&self) -> usize {
        features(self.nodes, self.waiting, self.running)
    }

    /// One window's features.
    fn encode(&self, o: &Observation) -> Vec<f32> {
        let [cpu, mem, gpu] = self.scale;
        let mut v = Vec::with_capacity(self.features());
        for n in &o.nodes {
            v.extend(n.cpu.iter().map(|x| (x / cpu) as f32));
            v.extend(n.mem.iter().map(|x| (x / mem) as f32));
            v.extend(n.gpu.iter().map(|x| (x / gpu) as f32));
        }
        let mut seen: Vec<u32> = Vec::new();
        for k in 0..self.waiting {
            match o.waiting.get(k) {
                Some(t) => v.extend([
                    (t.request.cpu / cpu) as f32,
                    (t.limit.cpu.max(t.request.cpu) / cpu) as f32,
                    (t.request.mem_gb / mem) as f32,
                    (t.limit.mem_gb.max(t.request.mem_gb) / mem) as f32,
                    (t.request.gpu / gpu) as f32,
                    log_time(t.work_cpu_s),
                    rank(&mut seen, t.job, self.waiting),
                ]),
                None => v.extend([0.0; 7]),
            }
        }
        seen.clear();
        let n_nodes = self.nodes.max(1) as f32;
        for k in 0..self.running {
            match o.running.get(k) {
                Some(t) => v.extend([
                    log_time(t.work_cpu_s),
                    t.node as f32 / n_nodes,
                    (t.cpu / cpu) as f32,
                    (t.gpu / gpu) as f32,
                    log_time(t.elapsed_s),
                    rank(&mut seen, t.job, self.running),
                ]),
                None => v.extend([0.0; 6]),
            }
        }
        debug_assert_eq!(v.len(), self.features());
        v
    }

    /// Adds `o` as the newest window and returns the state: feature-major (`[f × history + h]`,
    /// the network's layout), h = history − 1 the newest, zeros before the episode's start.
    pub(crate) fn push(&mut self, o: &Observation) -> Vec<f32> {
        if self.past.len() == self.history {
            self.past.pop_front();
        }
        self.past.push_back(self.encode(o));
        let (f, h) = (self.features(), self.history);
        let mut s = vec![0.0f32; f * h];
        let offset = h - self.past.len();
        for (i, w) in self.past.iter().enumerate() {
            for (k, &x) in w.iter().enumerate() {
                s[k * h + offset + i] = x;
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_jobs::sim::{NodeView, RunningView, WaitingView};
    use continuum_jobs::{Node, Res};

    fn two_nodes() -> Nodes {
        Nodes::new(vec![
            Node {
                cluster: None,
                capacity: Res::new(8.0, 2.0, 32.0),
                speed: 1.0,
            },
            Node {
                cluster: None,
                capacity: Res::new(4.0, 0.0, 16.0),
                speed: 1.0,
            },
        ])
        .unwrap()
    }

    #[test]
    fn a_state_holds_the_papers_tuples_scaled_and_stacked() {
        let nodes = two_nodes();
        let mut e = Encoder::new(&nodes, 2, 1, 3);
        assert_eq!(e.features(), 18 + 14 + 6);
        let o = Observation {
            nodes: vec![
                NodeView {
                    cpu: [4.0, 2.0, 8.0],
                    mem: [8.0, 8.0, 32.0],
                    gpu: [1.0, 1.0, 2.0],
                },
                NodeView::default(),
            ],
            waiting: vec![WaitingView {
                request: Res::new(2.0, 1.0, 4.0),
                limit: Res::ZERO,
                work_cpu_s: 0.0,
                job: 7,
                waited_s: 3.0,
            }],
            running: vec![RunningView {
                work_cpu_s: 0.0,
                node: 1,
                cpu: 4.0,
                gpu: 0.0,
                elapsed_s: 0.0,
                job: 9,
            }],
            ..Observation::default()
        };
        let s = e.push(&o);
        assert_eq!(s.len(), e.features() * 3);
        let h = 3;
        let at = |s: &[f32], f: usize, k: usize| s[f * h + k];
        // Newest window last; the two before the start are zeros.
        assert_eq!((at(&s, 0, 0), at(&s, 0, 1), at(&s, 0, 2)), (0.0, 0.0, 0.5));
        assert_eq!(at(&s, 2, 2), 1.0); // cpu capacity 8 of the largest 8
        assert_eq!(at(&s, 8, 2), 1.0); // gpu capacity 2 of 2
        // The waiting tuple: request 2 of 8 cores, limit raised to the request, mem 4 of 32,
        // 1 GPU of 2, job rank 0; the absent second tuple is zeros.
        let w = 18;
        let tuple: Vec<f32> = (w..w + 7).map(|f| at(&s, f, 2)).collect();
        assert_eq!(tuple, vec![0.25, 0.25, 0.125, 0.125, 0.5, 0.0, 0.0]);
        assert!((w + 7..w + 14).all(|f| at(&s, f, 2) == 0.0));
        // The running tuple: node 1 of 2, 4 of 8 cores.
        let r = 32;
        assert_eq!((at(&s, r + 1, 2), at(&s, r + 2, 2)), (0.5, 0.5));
        // A second push shifts the first window back.
        let s2 = e.push(&Observation {
            nodes: vec![NodeView::default(); 2],
            ..Observation::default()
        });
        assert_eq!((at(&s2, 0, 1), at(&s2, 0, 2)), (0.5, 0.0));
    }
}
