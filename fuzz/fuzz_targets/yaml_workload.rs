#![no_main]
//! `cargo fuzz run yaml_workload`: [`continuum_fuzz_targets::yaml_workload`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| continuum_fuzz_targets::yaml_workload(data));
