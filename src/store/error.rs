//! Why a store could not be opened or an operation stopped, as the crate's [`Error`].

use std::path::PathBuf;

use crate::error::Error;
use crate::kind::ErrorKind;

/// The store operations' failures: each variant's message, kind and context, turned
/// into the crate's [`Error`] at once with `From`. It never leaves the store layer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreFault {
    /// The store argument is neither `sqlite:PATH`, a file path, nor a
    /// `postgres://`/`postgresql://` URL.
    #[error("invalid store {given:?}: {reason}")]
    InvalidLocation {
        /// The argument as given.
        given: String,
        /// What was wrong.
        reason: String,
    },
    /// The store's backend is not compiled in.
    #[error("{backend} stores need the crate feature `{feature}`, which this build does not have")]
    #[cfg_attr(all(feature = "sqlite", feature = "postgres"), allow(dead_code))]
    BackendDisabled {
        /// `sqlite` or `postgres`.
        backend: &'static str,
        /// The feature to turn on.
        feature: &'static str,
    },
    /// No file at the path (nothing is created).
    #[error("no SQLite store at {}: {reason}", path.display())]
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    NotFound {
        /// The path.
        path: PathBuf,
        /// The operating system's answer.
        reason: String,
    },
    /// The database exists but is not a Python LangGraph checkpoint store (or not one of
    /// the layout this version knows): what was found.
    #[error("{location} is not a Python LangGraph checkpoint store: {found}")]
    NotAStore {
        /// The store.
        location: String,
        /// What it holds instead.
        found: String,
    },
    /// The store cannot be written (a read-only file, directory or server), and the
    /// operation writes.
    #[error("{location} cannot be written: {reason}")]
    ReadOnly {
        /// The store.
        location: String,
        /// Why.
        reason: String,
    },
    /// A writing operation on a store opened read-only.
    #[error("{operation} writes: open the store with Store::open_for_writing (or use a dry run)")]
    NotWritable {
        /// The operation.
        operation: &'static str,
    },
    /// SQLite reported an error.
    #[cfg(feature = "sqlite")]
    #[error("sqlite {operation}: {source}")]
    Sqlite {
        /// What was being done.
        operation: &'static str,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The Postgres server (or the connection to it) reported an error.
    #[cfg(feature = "postgres")]
    #[error("postgres {operation}: {}", server_line(source))]
    Postgres {
        /// What was being done.
        operation: &'static str,
        /// The driver's error (SQLSTATE in `source.code()`).
        source: tokio_postgres::Error,
    },
    /// The Postgres connection kept failing: the sweep stopped. Every committed batch
    /// stays; the batch in flight was rolled back by the server. Run it again to resume.
    #[error("postgres: the connection was lost {attempts} time(s) in a row ({last}); stopped, nothing half-written: run again to resume")]
    ConnectionLost {
        /// Consecutive failures.
        attempts: u32,
        /// The last error.
        last: String,
    },
    /// A stop was asked for (SIGINT, SIGTERM, the stop flag) while the operation waited
    /// to re-open a lost Postgres connection: it ended there instead of waiting on. The
    /// unit in flight went with the connection; every committed batch stays. Run it
    /// again to resume.
    #[error("postgres: the connection was lost ({last}) and a stop was asked for while waiting to reconnect; stopped, nothing half-written: run again to resume")]
    StoppedReconnecting {
        /// The error that lost the connection.
        last: String,
    },
    /// A copy's reads of its Postgres source kept waiting past their lock timeout for a
    /// table lock (or kept being chosen as a deadlock victim): something held an
    /// exclusive lock on the source's tables for longer than the retries wait. Every
    /// committed batch stays; run it again to resume once the lock is released.
    #[error("postgres: the copy's reads of the source could not get their table locks {attempts} time(s) in a row ({last}): something kept an exclusive lock on the source's tables (an ALTER TABLE such as lgcodec store upgrade's or Python's setup(), VACUUM FULL, TRUNCATE, LOCK TABLE) although the copy ended its read transaction each time to let it through; stopped, nothing half-written: let it finish (pg_stat_activity and pg_locks name the session holding the lock), then run the copy again to resume")]
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    SourceLocked {
        /// Consecutive failures.
        attempts: u32,
        /// The last error.
        last: String,
    },
    /// A task of the operation failed (panicked or was cancelled): a blocking task of
    /// the SQLite backend, or a copy's read-back.
    #[error("a task of the operation failed: {0}")]
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    Task(String),
    /// A stored value or row could not be read (store maintenance: inspect, copy):
    /// which, and why.
    #[error("{what}: {reason}")]
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    Unreadable {
        /// The row.
        what: String,
        /// Why.
        reason: String,
    },
    /// A copy stopped at a source row it could not read (`cause`, naming the row), and
    /// what the operator can do next, for the row's thread.
    #[error("{cause}. The copy stopped at that row. To go on, mend or delete thread {t} in the source, or leave it out (`--exclude-thread {t}`), then run the same copy again: it skips what is already copied. `lgcodec store audit {s}` lists the values the keys cannot read, in other threads too; `lgcodec store inspect {s} --thread {t} --check` shows the thread's history with the checkpoints that do not decode marked{p}", t = shell_word(thread), s = pasted(store), p = password_left_out(store))]
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    CopyStopped {
        /// The thread of the row.
        thread: String,
        /// The source, as shown.
        store: String,
        /// Why the row could not be read.
        #[source]
        cause: Error,
    },
    /// The store's layout cannot be upgraded in place (store upgrade): copy it into a
    /// fresh store instead (`lgcodec store copy STORE NEW_STORE`), which reads every
    /// old layout.
    #[error("{location} ({layout}) cannot be upgraded in place: {reason}; copy it into a fresh store instead (lgcodec store copy {location} NEW_STORE)")]
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    CannotUpgrade {
        /// The store.
        location: String,
        /// The layout found.
        layout: String,
        /// Why.
        reason: String,
    },
    /// A date for store prune is malformed, or no prune rule was given.
    #[error("prune: {reason} ({given:?})")]
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    InvalidDate {
        /// The text as given.
        given: String,
        /// What was wrong.
        reason: String,
    },
    /// A retention policy that cannot be used (store retain): where it came from and
    /// what is wrong with it.
    #[error("retention policy {origin}: {reason}")]
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    InvalidPolicy {
        /// The file (or `policy` for one built in code).
        origin: String,
        /// What is wrong and what to write instead.
        reason: String,
    },
    /// The rules would delete every thread of the store (store retain, store prune).
    #[error("{store}: {} would delete all {threads} thread(s) of the store; nothing was deleted. {}, or give --allow-all ({}::allow_all) if emptying the store is what you want", emptying(operation)[0], emptying(operation)[1], emptying(operation)[2])]
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    WouldDeleteAll {
        /// `retain` or `prune`.
        operation: &'static str,
        /// The store.
        store: String,
        /// Its threads.
        threads: u64,
    },
    /// Threads named to select or to leave out (`prune`: to leave out) that the store
    /// does not hold.
    #[error("{operation}: {store} holds no thread {} (no checkpoint has that thread_id): check the id (`lgcodec store inspect` lists a store's threads); nothing was done", listed(threads))]
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    ThreadsNotFound {
        /// `copy`, `export` or `prune`.
        operation: &'static str,
        /// The store.
        store: String,
        /// The threads, as named.
        threads: Vec<String>,
    },
    /// A copy's target already holds threads of the copy with checkpoints the source
    /// does not have: copying would merge two histories.
    #[error("{target} already holds {count} of the thread(s) to copy with checkpoints the source does not have ({}): copying would merge two histories, and Python would read whichever checkpoint is newest. Copy into an empty store, leave these threads out (--exclude-thread), or give --merge to add the source's checkpoints to them", threads.join(", "))]
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    HistoryConflict {
        /// The target.
        target: String,
        /// How many threads.
        count: u64,
        /// The first few.
        threads: Vec<String>,
    },
    /// The key probe: the first encrypted values a store operation read were all refused
    /// by every key given, and none opened.
    #[error("{operation}: none of the first {tried} encrypted value(s) read opens under any key given ({}): the store's values were written under another key; stopped, nothing written. Check LANGGRAPH_AES_KEY (the primary key), and LANGGRAPH_AES_KEY_PREVIOUS or LANGGRAPH_AES_FALLBACK_KEYS for the key the values were written with. If only values under a key that is lost come first, --no-key-probe goes on and counts them unreadable", keys.join(", "))]
    NoKeyOpens {
        /// The operation (`audit`, `encrypt`, `rekey`).
        operation: &'static str,
        /// How many encrypted values were tried, every key on each.
        tried: u64,
        /// The labels of the keys tried (never key bytes).
        keys: Vec<String>,
    },
    /// A backup file (store export) could not be written: the disk under it is full.
    #[error("backup {file}: {reason}; the disk is full: free space (or write the backup to another disk), then run the same command again")]
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    BackupDiskFull {
        /// The file.
        file: String,
        /// What the system said.
        reason: String,
    },
    /// A scratch file of `operation` failed: `stats` sorting every thread
    /// (`StatsOptions::sorted`), `audit` holding the per-thread counts, `prune` a long
    /// thread's blob references, `inspect` a thread's history.
    #[error("{operation}: {} in a scratch file ({reason}): it goes in SQLITE_TMPDIR or TMPDIR (else /var/tmp, then /tmp); point one at a directory with room{}", scratch_use(operation), if *operation == "stats" { ", or list the first N threads (--top N), which needs none" } else { "" })]
    #[cfg(feature = "sqlite")]
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Scratch {
        /// The operation.
        operation: &'static str,
        /// What SQLite said.
        reason: String,
        /// Whether the disk was full.
        full: bool,
    },
    /// A backup file (store export/import) is malformed, or cannot be read or written.
    #[error("backup {file}: {reason}")]
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    Backup {
        /// The file, with the line number when known.
        file: String,
        /// What was wrong.
        reason: String,
    },
}

/// Why a stored value could not be read, said for someone running a store command: an
/// encrypted row met without a key names the environment variables to set (the codec's
/// own text speaks of serializer types, for code).
#[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn read_failure(e: &Error) -> String {
    match e.as_tag() {
        Some(crate::serializer::TagError::UnknownType { tag }) if tag.ends_with("+aes") => {
            format!(
                "encrypted (type {tag:?}) and no key was given: set LANGGRAPH_AES_KEY to the key \
                 it was written with (older keys in LANGGRAPH_AES_KEY_PREVIOUS)"
            )
        }
        _ => e.to_string(),
    }
}

impl StoreFault {
    /// A task of the operation (`what`) that ended without its result (it panicked or
    /// was cancelled): `e` is the runtime's `JoinError`.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn task(what: &str, e: impl std::fmt::Display) -> Error {
        StoreFault::Task(format!("{what}: {e}")).into()
    }

    fn kind(&self) -> ErrorKind {
        match self {
            StoreFault::InvalidLocation { .. } => ErrorKind::InvalidStoreLocation,
            StoreFault::BackendDisabled { .. } => ErrorKind::BackendDisabled,
            StoreFault::NotFound { .. } => ErrorKind::StoreNotFound,
            StoreFault::NotAStore { .. } => ErrorKind::NotAStore,
            StoreFault::ReadOnly { .. } => ErrorKind::ReadOnly,
            StoreFault::NotWritable { .. } => ErrorKind::NotWritable,
            #[cfg(feature = "sqlite")]
            StoreFault::Sqlite { .. } => ErrorKind::Storage,
            #[cfg(feature = "postgres")]
            StoreFault::Postgres { .. } => ErrorKind::Storage,
            StoreFault::ConnectionLost { .. } | StoreFault::StoppedReconnecting { .. } => {
                ErrorKind::ConnectionLost
            }
            StoreFault::SourceLocked { .. } => ErrorKind::LockTimeout,
            StoreFault::Task(_) => ErrorKind::TaskFailed,
            StoreFault::Unreadable { .. } | StoreFault::CopyStopped { .. } => {
                ErrorKind::UnreadableRow
            }
            StoreFault::CannotUpgrade { .. } => ErrorKind::CannotUpgrade,
            StoreFault::InvalidDate { .. } => ErrorKind::InvalidDate,
            StoreFault::Backup { .. } => ErrorKind::Backup,
            StoreFault::BackupDiskFull { .. } => ErrorKind::DiskFull,
            #[cfg(feature = "sqlite")]
            StoreFault::Scratch { full: true, .. } => ErrorKind::DiskFull,
            #[cfg(feature = "sqlite")]
            StoreFault::Scratch { full: false, .. } => ErrorKind::Storage,
            StoreFault::HistoryConflict { .. } => ErrorKind::HistoryConflict,
            StoreFault::NoKeyOpens { .. } => ErrorKind::NoKeyOpens,
            StoreFault::InvalidPolicy { .. } => ErrorKind::InvalidPolicy,
            StoreFault::WouldDeleteAll { .. } => ErrorKind::WouldDeleteAll,
            StoreFault::ThreadsNotFound { .. } => ErrorKind::ThreadNotFound,
        }
    }
}

/// Thread ids as a message lists them: quoted, the first ten, then how many more.
fn listed(threads: &[String]) -> String {
    const SHOWN: usize = 10;
    let mut out: Vec<String> = threads
        .iter()
        .take(SHOWN)
        .map(|t| format!("{t:?}"))
        .collect();
    if threads.len() > SHOWN {
        out.push(format!("and {} more", threads.len() - SHOWN));
    }
    out.join(", ")
}

/// What [`StoreFault::WouldDeleteAll`] says for `operation`: what decided, what to
/// check, and the options type whose `allow_all` lets it through.
fn emptying(operation: &str) -> [&'static str; 3] {
    if operation == "retain" {
        [
            "the policy",
            "Check the durations (a TTL in seconds where minutes were meant?)",
            "RetainOptions",
        ]
    } else {
        ["the rules", "Check the date (--idle-since)", "PruneOptions"]
    }
}

/// The fault's kind and message; the operation ([`Error::operation`]); the store,
/// backup file or what was unreadable ([`Error::subject`]); SQLite's or the Postgres
/// driver's error as `source()` ([`Error::as_sqlite`], [`Error::as_postgres`]).
/// What `operation` keeps in a scratch file, as its error says it.
#[cfg(feature = "sqlite")]
fn scratch_use(operation: &str) -> &'static str {
    match operation {
        "stats" => "the threads could not be sorted",
        "audit" => "the counts by thread could not be held",
        "prune" => "a long thread's blob references could not be held",
        "inspect" => "the thread's history could not be walked",
        _ => "what the command sets aside could not be held",
    }
}

impl From<StoreFault> for Error {
    #[cold]
    fn from(fault: StoreFault) -> Self {
        let kind = fault.kind();
        let message = fault.to_string();
        let e = Error::new(kind, message.clone());
        match fault {
            #[cfg(feature = "sqlite")]
            StoreFault::Sqlite { operation, source } if crate::error::lock_timed_out(&source) => {
                let message = format!(
                    "{message}: another connection held a lock on the store for longer than \
                     this command waits ({} s): a long write transaction (an agent, a backup, \
                     a sqlite3 shell, another lgcodec store command); nothing was \
                     half-written: run the same command again once it is done",
                    crate::saver::layout::SQLITE_BUSY_WAIT.as_secs()
                );
                Error::with_source(ErrorKind::LockTimeout, message, source)
                    .with_operation(operation)
            }
            #[cfg(feature = "sqlite")]
            StoreFault::Sqlite { operation, source } => {
                Error::with_source(kind, message, source).with_operation(operation)
            }
            #[cfg(feature = "postgres")]
            StoreFault::Postgres { operation, source } if crate::error::lock_timed_out(&source) => {
                let message = format!(
                    "{message}: another session held a lock the command needed for longer \
                     than it waits (the server's lock_timeout, or {} s): a transaction left \
                     open, a long ALTER TABLE or VACUUM FULL (pg_stat_activity and pg_locks \
                     name it); nothing was half-written: run the same command again once it \
                     is done",
                    crate::saver::layout::POSTGRES_LOCK_WAIT.as_secs()
                );
                Error::with_source(ErrorKind::LockTimeout, message, source)
                    .with_operation(operation)
            }
            #[cfg(feature = "postgres")]
            StoreFault::Postgres { operation, source } => {
                Error::with_source(kind, message, source).with_operation(operation)
            }
            StoreFault::CopyStopped { thread, cause, .. } => {
                Error::with_source(kind, message, cause)
                    .with_operation("copy")
                    .with_subject(thread)
            }
            StoreFault::CannotUpgrade {
                location,
                layout,
                reason,
            } => e
                .with_subject(location)
                .with_found(layout)
                .with_reason(reason),
            StoreFault::NotAStore { location, found } => e.with_subject(location).with_found(found),
            StoreFault::InvalidLocation { given: s, reason }
            | StoreFault::ReadOnly {
                location: s,
                reason,
            }
            | StoreFault::Backup { file: s, reason }
            | StoreFault::BackupDiskFull { file: s, reason }
            | StoreFault::Unreadable { what: s, reason }
            | StoreFault::InvalidPolicy { origin: s, reason } => {
                e.with_subject(s).with_reason(reason)
            }
            StoreFault::NotFound { path, .. } => e.with_subject(path.display().to_string()),
            StoreFault::HistoryConflict { target, .. } => e.with_subject(target),
            StoreFault::WouldDeleteAll {
                operation,
                store,
                threads,
            } => e
                .with_operation(operation)
                .with_subject(store)
                .with_count(usize::try_from(threads).unwrap_or(usize::MAX)),
            StoreFault::NotWritable { operation } => e.with_operation(operation),
            #[cfg(feature = "sqlite")]
            StoreFault::Scratch {
                operation, reason, ..
            } => e.with_operation(operation).with_reason(reason),
            StoreFault::ThreadsNotFound {
                operation,
                store,
                threads,
            } => e
                .with_operation(operation)
                .with_subject(store)
                .with_count(threads.len()),
            StoreFault::NoKeyOpens {
                operation, tried, ..
            } => e
                .with_operation(operation)
                .with_count(usize::try_from(tried).unwrap_or(usize::MAX)),
            StoreFault::BackendDisabled { .. }
            | StoreFault::ConnectionLost { .. }
            | StoreFault::StoppedReconnecting { .. }
            | StoreFault::SourceLocked { .. }
            | StoreFault::Task(_)
            | StoreFault::InvalidDate { .. } => e,
        }
    }
}

/// A driver error as the line [`StoreFault::Postgres`] shows: the server's own error
/// (SQLSTATE, severity, message, detail, hint) where it sent one, which the driver's
/// `Display` leaves out ("db error"), else the driver's text.
#[cfg(feature = "postgres")]
fn server_line(e: &tokio_postgres::Error) -> String {
    if e.as_db_error().is_some() {
        crate::saver::postgres::explain(e).0
    } else {
        e.to_string()
    }
}

/// Bytes of a thread id shown in [`thread_id_not_text`] at most: a longer id is found
/// by its first bytes.
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
const THREAD_ID_SHOWN: usize = 128;

/// A thread id SQLite holds as text whose `bytes` are not UTF-8 (written by something
/// other than Python's savers: Python's `sqlite3` cannot read it either), as an
/// [`ErrorKind::UnreadableRow`] that names it by its bytes as a SQL literal, with the
/// statements that find its rows and give the thread a text id. (A copy or a backup
/// cannot carry it: a thread id in a backup is JSON text, `--exclude-thread` takes
/// text.)
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
pub(crate) fn thread_id_not_text(bytes: &[u8]) -> Error {
    let head = bytes.get(..THREAD_ID_SHOWN).unwrap_or(bytes);
    let hex: String = head.iter().map(|b| format!("{b:02X}")).collect();
    let (literal, cond) = if head.len() == bytes.len() {
        (
            format!("X'{hex}'"),
            format!("thread_id = CAST(X'{hex}' AS TEXT)"),
        )
    } else {
        (
            format!("beginning X'{hex}'"),
            format!("substr(CAST(thread_id AS BLOB), 1, {THREAD_ID_SHOWN}) = X'{hex}'"),
        )
    };
    StoreFault::Unreadable {
        what: "a thread id".to_owned(),
        reason: format!(
            "not UTF-8 text: {len} byte(s), {literal} (written by something other than \
             Python's savers; Python's sqlite3 cannot read it either). \
             `SELECT count(*) FROM checkpoints WHERE {cond}` in sqlite3 finds its \
             checkpoints; give the thread a text id (`UPDATE checkpoints SET thread_id = \
             'NEW-ID' WHERE {cond}` and `UPDATE writes SET thread_id = 'NEW-ID' WHERE \
             {cond}`) or delete its rows, then run the command again",
            len = bytes.len(),
        ),
    }
    .into()
}

/// A target refused for its layout: `layout` is what was found there (empty, where the
/// operation fills none; else not today's Python layout).
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub(crate) fn not_current(location: &str, layout: &crate::saver::layout::StoreLayout) -> Error {
    let found = if *layout == crate::saver::layout::StoreLayout::Empty {
        layout.to_string()
    } else {
        format!(
            "{layout}: a target must be empty or in today's Python layout (copy an old store into a fresh one)"
        )
    };
    StoreFault::NotAStore {
        location: location.to_owned(),
        found,
    }
    .into()
}

/// A store to inspect in `layout`: every layout a saver wrote is taken; what none
/// wrote (no saver's tables, or tables of their names that no release left) is refused
/// with what was found.
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub(crate) fn refuse_unsaved(
    location: &str,
    layout: &crate::saver::layout::StoreLayout,
) -> Result<(), Error> {
    use crate::saver::layout::StoreLayout;
    match layout {
        StoreLayout::Empty | StoreLayout::Foreign { .. } => Err(StoreFault::NotAStore {
            location: location.to_owned(),
            found: layout.to_string(),
        }
        .into()),
        _ => Ok(()),
    }
}

/// A saver's error on opening `location`: not a store ([`StoreFault::NotAStore`], with
/// what the saver found), unless it is about TLS, free space or reaching the server
/// (what to do differs).
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub(crate) fn saver_err(location: &str) -> impl Fn(crate::Error) -> Error + '_ {
    move |e| {
        // Not about the layout: what to do differs (TLS settings, free space, a
        // connection refused or lost: the store may be fine).
        if matches!(
            e.kind(),
            crate::ErrorKind::Tls
                | crate::ErrorKind::DiskFull
                | crate::ErrorKind::ConnectionUnavailable
        ) || e.is_connection_lost()
        {
            return e;
        }
        StoreFault::NotAStore {
            location: location.to_owned(),
            found: e.to_string(),
        }
        .into()
    }
}

/// A store as shown (a Postgres URL with its passwords as `***`) as one shell word for
/// a command a message suggests, the hidden passwords left out
/// ([`without_passwords`](super::without_passwords)): pasted, the command takes them
/// from `PGPASSWORD` or the password file, where `***` would be tried as the password
/// itself.
pub(super) fn pasted(store: &str) -> String {
    shell_word(&super::without_passwords(store))
}

/// What a message giving commands to paste adds when [`pasted`] left a password out.
pub(super) fn password_left_out(store: &str) -> &'static str {
    if pasted(store) == shell_word(store) {
        ""
    } else {
        " (the commands leave the store's password out: give it in PGPASSWORD or \
         ~/.pgpass)"
    }
}

/// `word` as one shell word, pasted into a command a message suggests: as it is when
/// it holds only characters no shell treats specially, else in single quotes (a quote
/// inside as `'\''`).
pub(super) fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.,:/@%+=".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    /// A word made one shell word comes back as it was from a real shell
    /// (`sh -c 'printf %s WORD'`), spaces, quotes, `$`, globs and all; a plain word is
    /// left unquoted.
    #[test]
    fn a_shell_word_is_read_back_by_the_shell_as_it_was() {
        let words = [
            "t-main",
            "thread with spaces",
            "it's",
            "''",
            "$HOME `id` $(id) \\ \" ; & | < > * ? [a] ~ # !",
            "",
            "ünïcödé-線",
            "postgresql://u@h:5432/db?sslmode=require&x=1",
        ];
        for word in words {
            let out = std::process::Command::new("sh")
                .args(["-c", &format!("printf %s {}", shell_word(word))])
                .output()
                .expect("sh");
            assert_eq!(String::from_utf8_lossy(&out.stdout), word, "{word:?}");
        }
        assert_eq!(shell_word("t-main"), "t-main");
    }

    /// A Postgres URL as a message shows it (passwords as `***`, `Location::display`)
    /// is pasted without them, everything else kept, and the message says so; a path,
    /// or a URL without a password, is pasted as shown.
    #[test]
    fn a_store_is_pasted_without_its_hidden_password() {
        use super::{password_left_out, pasted};
        use crate::store::Location;
        let shown = |url: &str| Location::parse(url).expect("a store").display();
        let cases = [
            (
                "postgresql://app:s3cret@db:5432/x?sslmode=require&password=p2",
                "'postgresql://app@db:5432/x?sslmode=require'",
            ),
            ("postgres://app:pw@db/x", "postgres://app@db/x"),
            (
                "postgresql://app@db/x?sslpassword=k&application_name=a",
                "'postgresql://app@db/x?application_name=a'",
            ),
        ];
        for (url, want) in cases {
            let shown = shown(url);
            assert!(shown.contains("***"), "{shown}");
            assert_eq!(pasted(&shown), want, "{url}");
            assert!(password_left_out(&shown).contains("PGPASSWORD"), "{url}");
        }
        for plain in ["postgresql://app@db/x?sslmode=require", "/var/lib/s.sqlite"] {
            let shown = shown(plain);
            assert_eq!(pasted(&shown), super::shell_word(&shown));
            assert_eq!(password_left_out(&shown), "");
        }
    }

    /// The statements [`thread_id_not_text`] gives find the thread's rows and rename
    /// it, run as pasted: an id shown whole (a literal cast to text) and one longer
    /// than what is shown (found by its first bytes); a UTF-8 id beside each is left
    /// alone.
    #[cfg(feature = "sqlite")]
    #[test]
    fn a_thread_id_that_is_not_text_is_found_and_renamed_by_the_statements_given() {
        for len in [3usize, super::THREAD_ID_SHOWN + 72] {
            let bytes: Vec<u8> = (0..len).map(|i| 0x80 | (i % 0x7f) as u8).collect();
            assert!(std::str::from_utf8(&bytes).is_err());
            let conn = rusqlite::Connection::open_in_memory().expect("open");
            conn.execute_batch(
                "CREATE TABLE checkpoints (thread_id TEXT, checkpoint_id TEXT); \
                 CREATE TABLE writes (thread_id TEXT, checkpoint_id TEXT); \
                 INSERT INTO checkpoints VALUES ('t-ok', 'a');",
            )
            .expect("tables");
            for table in ["checkpoints", "writes"] {
                conn.execute(
                    &format!("INSERT INTO {table} VALUES (CAST(?1 AS TEXT), 'b')"),
                    [&bytes],
                )
                .expect("the id");
            }
            let said = super::thread_id_not_text(&bytes).to_string();
            assert!(said.contains(&format!("{len} byte(s)")), "{said}");
            let pasted: Vec<&str> = said.split('`').skip(1).step_by(2).collect();
            assert_eq!(pasted.len(), 3, "{said}");
            let found: i64 = conn.query_row(pasted[0], [], |r| r.get(0)).expect("count");
            assert_eq!(found, 1, "{}", pasted[0]);
            for update in &pasted[1..] {
                let changed = conn
                    .execute(&update.replace("NEW-ID", "t-new"), [])
                    .expect("update");
                assert_eq!(changed, 1, "{update}");
            }
            let ids: Vec<String> = conn
                .prepare("SELECT thread_id FROM checkpoints UNION ALL SELECT thread_id FROM writes ORDER BY 1")
                .expect("ids")
                .query_map([], |r| r.get(0))
                .expect("ids")
                .collect::<Result<_, _>>()
                .expect("every id is text now");
            assert_eq!(ids, ["t-new", "t-new", "t-ok"]);
        }
    }
}
