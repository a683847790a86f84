//! Targets of what a file or a client's token reaches: the profile, topology and workload YAML
//! loaders of `continuum-core`, the gateway's configuration, DQN and TapFinger checkpoints, and
//! the gateway's signed stream tokens.

use continuum_core::config::Source;
use continuum_core::profiles::Profiles;
use continuum_core::topology::Topology;
use continuum_core::workload::Workload;
use continuum_gateway::GatewayConfig;
use continuum_gateway::bench::{sign_token, verify_token};
use continuum_infer::agent::{Checkpoint, FastQNet};
use continuum_infer::tapfinger::{FastTapNet, TapCheckpoint};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The profiles the topology and workload targets resolve names against
/// (`profiles/object-detection.yaml`, the CLI's default).
fn profiles() -> &'static Profiles {
    static P: OnceLock<Profiles> = OnceLock::new();
    P.get_or_init(|| {
        Profiles::load(&crate::repo_root().join("profiles/object-detection.yaml"))
            .expect("profiles/object-detection.yaml loads")
    })
}

fn source(data: &[u8]) -> Option<Source> {
    std::str::from_utf8(data)
        .ok()
        .map(|s| Source::inline("fuzz.yaml", s))
}

/// Profile YAML: `Profiles::from_source` never panics, nor does its error's message.
pub fn yaml_profiles(data: &[u8]) {
    if let Some(src) = source(data)
        && let Err(e) = Profiles::from_source(&src)
    {
        let _ = e.to_string();
    }
}

/// Topology YAML, against the default profiles: `Topology::from_source` and
/// `Topology::candidates_from_source` never panic, nor do their errors' messages.
pub fn yaml_topology(data: &[u8]) {
    let Some(src) = source(data) else { return };
    if let Err(e) = Topology::from_source(&src, profiles()) {
        let _ = e.to_string();
    }
    if let Err(e) = Topology::candidates_from_source(&src, profiles()) {
        let _ = e.to_string();
    }
}

/// Workload YAML, against the default profiles: `Workload::from_source` never panics, nor does
/// its error's message.
pub fn yaml_workload(data: &[u8]) {
    if let Some(src) = source(data)
        && let Err(e) = Workload::from_source(&src, profiles())
    {
        let _ = e.to_string();
    }
}

/// A scratch file of this process and thread with `data` in it, named `*.{ext}`.
fn scratch(ext: &str, data: &[u8]) -> PathBuf {
    let thread = format!("{:?}", std::thread::current().id());
    let tag: String = thread.chars().filter(char::is_ascii_digit).collect();
    let path =
        std::env::temp_dir().join(format!("continuum-fuzz-{}-{tag}.{ext}", std::process::id()));
    std::fs::write(&path, data).expect("the scratch file is writable");
    path
}

/// The gateway's configuration file (YAML, through the layered settings loader, then
/// `validate`): `GatewayConfig::load` never panics.
pub fn gateway_config(data: &[u8]) {
    let path = scratch("yaml", data);
    if let Err(e) = GatewayConfig::load(&path) {
        let _ = format!("{e:#}");
    }
    let _ = std::fs::remove_file(&path);
}

/// A checkpoint file (safetensors with continuum's JSON metadata): `Checkpoint::load` and
/// `TapCheckpoint::load` never panic; what loads builds its plain-Rust network
/// (`FastQNet::read`, `FastTapNet::read`) or says why not, and a loaded DQN checkpoint's
/// metadata serialises again.
pub fn checkpoint(data: &[u8]) {
    let path = scratch("dqn", data);
    match Checkpoint::load(&path) {
        Ok(c) => {
            let _ = FastQNet::read(c.meta.shape, &c.weights);
            Checkpoint::header_json(&c.meta).expect("loaded metadata serialises");
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    if let Ok(t) = TapCheckpoint::load(&path) {
        let _ = FastTapNet::read(t.meta.shape, &t.weights);
    }
    let _ = std::fs::remove_file(&path);
}

/// The stream-token key of the target (any ≥ 16 bytes).
const KEY: &[u8] = b"continuum fuzz stream key, 32 B.";

/// Gateway stream tokens. Byte 0 even: the rest, as UTF-8, is a token a client sent, and
/// `verify_token` never panics. Byte 0 odd: the rest is a claims payload signed under the key,
/// so the claims parser behind the signature check is reached: it never panics, a signed token
/// is never refused for its signature, and one whose claims are not JSON never verifies.
pub fn stream_token(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        if let Ok(t) = std::str::from_utf8(rest) {
            let _ = verify_token(KEY, t);
        }
        return;
    }
    let token = sign_token(KEY, rest).expect("the key is long enough");
    match verify_token(KEY, &token) {
        Ok(_) => assert!(serde_json::from_slice::<serde_json::Value>(rest).is_ok()),
        Err(e) => assert!(
            token.len() > 4096 || !e.contains("signature"),
            "a signed token is refused: {e}"
        ),
    }
}
