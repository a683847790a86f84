//! What a run records (docs/jobs.md, "What a run records"): each job's arrival, completion,
//! latency and mitigation counts; the run's job tail latency (JTL) statistics; the task counts
//! that must balance (conservation); the queue over time.

use serde::Serialize;

/// One job of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobRecord {
    /// Its index in the run's job list.
    pub id: u32,
    /// Index of its kind in the workload.
    pub kind: usize,
    /// When it arrived, s.
    pub arrival_s: f64,
    /// When it completed, s (`None`: still running at the end, or rejected).
    pub completion_s: Option<f64>,
    /// Its tasks.
    pub tasks: u32,
    /// Its tasks restarted by `restart@r`.
    pub restarted: u32,
    /// Its tasks discarded by `tdp@r` (running or waiting then).
    pub discarded: u32,
    /// Refused at arrival: a task of it fits no node even when empty.
    pub rejected: bool,
}

impl JobRecord {
    /// Its latency (JTL): completion minus arrival, s.
    pub fn latency_s(&self) -> Option<f64> {
        self.completion_s.map(|c| c - self.arrival_s)
    }
}

/// Statistics of job latencies, s (nearest-rank percentiles; all 0 with no job).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct LatencySummary {
    /// How many latencies.
    pub count: usize,
    /// Their mean.
    pub mean_s: f64,
    /// Median.
    pub p50_s: f64,
    /// 95th percentile.
    pub p95_s: f64,
    /// 99th percentile.
    pub p99_s: f64,
    /// The largest.
    pub max_s: f64,
}

impl LatencySummary {
    /// The statistics of `latencies` (any order).
    pub fn of(latencies: &[f64]) -> Self {
        if latencies.is_empty() {
            return Self::default();
        }
        let mut v = latencies.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let rank = |p: f64| v[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
        Self {
            count: n,
            mean_s: v.iter().sum::<f64>() / n as f64,
            p50_s: rank(0.50),
            p95_s: rank(0.95),
            p99_s: rank(0.99),
            max_s: v[n - 1],
        }
    }
}

/// Task counts of a run. Conservation: every attempt placed ends finished, restarted or
/// discarded, or is still running ([`Self::attempts_balance`]); every task created ends
/// finished or discarded, or is still pending, waiting or running ([`Self::tasks_balance`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct TaskCounts {
    /// Tasks of the jobs that were not rejected.
    pub created: u64,
    /// Tasks of rejected jobs (never queued).
    pub rejected: u64,
    /// Attempts placed on a node.
    pub placed: u64,
    /// Attempts that ran to completion.
    pub finished: u64,
    /// Attempts restarted by `restart@r`.
    pub restarted: u64,
    /// Attempts discarded while running by `tdp@r`.
    pub discarded_running: u64,
    /// Tasks discarded while waiting by `tdp@r`.
    pub discarded_waiting: u64,
    /// Tasks whose parents had not all finished at the end.
    pub pending_at_end: u64,
    /// Tasks in the queue at the end.
    pub waiting_at_end: u64,
    /// Attempts running at the end.
    pub running_at_end: u64,
}

impl TaskCounts {
    /// placed = finished + restarted + discarded while running + running at the end.
    pub fn attempts_balance(&self) -> bool {
        self.placed == self.finished + self.restarted + self.discarded_running + self.running_at_end
    }

    /// created = finished + discarded + pending + waiting + running at the end.
    pub fn tasks_balance(&self) -> bool {
        self.created
            == self.finished
                + self.discarded_running
                + self.discarded_waiting
                + self.pending_at_end
                + self.waiting_at_end
                + self.running_at_end
    }
}

/// The queue at the end of one window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct QueueSample {
    /// The window's end, s.
    pub t_s: f64,
    /// Tasks waiting to be placed.
    pub waiting: u64,
    /// Attempts running.
    pub running: u64,
    /// Share of the nodes' cores requested by running attempts.
    pub cpu_allocated: f64,
}

/// Everything a run records.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The placement configuration's name.
    pub placement: String,
    /// The mitigation's name.
    pub mitigation: String,
    /// The run's seed.
    pub seed: u64,
    /// When the run stopped, s.
    pub end_s: f64,
    /// Every job, in id order.
    pub jobs: Vec<JobRecord>,
    /// JTL statistics over the completed jobs.
    pub jtl: LatencySummary,
    /// Jobs that arrived.
    pub jobs_arrived: usize,
    /// Jobs that completed.
    pub jobs_completed: usize,
    /// Jobs refused at arrival.
    pub jobs_rejected: usize,
    /// Jobs neither completed nor rejected at the end.
    pub jobs_unfinished: usize,
    /// Task counts.
    pub tasks: TaskCounts,
    /// The queue at the end of every window.
    pub queue: Vec<QueueSample>,
    /// Last completion minus first arrival over the completed jobs, s (EdgeTuner's makespan).
    pub makespan_s: Option<f64>,
}

impl Report {
    /// JTL statistics over the completed jobs of kind `kind`.
    pub fn jtl_of_kind(&self, kind: usize) -> LatencySummary {
        let v: Vec<f64> = self
            .jobs
            .iter()
            .filter(|j| j.kind == kind)
            .filter_map(JobRecord::latency_s)
            .collect();
        LatencySummary::of(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = LatencySummary::of(&v);
        assert_eq!(
            (s.count, s.p50_s, s.p95_s, s.p99_s, s.max_s),
            (100, 50.0, 95.0, 99.0, 100.0)
        );
        assert_eq!(s.mean_s, 50.5);
        let one = LatencySummary::of(&[7.0]);
        assert_eq!((one.p50_s, one.p99_s), (7.0, 7.0));
        assert_eq!(LatencySummary::of(&[]), LatencySummary::default());
    }
}
