#![no_main]
//! `cargo fuzz run yaml_topology`: [`continuum_fuzz_targets::yaml_topology`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| continuum_fuzz_targets::yaml_topology(data));
