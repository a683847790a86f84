//! The bodies of continuum's fuzz targets: one `pub fn <target>(data: &[u8])` for every parser
//! a client or a file reaches, each asserting that no input makes it panic and, where the
//! format has one, a round-trip property. `fuzz/fuzz_targets/*.rs` wraps each for `cargo fuzz`
//! (libFuzzer, nightly); `tests/bounded.rs` runs each on the stable toolchain over its seed
//! corpus ([`seeds`]), the saved regressions ([`regressions`]) and a fixed number of
//! deterministic mutations, for CI. docs/fuzzing.md says what each target covers.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

mod files;
mod seeds;
mod wire;

pub use files::{
    checkpoint, gateway_config, stream_token, yaml_profiles, yaml_topology, yaml_workload,
};
pub use seeds::{regressions, repo_root, seeds};
pub use wire::{
    FuzzModel, grpc_infer, join_oip, model_info, oip_json, quic_frame, split_oip, worker_scrape,
};

/// One fuzz target: its name (the file name under `fuzz/fuzz_targets/`) and its body.
#[derive(Clone, Copy)]
pub struct Target {
    /// Name of the target.
    pub name: &'static str,
    /// Its body: panics on a bug, returns on any other input.
    pub run: fn(&[u8]),
}

/// Every target, in the order docs/fuzzing.md lists them.
pub const TARGETS: &[Target] = &[
    Target {
        name: "oip_json",
        run: oip_json,
    },
    Target {
        name: "grpc_infer",
        run: grpc_infer,
    },
    Target {
        name: "quic_frame",
        run: quic_frame,
    },
    Target {
        name: "worker_scrape",
        run: worker_scrape,
    },
    Target {
        name: "stream_token",
        run: stream_token,
    },
    Target {
        name: "yaml_profiles",
        run: yaml_profiles,
    },
    Target {
        name: "yaml_topology",
        run: yaml_topology,
    },
    Target {
        name: "yaml_workload",
        run: yaml_workload,
    },
    Target {
        name: "gateway_config",
        run: gateway_config,
    },
    Target {
        name: "checkpoint",
        run: checkpoint,
    },
];

/// The target called `name`.
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().copied().find(|t| t.name == name)
}
