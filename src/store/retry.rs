//! Reconnecting after a lost Postgres connection, for every operation that writes or
//! sweeps a store (audit, encrypt, rekey, prune, retain, copy, import): a statement
//! that fails because the server closed the connection (a terminated backend, a
//! restart, a network cut) is waited on, its connection re-opened by the caller, and
//! the unit in flight (a page, a batch: one transaction, committed or not) done
//! again. At most [`DEFAULT_MAX_RECONNECTS`] losses in a row (unless an operation's
//! options say), then [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost):
//! what was committed stays, and a rerun resumes.
//!
//! A copy's source reads also step aside for a lock ([`Retry::lost_or_locked`]): a
//! read that gave up waiting for a table lock, or that Postgres ended as a deadlock, is
//! handled as a lost connection, counted apart, and ends as
//! [`ErrorKind::LockTimeout`](crate::ErrorKind::LockTimeout) past the same limit.
//!
//! A stop asked for while waiting to re-open ends the wait and the operation at once
//! ([`StoreFault::StoppedReconnecting`]): the unit in flight went with the connection,
//! every one committed before it stays, and a rerun resumes. Without that, a SIGTERM
//! during a server's absence would be acted on only after up to a minute of waits.
//!
//! The waits every operation makes are here too: [`sleep`], and [`pause`], which a stop
//! asked for cuts short.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::error::StoreFault;
use crate::error::Error;
use crate::ErrorKind;

/// A lost connection, or a new one the server refused (still away, not accepting
/// connections to the database yet): what waiting and re-opening may mend.
fn is_lost(e: &Error) -> bool {
    e.is_connection_lost() || e.kind() == ErrorKind::ConnectionUnavailable
}

/// A statement that gave up waiting for a lock (SQLSTATE 55P03 `lock_not_available`:
/// past the session's `lock_timeout`) or that Postgres ended to break a deadlock
/// (40P01 `deadlock_detected`): nothing was read or written, and the same statement
/// may go through once the lock holder is done.
#[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn is_lock_conflict(e: &Error) -> bool {
    #[cfg(feature = "postgres")]
    if let Some(code) = e.sqlstate() {
        return code == "55P03" || code == "40P01";
    }
    let _ = e;
    false
}

/// A new connection the server refused for want of a slot (SQLSTATE 53300
/// `too_many_connections`: the role's `CONNECTION LIMIT`, the server's
/// `max_connections`, the slots it keeps for superusers). Where the connection was one
/// more, to work beside those open (prune's second page, a long thread's read-ahead),
/// the operation goes on with the ones it has.
pub(crate) fn is_no_slot(e: &Error) -> bool {
    #[cfg(feature = "postgres")]
    if let Some(code) = e.sqlstate() {
        return code == "53300";
    }
    let _ = e;
    false
}

/// `opened`, a connection asked for beside those open: `None` where the server had no
/// slot for it ([`is_no_slot`]; counted in `refused`), the work going on without it.
pub(crate) fn unless_no_slot<T>(
    opened: Result<T, Error>,
    refused: &mut u64,
) -> Result<Option<T>, Error> {
    match opened {
        Ok(c) => Ok(Some(c)),
        Err(e) if is_no_slot(&e) => {
            *refused += 1;
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The error's text, with the server's message and SQLSTATE when the text lacks them
/// (the driver shows a server error as `db error` alone).
fn said(e: &Error) -> String {
    let text = e.to_string();
    #[cfg(feature = "postgres")]
    if let Some(db) = e.as_postgres().and_then(|p| p.as_db_error()) {
        if !text.contains(db.message()) {
            return format!("{text}: {} (SQLSTATE {})", db.message(), db.code().code());
        }
    }
    text
}

/// Lost connections in a row an operation reconnects after, by default: with the
/// waits of [`backoff`], about a minute ([`DEFAULT_RECONNECT_WAIT`]), so a server
/// restart or a managed Postgres's failover (typically 10-40 s) is waited out, and a
/// server that stays away ends the command within a minute or so.
pub(crate) const DEFAULT_MAX_RECONNECTS: u32 = 16;

/// The waits of [`DEFAULT_MAX_RECONNECTS`] losses in a row, in all: 56.3 s.
#[cfg(test)]
const DEFAULT_RECONNECT_WAIT: Duration = Duration::from_millis(56_300);

/// The wait before re-opening after the `n`th loss in a row (1-based): 100 ms,
/// doubling, at most 5 s.
pub(crate) fn backoff(n: u32) -> Duration {
    let doubled = 100u64.saturating_mul(1u64 << n.saturating_sub(1).min(16));
    Duration::from_millis(doubled.min(5_000))
}

/// The losses of one operation: how many in a row (reset by each step that goes
/// through), and how many times the connection was re-opened in all.
#[derive(Debug)]
pub(crate) struct Retry {
    max: u32,
    lost: u32,
    /// The failure the caller is re-opening after was a lock conflict, not a loss.
    locked: bool,
    /// Connections re-opened (what the reports call `reconnects`).
    pub(crate) reconnects: u64,
    /// Connections re-opened after a lock conflict ([`Retry::lost_or_locked`]; what
    /// the copy report calls `lock_retries`).
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    pub(crate) lock_retries: u64,
    /// The operation's stop flag: once set, a wait to re-open ends, and so does the
    /// operation.
    stop: Option<Arc<AtomicBool>>,
}

impl Retry {
    /// At most `max` losses in a row; a wait ends when `stop` is set.
    pub(crate) fn new(max: u32, stop: Option<Arc<AtomicBool>>) -> Self {
        Retry {
            max,
            lost: 0,
            locked: false,
            reconnects: 0,
            lock_retries: 0,
            stop,
        }
    }

    fn stopped(&self) -> bool {
        self.stop
            .as_deref()
            .is_some_and(|s| s.load(Ordering::SeqCst))
    }

    /// A step went through: the next loss is the first in a row again.
    pub(crate) fn ok<T>(&mut self, value: T) -> T {
        self.lost = 0;
        value
    }

    /// A step failed with `e`. A lost connection, no more than the maximum in a row:
    /// waits a little longer each time ([`backoff`]: 100 ms, doubling, at most 5 s)
    /// and returns `Ok` for the caller to re-open and redo the step. Any other error is
    /// returned as it is; one loss too many, or a stop asked for before or during the
    /// wait, as [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) async fn lost(&mut self, e: Error) -> Result<(), Error> {
        self.failed(e, false).await
    }

    /// As [`lost`](Self::lost), and a lock conflict too ([`is_lock_conflict`]: a
    /// statement past its `lock_timeout`, a deadlock victim), for reads that let a lock
    /// holder through by ending their transaction and reading again in a new one. The
    /// losses and conflicts in a row count together; past the maximum, the last one
    /// decides the error: a conflict is
    /// [`ErrorKind::LockTimeout`](crate::ErrorKind::LockTimeout).
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    pub(crate) async fn lost_or_locked(&mut self, e: Error) -> Result<(), Error> {
        self.failed(e, true).await
    }

    async fn failed(&mut self, e: Error, locks: bool) -> Result<(), Error> {
        let locked = locks && is_lock_conflict(&e);
        if !locked && !is_lost(&e) {
            return Err(e);
        }
        self.lost = self.lost.saturating_add(1);
        if self.lost > self.max {
            let (attempts, last) = (self.lost, said(&e));
            return Err(if locked {
                StoreFault::SourceLocked { attempts, last }
            } else {
                StoreFault::ConnectionLost { attempts, last }
            }
            .into());
        }
        self.locked = locked;
        pause(backoff(self.lost), self.stop.as_deref()).await;
        if self.stopped() {
            return Err(StoreFault::StoppedReconnecting { last: said(&e) }.into());
        }
        Ok(())
    }

    /// The caller's attempt to re-open: a new connection is counted and returned; a
    /// failure to connect (the server still away or refusing connections) is `None`,
    /// and the next statement on the old connection counts one more loss.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) fn reopened<T>(&mut self, attempt: Result<T, Error>) -> Result<Option<T>, Error> {
        match attempt {
            Ok(v) => {
                if std::mem::take(&mut self.locked) {
                    self.lock_retries = self.lock_retries.saturating_add(1);
                } else {
                    self.reconnects = self.reconnects.saturating_add(1);
                }
                Ok(Some(v))
            }
            Err(e) if is_lost(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Sleeps on the Tokio runtime when there is one, else on the thread.
pub(crate) async fn sleep(d: Duration) {
    if tokio::runtime::Handle::try_current().is_ok() {
        tokio::time::sleep(d).await;
    } else {
        std::thread::sleep(d);
    }
}

/// How often a pause looks at the stop flag.
const STOP_CHECK: Duration = Duration::from_millis(100);

/// Sleeps `d`, ending early once `stop` is set (looked at every [`STOP_CHECK`]): a stop
/// asked for during a pause between pages or vacuum steps (`--pause`) or a wait for
/// the pace (`--max-rows-per-sec` at a low rate) is acted on at once, not when the wait
/// is over.
pub(crate) async fn pause(d: Duration, stop: Option<&AtomicBool>) {
    let mut left = d;
    while !left.is_zero() && !stop.is_some_and(|s| s.load(Ordering::SeqCst)) {
        let step = left.min(STOP_CHECK);
        sleep(step).await;
        left = left.saturating_sub(step);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pause lasts its whole length without a stop, and ends within one look at the
    /// flag once the stop is set: at once when set before, soon after when set during.
    #[tokio::test]
    async fn a_pause_ends_once_its_stop_is_set() {
        use std::sync::Arc;
        use std::time::Instant;
        let hour = Duration::from_secs(3600);
        let started = Instant::now();
        pause(Duration::from_millis(300), None).await;
        assert!(started.elapsed() >= Duration::from_millis(300));
        let within = Duration::from_secs(5);
        let set = AtomicBool::new(true);
        let started = Instant::now();
        tokio::time::timeout(within, pause(hour, Some(&set)))
            .await
            .expect("a stop set before ends the pause");
        assert!(started.elapsed() < STOP_CHECK, "{:?}", started.elapsed());
        let stop = Arc::new(AtomicBool::new(false));
        let setter = Arc::clone(&stop);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            setter.store(true, Ordering::SeqCst);
        });
        let started = Instant::now();
        tokio::time::timeout(within, pause(hour, Some(&stop)))
            .await
            .expect("a stop set during the pause ends it");
        assert!(started.elapsed() >= Duration::from_millis(200));
    }

    /// A stop asked for ends the wait to re-open and the operation: at once when set
    /// before the loss, within a look at the flag when set during a 5 s wait, as
    /// `ConnectionLost` saying a stop was asked for and that a rerun resumes.
    #[tokio::test]
    async fn a_stop_during_the_wait_to_reconnect_ends_it() {
        use std::time::Instant;
        let away = || Error::new(ErrorKind::ConnectionUnavailable, "server away");
        let stop = Arc::new(AtomicBool::new(true));
        let started = Instant::now();
        let e = Retry::new(16, Some(Arc::clone(&stop)))
            .lost(away())
            .await
            .expect_err("a stop set before the loss ends it");
        assert!(started.elapsed() < STOP_CHECK, "{:?}", started.elapsed());
        assert_eq!(e.kind(), ErrorKind::ConnectionLost);
        for said in ["server away", "a stop was asked for", "run again to resume"] {
            assert!(e.to_string().contains(said), "{said:?} not in {e}");
        }
        stop.store(false, Ordering::SeqCst);
        let mut retry = Retry::new(16, Some(Arc::clone(&stop)));
        retry.lost = 10;
        assert_eq!(backoff(retry.lost + 1), Duration::from_secs(5));
        let setter = Arc::clone(&stop);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            setter.store(true, Ordering::SeqCst);
        });
        let started = Instant::now();
        let e = retry
            .lost(away())
            .await
            .expect_err("a stop set during the wait ends it");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(e.kind(), ErrorKind::ConnectionLost);
    }

    /// The default waits out about a minute of a server away (a restart, a failover):
    /// the sum of its waits, worked out from the schedule 0.1, 0.2, 0.4, 0.8, 1.6, 3.2,
    /// then 5 s ten times.
    #[test]
    fn the_default_waits_about_a_minute_in_all() {
        let all: Duration = (1..=DEFAULT_MAX_RECONNECTS).map(backoff).sum();
        assert_eq!(all, DEFAULT_RECONNECT_WAIT);
        assert_eq!(backoff(1), Duration::from_millis(100));
        assert_eq!(backoff(6), Duration::from_millis(3_200));
        assert_eq!(backoff(7), Duration::from_secs(5));
        assert_eq!(backoff(u32::MAX), Duration::from_secs(5));
    }

    /// One loss more than the maximum in a row ends with `ConnectionLost`, naming the
    /// losses and that a rerun resumes; any other error passes through as it is.
    #[tokio::test]
    async fn one_loss_too_many_is_connection_lost_and_other_errors_pass() {
        let away = || Error::new(ErrorKind::ConnectionUnavailable, "server away");
        let mut retry = Retry::new(1, None);
        assert!(
            retry.lost(away()).await.is_ok(),
            "the first loss waits and retries"
        );
        let e = retry
            .lost(away())
            .await
            .expect_err("the second in a row stops");
        assert_eq!(e.kind(), ErrorKind::ConnectionLost);
        assert!(e.to_string().contains("2 time(s) in a row"), "{e}");
        assert!(e.to_string().contains("run again to resume"), "{e}");
        let other = Retry::new(5, None)
            .lost(Error::new(ErrorKind::Storage, "constraint"))
            .await
            .expect_err("not a loss");
        assert_eq!(other.kind(), ErrorKind::Storage);
    }

    /// A real lock wait given up (SQLSTATE 55P03 from the test server: an advisory lock
    /// another session holds, waited on under `lock_timeout`): `lost` returns it as it
    /// is; `lost_or_locked` waits, and the re-open after it counts in `lock_retries`,
    /// not `reconnects`; one too many in a row is `LockTimeout`, saying what held the
    /// tables and that a rerun resumes.
    #[cfg(feature = "postgres")]
    #[tokio::test]
    async fn a_lock_wait_given_up_steps_aside_then_ends_as_lock_timeout() {
        let url = match std::env::var("LGCODEC_TEST_PG_URL") {
            Ok(u) if !u.is_empty() => u,
            _ => return,
        };
        let holder = crate::saver::postgres::ConnInfo::resolve(&url)
            .expect("url")
            .connect("test")
            .await
            .expect("connect");
        let waiter = crate::saver::postgres::ConnInfo::resolve(&url)
            .expect("url")
            .connect("test")
            .await
            .expect("connect");
        holder
            .batch_execute("SELECT pg_advisory_lock(7412, 55)")
            .await
            .expect("lock");
        waiter
            .batch_execute("SET lock_timeout = 20")
            .await
            .expect("set");
        let conflict = || async {
            let e = waiter
                .batch_execute("SELECT pg_advisory_lock(7412, 55)")
                .await
                .expect_err("the lock is held");
            Error::from(StoreFault::Postgres {
                operation: "copy",
                source: e,
            })
        };
        let e = conflict().await;
        assert_eq!(e.sqlstate(), Some("55P03"), "{e}");
        assert!(is_lock_conflict(&e) && !is_lost(&e), "{e}");
        let passed = Retry::new(5, None).lost(e).await.expect_err("not a loss");
        assert_eq!(passed.sqlstate(), Some("55P03"), "{passed}");
        let mut retry = Retry::new(1, None);
        retry
            .lost_or_locked(conflict().await)
            .await
            .expect("the first conflict waits and retries");
        assert!(matches!(retry.reopened(Ok::<_, Error>(())), Ok(Some(()))));
        assert_eq!((retry.lock_retries, retry.reconnects), (1, 0));
        let e = retry
            .lost_or_locked(conflict().await)
            .await
            .expect_err("the second in a row stops");
        assert_eq!(e.kind(), ErrorKind::LockTimeout);
        for said in [
            "2 time(s) in a row",
            "lock timeout",
            "ALTER TABLE",
            "pg_locks",
            "run the copy again to resume",
        ] {
            assert!(e.to_string().contains(said), "{said:?} not in {e}");
        }
        let _ = holder
            .batch_execute("SELECT pg_advisory_unlock_all()")
            .await;
    }
}
