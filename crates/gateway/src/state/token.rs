//! Stream tokens: a stream's id is an unguessable, self-describing capability,
//! `base64url(claims) "." base64url(HMAC-SHA256(key, claims))`, where the claims are a 128-bit
//! random nonce and the stream's requirements (the client's open request). Only the client it
//! was given to can use or close a stream; and since the requirements travel in the token, a
//! gateway that does not know the stream (restarted, or the stream was reaped while idle)
//! verifies the signature and re-binds it on first use. The key comes from the configuration
//! (`stream_key`, or a key file created on first start), so every restart of a gateway, and
//! every replica given the same key, accepts the same tokens.

use crate::config::MIN_KEY_BYTES;
use crate::state::streams::OpenRequest;
use anyhow::{Context, Result};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What a token carries.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Claims {
    /// 128-bit random nonce (hex): the stream's identity.
    pub(crate) n: String,
    /// The stream's requirements.
    pub(crate) req: OpenRequest,
}

impl Claims {
    /// The nonce as a number (the key of the stream table).
    pub(crate) fn nonce(&self) -> Option<u128> {
        u128::from_str_radix(&self.n, 16).ok()
    }
}

/// Why a token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TokenError {
    /// Not of the token's form.
    #[error("not a stream token")]
    Malformed,
    /// The signature does not match (forged, altered, or issued under another key).
    #[error("stream token signature does not verify")]
    BadSignature,
}

/// The gateway's signing key.
pub(crate) struct StreamKey {
    key: hmac::Key,
    rng: SystemRandom,
}

impl StreamKey {
    /// A key from secret bytes (at least [`MIN_KEY_BYTES`]).
    pub(crate) fn from_secret(secret: &[u8]) -> Result<Self> {
        anyhow::ensure!(
            secret.len() >= MIN_KEY_BYTES,
            "stream key: expected at least {MIN_KEY_BYTES} bytes, got {}",
            secret.len()
        );
        Ok(Self {
            key: hmac::Key::new(hmac::HMAC_SHA256, secret),
            rng: SystemRandom::new(),
        })
    }

    /// A fresh random key (streams then do not survive a restart).
    pub(crate) fn random() -> Result<Self> {
        Self::from_secret(&random_bytes::<32>()?)
    }

    /// Reads the key file at `path` (hex), creating it with a random key (mode 0600) if it
    /// does not exist.
    pub(crate) fn load_or_create(path: &Path) -> Result<Self> {
        match std::fs::read_to_string(path) {
            Ok(s) => {
                let bytes = hex_decode(s.trim()).with_context(|| {
                    format!("{}: expected a hexadecimal stream key", path.display())
                })?;
                Self::from_secret(&bytes).with_context(|| path.display().to_string())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let secret = random_bytes::<32>()?;
                write_private(path, &hex_encode(&secret))
                    .with_context(|| format!("cannot create stream key file {}", path.display()))?;
                tracing::info!(path = %path.display(), "created a new stream key file");
                Self::from_secret(&secret)
            }
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// Issues a token for a new stream; returns it with its nonce.
    pub(crate) fn issue(&self, req: &OpenRequest) -> Result<(String, u128)> {
        let mut n = [0u8; 16];
        self.rng
            .fill(&mut n)
            .map_err(|_| anyhow::anyhow!("the system random generator failed"))?;
        let nonce = u128::from_be_bytes(n);
        let claims = Claims {
            n: format!("{nonce:032x}"),
            req: req.clone(),
        };
        let payload = serde_json::to_vec(&claims).expect("claims serialise");
        let tag = hmac::sign(&self.key, &payload);
        Ok((
            format!(
                "{}.{}",
                URL_SAFE_NO_PAD.encode(&payload),
                URL_SAFE_NO_PAD.encode(tag.as_ref())
            ),
            nonce,
        ))
    }

    /// Verifies a token (constant-time tag comparison) and returns its claims.
    pub(crate) fn verify(&self, token: &str) -> Result<Claims, TokenError> {
        // Bounds the work a junk id can cause. assumption: 4 KiB, 10× a token's size.
        if token.len() > 4096 {
            return Err(TokenError::Malformed);
        }
        let (p, t) = token.split_once('.').ok_or(TokenError::Malformed)?;
        let payload = URL_SAFE_NO_PAD
            .decode(p)
            .map_err(|_| TokenError::Malformed)?;
        let tag = URL_SAFE_NO_PAD
            .decode(t)
            .map_err(|_| TokenError::Malformed)?;
        hmac::verify(&self.key, &payload, &tag).map_err(|_| TokenError::BadSignature)?;
        let claims: Claims = serde_json::from_slice(&payload).map_err(|_| TokenError::Malformed)?;
        claims.nonce().ok_or(TokenError::Malformed)?;
        Ok(claims)
    }
}

/// The stream-token parser as a client reaches it, under a key made of `secret`: the token's
/// nonce, or why it is refused. For the fuzz targets (`crates/fuzz-targets`).
pub fn verify_token(secret: &[u8], token: &str) -> Result<u128, String> {
    let key = StreamKey::from_secret(secret).map_err(|e| e.to_string())?;
    let claims = key.verify(token).map_err(|e| e.to_string())?;
    claims.nonce().ok_or_else(|| "no nonce".to_string())
}

/// A token of `payload` (any bytes) signed under `secret`, so that a fuzz target reaches the
/// claims parser behind the signature check.
pub fn sign_token(secret: &[u8], payload: &[u8]) -> Result<String, String> {
    let key = StreamKey::from_secret(secret).map_err(|e| e.to_string())?;
    let tag = hmac::sign(&key.key, payload);
    Ok(format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(payload),
        URL_SAFE_NO_PAD.encode(tag.as_ref())
    ))
}

fn random_bytes<const N: usize>() -> Result<[u8; N]> {
    let mut b = [0u8; N];
    SystemRandom::new()
        .fill(&mut b)
        .map_err(|_| anyhow::anyhow!("the system random generator failed"))?;
    Ok(b)
}

fn hex_encode(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn hex_decode(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)?.write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> OpenRequest {
        serde_json::from_value(serde_json::json!({
            "task": "t", "max_delay_ms": 100.0, "min_accuracy": 0.3, "rate_qps": 15.0,
            "frame_kb": 48.0
        }))
        .unwrap()
    }

    #[test]
    fn tokens_verify_under_their_key_only() {
        let k = StreamKey::from_secret(&[7; 32]).unwrap();
        let (t, n) = k.issue(&req()).unwrap();
        let c = k.verify(&t).unwrap();
        assert_eq!(c.nonce(), Some(n));
        assert_eq!(c.req.task, "t");
        // A restarted gateway with the same key accepts it; another key does not.
        assert!(StreamKey::from_secret(&[7; 32]).unwrap().verify(&t).is_ok());
        let other = StreamKey::from_secret(&[8; 32]).unwrap();
        assert_eq!(other.verify(&t).unwrap_err(), TokenError::BadSignature);
        // Two streams with the same requirements get different tokens.
        assert_ne!(k.issue(&req()).unwrap().0, t);
    }

    #[test]
    fn tokens_of_gateways_before_the_rate_rename_still_verify() {
        let k = StreamKey::from_secret(&[7; 32]).unwrap();
        // A token as an earlier gateway issued it: its claims name the rate `rate_fps`.
        let payload = br#"{"n":"0000000000000000000000000000002a","req":{"task":"t","max_delay_ms":100.0,"min_accuracy":0.3,"rate_fps":15.0,"frame_kb":48.0}}"#;
        let tag = hmac::sign(&k.key, payload);
        let old = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(payload),
            URL_SAFE_NO_PAD.encode(tag.as_ref())
        );
        let c = k.verify(&old).unwrap();
        assert_eq!((c.nonce(), c.req.rate_qps), (Some(42), 15.0));
    }

    #[test]
    fn altered_or_junk_tokens_are_refused() {
        let k = StreamKey::from_secret(&[7; 32]).unwrap();
        let (t, _) = k.issue(&req()).unwrap();
        let (p, tag) = t.split_once('.').unwrap();
        let mut claims: Claims =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(p).unwrap()).unwrap();
        claims.req.min_accuracy = 0.0;
        let forged = format!(
            "{}.{tag}",
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims).unwrap())
        );
        assert_eq!(k.verify(&forged).unwrap_err(), TokenError::BadSignature);
        for junk in ["", "1", "a.b", "..", &"x".repeat(5000)] {
            assert!(k.verify(junk).is_err(), "{junk}");
        }
        assert!(StreamKey::from_secret(b"short").is_err());
    }

    #[test]
    fn key_files_are_created_once_and_reread() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("stream.key");
        let a = StreamKey::load_or_create(&p).unwrap();
        let (t, _) = a.issue(&req()).unwrap();
        let b = StreamKey::load_or_create(&p).unwrap();
        assert!(b.verify(&t).is_ok());
        std::fs::write(&p, "zz").unwrap();
        assert!(StreamKey::load_or_create(&p).is_err());
    }
}
