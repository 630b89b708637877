//! HTTPS: the server's certificate and key (PEM), served with rustls.

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// A certificate chain and its private key, for [`crate::Server::tls`]: the server
/// then speaks HTTPS only (HTTP stays the default without it).
#[derive(Clone)]
pub struct Tls {
    acceptor: TlsAcceptor,
}

impl fmt::Debug for Tls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The key is a secret: never shown.
        f.debug_struct("Tls").finish_non_exhaustive()
    }
}

impl Tls {
    /// Reads a PEM certificate chain (leaf first) and a PEM private key (PKCS #8,
    /// PKCS #1 or SEC1) from files.
    ///
    /// # Errors
    ///
    /// A file that can't be read, or what [`Tls::from_pem`] refuses; the message
    /// names the file.
    pub fn from_pem_files(cert: &Path, key: &Path) -> io::Result<Tls> {
        let read = |path: &Path, what: &str| {
            std::fs::read(path).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("can't read the {what} {}: {e}", path.display()),
                )
            })
        };
        Tls::from_pem(&read(cert, "certificate")?, &read(key, "private key")?).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("{} with {}: {e}", cert.display(), key.display()),
            )
        })
    }

    /// A certificate chain and key from PEM text.
    ///
    /// # Errors
    ///
    /// `InvalidData` when the text holds no certificate, no private key, or a key
    /// that doesn't match the certificate.
    pub fn from_pem(cert: &[u8], key: &[u8]) -> io::Result<Tls> {
        let invalid = |message: String| io::Error::new(io::ErrorKind::InvalidData, message);
        let chain = CertificateDer::pem_slice_iter(cert)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| invalid(format!("the certificate is not PEM: {e}")))?;
        if chain.is_empty() {
            return Err(invalid(
                "the certificate file holds no `BEGIN CERTIFICATE` block".to_owned(),
            ));
        }
        let key = PrivateKeyDer::from_pem_slice(key).map_err(|e| {
            invalid(format!(
                "the key file holds no PEM private key (PKCS #8, PKCS #1 or SEC1): {e}"
            ))
        })?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| invalid(format!("no TLS version to offer: {e}")))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| invalid(format!("the key does not serve this certificate: {e}")))?;
        Ok(Tls {
            acceptor: TlsAcceptor::from(Arc::new(config)),
        })
    }

    pub(crate) fn acceptor(&self) -> &TlsAcceptor {
        &self.acceptor
    }
}
