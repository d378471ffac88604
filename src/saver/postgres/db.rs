//! Running statements in either [`StatementMode`], on a pooled client or in a
//! transaction.

use async_trait::async_trait;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::Row;

use super::error::PgFault;

/// How statements are sent to the server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StatementMode {
    /// Named prepared statements, prepared once per pooled connection and cached
    /// (deadpool-postgres' statement cache): the fastest mode on a direct connection.
    #[default]
    Prepared,
    /// Unnamed statements with explicitly typed parameters, parsed, bound and run in
    /// one round trip (tokio-postgres' `query_typed`). Nothing outlives the statement,
    /// so this works behind PgBouncer in transaction (or statement) pooling mode.
    Unnamed,
}

/// One parameter: the value and its Postgres type (required by [`StatementMode::Unnamed`]).
pub(crate) type Param<'a> = (&'a (dyn ToSql + Sync), Type);

/// What both a pooled client and a transaction can run.
#[async_trait]
pub(crate) trait Exec: Send + Sync {
    async fn rows(
        &self,
        mode: StatementMode,
        sql: &str,
        params: &[Param<'_>],
    ) -> Result<Vec<Row>, tokio_postgres::Error>;
}

macro_rules! impl_exec {
    ($ty:ty) => {
        #[async_trait]
        impl Exec for $ty {
            async fn rows(
                &self,
                mode: StatementMode,
                sql: &str,
                params: &[Param<'_>],
            ) -> Result<Vec<Row>, tokio_postgres::Error> {
                match mode {
                    StatementMode::Prepared => {
                        let types: Vec<Type> = params.iter().map(|p| p.1.clone()).collect();
                        let statement = self.prepare_typed_cached(sql, &types).await?;
                        let values: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.0).collect();
                        self.query(&statement, &values).await
                    }
                    StatementMode::Unnamed => self.query_typed(sql, params).await,
                }
            }
        }
    };
}

impl_exec!(deadpool_postgres::ClientWrapper);
impl_exec!(deadpool_postgres::Transaction<'_>);

/// A plain tokio-postgres client or transaction (the store commands' own
/// connections): without a statement cache, every statement goes unnamed, in one
/// round trip.
macro_rules! impl_exec_unnamed {
    ($ty:ty) => {
        #[async_trait]
        impl Exec for $ty {
            async fn rows(
                &self,
                _mode: StatementMode,
                sql: &str,
                params: &[Param<'_>],
            ) -> Result<Vec<Row>, tokio_postgres::Error> {
                self.query_typed(sql, params).await
            }
        }
    };
}

impl_exec_unnamed!(tokio_postgres::Transaction<'_>);
impl_exec_unnamed!(tokio_postgres::Client);

/// Maps a driver error of `operation` into the crate's error.
pub(crate) fn db(operation: &'static str) -> impl Fn(tokio_postgres::Error) -> crate::Error {
    move |source| PgFault::Db { operation, source }.into()
}

/// Whether `e` says the connection is gone: the driver saw it close, or the server
/// terminated the session (`57P01` admin_shutdown, e.g. `pg_terminate_backend`; `57P02`
/// crash_shutdown; `57P03` cannot_connect_now). A pooled connection the server closed
/// while idle answers its next statement this way.
pub(crate) fn connection_lost(e: &tokio_postgres::Error) -> bool {
    use tokio_postgres::error::SqlState;
    e.is_closed()
        || e.code().is_some_and(|c| {
            *c == SqlState::ADMIN_SHUTDOWN
                || *c == SqlState::CRASH_SHUTDOWN
                || *c == SqlState::CANNOT_CONNECT_NOW
        })
}

/// Polls the futures together in the calling task and returns their outputs in order:
/// queries of one client polled this way are pipelined on its connection (sent
/// without waiting for each other's answers). Used by the store copy's batches.
#[cfg(feature = "sqlite")]
pub(crate) async fn join_all<F: std::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<std::pin::Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, slot) in futures.iter_mut().zip(out.iter_mut()) {
            if slot.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => *slot = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter().flatten().collect()
}
