//! msgpack bytes ⇄ [`Value`](crate::Value), byte-identical to ormsgpack.
//!
//! Decoding then encoding any document Python writes gives back exactly the same bytes.
//! Decoding is bounded in depth and runs deep input on heap-allocated stack segments (no
//! overflow on any thread), checks every length against the input before allocating,
//! and refuses trailing bytes and forms ormsgpack never writes.
//!
//! ```
//! use langgraph_codec::msgpack;
//! use langgraph_codec::Value;
//!
//! // {"a": [1, -1, 1.5]} as ormsgpack writes it.
//! let bytes = b"\x81\xa1a\x93\x01\xff\xcb\x3f\xf8\x00\x00\x00\x00\x00\x00";
//! let value = msgpack::decode(bytes)?;
//! assert_eq!(value.get("a").and_then(Value::as_array).map(<[Value]>::len), Some(3));
//! assert_eq!(msgpack::encode(&value)?, bytes);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub(crate) mod borrowed;
pub(crate) mod decode;
mod encode;
mod error;
pub(crate) mod marker;
pub(crate) mod read;

pub use borrowed::{LazyValue, NdArrayRef, PyObjectRef, RawExtRef, ValueRef};
pub use error::{DecodeError, DecodeErrorKind, EncodeError};
pub use read::{DecodeOptions, DEFAULT_MAX_DEPTH, DEFAULT_MAX_TOTAL_DEPTH};

pub use decode::{decode, decode_bytes};
pub(crate) use encode::{check_depth, encode_into_at_depth, finish_ext, put, replace_prefix};
pub use encode::{
    encode, encode_into, write_array_len, write_bin, write_ext, write_ext_with, write_f64,
    write_i64, write_int, write_map_len, write_str, write_u64,
};
