//! The TLS connector of a Postgres connection (rustls with its `ring` provider, through
//! tokio-postgres-rustls), for libpq's `sslmode`:
//!
//! | `sslmode` | the certificate |
//! | --- | --- |
//! | `disable` | no TLS |
//! | `prefer`, `require` | not checked: encrypted, but anyone between may answer |
//! | `verify-ca` (and `require` with a root certificate file) | its chain must end at a trusted root |
//! | `verify-full` | as `verify-ca`, and it must name the host connected to |
//!
//! The handshake's signature is always checked against the certificate the server
//! sent, whatever the mode. The trusted roots are `sslrootcert`'s file, or the
//! operating system's ([`Roots::System`]).

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{verify_server_cert_signed_by_trust_anchor, WebPkiServerVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;
use zeroize::Zeroizing;

/// Where the trusted root certificates come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Roots {
    /// A PEM file of one or more certificates (`sslrootcert=FILE`, or libpq's
    /// `~/.postgresql/root.crt`).
    File(PathBuf),
    /// The operating system's roots (`sslrootcert=system`, or a `verify-*` mode
    /// without a root certificate file), as rustls-native-certs finds them
    /// (`SSL_CERT_FILE` / `SSL_CERT_DIR` when set).
    System,
}

impl fmt::Display for Roots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Roots::File(path) => write!(f, "sslrootcert {}", path.display()),
            Roots::System => f.write_str("the system's root certificates"),
        }
    }
}

/// The largest root certificate file read: a bundle of every public CA a system trusts
/// is about 200 KiB.
const MAX_ROOTS_FILE_BYTES: u64 = 16 << 20;

/// The bytes of the file at `path`, or `Ok(None)` when it holds more than `cap` (read
/// no further than that): a setting may name any file, and reading one never takes
/// more memory than its cap.
pub(super) fn read_at_most(path: &Path, cap: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)?;
    Ok(u64::try_from(bytes.len())
        .is_ok_and(|n| n <= cap)
        .then_some(bytes))
}

/// The bytes of the `what` file at `path`, named by a setting, up to `cap`: what to do
/// with a larger one is `too_large` ("name a file of …", "is it the right file?").
pub(super) fn read_setting_file(
    path: &Path,
    what: &str,
    cap: u64,
    too_large: &str,
) -> Result<Vec<u8>, String> {
    read_at_most(path, cap)
        .map_err(|e| format!("cannot read the {what} {}: {e}", path.display()))?
        .ok_or_else(|| {
            format!(
                "the {what} {} is larger than {} MiB: {too_large}",
                path.display(),
                cap >> 20
            )
        })
}

/// The certificates of `roots`.
pub(crate) fn load_roots(roots: &Roots) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match roots {
        Roots::File(path) => {
            let pem = read_setting_file(
                path,
                "root certificate file",
                MAX_ROOTS_FILE_BYTES,
                "name a file of the server's CA certificates",
            )?;
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert = cert.map_err(|e| {
                    format!(
                        "cannot read the root certificate file {}: {e}",
                        path.display()
                    )
                })?;
                store.add(cert).map_err(|e| {
                    format!(
                        "the root certificate file {} holds a certificate rustls cannot use: {e}",
                        path.display()
                    )
                })?;
            }
            if store.is_empty() {
                return Err(format!(
                    "the root certificate file {} holds no PEM certificate",
                    path.display()
                ));
            }
        }
        Roots::System => {
            let found = rustls_native_certs::load_native_certs();
            store.add_parsable_certificates(found.certs);
            if store.is_empty() {
                let why: Vec<String> = found.errors.iter().map(ToString::to_string).collect();
                return Err(format!(
                    "no root certificates found on this system ({}); name the server's CA \
                     with sslrootcert=FILE",
                    if why.is_empty() {
                        "none installed".to_owned()
                    } else {
                        why.join("; ")
                    }
                ));
            }
        }
    }
    Ok(store)
}

/// The largest client certificate or key file read (a chain of a few certificates is
/// a few KiB).
const MAX_CLIENT_FILE_BYTES: u64 = 1 << 20;

/// A client certificate chain and its private key (`sslcert`, `sslkey`), for a server
/// that asks for one (`pg_hba.conf`'s `cert` method or `clientcert=`). No `Debug`: it
/// holds the key.
pub(crate) struct ClientAuth {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
}

/// The client certificate chain of `cert` and the key of `key`, checked as libpq checks
/// them: the key file must be a regular file that neither the group nor others may
/// read (mode 0600 or less; 0640 or less when root owns it), in PEM and not encrypted.
pub(crate) fn load_client(cert: &Path, key: &Path) -> Result<ClientAuth, String> {
    let read = |path: &Path, what: &str| -> Result<Zeroizing<Vec<u8>>, String> {
        read_setting_file(path, what, MAX_CLIENT_FILE_BYTES, "is it the right file?")
            .map(Zeroizing::new)
    };
    let pem = read(cert, "client certificate file (sslcert)")?;
    let chain = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            format!(
                "cannot read the client certificate file {}: {e}",
                cert.display()
            )
        })?;
    if chain.is_empty() {
        return Err(format!(
            "the client certificate file {} holds no PEM certificate",
            cert.display()
        ));
    }
    let meta = std::fs::metadata(key).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "certificate present, but not private key file {} (give it with sslkey= or \
                 PGSSLKEY)",
                key.display()
            )
        } else {
            format!("cannot read the private key file {}: {e}", key.display())
        }
    })?;
    if !meta.is_file() {
        return Err(format!(
            "the private key file {} is not a regular file",
            key.display()
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let mode = meta.permissions().mode();
        let open = if meta.uid() == 0 {
            mode & 0o037
        } else {
            mode & 0o077
        };
        if open != 0 {
            return Err(format!(
                "the private key file {} has group or world access (mode {:04o}): give it \
                 u=rw (chmod 600), or u=rw,g=r (0640) if root owns it, as libpq requires",
                key.display(),
                mode & 0o7777
            ));
        }
    }
    let text = read(key, "private key file (sslkey)")?;
    let key = PrivateKeyDer::from_pem_slice(&text).map_err(|e| {
        if text.windows(9).any(|w| w == b"ENCRYPTED") {
            format!(
                "the private key file {} is encrypted, and a passphrase (sslpassword) is not \
                 supported: give a copy without one (openssl pkey -in KEY -out PLAIN.key; \
                 chmod 600 PLAIN.key)",
                key.display()
            )
        } else {
            format!(
                "cannot read the private key file {} (a PEM PKCS#8, PKCS#1 or SEC1 key): {e}",
                key.display()
            )
        }
    })?;
    Ok(ClientAuth { chain, key })
}

/// rustls 0.23.48 deprecated the `ring` provider for having no post-quantum key
/// exchange. It stays: the other provider, aws-lc-rs, builds AWS-LC's C sources (a C
/// toolchain, and cmake on some targets) into every build and wheel, and a Postgres
/// server offers a post-quantum group only when its OpenSSL is 3.5 or newer (Debian
/// 12's PostgreSQL 15 links OpenSSL 3.0), so the handshake would fall back to X25519
/// anyway. SECURITY.md ("Postgres connections") says what this leaves open.
#[allow(deprecated)]
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The connector: no root certificates (`disable`, `prefer`, `require`) checks no
/// certificate; roots with `chain_only` check the chain (`verify-ca`); roots without
/// check the chain and the host name (`verify-full`).
pub(crate) fn connector(
    roots: Option<RootCertStore>,
    chain_only: bool,
    client: Option<ClientAuth>,
) -> Result<MakeRustlsConnect, String> {
    let provider = provider();
    let algorithms = provider.signature_verification_algorithms;
    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup: {e}"))?;
    let builder = match roots {
        Some(roots) if !chain_only => {
            let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| format!("TLS setup: {e}"))?;
            builder.with_webpki_verifier(verifier)
        }
        roots => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Verifier {
                roots: roots.map(Arc::new),
                algorithms,
            })),
    };
    let config = match client {
        None => builder.with_no_client_auth(),
        Some(ClientAuth { chain, key }) => builder
            .with_client_auth_cert(chain, key)
            .map_err(|e| format!("the client certificate and key cannot be used: {e}"))?,
    };
    Ok(MakeRustlsConnect::new(config))
}

/// The verifier of `prefer`, `require` (`roots: None`: any certificate) and
/// `verify-ca` (the chain to one of `roots`, any host name).
#[derive(Debug)]
struct Verifier {
    roots: Option<Arc<RootCertStore>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(roots) = &self.roots {
            let cert = ParsedCertificate::try_from(end_entity)?;
            verify_server_cert_signed_by_trust_anchor(
                &cert,
                roots,
                intermediates,
                now,
                self.algorithms.all,
            )?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// A rustls failure in words, with what to do (`require`: the mode was `require`
/// with a root certificate file, which checks the chain as `verify-ca` does).
pub(crate) fn describe(e: &rustls::Error, require: bool) -> String {
    use CertificateError as C;
    match e {
        rustls::Error::InvalidCertificate(cert) => match cert {
            C::UnknownIssuer if require => "the server's certificate is not signed by a \
                certificate authority of sslrootcert (with a root certificate file, require \
                checks the chain as verify-ca does, as libpq does): name the CA that signed \
                it, or drop sslrootcert to encrypt without checking the certificate"
                .to_owned(),
            C::UnknownIssuer => "the server's certificate is not signed by a trusted \
                certificate authority: name the CA that signed it with sslrootcert=FILE (or \
                use sslmode=require to encrypt without checking the certificate)"
                .to_owned(),
            C::NotValidForNameContext {
                expected,
                presented,
            } => format!(
                "the server's certificate is not issued for {} (it names {}): connect with a \
                 host name the certificate names, or use sslmode=verify-ca to check only its \
                 chain",
                expected.to_str(),
                if presented.is_empty() {
                    "no host".to_owned()
                } else {
                    presented
                        .iter()
                        .map(|p| name_of(p))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
            C::NotValidForName => "the server's certificate is not issued for the host \
                connected to: connect with a host name the certificate names, or use \
                sslmode=verify-ca to check only its chain"
                .to_owned(),
            C::Expired | C::ExpiredContext { .. } => {
                "the server's certificate has expired".to_owned()
            }
            C::NotValidYet | C::NotValidYetContext { .. } => {
                "the server's certificate is not valid yet (check the clocks)".to_owned()
            }
            C::Revoked => "the server's certificate is revoked".to_owned(),
            other => format!("the server's certificate was refused ({other:?})"),
        },
        rustls::Error::AlertReceived(alert) => {
            use rustls::AlertDescription as A;
            let what = match alert {
                A::UnknownCA => {
                    ": it does not trust the CA that signed the client certificate (sslcert); \
                     give one signed by a CA of the server's ssl_ca_file"
                }
                A::CertificateExpired => ": the client certificate (sslcert) has expired",
                A::BadCertificate | A::UnsupportedCertificate | A::CertificateUnknown => {
                    ": it refused the client certificate (sslcert)"
                }
                A::CertificateRequired => {
                    ": it asks for a client certificate; give sslcert=FILE and sslkey=FILE"
                }
                _ => "",
            };
            format!("the server ended the TLS handshake (alert {alert:?}){what}")
        }
        other => format!("TLS handshake failed ({other:?})"),
    }
}

/// A name as rustls presents it (`DnsName("db.example")`, `IpAddress(10.0.0.1)`)
/// without the wrapper.
fn name_of(presented: &str) -> &str {
    presented
        .split_once('(')
        .and_then(|(_, inner)| inner.strip_suffix(')'))
        .map_or(presented, |inner| inner.trim_matches('"'))
}
