//! The checkpoint savers: the data types and the writer API, `InMemorySaver`,
//! `SqliteSaver`, `PostgresSaver` (against `LGCODEC_TEST_PG_URL`, skipped without it)
//! and `DurableSaver`; the conformance kit on each and the kit proving itself.
//!
//! Modules behind a feature are built when it is on (the features each needs are on
//! its `mod` line or at the top of its file).

mod api;
#[cfg(feature = "conformance")]
mod conformance;
#[cfg(feature = "conformance")]
mod conformance_faults;
#[cfg(all(feature = "durable", feature = "conformance", feature = "sqlite"))]
mod durable;
mod memory;
#[cfg(all(feature = "postgres", feature = "conformance"))]
mod postgres;
mod put_depth;
mod put_depth_common;
mod python_rules;
mod sqlite;
mod sqlite_checkpoint;
mod sqlite_fast_path;
#[path = "../support/mod.rs"]
mod support;
mod writer_api;
