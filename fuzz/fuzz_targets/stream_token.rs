#![no_main]
//! `cargo fuzz run stream_token`: [`continuum_fuzz_targets::stream_token`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| continuum_fuzz_targets::stream_token(data));
