//! One module per command, as `lgcodec --help` lists them; `store` holds one per store
//! command.

pub mod decode;
pub mod encode;
pub mod key;
pub mod rekey;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub mod store;
