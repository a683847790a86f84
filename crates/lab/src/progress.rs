//! Progress of the long commands (training, table search), on standard error: a bar with a
//! ticking clock on a terminal; elsewhere nothing unless `--progress` asks for time-stamped
//! lines (at most one every few seconds per phase, and one per phase change); nothing with
//! `--quiet`. What a command *found* (its figures) is not
//! progress and is printed whatever the mode.

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Without a terminal, the least time between two progress lines of the same phase.
const LINE_EVERY: Duration = Duration::from_secs(5);

/// Reports progress on standard error.
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    quiet: bool,
    started: Instant,
    /// When the current phase began and when its last line was printed.
    phase: Mutex<(String, Instant, Option<Instant>)>,
}

impl Progress {
    /// A reporter: a bar on a terminal, lines elsewhere if `args.progress`, else silent.
    pub(crate) fn new(args: ProgressArgs) -> Self {
        let tty = std::io::stderr().is_terminal();
        let quiet = args.quiet || (!tty && !args.progress);
        let bar = (tty && !quiet).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")
                    .expect("valid template"),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        let now = Instant::now();
        Self {
            bar,
            quiet,
            started: now,
            phase: Mutex::new((String::new(), now, None)),
        }
    }

    /// `done` of `total` steps of `phase` are behind; `what` is the step about to run (or the
    /// figures of the one just done). Prints with an estimate of the time left in the phase.
    pub(crate) fn step(&self, phase: &str, what: &str, done: usize, total: usize) {
        if self.quiet {
            return;
        }
        let now = Instant::now();
        let mut p = self.phase.lock().expect("progress lock");
        if p.0 != phase {
            *p = (phase.to_string(), now, None);
        }
        let spent = now.duration_since(p.1).as_secs_f64();
        let eta = if done > 0 && done < total {
            format!(
                ", about {} left",
                human(spent / done as f64 * (total - done) as f64)
            )
        } else {
            String::new()
        };
        let msg = format!("{phase} {done}/{total}: {what}{eta}");
        match &self.bar {
            Some(bar) => bar.set_message(msg),
            None => {
                let due =
                    p.2.is_none_or(|last| now.duration_since(last) >= LINE_EVERY);
                if due || done == total {
                    p.2 = Some(now);
                    eprintln!("[{:>7.1} s] {msg}", self.started.elapsed().as_secs_f64());
                }
            }
        }
    }

    /// A line for the user between phases (always printed, above the bar on a terminal).
    pub(crate) fn line(&self, text: &str) {
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("[{:>7.1} s] {text}", self.started.elapsed().as_secs_f64()),
        }
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `42 s`, `3.5 min`, `1.2 h`.
fn human(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// Progress options of the long commands.
#[derive(Debug, Clone, Copy, Args)]
pub struct ProgressArgs {
    /// No progress on standard error (on a terminal: a bar with the phase, how far and the time
    /// left); what the command finds is printed anyway.
    #[arg(long)]
    pub quiet: bool,
    /// Progress as lines (at most one every 5 s) when standard error is not a terminal, where
    /// there is none otherwise.
    #[arg(long, conflicts_with = "quiet")]
    pub progress: bool,
}
