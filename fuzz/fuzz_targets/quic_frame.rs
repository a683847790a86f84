#![no_main]
//! `cargo fuzz run quic_frame`: [`continuum_fuzz_targets::quic_frame`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| continuum_fuzz_targets::quic_frame(data));
