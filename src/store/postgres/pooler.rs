//! Whether a Postgres URL reaches the server through a pooler in transaction or
//! statement mode (PgBouncer's `pool_mode = transaction`, Supavisor's and the managed
//! services' pooler ports), which hands each transaction of one client connection to
//! whichever server connection is free.
//!
//! A store command needs one server session for its whole run: its read-only session,
//! its `lock_timeout`, its exported snapshot and its advisory lock are session state.
//! Behind such a pooler that state stays on the server connection it was set on, which
//! the pooler then gives to other clients: measured 2026-12-06 behind PgBouncer 1.18 in
//! transaction mode, after one `lgcodec store stats` every one of the pool's server
//! connections was read-only, and Python's `PostgresSaver` writing through the same
//! pooler failed with "cannot execute DELETE in a read-only transaction". So the
//! first connection a command opens to a server is probed before any `SET`, and a
//! pooler that does not keep sessions is refused with what to connect to instead.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;

use tokio_postgres::{Client, SimpleQueryMessage};

use super::super::error::StoreFault;
use super::Result;
use crate::saver::postgres::ConnInfo;

/// The targets (host, port, database, role) found to keep sessions in this process:
/// probed once each.
static KEEPS_SESSIONS: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// The set, whatever a thread that panicked holding it left (a set of names stays one).
fn keeps_sessions() -> std::sync::MutexGuard<'static, BTreeSet<String>> {
    KEEPS_SESSIONS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How long the probe lets a statement of the first connection wait while the second
/// holds a transaction open: behind a pool of one server connection it waits for that
/// transaction, which is then ended (the pids already tell).
const HELD_OPEN: Duration = Duration::from_millis(500);

/// Refuses `client` (just connected to `info`, nothing set on it yet) when its
/// statements do not all run in one server session. The signature: two connections of
/// this process, one holding a transaction open, and a backend pid seen on the first
/// that changes, or that the second is then given. Directly connected, or through a
/// pooler in session mode, each connection keeps its own backend and neither can
/// happen. The probe sets nothing and writes nothing. A second connection the server
/// refuses (a role's `CONNECTION LIMIT`) leaves the question open, and the command
/// goes on: it is refused only on what was seen.
///
/// # Errors
/// [`ErrorKind::InvalidStoreLocation`](crate::ErrorKind::InvalidStoreLocation) naming
/// the pooler and what to do; the server's errors on `client`.
pub(super) async fn refuse_transaction_pooler(
    client: &Client,
    info: &ConnInfo,
    shown: &str,
) -> Result<()> {
    let key = info.target.to_string();
    if keeps_sessions().contains(&key) {
        return Ok(());
    }
    let Ok(other) = info.connect("connect").await else {
        return Ok(());
    };
    let pooled = match probe(client, &other).await {
        Some(pooled) => pooled,
        None => return Ok(()),
    };
    if pooled {
        return Err(StoreFault::InvalidLocation {
            given: shown.to_owned(),
            reason: "it goes through a connection pooler in transaction or statement mode \
                     (PgBouncer's pool_mode = transaction, Supavisor, a managed Postgres's \
                     pooler port), which runs each transaction on whichever server \
                     connection is free: a store command needs one session for its whole \
                     run (its read-only session, lock timeout, snapshot and lock would be \
                     left on connections the pooler gives to other clients, such as your \
                     agents). Connect to the server directly (its own port, often 5432) or \
                     through a pool in session mode; nothing was set or written"
                .to_owned(),
        }
        .into());
    }
    keeps_sessions().insert(key);
    Ok(())
}

/// `Some(true)` when the two connections show a pooler that does not keep sessions,
/// `Some(false)` when they show none, `None` when a statement failed (nothing known).
async fn probe(first: &Client, second: &Client) -> Option<bool> {
    let x = pid_of(&first.simple_query("SELECT pg_backend_pid()").await.ok()?)?;
    // Two rounds, each connection holding a transaction open in turn while the other
    // runs a statement: a pooler that gives out its most recently freed connection
    // (PgBouncer's default) and one that goes round its connections both show.
    let mut seen_first = vec![];
    let mut seen_second = vec![];
    for second_holds in [true, false] {
        let (holder, other) = if second_holds {
            (second, first)
        } else {
            (first, second)
        };
        let held = holder
            .simple_query("BEGIN READ ONLY; SELECT pg_backend_pid()")
            .await;
        let held = match held {
            Ok(rows) => pid_of(&rows)?,
            // Statement mode refuses a transaction block (PgBouncer: "transaction
            // blocks not allowed in statement pooling mode", and it closes the
            // connection).
            Err(e) => {
                let said = e
                    .as_db_error()
                    .map_or_else(|| e.to_string(), |db| db.message().to_owned());
                return said.contains("pooling mode").then_some(true);
            }
        };
        let statement = other.simple_query("SELECT pg_backend_pid()");
        tokio::pin!(statement);
        let answered = tokio::time::timeout(HELD_OPEN, &mut statement).await.ok();
        let ended = holder.simple_query("ROLLBACK").await;
        let answered = match answered {
            Some(answer) => answer,
            None => statement.await,
        };
        ended.ok()?;
        let answered = pid_of(&answered.ok()?)?;
        if second_holds {
            seen_second.push(held);
            seen_first.push(answered);
        } else {
            seen_first.push(held);
            seen_second.push(answered);
        }
    }
    Some(seen_first.iter().any(|p| *p != x) || seen_second.contains(&x))
}

/// The one value of a `SELECT pg_backend_pid()` answer (the last row of a batch).
fn pid_of(messages: &[SimpleQueryMessage]) -> Option<i64> {
    messages.iter().rev().find_map(|m| match m {
        SimpleQueryMessage::Row(row) => row.get(0)?.parse().ok(),
        _ => None,
    })
}
