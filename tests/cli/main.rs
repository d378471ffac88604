//! The `lgcodec` command (feature `cli`) as a user meets it: its messages, JSONL
//! batches, keys, and every `--help` example run as pasted.

#[cfg(feature = "cli")]
mod exit_status;
#[cfg(feature = "cli")]
mod key;
#[cfg(feature = "cli")]
mod lgcodec;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod store_help;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
#[path = "../support/mod.rs"]
mod support;
