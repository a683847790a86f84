//! Ape-X with actors in other processes: `continuum train --apex-learner` is the learner, and
//! asks a driver (`python -m continuum_ray train`, which runs the actors as Ray tasks) for each
//! round's episodes over standard output and input; `continuum train --apex-actor E:A` is one
//! actor's episode. Weights and transitions travel as files, every float bit for bit, so the
//! checkpoint is the one the same training writes with its actors on threads.

use super::TrainArgs;
use anyhow::{Context, Result, bail};
use continuum_infer::agent::DqnConfig;
use continuum_infer::weights::Weights;
use continuum_learn::agent::write_weights;
use continuum_learn::train::apex::{
    ActorContext, ActorJob, ActorOutput, ActorPool, ApexRound, decode, encode,
};
use continuum_sim::Scenario;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// Runs `--apex-actor EPISODE:ACTOR`: the episode with the weights of `--weights`, its output
/// written to `--out`.
pub(super) fn actor(args: &TrainArgs, sc: &Scenario, cfg: &DqnConfig, job: &str) -> Result<()> {
    let (episode, actor) = job
        .split_once(':')
        .and_then(|(e, a)| Some((e.parse::<usize>().ok()?, a.parse::<usize>().ok()?)))
        .with_context(|| format!("--apex-actor: expected `<episode>:<actor>`, got `{job}`"))?;
    let actors = cfg.apex.map_or(0, |a| a.actors);
    if actor >= actors {
        bail!("--apex-actor: actor {actor} of a config with {actors} actors");
    }
    let path = args
        .weights
        .as_ref()
        .context("--weights: expected a file")?;
    let bytes = std::fs::read(path).with_context(|| format!("--weights {}", path.display()))?;
    let weights =
        Weights::read(&bytes).map_err(|m| anyhow::anyhow!("--weights {}: {m}", path.display()))?;
    let ctx = ActorContext::new(sc, cfg, args.seed)?;
    let out = ctx.run(ActorJob { episode, actor }, &weights)?;
    std::fs::write(&args.out, encode(&out))
        .with_context(|| format!("cannot write {}", args.out.display()))
}

/// The learner's side of the protocol: per round, a JSON line on standard output
/// (`{"round", "weights", "jobs": [[episode, actor], …]}`), then, once its gradient steps are
/// done, one line on standard input: the JSON list of the actors' output files, in job order.
pub(super) struct StdioActors {
    dir: PathBuf,
    round: usize,
}

impl StdioActors {
    /// A learner keeping its weights files in `<out>.apex/`.
    pub(super) fn new(out: &Path) -> Result<Self> {
        let dir = state_dir(out);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Self { dir, round: 0 })
    }

    /// Tells the driver that training is over and removes the weights files.
    pub(super) fn finish(self, out: &Path) -> Result<()> {
        let _ = std::fs::remove_dir_all(&self.dir);
        crate::print(&serde_json::json!({"done": true, "out": out}).to_string())?;
        Ok(())
    }
}

fn state_dir(out: &Path) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".apex");
    out.with_file_name(name)
}

impl ActorPool for StdioActors {
    fn round(
        &mut self,
        jobs: &[ActorJob],
        weights: &Weights,
        learn: &mut (dyn FnMut() -> Result<()> + Send),
    ) -> Result<(Vec<ActorOutput>, f64)> {
        let t = std::time::Instant::now();
        let r = self.round;
        self.round += 1;
        let path = self.dir.join(format!("weights-{r}.safetensors"));
        write_weights(&path, weights)?;
        if r > 0 {
            let _ = std::fs::remove_file(self.dir.join(format!("weights-{}.safetensors", r - 1)));
        }
        let pairs: Vec<[usize; 2]> = jobs.iter().map(|j| [j.episode, j.actor]).collect();
        crate::print(&serde_json::json!({"round": r, "weights": path, "jobs": pairs}).to_string())?;
        learn()?;
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .context("standard input")?;
        if line.trim().is_empty() {
            bail!("standard input closed before round {r}'s actor outputs (the driver stopped?)");
        }
        let files: Vec<PathBuf> = serde_json::from_str(&line).with_context(|| {
            format!("round {r}: expected a JSON list of the actors' output files")
        })?;
        if files.len() != jobs.len() {
            bail!(
                "round {r}: {} output files for {} jobs",
                files.len(),
                jobs.len()
            );
        }
        let sampling_s = t.elapsed().as_secs_f64();
        let outputs = files
            .iter()
            .zip(jobs)
            .map(|(f, j)| {
                let bytes = std::fs::read(f).with_context(|| format!("{}", f.display()))?;
                let o = decode(&bytes).map_err(|m| anyhow::anyhow!("{}: {m}", f.display()))?;
                if o.job != *j {
                    bail!("{}: the output of {:?}, expected {j:?}", f.display(), o.job);
                }
                Ok(o)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((outputs, sampling_s))
    }
}

/// Ape-X's rounds as CSV, one line each.
pub(super) fn rounds_csv(rounds: &[ApexRound]) -> String {
    let mut s = String::from(
        "round,episodes,transitions,gradient_steps,actor_s,slowest_actor_s,sampling_s,learn_s,round_s,wall_s\n",
    );
    for r in rounds {
        s.push_str(&format!(
            "{},{},{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.3}\n",
            r.round,
            r.episodes,
            r.transitions,
            r.gradient_steps,
            r.actor_s,
            r.slowest_actor_s,
            r.sampling_s,
            r.learn_s,
            r.round_s,
            r.wall_s
        ));
    }
    s
}
