//! continuum's experiments, below the command line: what one row of a report runs ([`runner`]:
//! a policy and mitigation, a per-class table, a trained meta-policy, a pull row, the per-window
//! oracle, an allocated run through [`allocated`]), running a report's rows on one scenario in
//! parallel with its offline bound ([`run`]), and the report ([`report`]: the JSON contract of
//! `compare`, CSV, text tables, SVG plots). The `continuum` command parses its flags and hands
//! off here; a sweep's cells run the same code.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

pub mod allocated;
pub mod report;
pub mod run;
pub mod runner;
