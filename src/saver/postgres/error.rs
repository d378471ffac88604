//! What the Postgres saver refuses or what the server reported, as the crate's
//! [`Error`].

use std::sync::Arc;

use super::conninfo::{SslMode, Target};
use super::tls;
use crate::error::Error;
use crate::kind::ErrorKind;

/// What the Postgres saver refuses or what the server reported: each variant's
/// message, kind and context, turned into the crate's [`Error`] at once with `From`.
///
/// The message of a driver or pool error says what happened without walking
/// `source()`: the server's SQLSTATE, message, detail and hint; for a connection that
/// could not be made, the server's address (when the saver knows it) and the cause,
/// e.g. `connection refused`. It never repeats the text of the errors under it, so a
/// printed error chain shows each text once: the driver's error is the `source()`
/// ([`Error::as_postgres`]), and under a failed connection the operating system's
/// error.
#[derive(Debug)]
pub(crate) enum PgFault {
    /// The server (or the connection to it) reported an error.
    Db {
        /// The saver operation, e.g. `"put"`.
        operation: &'static str,
        /// The driver's error (SQLSTATE in `source.code()`).
        source: tokio_postgres::Error,
    },
    /// No connection could be taken from the pool.
    Pool {
        /// The saver operation.
        operation: &'static str,
        /// The pool's error.
        source: deadpool_postgres::PoolError,
        /// What the pool connects to (host, port, database, role, TLS mode) when the
        /// saver built the pool from a connection string.
        target: Option<Arc<Target>>,
        /// Who answered at the server's address when it is not PostgreSQL (`probe.rs`).
        answered: Option<String>,
    },
    /// No connection was made, and the driver has no error to say why: the server at
    /// the address is not PostgreSQL, or `connect_timeout` passed (`probe.rs`).
    Unmade {
        /// What was being done.
        operation: &'static str,
        /// What it connected to.
        target: Arc<Target>,
        /// Why, in words.
        why: String,
    },
    /// One connection (a store command's) could not be made.
    Connect {
        /// What was being done.
        operation: &'static str,
        /// What it connected to.
        target: Arc<Target>,
        /// The driver's error.
        source: tokio_postgres::Error,
        /// Who answered at the server's address when it is not PostgreSQL (`probe.rs`).
        answered: Option<String>,
    },
    /// The TLS settings cannot be used: a root certificate file that cannot be read,
    /// no root certificates on the system.
    Tls {
        /// What was wrong.
        reason: String,
    },
    /// The pool could not be built from the given configuration, or the connection
    /// string does not parse.
    Config {
        /// What was wrong.
        reason: String,
    },
    /// The schema name is not a plain identifier (`[A-Za-z_][A-Za-z0-9_$]*`, at most
    /// 63 bytes).
    InvalidSchemaName {
        /// The name as given.
        name: String,
        /// What was wrong.
        reason: &'static str,
    },
    /// `verify`: there is no `checkpoint_migrations` table (run `setup` first).
    SchemaMissing {
        /// The schema searched (`search_path` when none was configured).
        schema: String,
    },
    /// `verify`/`setup`: the tables have the layout of Python's deprecated
    /// `ShallowPostgresSaver` (no `checkpoint_id` in `checkpoints`).
    ShallowSchema {
        /// The schema searched.
        schema: String,
    },
    /// `verify`/`setup`: the database was migrated past the last version this saver
    /// knows, by a newer saver whose layout it cannot vouch for.
    SchemaTooNew {
        /// The schema searched.
        schema: String,
        /// `max(v)` in `checkpoint_migrations`.
        found: i32,
        /// The last migration this saver knows.
        known: i32,
    },
    /// `verify`: migrations are missing, or a table or column they create is absent.
    SchemaIncomplete {
        /// The schema searched.
        schema: String,
        /// What is missing.
        reason: String,
    },
    /// `setup`: another process held the migration lock for longer than the timeout.
    LockTimeout {
        /// How long `setup` waited.
        waited_ms: u128,
    },
    /// A value that must go into a JSONB column (checkpoint, metadata, `list` filter)
    /// has no JSONB form.
    NotJsonb {
        /// `checkpoint`, `metadata` or `filter`.
        what: &'static str,
        /// Where in the value, e.g. `$.parents.x`.
        path: String,
        /// Why, e.g. "NaN has no JSONB form".
        reason: String,
    },
    /// A stored JSONB or key column could not be read.
    UnreadableColumn {
        /// Thread, namespace, checkpoint id and column.
        location: String,
        /// What was wrong.
        reason: String,
    },
}

impl PgFault {
    fn kind(&self) -> ErrorKind {
        use PgFault as P;
        match self {
            P::Db { .. } => ErrorKind::Storage,
            P::Pool {
                source: deadpool_postgres::PoolError::Backend(e),
                answered: None,
                ..
            }
            | P::Connect {
                source: e,
                answered: None,
                ..
            } if tls_failure(e).is_some() => ErrorKind::Tls,
            P::Pool { .. } | P::Connect { .. } | P::Unmade { .. } => {
                ErrorKind::ConnectionUnavailable
            }
            P::Config { .. } => ErrorKind::InvalidStoreLocation,
            P::Tls { .. } => ErrorKind::Tls,
            P::InvalidSchemaName { .. } => ErrorKind::InvalidSchemaName,
            P::SchemaMissing { .. } => ErrorKind::SchemaMissing,
            P::ShallowSchema { .. } => ErrorKind::ShallowSchema,
            P::SchemaTooNew { .. } => ErrorKind::SchemaTooNew,
            P::SchemaIncomplete { .. } => ErrorKind::SchemaIncomplete,
            P::LockTimeout { .. } => ErrorKind::LockTimeout,
            P::NotJsonb { .. } => ErrorKind::NotJsonb,
            P::UnreadableColumn { .. } => ErrorKind::UnreadableColumn,
        }
    }
}

/// The fault's kind and message; the operation ([`Error::operation`]); the schema,
/// name or path ([`Error::subject`]); the driver's error as `source()` (for a pool that
/// could not connect, the driver's error under it).
impl From<PgFault> for Error {
    #[cold]
    fn from(fault: PgFault) -> Self {
        use PgFault as P;
        let kind = fault.kind();
        let message = fault.to_string();
        match fault {
            P::Db { operation, source }
            | P::Connect {
                operation, source, ..
            } => Error::with_source(kind, message, source).with_operation(operation),
            P::Pool {
                operation, source, ..
            } => match source {
                deadpool_postgres::PoolError::Backend(e) => {
                    Error::with_source(kind, message, e).with_operation(operation)
                }
                other => Error::with_source(kind, message, other).with_operation(operation),
            },
            P::Unmade { operation, .. } => Error::new(kind, message).with_operation(operation),
            P::InvalidSchemaName { name, .. } => Error::new(kind, message).with_subject(name),
            P::SchemaMissing { schema }
            | P::ShallowSchema { schema }
            | P::SchemaTooNew { schema, .. }
            | P::SchemaIncomplete { schema, .. } => Error::new(kind, message).with_subject(schema),
            P::NotJsonb { path, .. } => Error::new(kind, message).with_subject(path),
            P::Config { .. }
            | P::Tls { .. }
            | P::LockTimeout { .. }
            | P::UnreadableColumn { .. } => Error::new(kind, message),
        }
    }
}

impl std::fmt::Display for PgFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use PgFault as P;
        match self {
            P::Db { operation, source } => write!(f, "postgres {operation}: {}", explain(source).0),
            P::Pool {
                operation,
                source,
                target,
                answered,
            } => match source {
                deadpool_postgres::PoolError::Backend(e) => {
                    write_connect_failure(f, operation, target.as_deref(), e, answered)
                }
                other => match target {
                    Some(t) => write!(
                        f,
                        "postgres {operation}: no connection to {t} from the pool: {other}"
                    ),
                    None => write!(
                        f,
                        "postgres {operation}: no connection to the server from the pool: {other}"
                    ),
                },
            },
            P::Connect {
                operation,
                target,
                source,
                answered,
            } => write_connect_failure(f, operation, Some(target), source, answered),
            P::Unmade {
                operation,
                target,
                why,
            } => write!(f, "postgres {operation}: cannot connect to {target}: {why}"),
            P::Config { reason } => write!(f, "postgres configuration: {reason}"),
            P::Tls { reason } => write!(f, "postgres TLS: {reason}"),
            P::InvalidSchemaName { name, reason } => {
                write!(f, "invalid schema name {name:?}: {reason}")
            }
            P::SchemaMissing { schema } => {
                write!(f, "no checkpoint schema in {schema}: run setup() first")
            }
            P::ShallowSchema { schema } => write!(
                f,
                "the checkpoint tables in {schema} belong to ShallowPostgresSaver (no \
                 checkpoints.checkpoint_id or checkpoint_blobs.version); this saver cannot \
                 share them"
            ),
            P::SchemaTooNew {
                schema,
                found,
                known,
            } => write!(
                f,
                "checkpoint schema in {schema} is at migration {found}, newer than the last \
                 known ({known})"
            ),
            P::SchemaIncomplete { schema, reason } => {
                write!(f, "checkpoint schema in {schema} is incomplete: {reason}")
            }
            P::LockTimeout { waited_ms } => write!(
                f,
                "setup: the migration advisory lock was not free within {waited_ms} ms"
            ),
            P::NotJsonb { what, path, reason } => write!(f, "{what} at {path}: {reason}"),
            P::UnreadableColumn { location, reason } => {
                write!(f, "stored row {location}: {reason}")
            }
        }
    }
}

/// What a driver error says, as one line, and the I/O error at its root. The line
/// names the I/O error only by its kind (`connection refused`), so the line and the
/// I/O error's own text (`Connection refused (os error 111)`) do not repeat each other.
pub(crate) fn explain(e: &tokio_postgres::Error) -> (String, Option<&std::io::Error>) {
    if let Some(db) = e.as_db_error() {
        let mut text = format!(
            "server error {} ({}): {}",
            db.code().code(),
            db.severity(),
            db.message()
        );
        if let Some(detail) = db.detail() {
            text.push_str("; detail: ");
            text.push_str(detail);
        }
        if let Some(hint) = db.hint() {
            text.push_str("; hint: ");
            text.push_str(hint);
        }
        return (text, None);
    }
    // The driver's own text is its `Display` (the `source()` of the crate's error), so
    // the line starts below it: the causes under it, the I/O error by its kind.
    let mut parts: Vec<String> = Vec::new();
    let mut io = None;
    let mut cur = std::error::Error::source(e);
    while let Some(c) = cur {
        if let Some(found) = c.downcast_ref::<std::io::Error>() {
            parts.push(found.kind().to_string());
            io = Some(found);
            break;
        }
        let text = c.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cur = c.source();
    }
    if parts.is_empty() {
        parts.push(e.to_string());
    }
    (parts.join(": "), io)
}

/// `postgres OPERATION: cannot connect to TARGET: REASON`, the reason with what to do.
fn write_connect_failure(
    f: &mut std::fmt::Formatter<'_>,
    operation: &str,
    target: Option<&Target>,
    e: &tokio_postgres::Error,
    answered: &Option<String>,
) -> std::fmt::Result {
    match target {
        Some(t) => write!(f, "postgres {operation}: cannot connect to {t}: ")?,
        None => write!(f, "postgres {operation}: cannot connect to the server: ")?,
    }
    match answered {
        // The driver's words ("bytes remaining on stream", "server does not support
        // TLS") describe a PostgreSQL server that misbehaved; this is none.
        Some(who) => f.write_str(who),
        None => f.write_str(&connect_reason(target, e)),
    }
}

/// The TLS failure under a driver error: the rustls error of a refused handshake, or
/// `None` with `Some` outside for a server that has no TLS.
pub(super) fn tls_failure(e: &tokio_postgres::Error) -> Option<Option<&rustls::Error>> {
    let mut cur = std::error::Error::source(e);
    while let Some(c) = cur {
        if let Some(r) = c.downcast_ref::<rustls::Error>() {
            return Some(Some(r));
        }
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            if let Some(r) = io.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
                return Some(Some(r));
            }
        }
        cur = c.source();
    }
    // The driver's words for a TLS failure without a TLS error under it ("server does
    // not support TLS" under "error performing TLS handshake").
    (e.to_string() == "error performing TLS handshake").then_some(None)
}

/// Why a connection failed, in one line, and what to do about it: the server's own
/// message (SQLSTATE, message, detail, hint), the operating system's reason, or the TLS
/// failure; never the password.
pub(crate) fn connect_reason(target: Option<&Target>, e: &tokio_postgres::Error) -> String {
    let mut text = match tls_failure(e) {
        Some(Some(r)) => tls::describe(r, target.is_some_and(|t| t.sslmode == SslMode::Require)),
        Some(None) => format!(
            "{}; the server has TLS turned off (ssl = off): connect with sslmode=prefer or \
             disable, or turn ssl on in its postgresql.conf",
            explain(e).0
        ),
        None => {
            let (mut text, io) = explain(e);
            if let Some(hint) = hint(target, e, io) {
                text.push_str("; ");
                text.push_str(&hint);
            }
            text
        }
    };
    if let Some(t) = target {
        for note in &t.notes {
            text.push_str("; note: ");
            text.push_str(note);
        }
    }
    text
}

/// What to do about a connection failure that is not about TLS.
fn hint(
    target: Option<&Target>,
    e: &tokio_postgres::Error,
    io: Option<&std::io::Error>,
) -> Option<String> {
    if let Some(db) = e.as_db_error() {
        let password_from = target.and_then(|t| t.password_from.as_deref());
        return match db.code().code() {
            "3D000" => Some(
                "create it (createdb) or name another database (the URL's path, dbname=, \
                 PGDATABASE)"
                    .to_owned(),
            ),
            "28000" if db.message().contains("no encryption") => Some(
                "the server accepts this role and database only over TLS: connect with \
                 sslmode=require, verify-ca or verify-full"
                    .to_owned(),
            ),
            "28000" if db.message().contains("client certificate") => Some(
                "the server asks for a client certificate: give sslcert=FILE and sslkey=FILE \
                 (or PGSSLCERT and PGSSLKEY, or ~/.postgresql/postgresql.crt and .key), \
                 signed by a CA the server trusts (its ssl_ca_file)"
                    .to_owned(),
            ),
            "28000" if db.message().contains("certificate") => Some(
                "the client certificate does not name this role: its common name (CN) must \
                 be the role connected as (or map to it in pg_ident.conf)"
                    .to_owned(),
            ),
            "28000" if db.message().contains("pg_hba.conf") => Some(
                "the server's pg_hba.conf lets no such connection in: ask its administrator"
                    .to_owned(),
            ),
            "28000" => Some("check the role name (the URL's user, user=, PGUSER)".to_owned()),
            "28P01" => Some(match password_from {
                Some(from) => format!("check the password (it came from {from})"),
                None => "no password was given: put it in PGPASSWORD, the password file \
                         (~/.pgpass or PGPASSFILE, mode 0600) or the URL"
                    .to_owned(),
            }),
            // The role's own limit or the server's: what to do differs.
            "53300" if db.message().contains("for role") => Some(
                "the role's CONNECTION LIMIT is reached: its sessions hold every slot it \
                 may have (pg_stat_activity names them); end some, or raise the limit \
                 (ALTER ROLE ... CONNECTION LIMIT)"
                    .to_owned(),
            ),
            "53300" => Some(
                "the server has no connection slot free (max_connections, less those kept \
                 for superusers): retry later, or end idle sessions (pg_stat_activity)"
                    .to_owned(),
            ),
            "57P03" => Some("the server is starting up or shutting down: retry".to_owned()),
            _ => None,
        };
    }
    let local = target.is_some_and(|t| t.local_socket);
    match io.map(std::io::Error::kind) {
        Some(std::io::ErrorKind::ConnectionRefused) if !local => Some(
            "is the server running on that host and accepting TCP/IP connections on that \
             port? (the host and port come from the URL, PGHOST and PGPORT)"
                .to_owned(),
        ),
        Some(std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::NotFound) if local => {
            Some(
                "is the server running locally and accepting connections on that socket? \
                 (name a host with the URL or PGHOST)"
                    .to_owned(),
            )
        }
        Some(std::io::ErrorKind::TimedOut) => {
            Some("the server did not answer in time: check the host and the network".to_owned())
        }
        Some(std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::NotFound) => None,
        // A name that does not resolve, an unreachable network: the operating system's
        // words are the reason.
        Some(_) => io.map(|i| format!("({i})")),
        None if e.to_string() == "invalid configuration"
            && explain(e).0.contains("password missing") =>
        {
            Some(
                "the server asks for a password and none was given: put it in PGPASSWORD, \
                 the password file (~/.pgpass or PGPASSFILE, mode 0600) or the URL"
                    .to_owned(),
            )
        }
        None => None,
    }
}
