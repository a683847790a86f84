#![no_main]
//! `cargo fuzz run gateway_config`: [`continuum_fuzz_targets::gateway_config`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| continuum_fuzz_targets::gateway_config(data));
