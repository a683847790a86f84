//! One scheduling step: the queue's waiting tasks offered to the placement. At task level
//! (kube-scheduler) every task in queue order, each placed or left waiting on its own; at job
//! level (Volcano) the jobs with waiting tasks in the placement's job order, each job's waiting
//! tasks together (all or none under gang). A task whose request exceeds the most any node has
//! free, resource by resource, is passed over without scoring. Under DeepRM's queue order
//! (`QueueOrder::Visible`) a task-level step sees only the tasks in its visible slots.

use super::state::{Sim, TaskState};
use crate::placement::volcano::{JobView, Need};
use crate::placement::{Level, QueueOrder, VisibleScore};
use crate::resources::Res;

/// No rank: a job not in this step's queue.
const UNRANKED: u32 = u32::MAX;

impl Sim<'_> {
    /// Places what it can of the queue at `t`; returns how many attempts it started.
    pub(super) fn schedule(&mut self, t: f64) -> usize {
        let tasks = &self.tasks;
        self.waiting
            .retain(|&id| tasks[id as usize].state == TaskState::Waiting);
        let placed = match (self.placement.level(), self.placement.queue_order()) {
            (Level::Task, QueueOrder::Visible { slots, score }) => {
                self.schedule_visible(t, slots, score)
            }
            (Level::Task, QueueOrder::Fifo) => {
                self.visible.clear();
                self.schedule_tasks(t)
            }
            (Level::Job, _) => self.schedule_jobs(t),
        };
        if placed > 0 {
            let tasks = &self.tasks;
            self.waiting
                .retain(|&id| tasks[id as usize].state == TaskState::Waiting);
        }
        placed
    }

    /// The most free of each resource on any node.
    fn max_free(&self) -> Res {
        self.slots.iter().fold(Res::ZERO, |m, s| m.max(&s.free()))
    }

    /// The free amount of each resource summed over the nodes.
    fn free_total(&self) -> Res {
        self.slots.iter().fold(Res::ZERO, |m, s| m.add(&s.free()))
    }

    fn schedule_tasks(&mut self, t: f64) -> usize {
        let queue = std::mem::take(&mut self.waiting);
        let mut max_free = self.max_free();
        let mut placed = 0;
        for &task in &queue {
            let (req, limit) = self.needs(task);
            if !req.fits_in(&max_free) {
                continue;
            }
            if let Some(n) = self.placement.choose(&self.slots, &req, &limit) {
                self.slots[n].used = self.slots[n].used.add(&req);
                self.start(task, n, t);
                placed += 1;
                max_free = self.max_free();
            }
        }
        self.waiting = queue;
        placed
    }

    /// DeepRM's step (docs/jobs.md, "DeepRM's environment as a special case"): the first
    /// waiting tasks sit in `m` slots (a slot emptied since the last step takes the first
    /// waiting task beyond them, lowest slot first); then, while some visible task fits, the
    /// one of best `score` (ties: the lower slot) is placed on the node the plugins choose and
    /// its slot takes the first waiting task beyond the slots (DeepRM's backlog front).
    fn schedule_visible(&mut self, t: f64, m: usize, score: VisibleScore) -> usize {
        let queue = std::mem::take(&mut self.waiting);
        if self.visible.len() != m {
            self.visible = vec![None; m];
        }
        let tasks = &self.tasks;
        for s in &mut self.visible {
            if s.is_some_and(|task| tasks[task as usize].state != TaskState::Waiting) {
                *s = None;
            }
        }
        let mut next = 0;
        for i in 0..m {
            if self.visible[i].is_none() {
                self.visible[i] = self.next_hidden(&queue, &mut next);
            }
        }
        let mut max_free = self.max_free();
        let mut placed = 0;
        while let Some((i, task, n)) = self.best_visible(score, &max_free) {
            let (req, _) = self.needs(task);
            self.slots[n].used = self.slots[n].used.add(&req);
            self.start(task, n, t);
            placed += 1;
            max_free = self.max_free();
            self.visible[i] = self.next_hidden(&queue, &mut next);
        }
        self.waiting = queue;
        placed
    }

    /// The first task of `queue` from `*next` on that is waiting and in no visible slot (the
    /// front of DeepRM's backlog); `*next` moves past it.
    fn next_hidden(&self, queue: &[u32], next: &mut usize) -> Option<u32> {
        while let Some(&task) = queue.get(*next) {
            *next += 1;
            if self.tasks[task as usize].state == TaskState::Waiting
                && !self.visible.contains(&Some(task))
            {
                return Some(task);
            }
        }
        None
    }

    /// The visible task of best `score` that passes the filter on some node: its slot, the
    /// task and the node the placement chooses for it (ties: the lower slot).
    fn best_visible(&self, score: VisibleScore, max_free: &Res) -> Option<(usize, u32, usize)> {
        let mut best: Option<(usize, u32, usize, f64)> = None;
        for (i, slot) in self.visible.iter().enumerate() {
            let Some(task) = *slot else { continue };
            let (req, limit) = self.needs(task);
            if !req.fits_in(max_free) {
                continue;
            }
            let Some(n) = self.placement.choose(&self.slots, &req, &limit) else {
                continue;
            };
            let v = score.value(&self.slots[n].free(), &req, self.nominal_s(task));
            if best.is_none_or(|b| v > b.3) {
                best = Some((i, task, n, v));
            }
        }
        best.map(|(i, task, n, _)| (i, task, n))
    }

    /// A task's run time on a node of speed 1 without a straggler's slowdown: work / its
    /// allocated cores (DeepRM's job length).
    fn nominal_s(&self, task: u32) -> f64 {
        let t = &self.tasks[task as usize];
        let stage = &self.specs[t.job as usize].stages[t.stage as usize];
        t.work_cpu_s / stage.allocated_cpu()
    }

    /// The jobs with waiting tasks, in the placement's job order; each job's rank set in
    /// `self.rank`.
    fn ranked_jobs(&mut self, queue: &[u32]) -> Vec<u32> {
        let mut views = Vec::new();
        for &task in queue {
            let j = self.tasks[task as usize].job;
            if self.rank[j as usize] == UNRANKED {
                self.rank[j as usize] = 0;
                let spec = &self.specs[j as usize];
                views.push(JobView {
                    id: j,
                    arrival_s: spec.arrival_s,
                    allocated: self.jobs[j as usize].allocated,
                    sla_waiting_s: spec.sla_waiting_s,
                });
            }
        }
        self.placement.order().sort(&self.nodes.total(), &mut views);
        for (r, v) in views.iter().enumerate() {
            self.rank[v.id as usize] = r as u32;
        }
        views.into_iter().map(|v| v.id).collect()
    }

    fn schedule_jobs(&mut self, t: f64) -> usize {
        let queue = std::mem::take(&mut self.waiting);
        let order = self.ranked_jobs(&queue);
        // The queue grouped by job in job order, each job's tasks in queue order (stable sort).
        let mut grouped: Vec<(u32, u32)> = queue
            .iter()
            .map(|&task| (task, self.tasks[task as usize].job))
            .collect();
        grouped.sort_by_key(|&(_, j)| self.rank[j as usize]);
        let mut max_free = self.max_free();
        let (mut placed, mut needs, mut out) = (0, Vec::new(), Vec::new());
        let gang = self.placement.gang();
        for group in grouped.chunk_by(|a, b| a.1 == b.1) {
            needs.clear();
            needs.extend(group.iter().map(|&(task, _)| {
                let (request, limit) = self.needs(task);
                Need { request, limit }
            }));
            if gang && !could_fit_all(&needs, &max_free, &self.free_total()) {
                continue;
            }
            let n = self.placement.place_job(&mut self.slots, &needs, &mut out);
            if n == 0 {
                continue;
            }
            for (&(task, _), node) in group.iter().zip(out.iter()) {
                if let Some(node) = *node {
                    self.start(task, node, t);
                }
            }
            placed += n;
            max_free = self.max_free();
        }
        for j in order {
            self.rank[j as usize] = UNRANKED;
        }
        self.waiting = queue;
        placed
    }
}

/// Whether a gang could possibly fit: each task within the most any node has free, and their
/// sum within the free total (a gang larger than the free cluster is passed over unscored).
fn could_fit_all(needs: &[Need], max_free: &Res, free_total: &Res) -> bool {
    let sum = needs.iter().fold(Res::ZERO, |a, n| a.add(&n.request));
    needs.iter().all(|n| n.request.fits_in(max_free)) && sum.fits_in(free_total)
}

#[cfg(test)]
#[path = "step_tests.rs"]
mod tests;
