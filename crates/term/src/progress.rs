//! Progress on standard error, the same for every long command (`train`, `table`, `meta-train`,
//! `simulate`, `compare`, `sweep run`, `deeprm train`, `deeprm meta-train`, `loadgen`): two
//! flags, [`ProgressArgs`]. On a terminal there is progress by default (a bar, or lines for the
//! commands whose progress is a log); elsewhere there is none unless `--progress` asks for
//! time-stamped lines; `--quiet` turns it off everywhere. What a command *found* (its figures,
//! the files it wrote, its warnings) is not progress and is printed whatever the flags.
//!
//! Two reporters: [`Progress`], phases of steps (a spinner with the phase, how far and the time
//! left on a terminal; lines, at most one every [`LINE_EVERY`] per phase, elsewhere), and
//! [`ProgressArgs::bar`], a counting bar (its lines at most one every [`LINE_EVERY`]).

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Without a terminal, the least time between two progress lines (of the same phase).
pub const LINE_EVERY: Duration = Duration::from_secs(5);

/// `--quiet`'s help, the same in every command.
pub const QUIET_HELP: &str = "No progress on standard error (on a terminal there is some by \
     default); what the command finds is printed anyway";

/// `--progress`'s help, the same in every command.
pub const PROGRESS_HELP: &str = "Progress lines on standard error even when it is not a \
     terminal (where there are none by default)";

/// The progress options of every long command.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Args)]
pub struct ProgressArgs {
    /// No progress at all ([`QUIET_HELP`]).
    #[arg(long, help = QUIET_HELP)]
    pub quiet: bool,
    /// Progress lines even when standard error is not a terminal ([`PROGRESS_HELP`]).
    #[arg(long, help = PROGRESS_HELP, conflicts_with = "quiet")]
    pub progress: bool,
}

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Not at all.
    Off,
    /// On a terminal: a bar (or the command's lines).
    Terminal,
    /// Time-stamped lines on a standard error that is not a terminal.
    Lines,
}

impl ProgressArgs {
    /// No progress (`--quiet`).
    pub const QUIET: Self = Self {
        quiet: true,
        progress: false,
    };

    /// How progress is shown on this process's standard error.
    pub fn mode(self) -> Mode {
        self.mode_on(std::io::stderr().is_terminal())
    }

    /// How progress is shown on a standard error that is a terminal or not.
    pub fn mode_on(self, terminal: bool) -> Mode {
        match (self.quiet, terminal, self.progress) {
            (true, _, _) => Mode::Off,
            (false, true, _) => Mode::Terminal,
            (false, false, true) => Mode::Lines,
            (false, false, false) => Mode::Off,
        }
    }

    /// Whether there is progress at all on this process's standard error.
    pub fn shown(self) -> bool {
        self.mode() != Mode::Off
    }

    /// A counting bar of `len` steps: on a terminal drawn with the indicatif template `bar`;
    /// with `--progress` elsewhere, a time-stamped line from the template `line` at most every
    /// [`LINE_EVERY`]; hidden otherwise (it still counts).
    pub fn bar(self, len: u64, bar: &str, line: &str) -> ProgressBar {
        let (target, template) = match self.mode() {
            Mode::Off => (ProgressDrawTarget::hidden(), bar),
            Mode::Terminal => (ProgressDrawTarget::stderr(), bar),
            Mode::Lines => (ProgressDrawTarget::term_like(Box::new(Lines::new())), line),
        };
        let b = ProgressBar::with_draw_target(Some(len), target);
        b.set_style(ProgressStyle::with_template(template).expect("valid template"));
        b
    }
}

/// A draw target that turns a bar's draws into time-stamped lines on standard error, at most one
/// every [`LINE_EVERY`].
#[derive(Debug)]
struct Lines {
    started: Instant,
    /// The text of the draw under way and when the last line was printed.
    state: Mutex<(String, Option<Instant>)>,
}

impl Lines {
    fn new() -> Self {
        Self {
            started: Instant::now(),
            state: Mutex::new((String::new(), None)),
        }
    }
}

impl TermLike for Lines {
    fn width(&self) -> u16 {
        // Wide enough that no line is wrapped; the padding is trimmed.
        400
    }

    fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn write_line(&self, s: &str) -> std::io::Result<()> {
        let mut st = self.state.lock().expect("progress lock");
        st.0.push_str(s);
        st.0.push(' ');
        Ok(())
    }

    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.state.lock().expect("progress lock").0.push_str(s);
        Ok(())
    }

    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }

    fn flush(&self) -> std::io::Result<()> {
        let mut st = self.state.lock().expect("progress lock");
        let text = std::mem::take(&mut st.0);
        let text = text.trim();
        let now = Instant::now();
        if !text.is_empty()
            && st
                .1
                .is_none_or(|last| now.duration_since(last) >= LINE_EVERY)
        {
            st.1 = Some(now);
            eprintln!("{} {text}", stamp(self.started));
        }
        Ok(())
    }
}

/// `[   12.3 s]`: the time since `started`, the prefix of every progress line.
fn stamp(started: Instant) -> String {
    format!("[{:>7.1} s]", started.elapsed().as_secs_f64())
}

/// Reports progress in phases of steps on standard error.
pub struct Progress {
    bar: Option<ProgressBar>,
    quiet: bool,
    started: Instant,
    /// When the current phase began and when its last line was printed.
    phase: Mutex<(String, Instant, Option<Instant>)>,
}

impl Progress {
    /// A reporter: a spinner on a terminal, lines elsewhere with `--progress`, else silent.
    pub fn new(args: ProgressArgs) -> Self {
        let mode = args.mode();
        let bar = (mode == Mode::Terminal).then(|| {
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
            quiet: mode == Mode::Off,
            started: now,
            phase: Mutex::new((String::new(), now, None)),
        }
    }

    /// `done` of `total` steps of `phase` are behind; `what` is the step about to run (or the
    /// figures of the one just done). Prints with an estimate of the time left in the phase;
    /// without a terminal, at most a line every [`LINE_EVERY`] per phase, and the last step's.
    pub fn step(&self, phase: &str, what: &str, done: usize, total: usize) {
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
                    eprintln!("{} {msg}", stamp(self.started));
                }
            }
        }
    }

    /// A line of progress printed whole (above the spinner on a terminal; time-stamped
    /// elsewhere), e.g. between phases or one per long step.
    pub fn line(&self, text: &str) {
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{} {text}", stamp(self.started)),
        }
    }

    /// Removes the spinner.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `42 s`, `3.5 min`, `1.2 h`.
pub fn human(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        p: ProgressArgs,
    }

    fn parse(argv: &[&str]) -> Result<ProgressArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("x").chain(argv.iter().copied())).map(|c| c.p)
    }

    #[test]
    fn the_flags_and_what_they_show_on_and_off_a_terminal() {
        let none = parse(&[]).unwrap();
        assert_eq!(none, ProgressArgs::default());
        assert_eq!(none.mode_on(true), Mode::Terminal);
        assert_eq!(none.mode_on(false), Mode::Off);
        let lines = parse(&["--progress"]).unwrap();
        assert_eq!(lines.mode_on(true), Mode::Terminal);
        assert_eq!(lines.mode_on(false), Mode::Lines);
        let quiet = parse(&["--quiet"]).unwrap();
        assert_eq!(quiet, ProgressArgs::QUIET);
        assert_eq!(quiet.mode_on(true), Mode::Off);
        assert_eq!(quiet.mode_on(false), Mode::Off);
        assert!(parse(&["--quiet", "--progress"]).is_err());
        // A switch: it takes no value.
        assert!(parse(&["--progress", "5"]).is_err());
    }

    #[test]
    fn the_help_is_the_shared_text() {
        use clap::CommandFactory;
        let help = Cli::command().render_help().to_string();
        assert!(help.contains(QUIET_HELP), "{help}");
        assert!(help.contains(PROGRESS_HELP), "{help}");
    }

    #[test]
    fn a_bar_without_a_terminal_prints_its_line_at_most_every_few_seconds() {
        let l = Lines::new();
        l.write_str("1/4 steps").unwrap();
        l.flush().unwrap();
        let first = l.state.lock().unwrap().1;
        assert!(first.is_some());
        l.write_str("2/4 steps").unwrap();
        l.flush().unwrap();
        // Within LINE_EVERY of the first: nothing printed, the buffer emptied all the same.
        let st = l.state.lock().unwrap();
        assert_eq!(st.1, first);
        assert!(st.0.is_empty());
    }

    #[test]
    fn durations_read_in_their_unit() {
        assert_eq!(human(42.0), "42 s");
        assert_eq!(human(210.0), "3.5 min");
        assert_eq!(human(4.0 * 3600.0), "4.0 h");
    }
}
