//! The root package's integration tests, in one binary (`cargo test --test it`; one module a
//! subject: `cargo test --test it gateway_e2e::`). Most run the `continuum` binary; the
//! in-process worker and gateway come from the test kit (crates/testkit).

mod allocation;
mod allocator_live;
mod apex;
mod bound;
mod cli;
mod cli_first_contact;
mod cli_jobs;
mod cli_jobs_ml;
mod cli_jobs_tune;
mod cli_mitigation;
mod cli_pull;
mod cli_support;
mod deeprm_jobs;
mod gateway_classes;
mod gateway_e2e;
mod gateway_faults;
mod gateway_fleet;
mod gateway_restart;
mod gateway_retry;
mod gateway_support;
mod live_up_down;
mod loadgen_mock;
mod meta;
mod oga_bench;
mod policy_gradient;
mod readme_live;
mod readme_names;
mod readme_tour;
mod sweep;
mod topology_import;
mod worker_fd_exhaustion;
mod worker_profile;
