//! Where a Postgres connection goes and how, resolved the way libpq (and so `psql`)
//! resolves it: the one place the saver's pool (`builder_from_url`) and the store
//! commands turn a connection string into a driver configuration and a TLS connector.
//!
//! - The string is a `postgres://` / `postgresql://` URL or libpq's `key=value` form;
//!   every part of it is optional (`postgresql://`, `postgresql:///app`, the empty
//!   string).
//! - What it leaves out comes from libpq's service file when it names a service
//!   (`service=`, `PGSERVICE`; `service.rs`), then from libpq's environment variables
//!   ([`ENV`]: `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`, `PGSSLMODE`,
//!   `PGSSLROOTCERT`, `PGPASSFILE`, …); the string wins over the service, the service
//!   over the environment.
//! - Then libpq's defaults: the local socket directory (`/var/run/postgresql` or
//!   `/tmp`, whichever has the server's socket; `localhost` when neither has), port
//!   5432, the operating system's user name as the role, the role's name as the
//!   database.
//! - Without a password, the password file (`passfile`, `PGPASSFILE`, default
//!   `~/.pgpass`), read as libpq reads it: `host:port:database:user:password` lines,
//!   `*` for any value, `\:` and `\\` escapes, the first matching line wins, and the
//!   file is ignored (with a note in connection errors) when its group or others may
//!   read it.
//! - `sslmode` (libpq's `disable`, `prefer` (the default), `require`, `verify-ca`,
//!   `verify-full`) and `sslrootcert` choose the TLS connector (`tls.rs`); `sslcert`
//!   and `sslkey` (default `~/.postgresql/postgresql.crt` and `.key`, used when the
//!   certificate is there) give it a client certificate.
//! - `application_name` (`PGAPPNAME`), else `fallback_application_name`, else the
//!   process's own name for its sessions ([`set_fallback_application_name`]; by
//!   default `langgraph-codec`, `lgcodec store COMMAND` in `lgcodec`), as psql names
//!   its sessions `psql`: what `pg_stat_activity` and the server's log (`%a`) show.
//!
//! Nothing here keeps the password outside the driver's configuration (whose `Debug`
//! hides it): [`Target`], which connection errors print, has the host, port, database,
//! role and TLS mode, and where the password came from, never the password.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use tokio_postgres_rustls::MakeRustlsConnect;

mod service;

/// The application name a session gets when its connection string, service and
/// environment name none ([`set_fallback_application_name`]).
static FALLBACK_APPLICATION_NAME: std::sync::RwLock<Option<String>> = std::sync::RwLock::new(None);

/// The name given to this process's Postgres sessions (the saver's and the store
/// commands') whose connection string, service file and environment name none: what
/// `pg_stat_activity.application_name` and the server's log (`%a` in
/// `log_line_prefix`) show for them, so that an operator can tell them from the
/// Python savers' sessions beside them. It plays libpq's `fallback_application_name`
/// for the whole process (psql gives `psql`): `application_name` (or `PGAPPNAME`)
/// wins over it, and so does a `fallback_application_name` in the connection string.
/// By default `langgraph-codec`; `lgcodec` gives `lgcodec store COMMAND`. Connections
/// made after the call get it. The server keeps 63 bytes of it.
///
/// ```
/// langgraph_codec::saver::postgres::set_fallback_application_name("billing-agent");
/// ```
pub fn set_fallback_application_name(name: &str) {
    let mut slot = FALLBACK_APPLICATION_NAME
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *slot = Some(name.to_owned());
}

/// The name [`set_fallback_application_name`] gave, or `langgraph-codec`.
fn process_application_name() -> String {
    FALLBACK_APPLICATION_NAME
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
        .unwrap_or_else(|| "langgraph-codec".to_owned())
}

use super::error::PgFault;
use super::tls::{self, Roots};
use crate::error::Error;

/// libpq's environment variables and the connection keywords they stand for when the
/// connection string does not set the keyword.
pub(crate) const ENV: &[(&str, &str)] = &[
    ("PGHOST", "host"),
    ("PGHOSTADDR", "hostaddr"),
    ("PGPORT", "port"),
    ("PGDATABASE", "dbname"),
    ("PGUSER", "user"),
    ("PGPASSWORD", "password"),
    ("PGPASSFILE", "passfile"),
    ("PGOPTIONS", "options"),
    ("PGAPPNAME", "application_name"),
    ("PGSSLMODE", "sslmode"),
    ("PGSSLROOTCERT", "sslrootcert"),
    ("PGSSLCERT", "sslcert"),
    ("PGSSLKEY", "sslkey"),
    ("PGCONNECT_TIMEOUT", "connect_timeout"),
    ("PGTARGETSESSIONATTRS", "target_session_attrs"),
    ("PGCHANNELBINDING", "channel_binding"),
    ("PGLOADBALANCEHOSTS", "load_balance_hosts"),
];

/// The directories libpq looks for the server's socket in when no host is given
/// (Debian's and upstream's default).
#[cfg(unix)]
const SOCKET_DIRS: &[&str] = &["/var/run/postgresql", "/tmp"];

/// The largest password file read (a line a server is a few dozen bytes): `passfile`
/// may name any file.
const MAX_PASSFILE_BYTES: u64 = 1 << 20;

/// The connection keywords read: the driver's (`tokio_postgres::Config`) and the ones
/// resolved here (`passfile`, `sslmode`, `sslrootcert`).
const KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "options",
    "application_name",
    "fallback_application_name",
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "sslnegotiation",
    "connect_timeout",
    "tcp_user_timeout",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_retries",
    "target_session_attrs",
    "channel_binding",
    "load_balance_hosts",
];

/// What a keyword the driver parses takes, as a refusal of its value says it.
fn takes(key: &str) -> Option<&'static str> {
    Some(match key {
        "port" => "a port number (1 to 65535; one per host, comma-separated)",
        "hostaddr" => "an IP address (one per host, comma-separated)",
        "connect_timeout" => "whole seconds, e.g. 10 (0: no limit)",
        "tcp_user_timeout" => "whole seconds (0: the system's default)",
        "keepalives" => "1 (on, the default) or 0 (off)",
        "keepalives_idle" | "keepalives_interval" => "whole seconds",
        "keepalives_retries" => "a whole number of probes",
        "target_session_attrs" => "any, read-write or read-only",
        "channel_binding" => "disable, prefer or require",
        "load_balance_hosts" => "disable or random",
        "sslnegotiation" => "postgres or direct",
        _ => return None,
    })
}

/// libpq's `sslmode`, less `allow` (plain first, TLS only when the server insists),
/// which the driver cannot do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SslMode {
    /// No TLS.
    Disable,
    /// TLS when the server offers it, the certificate not checked; plain otherwise.
    Prefer,
    /// TLS or no connection; the certificate not checked (unless a root certificate
    /// file is given: then as `VerifyCa`, as libpq does).
    Require,
    /// TLS, the server's certificate chain checked against the root certificates.
    VerifyCa,
    /// As `VerifyCa`, and the certificate must name the host connected to.
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Result<Self, String> {
        Ok(match value {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            "allow" => {
                return Err(
                    "sslmode \"allow\" is not supported (the driver cannot try a \
                            plain connection first): use \"prefer\" or \"disable\""
                        .to_owned(),
                )
            }
            other => {
                return Err(format!(
                    "invalid sslmode {other:?}: use disable, prefer, require, verify-ca or \
                     verify-full"
                ))
            }
        })
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// What a connection was made to, for errors: everything but the password.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Target {
    /// `host:port` of each host (a socket as `DIR/.s.PGSQL.PORT`), comma-separated.
    pub(crate) servers: String,
    /// The database asked for.
    pub(crate) database: String,
    /// The role connected as.
    pub(crate) user: String,
    /// The TLS mode.
    pub(crate) sslmode: SslMode,
    /// Where the certificates a `verify-*` mode trusts came from.
    pub(crate) roots: Option<String>,
    /// Where the password came from (`None`: no password).
    pub(crate) password_from: Option<String>,
    /// Whether every host is a local socket (TLS does not apply there).
    pub(crate) local_socket: bool,
    /// The TCP servers (host or `hostaddr`, and port), for asking who answers there
    /// when a connection fails (`probe.rs`).
    pub(crate) tcp: Vec<(String, u16)>,
    /// libpq's `connect_timeout` for the whole connection, times the number of hosts
    /// (`None`: no limit, libpq's default).
    pub(crate) connect_limit: Option<std::time::Duration>,
    /// Things a person should know when the connection fails (a password file that
    /// was ignored).
    pub(crate) notes: Vec<String>,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (database {:?}, user {:?}, sslmode {})",
            self.servers,
            self.database,
            self.user,
            self.sslmode.as_str()
        )
    }
}

/// A connection string resolved: the driver's configuration, the TLS connector its
/// `sslmode` needs, and what it connects to.
#[derive(Clone)]
pub(crate) struct ConnInfo {
    pub(crate) config: tokio_postgres::Config,
    pub(crate) tls: MakeRustlsConnect,
    pub(crate) target: Arc<Target>,
}

impl fmt::Debug for ConnInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnInfo")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl ConnInfo {
    /// Resolves `given` with this process's environment.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidStoreLocation`](crate::ErrorKind::InvalidStoreLocation) for
    /// a string or setting that does not parse (never echoing the string);
    /// [`ErrorKind::Tls`](crate::ErrorKind::Tls) when the root certificates cannot be
    /// read.
    pub(crate) fn resolve(given: &str) -> Result<Self, Error> {
        Self::resolve_with(given, &|name| std::env::var(name).ok())
    }

    /// Resolves `given` with `env` standing for the environment.
    pub(crate) fn resolve_with(
        given: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, Error> {
        let settings = Settings::resolve(given, env).map_err(config_error)?;
        let (roots, roots_shown) = match &settings.roots {
            Some(r) => (
                Some(tls::load_roots(r).map_err(tls_error)?),
                Some(r.to_string()),
            ),
            None => (None, None),
        };
        let verify_ca = settings.sslmode == SslMode::VerifyCa
            || (settings.sslmode == SslMode::Require && roots.is_some());
        // libpq loads the client certificate only for a TLS connection.
        let client = match &settings.client {
            Some((cert, key))
                if settings.sslmode != SslMode::Disable && !settings.local_socket() =>
            {
                Some(tls::load_client(cert, key).map_err(tls_error)?)
            }
            _ => None,
        };
        let tls = tls::connector(roots, verify_ca, client).map_err(tls_error)?;
        let config = settings.driver_config().map_err(config_error)?;
        let target = Target {
            servers: settings.servers(),
            database: settings.database.clone(),
            user: settings.user.clone(),
            sslmode: settings.sslmode,
            roots: roots_shown,
            password_from: settings.password_from.clone(),
            local_socket: settings.local_socket(),
            tcp: settings.tcp(),
            connect_limit: settings.connect_limit(),
            notes: settings.notes.clone(),
        };
        Ok(ConnInfo {
            config,
            tls,
            target: Arc::new(target),
        })
    }

    /// Opens one connection (its I/O on a spawned Tokio task).
    ///
    /// # Errors
    /// [`ErrorKind::ConnectionUnavailable`](crate::ErrorKind::ConnectionUnavailable) or
    /// [`ErrorKind::Tls`](crate::ErrorKind::Tls): what was tried and the server's or
    /// the operating system's reason, with what to do.
    pub(crate) async fn connect(
        &self,
        operation: &'static str,
    ) -> Result<tokio_postgres::Client, Error> {
        let connecting = self.config.connect(self.tls.clone());
        let made = super::probe::establish(connecting, &self.target)
            .await
            .map_err(|why| PgFault::Unmade {
                operation,
                target: Arc::clone(&self.target),
                why,
            })?;
        let (client, connection) = match made {
            Ok(made) => made,
            Err(source) => {
                let answered = match super::probe::worth_asking(&source) {
                    true => super::probe::not_postgres(&self.target).await,
                    false => None,
                };
                return Err(PgFault::Connect {
                    operation,
                    target: Arc::clone(&self.target),
                    source,
                    answered,
                }
                .into());
            }
        };
        tokio::spawn(async move {
            // Ends when the client is dropped or the server closes the connection; the
            // error then reaches the next statement.
            let _ = connection.await;
        });
        Ok(client)
    }
}

fn config_error(reason: String) -> Error {
    PgFault::Config { reason }.into()
}

fn tls_error(reason: String) -> Error {
    PgFault::Tls { reason }.into()
}

/// The keywords of a connection string after the environment and libpq's defaults
/// (no `Debug`: it holds the password).
struct Settings {
    /// Keywords the driver takes (host, port, dbname, user, password, options, …).
    driver: BTreeMap<String, String>,
    sslmode: SslMode,
    roots: Option<Roots>,
    /// The client certificate and key files (`sslcert`, `sslkey`, or libpq's
    /// `~/.postgresql/postgresql.crt` and `.key` when the certificate is there).
    client: Option<(PathBuf, PathBuf)>,
    database: String,
    user: String,
    password_from: Option<String>,
    notes: Vec<String>,
    /// Given in libpq's `key=value` form, not as a URL.
    keyword_form: bool,
}

impl Settings {
    fn resolve(given: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Self, String> {
        let mut keys = parse(given)?;
        let mut password_from = keys
            .contains_key("password")
            .then(|| "the connection string".to_owned());
        let home = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        let mut notes = Vec::new();

        // libpq's service file: what the string leaves out, before the environment.
        let named = keys
            .remove("service")
            .or_else(|| env("PGSERVICE").filter(|s| !s.is_empty()));
        if let Some(name) = named {
            let found = service::lookup(&name, env, home.as_deref(), &|k| KEYWORDS.contains(&k))?;
            let from = format!(
                "service {name:?} of the service file {}",
                found.file.display()
            );
            for (key, value) in found.keys {
                if key == "password" && !keys.contains_key("password") {
                    password_from = Some(from.clone());
                }
                keys.entry(key).or_insert(value);
            }
            notes.push(format!("the settings of {from} were used"));
        }
        for (var, key) in ENV {
            if !keys.contains_key(*key) {
                if let Some(value) = env(var).filter(|v| !v.is_empty()) {
                    keys.insert((*key).to_owned(), value);
                }
            }
        }
        let mut password_from =
            password_from.or_else(|| keys.contains_key("password").then(|| "PGPASSWORD".into()));
        // As libpq (15 and 18 measured): an application_name given, even empty (an
        // empty PGAPPNAME too), is the name; else the fallback, even empty.
        let fallback = keys.remove("fallback_application_name");
        if !keys.contains_key("application_name") {
            let name = match env("PGAPPNAME") {
                Some(empty) if empty.is_empty() => empty,
                _ => fallback.unwrap_or_else(process_application_name),
            };
            keys.insert("application_name".to_owned(), name);
        }

        // TLS: libpq's `sslrootcert=system` asks for verify-full (and refuses weaker
        // modes); a root certificate file of libpq's default place counts as given.
        let rootcert = keys.remove("sslrootcert");
        let sslmode = match (keys.remove("sslmode"), rootcert.as_deref()) {
            (Some(mode), _) => SslMode::parse(&mode)?,
            (None, Some("system")) => SslMode::VerifyFull,
            (None, _) => SslMode::Prefer,
        };
        let roots = match rootcert {
            Some(r) if r == "system" => {
                if sslmode != SslMode::VerifyFull {
                    return Err(format!(
                        "sslmode \"{}\" may not be used with sslrootcert=system (use \
                         verify-full), as libpq refuses it",
                        sslmode.as_str()
                    ));
                }
                Some(Roots::System)
            }
            Some(file) => match sslmode {
                SslMode::Disable | SslMode::Prefer => None,
                _ => Some(Roots::File(PathBuf::from(file))),
            },
            None => {
                let default = home.as_ref().map(|h| h.join(".postgresql/root.crt"));
                match (sslmode, default) {
                    (SslMode::VerifyCa | SslMode::VerifyFull, Some(d)) if d.is_file() => {
                        Some(Roots::File(d))
                    }
                    (SslMode::VerifyCa | SslMode::VerifyFull, _) => Some(Roots::System),
                    (SslMode::Require, Some(d)) if d.is_file() => Some(Roots::File(d)),
                    _ => None,
                }
            }
        };

        // The client certificate: libpq sends none when its file is not there (the
        // server may not ask), and reads the key only beside a certificate.
        if keys.contains_key("sslpassword") {
            return Err(
                "sslpassword (a passphrase for the client key) is not supported: \
                        give a key file without one (openssl pkey -in KEY -out PLAIN.key; \
                        chmod 600 PLAIN.key)"
                    .to_owned(),
            );
        }
        let given_cert = keys.remove("sslcert").filter(|c| !c.is_empty());
        let given_key = keys.remove("sslkey").filter(|k| !k.is_empty());
        let cert = given_cert
            .as_ref()
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".postgresql/postgresql.crt")));
        let client = match cert {
            Some(cert) => match std::fs::metadata(&cert) {
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                    ) =>
                {
                    if given_cert.is_some() {
                        notes.push(format!(
                            "the client certificate file {} (sslcert) does not exist, so none \
                             was sent",
                            cert.display()
                        ));
                    }
                    None
                }
                // No key to be found (no sslkey, no home directory) is said missing.
                _ => Some((
                    cert,
                    given_key
                        .map(PathBuf::from)
                        .or_else(|| home.as_ref().map(|h| h.join(".postgresql/postgresql.key")))
                        .unwrap_or_default(),
                )),
            },
            None => None,
        };

        // libpq's defaults.
        if !keys.contains_key("host") && !keys.contains_key("hostaddr") {
            keys.insert("host".to_owned(), default_host(keys.get("port")));
        }
        let user = match keys.get("user") {
            Some(u) => u.clone(),
            None => {
                let name = whoami::username().map_err(|e| {
                    format!("no user given (URL, user=, PGUSER) and the operating system's user name cannot be read: {e}")
                })?;
                keys.insert("user".to_owned(), name.clone());
                name
            }
        };
        let database = keys.get("dbname").cloned().unwrap_or_else(|| user.clone());

        let passfile = keys
            .remove("passfile")
            .map(PathBuf::from)
            .or_else(|| home.map(|h| h.join(".pgpass")));
        if !keys.contains_key("password") {
            if let Some(file) = passfile {
                let lookup = Lookup {
                    host: pgpass_host(&keys),
                    port: keys
                        .get("port")
                        .and_then(|p| p.split(',').next())
                        .filter(|p| !p.is_empty())
                        .unwrap_or("5432")
                        .to_owned(),
                    database: database.clone(),
                    user: user.clone(),
                };
                match read_passfile(&file, &lookup) {
                    PassFile::Found(password) => {
                        keys.insert("password".to_owned(), password);
                        password_from = Some(format!("the password file {}", file.display()));
                    }
                    PassFile::Ignored(why) => notes.push(why),
                    PassFile::NoMatch => {}
                }
            }
        }
        Ok(Settings {
            keyword_form: url_rest(given).is_none(),
            driver: keys,
            sslmode,
            roots,
            client,
            database,
            user,
            password_from,
            notes,
        })
    }

    fn hosts(&self) -> Vec<&str> {
        self.driver
            .get("host")
            .or_else(|| self.driver.get("hostaddr"))
            .map(|h| h.split(',').collect())
            .unwrap_or_default()
    }

    fn local_socket(&self) -> bool {
        let hosts = self.hosts();
        !hosts.is_empty()
            && !self.driver.contains_key("hostaddr")
            && hosts.iter().all(|h| h.starts_with('/'))
    }

    /// libpq's `connect_timeout`: whole seconds for each host, none for 0 or less (or
    /// a value the driver refuses, which fails before), 2 for 1 (libpq's least).
    fn connect_limit(&self) -> Option<std::time::Duration> {
        let seconds: i64 = self.driver.get("connect_timeout")?.trim().parse().ok()?;
        let each = u64::try_from(seconds).ok().filter(|s| *s > 0)?.max(2);
        let hosts = u64::try_from(self.hosts().len().max(1)).unwrap_or(1);
        Some(std::time::Duration::from_secs(each.saturating_mul(hosts)))
    }

    /// The TCP servers: each host (or `hostaddr`) not a socket directory, with its
    /// port.
    fn tcp(&self) -> Vec<(String, u16)> {
        let hosts: Vec<&str> = self
            .driver
            .get("hostaddr")
            .or_else(|| self.driver.get("host"))
            .map(|h| h.split(',').collect())
            .unwrap_or_default();
        let ports: Vec<&str> = self
            .driver
            .get("port")
            .map(|p| p.split(',').collect())
            .unwrap_or_default();
        hosts
            .iter()
            .enumerate()
            .filter(|(_, h)| !h.is_empty() && !h.starts_with('/'))
            .map(|(i, h)| {
                let port = ports
                    .get(i)
                    .or_else(|| ports.first())
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(5432);
                ((*h).to_owned(), port)
            })
            .collect()
    }

    /// `host:port` of each host, comma-separated (one port for all, or one per host).
    fn servers(&self) -> String {
        let ports: Vec<&str> = self
            .driver
            .get("port")
            .map(|p| p.split(',').collect())
            .unwrap_or_default();
        self.hosts()
            .iter()
            .enumerate()
            .map(|(i, host)| {
                let port = ports
                    .get(i)
                    .or_else(|| ports.first())
                    .copied()
                    .filter(|p| !p.is_empty())
                    .unwrap_or("5432");
                if host.starts_with('/') {
                    format!("{host}/.s.PGSQL.{port}")
                } else if host.contains(':') {
                    format!("[{host}]:{port}")
                } else {
                    format!("{host}:{port}")
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The driver's configuration: the keywords as a `key='value'` string the driver
    /// parses (and checks: ports, timeouts, unknown keywords), and the TLS mode.
    /// The driver's refusal of a keyword (`unknown option`) or of its value (`invalid
    /// value for option`), said with the value given and what the keyword takes, or
    /// with the keywords read. A password is never refused, so never echoed.
    fn refused(&self, e: &tokio_postgres::Error) -> String {
        let said = super::error::explain(e).0;
        let named = |prefix: &str| {
            said.strip_prefix(prefix)
                .and_then(|rest| rest.split('`').next())
                .map(str::to_owned)
        };
        if let Some(key) = named("invalid value for option `") {
            if let (Some(takes), Some(value)) = (takes(&key), self.driver.get(&key)) {
                return format!("invalid {key} {value:?}: give {takes}");
            }
        }
        if let Some(key) = named("unknown option `") {
            // `out=1.db`, meant as a file, reads as a `key=value` string.
            let file = if self.keyword_form {
                "; a SQLite file whose name holds `=` is given as sqlite:PATH"
            } else {
                ""
            };
            return format!(
                "unknown connection option {key:?} (a libpq keyword this driver does not \
                 take, or a slip): the keywords read are {}{file}",
                KEYWORDS.join(", ")
            );
        }
        said
    }

    fn driver_config(&self) -> Result<tokio_postgres::Config, String> {
        let mut text = String::new();
        for (key, value) in &self.driver {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(key);
            text.push_str("='");
            for c in value.chars() {
                if c == '\'' || c == '\\' {
                    text.push('\\');
                }
                text.push(c);
            }
            text.push('\'');
        }
        let mut config = tokio_postgres::Config::from_str(&text).map_err(|e| self.refused(&e))?;
        // TLS does not apply to a local socket (libpq ignores sslmode there).
        config.ssl_mode(match self.sslmode {
            _ if self.local_socket() => tokio_postgres::config::SslMode::Disable,
            SslMode::Disable => tokio_postgres::config::SslMode::Disable,
            SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
                tokio_postgres::config::SslMode::Require
            }
        });
        Ok(config)
    }
}

/// libpq's default host: the socket directory that has the server's socket for the
/// port, else `localhost`.
fn default_host(port: Option<&String>) -> String {
    #[cfg(unix)]
    {
        let port = port
            .and_then(|p| p.split(',').next())
            .filter(|p| !p.is_empty())
            .unwrap_or("5432");
        for dir in SOCKET_DIRS {
            if Path::new(dir).join(format!(".s.PGSQL.{port}")).exists() {
                return (*dir).to_owned();
            }
        }
    }
    #[cfg(not(unix))]
    let _ = port;
    "localhost".to_owned()
}

/// The host a password file line is matched against, as libpq picks it: the first
/// host, else the first `hostaddr`; `localhost` for the default socket directory.
fn pgpass_host(keys: &BTreeMap<String, String>) -> String {
    let first = keys
        .get("host")
        .or_else(|| keys.get("hostaddr"))
        .and_then(|h| h.split(',').next())
        .unwrap_or("");
    #[cfg(unix)]
    if first.is_empty() || SOCKET_DIRS.contains(&first) {
        return "localhost".to_owned();
    }
    #[cfg(not(unix))]
    if first.is_empty() {
        return "localhost".to_owned();
    }
    first.to_owned()
}

/// What a password file line must match.
#[derive(Debug)]
struct Lookup {
    host: String,
    port: String,
    database: String,
    user: String,
}

/// What the password file gave (no `Debug`: it may hold the password).
enum PassFile {
    Found(String),
    /// Not read: why (for connection errors).
    Ignored(String),
    NoMatch,
}

/// libpq's password file lookup: no file, a file that is not a regular file, or one
/// group or others may read (mode not 0600 or stricter) gives no password.
fn read_passfile(path: &Path, lookup: &Lookup) -> PassFile {
    let Ok(meta) = std::fs::metadata(path) else {
        return PassFile::NoMatch;
    };
    if !meta.is_file() {
        return PassFile::Ignored(format!(
            "the password file {} is not a plain file and was ignored",
            path.display()
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            return PassFile::Ignored(format!(
                "the password file {} was ignored: it has group or world access \
                 (permissions should be u=rw (0600) or less, as libpq requires)",
                path.display()
            ));
        }
    }
    let Ok(read) = tls::read_at_most(path, MAX_PASSFILE_BYTES) else {
        return PassFile::Ignored(format!(
            "the password file {} could not be read",
            path.display()
        ));
    };
    let Some(text) = read else {
        return PassFile::Ignored(format!(
            "the password file {} is larger than {} MiB and was ignored",
            path.display(),
            MAX_PASSFILE_BYTES >> 20
        ));
    };
    match pgpass_match(&String::from_utf8_lossy(&text), lookup) {
        Some(p) => PassFile::Found(p),
        None => PassFile::NoMatch,
    }
}

/// The password of the first line of a password file that matches `lookup`.
fn pgpass_match(text: &str, lookup: &Lookup) -> Option<String> {
    for line in text.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut rest = line;
        let mut matched = true;
        for want in [&lookup.host, &lookup.port, &lookup.database, &lookup.user] {
            match field_matches(rest, want) {
                Some(after) => rest = after,
                None => {
                    matched = false;
                    break;
                }
            }
        }
        if !matched {
            continue;
        }
        // The password: up to an unescaped `:`, `\x` read as `x`.
        let mut password = String::new();
        let mut chars = rest.chars();
        while let Some(c) = chars.next() {
            match c {
                ':' => break,
                '\\' => match chars.next() {
                    Some(next) => password.push(next),
                    None => password.push('\\'),
                },
                other => password.push(other),
            }
        }
        return Some(password);
    }
    None
}

/// Whether the field at the start of `line` matches `want` (`*` matches anything;
/// `\:` and `\\` stand for `:` and `\`): the rest of the line after its `:` if so.
fn field_matches<'a>(line: &'a str, want: &str) -> Option<&'a str> {
    if let Some(rest) = line.strip_prefix("*:") {
        return Some(rest);
    }
    let mut want = want.chars();
    let mut chars = line.char_indices();
    while let Some((i, c)) = chars.next() {
        let (c, escaped) = if c == '\\' {
            match chars.next() {
                Some((_, next)) => (next, true),
                None => return None,
            }
        } else {
            (c, false)
        };
        if c == ':' && !escaped {
            return match want.next() {
                None => line.get(i + 1..),
                Some(_) => None,
            };
        }
        if want.next() != Some(c) {
            return None;
        }
    }
    None
}

/// The keywords of a connection string: a `postgres://` / `postgresql://` URL or
/// libpq's `key=value` form. Later values of a keyword win.
fn parse(given: &str) -> Result<BTreeMap<String, String>, String> {
    match url_rest(given) {
        Some(rest) => parse_url(rest),
        None => parse_keywords(given),
    }
}

/// What follows the scheme of a `postgresql://` / `postgres://` URL (`None`: the
/// `key=value` form).
fn url_rest(given: &str) -> Option<&str> {
    given
        .strip_prefix("postgresql://")
        .or_else(|| given.strip_prefix("postgres://"))
}

/// `[user[:password]@][host[:port][,...]][/dbname][?key=value&...]`, percent-decoded.
fn parse_url(rest: &str) -> Result<BTreeMap<String, String>, String> {
    let mut keys = BTreeMap::new();
    let (base, query) = match rest.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (rest, None),
    };
    let (authority, path) = match base.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (base, None),
    };
    let hostspec = match authority.rsplit_once('@') {
        Some((userinfo, hostspec)) => {
            let (user, password) = match userinfo.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (userinfo, None),
            };
            if !user.is_empty() {
                keys.insert("user".to_owned(), decode(user, "user")?);
            }
            if let Some(p) = password {
                keys.insert("password".to_owned(), decode(p, "password")?);
            }
            hostspec
        }
        None => authority,
    };
    let mut hosts = Vec::new();
    let mut ports = Vec::new();
    for spec in hostspec.split(',') {
        let (host, port) = if let Some(inner) = spec.strip_prefix('[') {
            let (h, after) = inner
                .split_once(']')
                .ok_or("invalid URL: an IPv6 host without its closing ']'")?;
            let port = match after {
                "" => "",
                p => p
                    .strip_prefix(':')
                    .ok_or("invalid URL: unexpected text after an IPv6 host")?,
            };
            (h.to_owned(), port)
        } else {
            match spec.split_once(':') {
                Some((h, p)) => (decode(h, "host")?, p),
                None => (decode(spec, "host")?, ""),
            }
        };
        hosts.push(host);
        ports.push(decode(port, "port")?);
    }
    if hosts.iter().any(|h| !h.is_empty()) {
        keys.insert("host".to_owned(), hosts.join(","));
    }
    if ports.iter().any(|p| !p.is_empty()) {
        keys.insert("port".to_owned(), ports.join(","));
    }
    if let Some(db) = path.filter(|p| !p.is_empty()) {
        keys.insert("dbname".to_owned(), decode(db, "database")?);
    }
    for param in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = param
            .split_once('=')
            .ok_or("invalid URL: a query parameter without '='")?;
        let k = decode(k, "parameter name")?;
        let v = decode(v, "parameter value")?;
        // libpq takes JDBC's `ssl=true` as `sslmode=require`.
        if k == "ssl" && v == "true" {
            keys.insert("sslmode".to_owned(), "require".to_owned());
        } else {
            keys.insert(k, v);
        }
    }
    Ok(keys)
}

/// Percent-decoding of one URL part (`what` names it in errors; the text is never
/// echoed: it may be a password).
fn decode(text: &str, what: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("invalid URL: bad percent-encoding in the {what}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("invalid URL: the {what} is not UTF-8"))
}

/// libpq's `key=value key='quoted value'` form (`\` escapes the next character).
fn parse_keywords(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut keys = BTreeMap::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(keys);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| c.is_ascii_alphanumeric() || *c == '_') {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if key.is_empty() || chars.next() != Some('=') {
            return Err("invalid connection string: expected key=value".to_owned());
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    Some('\'') => break,
                    Some('\\') => value.extend(chars.next()),
                    Some(c) => value.push(c),
                    None => {
                        return Err(format!(
                            "invalid connection string: the value of {key} has no closing quote"
                        ))
                    }
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
        }
        keys.insert(key, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    fn lookup(host: &str, port: &str, database: &str, user: &str) -> Lookup {
        Lookup {
            host: host.into(),
            port: port.into(),
            database: database.into(),
            user: user.into(),
        }
    }

    /// libpq's `connect_timeout` (its documentation): seconds for each host; zero or
    /// less waits for ever; 1 counts as 2, the least it allows.
    #[test]
    fn connect_timeout_is_for_each_host_as_libpq_reads_it() {
        let no_env = env(&[]);
        let limit = |given: &str| {
            ConnInfo::resolve_with(given, &no_env)
                .map(|c| c.target.connect_limit.map(|d| d.as_secs()))
                .map_err(|e| e.to_string())
        };
        assert_eq!(limit("host=db user=u"), Ok(None));
        assert_eq!(limit("host=db user=u connect_timeout=10"), Ok(Some(10)));
        assert_eq!(limit("host=a,b user=u connect_timeout=10"), Ok(Some(20)));
        assert_eq!(limit("host=db user=u connect_timeout=1"), Ok(Some(2)));
        assert_eq!(limit("host=db user=u connect_timeout=0"), Ok(None));
        assert_eq!(limit("host=db user=u connect_timeout=-5"), Ok(None));
    }

    /// A value the driver refuses is said with the value and what the keyword takes
    /// (each keyword's own wording, checked against what the driver accepts); an
    /// unknown keyword with the keywords read.
    #[test]
    fn refused_keywords_and_values_say_what_they_take() {
        let no_env = env(&[]);
        let said = |q: &str| {
            ConnInfo::resolve_with(&format!("postgresql://u@h/db?{q}"), &no_env)
                .expect_err(q)
                .to_string()
        };
        for (q, want) in [
            ("port=abc", "invalid port \"abc\": give a port number"),
            (
                "connect_timeout=ten",
                "invalid connect_timeout \"ten\": give whole seconds",
            ),
            (
                "keepalives=maybe",
                "invalid keepalives \"maybe\": give 1 (on",
            ),
            (
                "target_session_attrs=primary",
                "give any, read-write or read-only",
            ),
            ("channel_binding=yes", "give disable, prefer or require"),
            ("load_balance_hosts=on", "give disable or random"),
            ("hostaddr=db", "invalid hostaddr \"db\": give an IP address"),
        ] {
            let text = said(q);
            assert!(text.contains(want), "{q}: {text}");
        }
        let text = said("sslcrl=c.pem");
        assert!(
            text.contains("unknown connection option \"sslcrl\"")
                && text.contains("connect_timeout, tcp_user_timeout")
                && !text.contains("sqlite:PATH"),
            "{text}"
        );
        // In the `key=value` form, an unknown first word may be a file's name.
        let text = ConnInfo::resolve_with("out=1.db", &no_env)
            .expect_err("unknown")
            .to_string();
        assert!(
            text.contains("unknown connection option \"out\"")
                && text.contains("given as sqlite:PATH"),
            "{text}"
        );
        // What each takes is what the driver takes.
        for (key, good) in [
            ("port", "6432"),
            ("connect_timeout", "10"),
            ("keepalives", "0"),
            ("keepalives_retries", "3"),
            ("target_session_attrs", "read-only"),
            ("channel_binding", "require"),
            ("load_balance_hosts", "random"),
            ("hostaddr", "127.0.0.1"),
            ("sslnegotiation", "direct"),
        ] {
            assert!(takes(key).is_some(), "{key}");
            ConnInfo::resolve_with(&format!("postgresql://u@h/db?{key}={good}"), &no_env)
                .unwrap_or_else(|e| panic!("{key}={good}: {e}"));
        }
    }

    #[test]
    fn urls_and_keywords_parse_as_libpq_reads_them() {
        let k = parse(
            "postgresql://app:p%40ss@db.example:6432/lg%20x?sslmode=verify-full&application_name=a",
        )
        .unwrap();
        assert_eq!(k.get("user").map(String::as_str), Some("app"));
        assert_eq!(k.get("password").map(String::as_str), Some("p@ss"));
        assert_eq!(k.get("host").map(String::as_str), Some("db.example"));
        assert_eq!(k.get("port").map(String::as_str), Some("6432"));
        assert_eq!(k.get("dbname").map(String::as_str), Some("lg x"));
        assert_eq!(k.get("sslmode").map(String::as_str), Some("verify-full"));
        assert!(parse("postgresql://").unwrap().is_empty());
        let k = parse("postgresql:///app").unwrap();
        assert_eq!(k.len(), 1);
        assert_eq!(k.get("dbname").map(String::as_str), Some("app"));
        let k = parse("postgres://[::1]:5433,h2/x").unwrap();
        assert_eq!(k.get("host").map(String::as_str), Some("::1,h2"));
        assert_eq!(k.get("port").map(String::as_str), Some("5433,"));
        let k = parse("postgresql://%2Fvar%2Frun%2Fpostgresql/db").unwrap();
        assert_eq!(
            k.get("host").map(String::as_str),
            Some("/var/run/postgresql")
        );
        let k = parse(r"host=h  port = 5 password='it''s' user=a\ b").unwrap_err();
        assert!(k.contains("key=value"), "{k}");
        let k = parse(r"host=h  port = 5 password='it\'s x' user=a\ b").unwrap();
        assert_eq!(k.get("password").map(String::as_str), Some("it's x"));
        assert_eq!(k.get("user").map(String::as_str), Some("a b"));
        assert_eq!(k.get("port").map(String::as_str), Some("5"));
        let e = parse("postgresql://u:s3cret%zz@h/db").unwrap_err();
        assert!(!e.contains("s3cret"), "{e}");
    }

    #[test]
    fn the_environment_fills_what_the_string_leaves_out() {
        let vars = [
            ("PGHOST", "envhost"),
            ("PGPORT", "7777"),
            ("PGUSER", "envuser"),
            ("PGDATABASE", "envdb"),
            ("PGPASSWORD", "envpw"),
            ("PGSSLMODE", "disable"),
        ];
        let s = Settings::resolve("postgresql:///app", &env(&vars)).unwrap();
        assert_eq!(s.driver.get("host").map(String::as_str), Some("envhost"));
        assert_eq!(s.driver.get("port").map(String::as_str), Some("7777"));
        assert_eq!(s.database, "app");
        assert_eq!(s.user, "envuser");
        assert_eq!(s.sslmode, SslMode::Disable);
        assert_eq!(s.password_from.as_deref(), Some("PGPASSWORD"));
        // The string wins.
        let s = Settings::resolve("postgresql://u:pw@h:1/d?sslmode=require", &env(&vars)).unwrap();
        assert_eq!(s.driver.get("host").map(String::as_str), Some("h"));
        assert_eq!(s.driver.get("port").map(String::as_str), Some("1"));
        assert_eq!(s.user, "u");
        assert_eq!(s.database, "d");
        assert_eq!(s.sslmode, SslMode::Require);
        assert_eq!(s.password_from.as_deref(), Some("the connection string"));
        // No database: the role's name, as libpq.
        let s = Settings::resolve("host=h user=bob", &env(&[])).unwrap();
        assert_eq!(s.database, "bob");
        assert_eq!(s.sslmode, SslMode::Prefer);
        // sslrootcert=system means verify-full, and refuses weaker modes.
        let s = Settings::resolve("host=h user=u sslrootcert=system", &env(&[])).unwrap();
        assert_eq!(s.sslmode, SslMode::VerifyFull);
        let e = Settings::resolve(
            "host=h user=u sslmode=require sslrootcert=system",
            &env(&[]),
        )
        .err()
        .unwrap();
        assert!(e.contains("verify-full"), "{e}");
        let e = Settings::resolve("host=h user=u sslmode=allow", &env(&[]))
            .err()
            .unwrap();
        assert!(e.contains("allow"), "{e}");
    }

    /// `passfile` and `sslrootcert` may name any file: one past its cap is refused
    /// unread (a sparse file, so nothing is written), its first line matching or not.
    #[test]
    fn a_password_or_root_certificate_file_is_read_only_up_to_its_cap() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("scratch");
        let l = lookup("db", "5432", "app", "bob");
        let path = dir.path().join("pgpass");
        std::fs::write(&path, "db:5432:app:bob:pw\n").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("mode");
        assert!(matches!(read_passfile(&path, &l), PassFile::Found(p) if p == "pw"));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open");
        file.set_len(MAX_PASSFILE_BYTES + 1).expect("grow");
        match read_passfile(&path, &l) {
            PassFile::Ignored(why) => assert!(why.contains("larger than 1 MiB"), "{why}"),
            PassFile::Found(_) => panic!("a password file past its cap was read"),
            PassFile::NoMatch => panic!("a password file past its cap was read"),
        }
        let roots = dir.path().join("root.crt");
        std::fs::File::create(&roots)
            .and_then(|f| f.set_len((16 << 20) + 1))
            .expect("a sparse file");
        let err = tls::load_roots(&Roots::File(roots)).expect_err("refused");
        assert!(err.contains("larger than 16 MiB"), "{err}");
    }

    #[test]
    fn password_file_lines_match_as_libpq_matches_them() {
        let l = lookup("db", "5432", "app", "bob");
        assert_eq!(
            pgpass_match("db:5432:app:bob:pw\n", &l).as_deref(),
            Some("pw")
        );
        assert_eq!(pgpass_match("*:*:*:*:any", &l).as_deref(), Some("any"));
        assert_eq!(
            pgpass_match("# c\nother:*:*:*:no\ndb:*:app:bob:yes\n*:*:*:*:later", &l).as_deref(),
            Some("yes")
        );
        assert_eq!(pgpass_match("db:5433:app:bob:no", &l), None);
        assert_eq!(pgpass_match("db:5432:app:bo:no", &l), None);
        assert_eq!(pgpass_match("db:5432:app:bobby:no", &l), None);
        // Escapes: `\:` and `\\` in fields and the password.
        let l = lookup("h:x", "5432", r"a\b", "u");
        assert_eq!(
            pgpass_match(r"h\:x:5432:a\\b:u:p\:w\\d", &l).as_deref(),
            Some(r"p:w\d")
        );
        // `*` matches only as a whole field.
        let l = lookup("db", "5432", "app", "bob");
        assert_eq!(pgpass_match("d*:5432:app:bob:no", &l), None);
        assert_eq!(
            pgpass_match("db:5432:app:bob:pw:extra", &l).as_deref(),
            Some("pw")
        );
        assert_eq!(
            pgpass_match("db:5432:app:bob:pw\r\n", &l).as_deref(),
            Some("pw")
        );
    }
}
