//! Where a call's SQL runs: on the calling task when it cannot wait (the fast path,
//! [`SqliteSaverBuilder::inline_fast_path`](super::SqliteSaverBuilder::inline_fast_path)),
//! on Tokio's blocking pool inside a runtime, inline outside one.

use std::sync::Arc;

use rusqlite::Connection;

use super::conn::Statements;
use super::{Inner, SqliteSaver, INLINE_MAX_PAGES};
use crate::saver::error::SaverFault;
use crate::saver::Result;

impl SqliteSaver {
    /// One write transaction: on the calling task when it cannot wait
    /// ([`Connections::try_write`](super::conn::Connections::try_write), unless the fast path is off), else through
    /// [`run`](Self::run).
    pub(super) async fn write<T: Send + 'static>(
        &self,
        operation: &'static str,
        pages: u64,
        statements: Statements,
        f: impl Fn(&Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        if self.inner.inline {
            let fast =
                self.inner
                    .conns
                    .try_write(operation, pages, INLINE_MAX_PAGES, statements, &f);
            if let Some(out) = fast {
                return out;
            }
        }
        self.run(move |inner| inner.conns.write(operation, pages, statements, f))
            .await
    }

    /// One read snapshot, then `then` on what it read: both on the calling task when the
    /// read cannot wait ([`Connections::try_read`](super::conn::Connections::try_read), unless the fast path is off) and
    /// `then_inline` says `then` is quick for it; otherwise what is left runs in one
    /// trip through [`run`](Self::run).
    pub(super) async fn read_then<R: Send + 'static, T: Send + 'static>(
        &self,
        operation: &'static str,
        read: impl Fn(&Connection) -> Result<R> + Send + 'static,
        then: impl FnOnce(&Inner, R) -> Result<T> + Send + 'static,
        then_inline: impl FnOnce(&R) -> bool,
    ) -> Result<T> {
        if self.inner.inline {
            match self.inner.conns.try_read(operation, &read) {
                Some(Ok(found)) if then_inline(&found) => return then(&self.inner, found),
                Some(Ok(found)) => return self.run(move |inner| then(inner, found)).await,
                Some(Err(e)) => return Err(e),
                None => {}
            }
        }
        self.run(move |inner| {
            let found = inner.conns.read(operation, read)?;
            then(inner, found)
        })
        .await
    }

    /// Runs blocking database work: on Tokio's blocking pool inside a Tokio runtime,
    /// inline otherwise.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Inner) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let inner = Arc::clone(&self.inner);
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => handle
                .spawn_blocking(move || f(&inner))
                .await
                .map_err(|e| SaverFault::Storage {
                    operation: "blocking task",
                    source: Box::new(e),
                })?,
            Err(_) => f(&inner),
        }
    }
}
