//! Checkpoint savers: Python's `BaseCheckpointSaver` contract as an async trait, and
//! [`InMemorySaver`], a reference implementation whose rows are interchangeable with
//! Python's `InMemorySaver` rows.
//!
//! - The types: [`CheckpointConfig`], [`Checkpoint`], [`CheckpointMetadata`],
//!   [`CheckpointTuple`], [`PendingWrite`], [`DeltaChannelHistory`], each converting to
//!   and from [`Value`](crate::Value) exactly as Python's dicts.
//! - The contract: [`CheckpointSaver`] (object safe; `Arc<dyn CheckpointSaver>`), its
//!   [`Capabilities`], [`ListOptions`] and [`PruneStrategy`].
//! - [`InMemorySaver`] over any [`Serializer`](crate::Serializer).
//! - [`delta`]: the default delta-channel history walk.
//! - [`layout`]: which saver and release wrote a store ([`StoreLayout`](layout::StoreLayout)), detected
//!   without writing.
//! - `sqlite` (cargo feature `sqlite`): [`sqlite::SqliteSaver`], Python's
//!   `langgraph-checkpoint-sqlite` saver on the very same file.
//! - `postgres` (cargo feature `postgres`): `PostgresSaver`, on the tables Python's
//!   `langgraph-checkpoint-postgres` uses, shared with Python services.
//! - `durable` (cargo feature `durable`): `DurableSaver`, LangGraph's durability modes
//!   (`sync`, `async` write-behind, `exit`) around any saver.
//! - `conformance` (cargo feature `conformance`, off by default: turn it on in your
//!   `[dev-dependencies]`): the port of `langgraph-checkpoint-conformance`'s spec, run
//!   with one call against any saver.
//!
//! ```
//! use langgraph_codec::saver::{
//!     Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, InMemorySaver,
//!     ListOptions,
//! };
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let saver = InMemorySaver::new();
//! let thread = CheckpointConfig::new("thread-1");
//! let first = saver
//!     .put(&thread, &Checkpoint::now(-1), &CheckpointMetadata::new("input", -1), &Default::default())
//!     .await?;
//! // The next checkpoint's parent is the config `put` returned.
//! saver
//!     .put(&first, &Checkpoint::now(0), &CheckpointMetadata::new("loop", 0), &Default::default())
//!     .await?;
//! saver
//!     .put_writes(&first, &[("messages".into(), "hi".into())], "task-1", "")
//!     .await?;
//! let history = saver.list(Some(&thread), &ListOptions::new()).await?;
//! assert_eq!(history.len(), 2); // newest first
//! assert_eq!(history[1].pending_writes.len(), 1);
//! # Ok::<(), langgraph_codec::Error>(())
//! # }).unwrap();
//! ```

mod codec;
#[cfg(feature = "conformance")]
#[cfg_attr(docsrs, doc(cfg(feature = "conformance")))]
pub mod conformance;
pub mod delta;
#[cfg(feature = "durable")]
#[cfg_attr(docsrs, doc(cfg(feature = "durable")))]
pub mod durable;
mod error;
pub mod layout;
mod memory;
mod pages;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub mod postgres;
#[cfg(feature = "sqlite")]
mod pyjson;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) mod retention;
mod rows;
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub mod sqlite;
mod traits;
mod types;

pub(crate) use crate::error::Result;
/// The attribute [`CheckpointSaver`] is declared with: put `#[async_trait]` on your
/// `impl CheckpointSaver for MySaver` block.
/// Nesting allowed in a metadata JSON document, as stored by the SQLite saver and read
/// by the store operations: Python's `json.loads` stops near its recursion limit, 1,000.
#[cfg(feature = "sqlite")]
pub(crate) const METADATA_MAX_DEPTH: usize = 1_000;

pub use async_trait::async_trait;
#[cfg(feature = "postgres")]
pub(crate) use error::SaverFault;
pub use memory::InMemorySaver;
pub use pages::ListPages;
pub use rows::{RawBlobRow, RawCheckpointRow, RawRows, RawWriteRow};
pub use traits::default_delta_channel_history;
pub use traits::{Capabilities, Capability, CheckpointSaver, ListOptions, PruneStrategy};
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub(crate) use types::civil_from_days;
pub use types::{
    all_special, checkpoint_metadata, isoformat_at, now_isoformat, python_eq, uuid6, uuid6_at,
    write_idx, writes_sort_key, ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig,
    CheckpointMetadata, CheckpointTuple, DeltaChannelHistory, PendingWrite, ERROR,
    EXCLUDED_METADATA_KEYS, INTERRUPT, RESUME, SCHEDULED, WRITES_IDX_MAP,
};
