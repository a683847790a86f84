#![no_main]
//! `cargo fuzz run oip_json`: [`continuum_fuzz_targets::oip_json`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| continuum_fuzz_targets::oip_json(data));
