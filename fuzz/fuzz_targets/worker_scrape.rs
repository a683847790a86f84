#![no_main]
//! `cargo fuzz run worker_scrape`: [`continuum_fuzz_targets::worker_scrape`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| continuum_fuzz_targets::worker_scrape(data));
