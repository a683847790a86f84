//! What a command shows a person on a terminal, the same in every command: its progress on
//! standard error ([`progress`]: the `--quiet` and `--progress` flags and their reporters,
//! re-exported at the root) and its text tables on standard output ([`text_table`]: borderless,
//! aligned whatever the names, independent of the terminal's width).

#![warn(missing_docs)]
#![deny(unreachable_pub)]

pub mod progress;
pub mod text_table;

pub use progress::*;
