//! A throw-away certificate authority for tests and development set-ups: a CA, a server
//! certificate for `localhost` and `127.0.0.1`, and a client certificate, written as PEM files
//! that [`crate::tcp_tls::ServerTls`] and [`crate::tcp_tls::ClientTls`] can name.

use anyhow::{Context, Result};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use std::path::{Path, PathBuf};

/// The files of one development PKI.
#[derive(Debug, Clone)]
pub struct DevPki {
    /// The CA certificate (trust it in clients, or name it as `client_ca`).
    pub ca: PathBuf,
    /// Server certificate, signed by the CA, for `localhost` and `127.0.0.1`.
    pub server_cert: PathBuf,
    /// Private key of `server_cert`.
    pub server_key: PathBuf,
    /// Client certificate, signed by the CA.
    pub client_cert: PathBuf,
    /// Private key of `client_cert`.
    pub client_key: PathBuf,
}

/// A fresh CA and its two certificates, written under `dir` with file names starting `prefix`.
pub fn generate(dir: &Path, prefix: &str) -> Result<DevPki> {
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, format!("continuum dev CA {prefix}"));
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate()?)?;
    let leaf = |names: Vec<String>| -> Result<(String, String)> {
        let key = KeyPair::generate()?;
        let cert = CertificateParams::new(names)?.signed_by(&key, &ca)?;
        Ok((cert.pem(), key.serialize_pem()))
    };
    let (server_pem, server_key_pem) = leaf(vec!["localhost".into(), "127.0.0.1".into()])?;
    let (client_pem, client_key_pem) = leaf(vec!["continuum-client".into()])?;
    let write = |name: &str, text: &str| -> Result<PathBuf> {
        let p = dir.join(format!("{prefix}{name}"));
        std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))?;
        Ok(p)
    };
    Ok(DevPki {
        ca: write("ca.pem", &ca.pem())?,
        server_cert: write("server.pem", &server_pem)?,
        server_key: write("server.key", &server_key_pem)?,
        client_cert: write("client.pem", &client_pem)?,
        client_key: write("client.key", &client_key_pem)?,
    })
}
