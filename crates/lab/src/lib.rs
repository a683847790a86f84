//! continuum's experiments, below the command line: what one row of a report runs ([`runner`]:
//! a policy and mitigation, a per-class table, a trained meta-policy, a pull row, the per-window
//! oracle, an allocated run through [`allocated`]), running a report's rows on one scenario in
//! parallel with its offline bound ([`run`]), and the report ([`report`]: the JSON contract of
//! `compare`, CSV, text tables, SVG plots), and sweeps of such reports over grids ([`sweep`]);
//! OGASched's reproduction bench as `continuum oga-bench` runs it ([`oga_bench`]). The
//! `continuum` command parses its flags and hands off here; a sweep's cells run the same code.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

pub mod allocated;
pub mod jobs_tap;
pub mod jobs_tune;
pub mod oga_bench;
pub mod report;
pub mod run;
pub mod runner;
pub mod sweep;
pub mod table;
pub mod train;

/// A pool of `threads` worker threads (`None`: one per core), for `--threads`.
pub(crate) fn thread_pool(threads: Option<usize>) -> anyhow::Result<rayon::ThreadPool> {
    use anyhow::Context;
    continuum_core::config::check_threads(threads).map_err(anyhow::Error::msg)?;
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .context("cannot start worker threads")
}

/// Writes `text` and a newline to standard output. A reader that went away (`… | head`) comes
/// back as an `io::ErrorKind::BrokenPipe` error, which the binary's entry point turns into a
/// quiet exit instead of `println!`'s panic.
pub fn print(text: &str) -> Result<(), std::io::Error> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()
}
