//! DeepRM's cluster environment (Mao et al., HotNets 2016, §2–3 and its public code): d resource
//! types of `res_slot` units each, jobs with a demand vector and a duration arriving online into
//! `num_nw` visible slots and a backlog, no preemption. Time is frozen while the agent places
//! jobs; the void action, an empty slot or a job that fits nowhere in the horizon advances it by
//! one step ("move on"), which is when rewards are paid.

use super::objective::{Objective, StepFacts};
use continuum_core::rng::SimRng;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The environment's sizes and its job distribution (defaults: DeepRM's public code).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EnvParams {
    /// Resource types d.
    pub num_res: usize,
    /// Visible job slots M (the action space is the void action and these).
    pub num_nw: usize,
    /// Timesteps of the images T.
    pub time_horizon: usize,
    /// Units of each resource.
    pub res_slot: u32,
    /// Largest demand of a job for one resource, units.
    pub max_job_size: u32,
    /// Largest duration of a job, timesteps.
    pub max_job_len: u32,
    /// Backlog capacity, jobs (beyond it an arriving job is dropped and counted).
    pub backlog_size: usize,
    /// Timesteps during which jobs arrive (the length of a jobset).
    pub simu_len: usize,
    /// A job arrives at a timestep with this probability (at most one per step).
    pub new_job_rate: f64,
    /// Share of short jobs (duration 1..=max_job_len/5; long ones 2/3·max_job_len..=max_job_len).
    pub small_job_chance: f64,
    /// Timesteps tracked since the last arrival (the image's last column saturates there).
    pub max_track_since_new: u32,
    /// Timesteps after which an `AllDone` episode stops even with jobs left.
    pub episode_max_length: usize,
}

impl Default for EnvParams {
    fn default() -> Self {
        // DeepRM public code (parameters.py) and the paper's §4 setting: 2 resources of 10
        // units, 5 visible slots, 20-step images, jobs of up to 15 steps, backlog of 60, 80 %
        // short jobs, jobsets of 50 steps.
        Self {
            num_res: 2,
            num_nw: 5,
            time_horizon: 20,
            res_slot: 10,
            max_job_size: 10,
            max_job_len: 15,
            backlog_size: 60,
            simu_len: 50,
            new_job_rate: 0.3,
            small_job_chance: 0.8,
            max_track_since_new: 10,
            episode_max_length: 200,
        }
    }
}

impl EnvParams {
    /// Width of the backlog block of the image.
    pub fn backlog_width(&self) -> usize {
        self.backlog_size.div_ceil(self.time_horizon)
    }

    /// Columns of the image: per resource the cluster block and one block per slot, then the
    /// backlog block and the time-since-last-arrival column.
    pub fn image_width(&self) -> usize {
        (self.res_slot as usize + self.max_job_size as usize * self.num_nw) * self.num_res
            + self.backlog_width()
            + 1
    }

    /// Length of an observation vector (the image, row-major).
    pub fn input_len(&self) -> usize {
        self.image_width() * self.time_horizon
    }

    /// Actions: the void action (index `num_nw`) and one per slot.
    pub fn actions(&self) -> usize {
        self.num_nw + 1
    }

    /// Expected offered load per resource: rate × E[duration × demand] / units (the paper's
    /// x-axis "cluster load"; demand and duration are drawn independently).
    pub fn load(&self) -> f64 {
        let (s_lo, s_hi, l_lo, l_hi) = self.len_ranges();
        let mean_len = self.small_job_chance * f64::from(s_lo + s_hi) / 2.0
            + (1.0 - self.small_job_chance) * f64::from(l_lo + l_hi) / 2.0;
        let (d_lo, d_hi, o_lo, o_hi) = self.size_ranges();
        let dom = f64::from(d_lo + d_hi) / 2.0;
        let other = f64::from(o_lo + o_hi) / 2.0;
        let k = self.num_res as f64;
        let mean_size = (dom + (k - 1.0) * other) / k;
        self.new_job_rate * mean_len * mean_size / f64::from(self.res_slot)
    }

    /// The arrival rate that offers `load` (inverse of [`EnvParams::load`]).
    pub fn rate_for_load(&self, load: f64) -> f64 {
        let unit = EnvParams {
            new_job_rate: 1.0,
            ..*self
        };
        load / unit.load()
    }

    fn len_ranges(&self) -> (u32, u32, u32, u32) {
        let short_hi = (self.max_job_len / 5).max(1);
        let long_lo = (self.max_job_len * 2 / 3).max(short_hi + 1);
        (1, short_hi, long_lo, self.max_job_len)
    }

    fn size_ranges(&self) -> (u32, u32, u32, u32) {
        let dom_lo = (self.max_job_size / 2).max(1);
        let other_hi = (self.max_job_size / 5).max(1);
        (dom_lo, self.max_job_size, 1, other_hi)
    }

    /// Checks the sizes, naming the first bad field.
    pub fn validate(&self) -> Result<(), String> {
        let bad = |f: &str, want: &str| Err(format!("deeprm environment: `{f}`: expected {want}"));
        if !(1..=8).contains(&self.num_res) {
            return bad("num_res", "1 to 8");
        }
        if self.num_nw == 0 {
            return bad("num_nw", "at least 1");
        }
        if self.time_horizon < 2 {
            return bad("time_horizon", "at least 2");
        }
        if self.max_job_len as usize >= self.time_horizon || self.max_job_len < 1 {
            return bad("max_job_len", "1 to time_horizon − 1");
        }
        if self.res_slot == 0 || self.max_job_size == 0 || self.max_job_size > self.res_slot {
            return bad("max_job_size", "1 to res_slot (both positive)");
        }
        if self.simu_len == 0 {
            return bad("simu_len", "at least 1");
        }
        if !(0.0..=1.0).contains(&self.new_job_rate) {
            return bad("new_job_rate", "a probability in [0, 1]");
        }
        if !(0.0..=1.0).contains(&self.small_job_chance) {
            return bad("small_job_chance", "a probability in [0, 1]");
        }
        if self.episode_max_length < self.simu_len {
            return bad("episode_max_length", "at least simu_len");
        }
        Ok(())
    }

    /// One job drawn from the bimodal distribution: duration short or long, one dominant
    /// resource of 1/2..=1 of `max_job_size`, the others 1..=max_job_size/5.
    pub fn draw_job(&self, rng: &mut SimRng) -> (u32, Vec<u32>) {
        let (s_lo, s_hi, l_lo, l_hi) = self.len_ranges();
        let len = if rng.random::<f64>() < self.small_job_chance {
            rng.random_range(s_lo..=s_hi)
        } else {
            rng.random_range(l_lo..=l_hi)
        };
        let (d_lo, d_hi, o_lo, o_hi) = self.size_ranges();
        let dom = rng.random_range(0..self.num_res);
        let res = (0..self.num_res)
            .map(|r| {
                if r == dom {
                    rng.random_range(d_lo..=d_hi)
                } else {
                    rng.random_range(o_lo..=o_hi)
                }
            })
            .collect();
        (len, res)
    }

    /// A jobset: for each of `simu_len` timesteps, the job arriving then, if any.
    pub fn jobset(&self, rng: &mut SimRng) -> JobSet {
        (0..self.simu_len)
            .map(|_| (rng.random::<f64>() < self.new_job_rate).then(|| self.draw_job(rng)))
            .collect()
    }
}

/// A jobset: the (duration, demand) of the job arriving at each timestep, if any.
pub type JobSet = Vec<Option<(u32, Vec<u32>)>>;

/// When an episode ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum End {
    /// When the jobset's last timestep has passed (training episodes, as in the public code).
    NoNewJob,
    /// When every job has finished, or at `episode_max_length` (evaluation).
    AllDone,
}

/// A job in the system.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// Duration T_j, timesteps.
    pub len: u32,
    /// Demand per resource, units.
    pub res: Vec<u32>,
    /// Arrival time.
    pub enter: u32,
    /// Finish time once placed.
    pub finish: Option<u32>,
}

/// The outcome of one action.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// Reward of the action (nonzero only when time moved on).
    pub reward: f64,
    /// Whether the action placed a job (otherwise time moved on).
    pub placed: bool,
    /// Whether the episode is over.
    pub done: bool,
}

/// The environment: one jobset being scheduled.
#[derive(Debug, Clone)]
pub struct Env {
    /// Its sizes.
    pub p: EnvParams,
    jobs: JobSet,
    end: End,
    objective: Objective,
    /// Free units per (future timestep, resource), row-major.
    avail: Vec<u32>,
    running: Vec<Job>,
    slots: Vec<Option<Job>>,
    backlog: VecDeque<Job>,
    time: u32,
    seq_idx: usize,
    since_new: u32,
    /// Jobs that finished (or are placed, with their finish time) when the episode ended.
    pub done_jobs: Vec<Job>,
    /// Jobs dropped because the backlog was full.
    pub dropped: u32,
    used_units: u64,
}

impl Env {
    /// A fresh environment on `jobs` (its first job, if any, is waiting at time 0).
    pub fn new(p: EnvParams, jobs: JobSet, end: End, objective: Objective) -> Self {
        let mut e = Self {
            avail: vec![p.res_slot; p.time_horizon * p.num_res],
            slots: vec![None; p.num_nw],
            p,
            jobs,
            end,
            objective,
            running: Vec::new(),
            backlog: VecDeque::new(),
            time: 0,
            seq_idx: 0,
            since_new: p.max_track_since_new,
            done_jobs: Vec::new(),
            dropped: 0,
            used_units: 0,
        };
        e.arrive();
        e
    }

    /// The current timestep.
    pub fn time(&self) -> u32 {
        self.time
    }

    /// The job waiting in slot `i`, if any.
    pub fn slot(&self, i: usize) -> Option<&Job> {
        self.slots.get(i).and_then(Option::as_ref)
    }

    /// Free units of each resource at the current timestep.
    pub fn free_now(&self) -> &[u32] {
        &self.avail[..self.p.num_res]
    }

    /// Whether `job` fits at the current timestep.
    pub fn fits_now(&self, job: &Job) -> bool {
        job.res.iter().zip(self.free_now()).all(|(d, f)| d <= f)
    }

    /// The earliest offset within the horizon at which `job` fits for its whole duration.
    fn earliest_start(&self, job: &Job) -> Option<usize> {
        let (t_max, k) = (self.p.time_horizon, self.p.num_res);
        let len = job.len as usize;
        (0..t_max.saturating_sub(len))
            .find(|&t| (t..t + len).all(|s| (0..k).all(|r| self.avail[s * k + r] >= job.res[r])))
    }

    /// Whether action `a` would place a job (a nonempty slot whose job fits in the horizon).
    pub fn placeable(&self, a: usize) -> bool {
        self.slot(a)
            .is_some_and(|j| self.earliest_start(j).is_some())
    }

    /// Jobs in the system: placed and not finished, waiting in slots, in the backlog.
    pub fn in_system(&self) -> impl Iterator<Item = &Job> {
        self.running
            .iter()
            .chain(self.slots.iter().flatten())
            .chain(self.backlog.iter())
    }

    /// Jobs of the jobset that have not arrived yet (the next one due at `seq_idx`, checked
    /// before it arrives).
    fn yet_to_arrive(&self) -> usize {
        self.jobs.iter().skip(self.seq_idx).flatten().count()
    }

    /// Whether no job is left to arrive and none is left in the system.
    pub fn all_done(&self) -> bool {
        self.yet_to_arrive() == 0 && self.in_system().next().is_none()
    }

    /// Takes action `a` (`num_nw` or an unplaceable slot moves time on).
    pub fn step(&mut self, a: usize) -> Step {
        if a < self.p.num_nw
            && let Some(job) = self.slots[a].as_ref()
            && let Some(t0) = self.earliest_start(job)
        {
            let mut job = self.slots[a].take().unwrap_or_else(|| unreachable!());
            let k = self.p.num_res;
            for s in t0..t0 + job.len as usize {
                for r in 0..k {
                    self.avail[s * k + r] -= job.res[r];
                }
            }
            job.finish = Some(self.time + t0 as u32 + job.len);
            self.running.push(job);
            self.slots[a] = self.backlog.pop_front();
            return Step {
                reward: 0.0,
                placed: true,
                done: false,
            };
        }
        self.move_on()
    }

    fn move_on(&mut self) -> Step {
        let k = self.p.num_res;
        let used: u32 = self.avail[..k].iter().map(|f| self.p.res_slot - f).sum();
        self.used_units += u64::from(used);
        let used_share = f64::from(used) / (f64::from(self.p.res_slot) * k as f64);
        self.time += 1;
        self.avail.rotate_left(k);
        let n = self.avail.len();
        self.avail[n - k..].fill(self.p.res_slot);
        let t = self.time;
        let (finished, running): (Vec<Job>, Vec<Job>) = std::mem::take(&mut self.running)
            .into_iter()
            .partition(|j| j.finish.is_some_and(|f| f <= t));
        self.running = running;
        self.done_jobs.extend(finished);
        self.since_new = (self.since_new + 1).min(self.p.max_track_since_new);
        self.seq_idx += 1;
        let done = match self.end {
            End::NoNewJob => self.seq_idx >= self.p.simu_len,
            End::AllDone => self.all_done() || self.time as usize > self.p.episode_max_length,
        };
        if !done {
            self.arrive();
        }
        let facts = StepFacts {
            jobs: self.in_system().count(),
            inverse_lengths: self.in_system().map(|j| 1.0 / f64::from(j.len)).sum(),
            used_share,
            past_twice: self
                .in_system()
                .filter(|j| t - j.enter == 2 * j.len)
                .count(),
        };
        let reward = self.objective.reward(&facts);
        Step {
            reward,
            placed: false,
            done,
        }
    }

    fn arrive(&mut self) {
        let Some(Some((len, res))) = self.jobs.get(self.seq_idx).cloned() else {
            return;
        };
        self.since_new = 0;
        let job = Job {
            len,
            res,
            enter: self.time,
            finish: None,
        };
        if let Some(free) = self.slots.iter_mut().find(|s| s.is_none()) {
            *free = Some(job);
        } else if self.backlog.len() < self.p.backlog_size {
            self.backlog.push_back(job);
        } else {
            self.dropped += 1;
        }
    }

    /// Writes the observation image (row-major, `time_horizon` rows) into `out`: per resource
    /// the cluster's occupied units over the next T steps, then each slot's job as a block of
    /// its duration × demand; the backlog's length as filled cells; the time since the last
    /// arrival as a share of `max_track_since_new`. Occupancy is binary (the public code colours
    /// cells by job; the count of occupied cells, all a policy can use, is the same).
    pub fn observe(&self, out: &mut Vec<f32>) {
        let p = &self.p;
        let (w, k) = (p.image_width(), p.num_res);
        out.clear();
        out.resize(p.input_len(), 0.0);
        let mut col = 0;
        for r in 0..k {
            for t in 0..p.time_horizon {
                let used = (p.res_slot - self.avail[t * k + r]) as usize;
                out[t * w + col..t * w + col + used].fill(1.0);
            }
            col += p.res_slot as usize;
            for s in &self.slots {
                if let Some(j) = s {
                    for t in 0..j.len as usize {
                        out[t * w + col..t * w + col + j.res[r] as usize].fill(1.0);
                    }
                }
                col += p.max_job_size as usize;
            }
        }
        let bw = p.backlog_width();
        for i in 0..self.backlog.len() {
            out[(i / bw) * w + col + i % bw] = 1.0;
        }
        col += bw;
        let since = self.since_new as f32 / p.max_track_since_new.max(1) as f32;
        for t in 0..p.time_horizon {
            out[t * w + col] = since;
        }
    }

    /// The episode's figures (jobs still in the system count as unfinished).
    pub fn summary(&self) -> EpisodeSummary {
        // A job still in the system counts with the earliest completion it can still have: its
        // finish time if placed, else now plus its duration (a lower bound, so a scheduler that
        // leaves jobs waiting at the end is never flattered by their absence).
        let now = self.time;
        let completions: Vec<(f64, f64)> = self
            .done_jobs
            .iter()
            .chain(self.in_system())
            .map(|j| {
                let c = j.finish.unwrap_or(now + j.len) - j.enter;
                (f64::from(c), f64::from(c) / f64::from(j.len))
            })
            .collect();
        let cap = f64::from(self.p.res_slot) * self.p.num_res as f64 * f64::from(self.time.max(1));
        EpisodeSummary {
            slowdowns: completions.iter().map(|c| c.1).collect(),
            completion: completions.iter().map(|c| c.0).collect(),
            utilisation: self.used_units as f64 / cap,
            makespan: self.time,
            unfinished: (self.in_system().count() + self.yet_to_arrive()) as u32 + self.dropped,
        }
    }
}

/// What an episode achieved.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EpisodeSummary {
    /// Slowdown (C_j − arrival) / T_j of every job that arrived and was not dropped (for one
    /// left in the system, its earliest possible C_j).
    pub slowdowns: Vec<f64>,
    /// Completion time C_j − arrival of the same jobs.
    pub completion: Vec<f64>,
    /// Used resource-time over capacity × episode length.
    pub utilisation: f64,
    /// Timesteps until the episode ended.
    pub makespan: u32,
    /// Jobs left in the system or dropped.
    pub unfinished: u32,
}
