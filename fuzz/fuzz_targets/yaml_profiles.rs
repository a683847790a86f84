#![no_main]
//! `cargo fuzz run yaml_profiles`: [`continuum_fuzz_targets::yaml_profiles`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| continuum_fuzz_targets::yaml_profiles(data));
