//! The `continuum` binary.

fn main() -> std::process::ExitCode {
    continuum::app::main()
}
