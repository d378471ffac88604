//! Where a [`copy`](super::copy)'s checkpoints go: the target saver that puts a batch,
//! reads it back and says which of it the target holds as sent, behind one trait
//! ([`CopyWriter`]), implemented once per backend (`writer/sqlite.rs`,
//! `writer/postgres.rs`). What differs between writing into SQLite and into Postgres
//! is said there; the batch (`batch.rs`), its read-back (`check.rs`) and the source
//! (`source.rs`) ask the trait.

mod postgres;
mod sqlite;

use std::sync::Arc;

use async_trait::async_trait;
use futures_util::future::BoxFuture;

use super::super::raw::Result;
use super::super::Location;
use super::batch::{Body, Pending, PutOne};
use super::check::{ReadBack, Sent};
use crate::error::Error;
use crate::saver::postgres::{BlobLookUp, Taken};
use crate::saver::sqlite::StoredRow;
use crate::saver::{Checkpoint, CheckpointConfig, CheckpointTuple};
use crate::serializer::Serializer;
use crate::Value;

/// The target of a copy, as the batch, the read-back and the source see it.
#[async_trait]
pub(super) trait CopyWriter: Send + Sync {
    /// Whether the target is a server each batch reaches in round trips (Postgres):
    /// its batch is then written on a task of its own beside a source read that
    /// blocks, its writes and checkpoints are sent at once on two connections, and a
    /// batch after one that found nothing there is taken to be fresh.
    fn round_trips(&self) -> bool;

    /// The target saver's serializer.
    fn serializer(&self) -> &Arc<dyn Serializer>;

    /// A clear msgpack row of a SQLite source in Python's layout, on its way here:
    /// carried as stored into SQLite, split into its inline values and blobs without
    /// decoding the blobs into Postgres; `None` when it must be decoded.
    fn carry(
        &self,
        serde: &dyn Serializer,
        key: &(String, String, String),
        row: StoredRow,
    ) -> Option<Body>;

    /// Whether a `v < 4` checkpoint's pending sends move to where the target's reader
    /// looks for them ([`sends_to_tasks`](Self::sends_to_tasks)).
    fn moves_sends(&self) -> bool;

    /// Moves `checkpoint`'s pending sends (its own, or its parent's `parent_sends`)
    /// into its `__pregel_tasks` channel, as Python's Postgres saver reads them.
    fn sends_to_tasks(
        &self,
        checkpoint: &mut Checkpoint,
        parent_sends: &[Value],
    ) -> std::result::Result<(), Error>;

    /// Puts the checkpoints (each with its parent as Python's `put` receives it) in one
    /// transaction. (Only decoded checkpoints: a carried row goes in with its writes.)
    /// Returns the rows written for each, in order (for the read-back). Into Postgres
    /// the rows are sent at once and committed when `ready` gives `true` (`None`,
    /// nothing stored, when it gives `false`); into SQLite nothing is sent before.
    async fn put_batch(
        &self,
        batch: &[PutOne<'_>],
        taken: (Taken, BlobLookUp),
        ready: BoxFuture<'static, bool>,
    ) -> std::result::Result<Option<Vec<Sent>>, Error>;

    /// Which checkpoints of `batch` the target holds exactly as `sent`, by position
    /// (the rest are read back and decoded); `whole`: every row of the batch went in
    /// as sent (see `write_batch`). A lost connection is the error.
    async fn held(
        &self,
        batch: &[Pending],
        sent: &[Option<Sent>],
        whole: bool,
    ) -> Result<Vec<bool>>;

    /// How many checkpoints [`read_back`](Self::read_back) takes at once.
    fn verify_window(&self) -> usize;

    /// Each of `window` as the target saver's `get_tuple` reads it, in order. A lost
    /// Postgres connection is the error (the batch is done again), not a mismatch.
    async fn read_back(&self, window: &[&Pending]) -> Result<Vec<Option<ReadBack>>>;

    /// The last step of a batch's check, after the read-back: into SQLite, the rows
    /// sent (carried, or written by `put`) compared with the file's (`out` gets why
    /// not; `whole`: every row of the batch went in as sent, see `write_batch`), and
    /// the WAL checkpointed; into Postgres nothing.
    async fn finish_check(
        &self,
        batch: &[Pending],
        sent: &[Option<Sent>],
        whole: bool,
        out: &mut [Option<String>],
    ) -> Result<()>;
}

/// A copy's writer, shared by the batch and its read-back task.
pub(super) type Writer = Arc<dyn CopyWriter>;

/// The writer into the store at `target` (made a store already), its values written by
/// `serde`.
pub(super) fn open(target: &str, serde: &Arc<dyn Serializer>, shown: &str) -> Result<Writer> {
    Ok(match Location::parse(target)? {
        Location::Sqlite(path) => Arc::new(sqlite::SqliteWriter::open(&path, serde, shown)?),
        Location::Postgres(url) => Arc::new(postgres::PgWriter::open(&url, serde)?),
    })
}

/// The config `put` receives for a checkpoint of the batch: its thread, namespace and
/// parent.
fn put_config(p: &Pending, t: &CheckpointTuple) -> CheckpointConfig {
    let config = CheckpointConfig::new(p.thread.clone()).with_ns(p.ns.clone());
    match t
        .parent_config
        .as_ref()
        .and_then(|c| c.checkpoint_id.clone())
    {
        Some(parent) => config.with_checkpoint_id(parent),
        None => config,
    }
}
