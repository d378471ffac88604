//! # langgraph-codec
//!
//! Read and write LangGraph checkpoints exactly as Python LangGraph
//! (`langgraph-checkpoint==4.3.2`) does: the `(type, bytes)` serializer protocol with
//! its msgpack extension codes, byte for byte.
//!
//! Layers, data flowing one way. The codec layers own their leaf errors
//! ([`msgpack::DecodeError`], [`msgpack::EncodeError`], [`json::JsonError`],
//! [`view::ViewError`], [`TagError`], [`typed::TypedError`]); everything above them
//! (serializers, compression, encryption, savers, store operations) returns the one
//! [`Error`], with a stable [`ErrorKind`], context and `source()` reaching the leaf or
//! backend error. No module names a module above it:
//! - the value model, at the crate root: [`Value`] and its parts ([`Int`], [`PyStr`],
//!   [`PyObject`], [`NdArray`], [`RawExt`], …), everything Python writes, losslessly.
//! - [`msgpack`]: bytes ⇄ [`Value`], byte-identical to ormsgpack, safe on hostile input;
//!   zero-copy reads ([`msgpack::ValueRef`], [`msgpack::LazyValue`]) on the same reader.
//! - [`typed`]: Rust types ⇄ bytes through serde, with Python's own types
//!   ([`typed::pytypes`]: datetimes, UUIDs, enums, dataclasses, LangChain messages, …).
//! - the serializer protocol, at the crate root: [`Serializer`] (`dumps_typed` /
//!   `loads_typed`), [`TypedBytes`], the type [`tags`], [`JsonPlusSerializer`] and
//!   [`TypedSerializerExt`] (typed values through any serializer); [`json`] reads and
//!   writes `json`-tagged rows.
//! - [`compression`]: the `+zlib` compression wrapper (`CompressedSerializer`) and its
//!   per-row and per-call decompression limits, a serializer wrapper of its own.
//! - [`crypto`]: at-rest encryption (`EncryptedSerializer`, AES EAX/GCM, key rotation,
//!   associated data), composing compression for `+zlib+aes` rows.
//! - [`saver`]: Python's checkpoint-saver contract ([`saver::CheckpointSaver`]) and its
//!   types, [`saver::InMemorySaver`], `saver::sqlite::SqliteSaver` and
//!   `saver::postgres::PostgresSaver` (Python's own tables, shared with Python
//!   LangGraph), and the conformance kit `saver::conformance`.
//!
//! # One public path per item
//!
//! Every public item is reachable under exactly one path. The everyday types live at
//! the crate root and their defining modules are private: [`Error`], [`Result`],
//! [`ErrorKind`], [`RowKind`], [`RowLocation`], the value model ([`Value`], [`Int`],
//! [`BigInt`], [`BigIntError`], [`PyStr`], [`PyWStr`], [`PyObject`], [`ObjectKind`],
//! [`NdArray`], [`RawExt`]) and the serializer protocol ([`Serializer`],
//! [`JsonPlusSerializer`], [`TypedBytes`], [`tags`], [`TagError`],
//! [`TypedSerializerExt`], [`TypedOptions`]). Everything else lives at its module
//! (`msgpack::DecodeError`, `compression::CompressedSerializer`,
//! `saver::layout::StoreLayout`, …) and is re-exported nowhere else; a re-exported
//! dependency ([`bytes`], [`indexmap`], `saver::sqlite::rusqlite`,
//! `saver::postgres::{tokio_postgres, deadpool_postgres}`) is reached through its own
//! name only (`indexmap::IndexMap`, `saver::postgres::deadpool_postgres::Pool`).
//! `tests/architecture/public_paths.rs` enforces the rule.
//!
//! # Options instead of suffix families
//!
//! Each call has one default form without knobs, and its configured form is made by an
//! options value (as serde_json's `Deserializer` and rmp-serde's serializer carry their
//! settings), never by a `_with_options` / `_with_aad` twin:
//!
//! | default | configured |
//! |---|---|
//! | [`msgpack::decode`], [`msgpack::decode_bytes`] | [`msgpack::DecodeOptions::decode`], [`decode_bytes`](msgpack::DecodeOptions::decode_bytes) |
//! | [`msgpack::ValueRef::decode`], [`msgpack::LazyValue::new`] | [`DecodeOptions::decode_ref`](msgpack::DecodeOptions::decode_ref), [`DecodeOptions::lazy`](msgpack::DecodeOptions::lazy) |
//! | [`typed::from_slice`], [`typed::loads`] | [`DecodeOptions::from_slice`](msgpack::DecodeOptions::from_slice), [`DecodeOptions::loads`](msgpack::DecodeOptions::loads) |
//! | [`TypedSerializerExt::dumps_typed_value`], [`loads_typed_value`](TypedSerializerExt::loads_typed_value) | [`TypedOptions::dumps_typed_value`], [`TypedOptions::loads_typed_value`] (fallback codec, decode options) |
//!
//! Associated data goes with the serializer rather than with each call:
//! [`EncryptedSerializer::with_aad`](crypto::EncryptedSerializer::with_aad) returns a
//! view ([`crypto::WithAad`], two references) that is itself a [`Serializer`], so the
//! [`Value`] calls, the typed calls and `rekey` all take it the same way:
//! `serde.with_aad(&aad).dumps_typed_value(&state)`. The options values are a few words
//! copied per call and nothing is allocated, so the per-row paths cost what they did.
//!
//! Beside them: [`view`], the lossless JSON view of a [`Value`] for people and tools;
//! `records` (feature `cli`), the JSONL record format of the `lgcodec` command.
//!
//! Cargo features:
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `sqlite` | yes | `saver::sqlite::SqliteSaver` on a bundled SQLite (compiles SQLite once, about 20 s) |
//! | `postgres` | no | `saver::postgres::PostgresSaver` (tokio-postgres, deadpool-postgres) |
//! | `conformance` | no | `saver::conformance`, the kit that checks a saver against Python's spec |
//! | `cli` | no | the `lgcodec` command-line tool (`cargo install langgraph-codec --features cli`) and its record formats, `records` |
//! | `chrono` | no | conversions between [`typed::pytypes`] dates and times and `chrono` |
//! | `uuid` | no | conversions between [`typed::pytypes::Uuid`] and the `uuid` crate |
//!
//! ```
//! use langgraph_codec::{JsonPlusSerializer, Serializer, Value, view};
//!
//! // A row Python wrote: ("msgpack", ormsgpack.packb({"step": 1})).
//! let serde = JsonPlusSerializer::new();
//! let value = serde.loads_typed("msgpack", b"\x81\xa4step\x01")?;
//! assert_eq!(value.get("step"), Some(&Value::from(1i64)));
//! assert_eq!(view::to_string(&value)?, r#"{"step":1}"#);
//! // Writing it back gives the same bytes.
//! assert_eq!(&serde.dumps_typed(&value)?.data[..], b"\x81\xa4step\x01");
//! # Ok::<(), langgraph_codec::Error>(())
//! ```
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]
#![warn(clippy::missing_errors_doc)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]

pub mod compression;
pub mod crypto;
mod error;
pub mod json;
#[cfg(any(feature = "cli", all(feature = "sqlite", feature = "postgres")))]
mod jsonl;
mod kind;
pub mod msgpack;
mod protocol;
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod records;
pub mod saver;
mod serializer;
mod stack;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "sqlite", feature = "postgres"))))]
pub mod store;
pub mod typed;
mod value;
pub mod view;
mod wipe;

/// The `bytes` crate, whose [`Bytes`](bytes::Bytes) holds binary values
/// ([`Value::Bin`]) and serialized rows ([`TypedBytes`]).
pub use bytes;
/// The `indexmap` crate, whose [`IndexMap`](indexmap::IndexMap) keeps Python's dict
/// order in the saver types.
pub use indexmap;

pub use error::{Error, Result, RowKind, RowLocation};
pub use kind::ErrorKind;
pub use serializer::{
    tags, JsonPlusSerializer, Serializer, TagError, TypedBytes, TypedOptions, TypedSerializerExt,
};
pub use value::{
    BigInt, BigIntError, Int, NdArray, ObjectKind, PyObject, PyStr, PyWStr, RawExt, Value,
};

/// The store-encryption guide's example, compiled as a doctest so it stays true.
#[doc = include_str!("../docs/store-encryption.md")]
#[cfg(all(doctest, feature = "sqlite", feature = "postgres"))]
pub struct StoreGuideDoctests;

/// The README's examples, compiled and run as doctests so they stay true.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The security guide's examples, compiled and run as doctests.
#[doc = include_str!("../SECURITY.md")]
#[cfg(doctest)]
pub struct SecurityDoctests;

/// The guides' examples (`docs/`), compiled and run as doctests.
#[cfg(doctest)]
pub mod guide_doctests {
    /// `docs/interop.md`.
    #[doc = include_str!("../docs/interop.md")]
    pub struct Interop;
    /// `docs/savers.md`.
    #[doc = include_str!("../docs/savers.md")]
    pub struct Savers;
    /// `docs/testing.md`.
    #[doc = include_str!("../docs/testing.md")]
    pub struct Testing;
    /// `docs/store-layouts.md`.
    #[cfg(feature = "sqlite")]
    #[doc = include_str!("../docs/store-layouts.md")]
    pub struct StoreLayouts;
    /// `docs/sqlite-saver.md`.
    #[cfg(feature = "sqlite")]
    #[doc = include_str!("../docs/sqlite-saver.md")]
    pub struct SqliteSaver;
    /// `docs/writer-api.md`.
    #[doc = include_str!("../docs/writer-api.md")]
    pub struct WriterApi;
    /// `docs/durability.md`.
    #[cfg(all(feature = "durable", feature = "sqlite"))]
    #[doc = include_str!("../docs/durability.md")]
    pub struct Durability;
}
