#![no_main]
//! `cargo fuzz run checkpoint`: [`continuum_fuzz_targets::checkpoint`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| continuum_fuzz_targets::checkpoint(data));
