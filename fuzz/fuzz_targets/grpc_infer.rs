#![no_main]
//! `cargo fuzz run grpc_infer`: [`continuum_fuzz_targets::grpc_infer`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| continuum_fuzz_targets::grpc_infer(data));
