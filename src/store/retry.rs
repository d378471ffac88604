//! Reconnecting after a lost Postgres connection, for every operation that writes or
//! sweeps a store (audit, encrypt, rekey, prune, retain, copy, import): a statement
//! that fails because the server closed the connection (a terminated backend, a
//! restart, a network cut) is waited on, its connection re-opened by the caller, and
//! the unit in flight (a page, a batch: one transaction, committed or not) done
//! again. At most [`DEFAULT_MAX_RECONNECTS`] losses in a row (unless an operation's
//! options say), then [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost):
//! what was committed stays, and a rerun resumes.

use std::time::Duration;

use super::error::StoreFault;
use crate::error::Error;
use crate::ErrorKind;

/// A lost connection, or a new one the server refused (still away, not accepting
/// connections to the database yet): what waiting and re-opening may mend.
fn is_lost(e: &Error) -> bool {
    e.is_connection_lost() || e.kind() == ErrorKind::ConnectionUnavailable
}

/// Lost connections in a row an operation reconnects after, by default.
pub(crate) const DEFAULT_MAX_RECONNECTS: u32 = 5;

/// The losses of one operation: how many in a row (reset by each step that goes
/// through), and how many times the connection was re-opened in all.
#[derive(Debug)]
pub(crate) struct Retry {
    max: u32,
    lost: u32,
    /// Connections re-opened (what the reports call `reconnects`).
    pub(crate) reconnects: u64,
}

impl Retry {
    pub(crate) fn new(max: u32) -> Self {
        Retry {
            max,
            lost: 0,
            reconnects: 0,
        }
    }

    /// A step went through: the next loss is the first in a row again.
    pub(crate) fn ok<T>(&mut self, value: T) -> T {
        self.lost = 0;
        value
    }

    /// A step failed with `e`. A lost connection, no more than the maximum in a row:
    /// waits a little longer each time (100 ms times the losses in a row, at most 2 s)
    /// and returns `Ok` for the caller to re-open and redo the step. Any other error is
    /// returned as it is; one loss too many as
    /// [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost).
    pub(crate) async fn lost(&mut self, e: Error) -> Result<(), Error> {
        if !is_lost(&e) {
            return Err(e);
        }
        self.lost = self.lost.saturating_add(1);
        if self.lost > self.max {
            return Err(StoreFault::ConnectionLost {
                attempts: self.lost,
                last: e.to_string(),
            }
            .into());
        }
        sleep(Duration::from_millis(
            100u64.saturating_mul(u64::from(self.lost.min(20))),
        ))
        .await;
        Ok(())
    }

    /// The caller's attempt to re-open: a new connection is counted and returned; a
    /// failure to connect (the server still away or refusing connections) is `None`,
    /// and the next statement on the old connection counts one more loss.
    pub(crate) fn reopened<T>(&mut self, attempt: Result<T, Error>) -> Result<Option<T>, Error> {
        match attempt {
            Ok(v) => {
                self.reconnects = self.reconnects.saturating_add(1);
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
