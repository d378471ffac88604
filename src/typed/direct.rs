//! How a [`Value`] inside a typed struct reaches this crate's msgpack encoder: while
//! one of this crate's serializers runs on a thread ([`ActiveGuard`]), a `Value`'s
//! `Serialize` impl (in `value_serde`) hands itself over under `DIRECT_MARKER`, and the
//! serializer (`ser`) lends it its output buffer through a thread-local for that one
//! call. Both sides use this module; neither imports the other.

use std::cell::Cell;

use serde::ser::{self, Serialize, Serializer};

use super::error::{ser_error, UNREPRESENTABLE_PREFIX};
use super::TypedErrorKind;
use super::{DIRECT_MARKER, RAW_MARKER};
use crate::msgpack::{self, encode_into_at_depth};
use crate::value::Value;

thread_local! {
    /// How many of this crate's serializers are running on this thread. While one is,
    /// a `Value` is written by the crate's own encoder (see [`serialize_direct`]), so
    /// deep untyped parts cost no serde recursion.
    static ACTIVE: Cell<usize> = const { Cell::new(0) };

    /// The output buffer of the serializer, lent to a `Value` for one `DIRECT_MARKER`
    /// call (moved, not copied; `None` the rest of the time), with the levels the
    /// serializer has open: the `Value` counts them against the depth limit too.
    static LENT: Cell<Option<(Vec<u8>, usize)>> = const { Cell::new(None) };
}

/// `true` while this crate's serializer runs on this thread.
pub(crate) fn active() -> bool {
    ACTIVE.with(|a| a.get() > 0)
}

/// Marks this crate's serializer as running for the guard's lifetime.
pub(crate) struct ActiveGuard;

impl ActiveGuard {
    pub(crate) fn new() -> Self {
        ACTIVE.with(|a| a.set(a.get().saturating_add(1)));
        ActiveGuard
    }
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        ACTIVE.with(|a| a.set(a.get().saturating_sub(1)));
    }
}

/// Runs `f` on this thread's lent-buffer slot (see `LENT`).
pub(super) fn lent<R>(f: impl FnOnce(&Cell<Option<(Vec<u8>, usize)>>) -> R) -> R {
    LENT.with(f)
}

/// Serializes `value` while this crate's serializer runs (see [`active`]): the `Value`
/// is handed over under `DIRECT_MARKER` and encodes itself into the lent output buffer.
pub(crate) fn serialize_direct<S: ser::Serializer>(value: &Value, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_newtype_struct(DIRECT_MARKER, &Direct(value))
}

/// A `Value` under `DIRECT_MARKER`.
struct Direct<'a>(&'a Value);

impl Serialize for Direct<'_> {
    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match LENT.with(Cell::take) {
            Some((mut out, open)) => {
                // The encoder counts depth from the serializer's open levels (the
                // msgpack limit) and runs its recursion under the stack guard, so
                // hostile depth fails cleanly.
                let r = encode_into_at_depth(self.0, &mut out, open);
                LENT.with(|l| l.set(Some((out, open))));
                r.map_err(encode_error)?;
                s.serialize_unit_struct(DIRECT_MARKER)
            }
            // A foreign serializer stands between the `Value` and ours (it forwarded
            // the marker without reaching `Ser::direct`): the encoded bytes instead.
            None => serialize_raw(self.0, s),
        }
    }
}

/// Raw msgpack bytes of one item, serialized as bytes.
pub(super) struct RawBytes<'a>(pub(super) &'a [u8]);

impl Serialize for RawBytes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

/// `v` as its encoded bytes under the raw marker, for a foreign serializer running
/// inside this crate's. The nesting is checked first, without recursion, so hostile
/// depth fails before any encoding starts.
pub(super) fn serialize_raw<S: Serializer>(v: &Value, s: S) -> Result<S::Ok, S::Error> {
    msgpack::check_depth(v).map_err(encode_error)?;
    let bytes = msgpack::encode(v).map_err(encode_error)?;
    s.serialize_newtype_struct(RAW_MARKER, &RawBytes(&bytes))
}

pub(super) fn encode_error<E: serde::ser::Error>(e: crate::msgpack::EncodeError) -> E {
    match e {
        crate::msgpack::EncodeError::DepthLimit { .. } => {
            ser_error(TypedErrorKind::DepthLimit, e.to_string())
        }
        _ => ser_error(
            TypedErrorKind::Unrepresentable,
            format!("{UNREPRESENTABLE_PREFIX}{e}"),
        ),
    }
}
