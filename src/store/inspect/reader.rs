//! The Postgres saver a store's checkpoints are read through ([`AnyStore::tuple`], a
//! copy's batches) and written with (a copy into Postgres): Python's `get_tuple` and
//! `put`, on a pool of its own connections beside the store's, or on the store's own
//! connection where the server has no slot for those.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::super::raw::{bounded_lock_wait, lock, Result};
use super::super::retry::is_no_slot;
use super::super::StoreFault;
use super::AnyStore;
use crate::saver::layout::StoreLayout;
use crate::saver::postgres::PostgresSaver;
use crate::saver::{CheckpointConfig, CheckpointSaver, CheckpointTuple};
use crate::serializer::Serializer;

impl AnyStore {
    /// The checkpoint `config` names, read through the saver's pool or, once the
    /// server refused that pool a connection (SQLSTATE 53300: `max_connections`, a
    /// role's `CONNECTION LIMIT`), on `client`, the store's own connection, where reads
    /// made together are pipelined. Measured 2026-12-06: `inspect --thread --check` as
    /// a role allowed one connection marked every checkpoint as not decoding, the
    /// server's refusal taken for the row's fault.
    pub(super) async fn pg_tuple(
        &self,
        url: &str,
        client: &tokio_postgres::Client,
        serde: &Arc<dyn Serializer>,
        config: &CheckpointConfig,
    ) -> Result<Option<CheckpointTuple>> {
        let saver = self.cached_pg_reader(url, serde)?;
        if !self.own_connection_reads.load(Ordering::Relaxed) {
            match saver.get_tuple(config).await {
                Err(e) if self.pool_refused(&e) => {}
                read => return read,
            }
        }
        saver.get_tuple_on(client, config).await
    }

    /// Whether `e` is the server refusing the reader's pool a connection for want of a
    /// slot ([`is_no_slot`]); if so, every later read goes on the store's own connection.
    pub(super) fn pool_refused(&self, e: &crate::Error) -> bool {
        let refused = is_no_slot(e);
        if refused {
            self.own_connection_reads.store(true, Ordering::Relaxed);
        }
        refused
    }

    /// The saver [`AnyStore::tuple`] reads a Postgres store through, with `serde` for
    /// its values: made at the first read, its pool kept for every later one.
    pub(super) fn cached_pg_reader(
        &self,
        url: &str,
        serde: &Arc<dyn Serializer>,
    ) -> Result<PostgresSaver> {
        let mut held = lock(&self.pg_reader);
        let saver = match held.as_ref() {
            Some(saver) => saver.clone(),
            None => {
                let saver = pg_reader(url, serde, self.raw.layout(), self.lock_timeout)?;
                *held = Some(saver.clone());
                saver
            }
        };
        Ok(saver.with_serializer(Arc::clone(serde)))
    }
}

/// The saver a copy writes a Postgres target with: Python's `put`, except that a
/// metadata `writes` entry (recorded by releases before LangGraph 0.4, and read back
/// by Python from such rows) is kept, so the copy reads back as its source.
pub(crate) fn pg_copy_target(url: &str, serde: &Arc<dyn Serializer>) -> Result<PostgresSaver> {
    let today = StoreLayout::PostgresPython {
        migrations: Some(crate::saver::layout::CURRENT_POSTGRES_MIGRATION),
    };
    pg_builder(url, serde, &today, true, None)
}

/// A Postgres saver that reads a store of `layout` as Python's saver reads it after
/// its `setup()` (only `SELECT`s: `get_tuple`, `list`), its connections giving up a
/// lock wait after `lock_timeout` when given.
pub(crate) fn pg_reader(
    url: &str,
    serde: &Arc<dyn Serializer>,
    layout: &StoreLayout,
    lock_timeout: Option<std::time::Duration>,
) -> Result<PostgresSaver> {
    pg_builder(url, serde, layout, false, lock_timeout)
}

/// `SET lock_timeout` to `timeout`, in whole milliseconds from 1 (0 would mean no
/// limit) to the server's maximum.
pub(super) fn set_lock_timeout(timeout: std::time::Duration) -> String {
    format!(
        "SET lock_timeout = {}",
        timeout.as_millis().clamp(1, 2_147_483_647)
    )
}

fn pg_builder(
    url: &str,
    serde: &Arc<dyn Serializer>,
    layout: &StoreLayout,
    keep_metadata_writes: bool,
    lock_timeout: Option<std::time::Duration>,
) -> Result<PostgresSaver> {
    // A wait given (a copy's source: 3 s, then it steps aside), else the store's bound.
    let session = lock_timeout.map_or_else(bounded_lock_wait, set_lock_timeout);
    PostgresSaver::builder_from_url_with_session(url, Some(session))
        .and_then(|b| {
            b.serializer(Arc::clone(serde))
                .before_task_path(!layout.has_task_path())
                .shallow_tables(matches!(layout, StoreLayout::PostgresShallow { .. }))
                .keep_metadata_writes(keep_metadata_writes)
                .build()
        })
        .map_err(|e| StoreFault::InvalidLocation {
            given: super::super::redact(url),
            reason: e.to_string(),
        })
        .map_err(crate::Error::from)
}
