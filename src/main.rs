//! The `continuum` binary.

/// mimalloc instead of glibc malloc, for the binary only (libraries and tests keep the system
/// allocator): glibc keeps freed pages in per-thread arenas, so a gateway whose buffers are
/// allocated on one thread and freed on another grew by ~15 MiB/h in a 30-minute soak; mimalloc
/// frees to the owning page and returns unused memory to the system (docs/soak.md). Without the
/// `mimalloc` feature (`--no-default-features`), the system allocator.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    continuum::app::main()
}
