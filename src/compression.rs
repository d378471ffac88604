//! [`CompressedSerializer`]: upstream LangGraph's `CompressedSerializer` (newer than
//! 4.3.2): tag suffix `+zlib`, payload `b"LGZ\x01"` followed by a zlib stream.
//! Decompression is bounded, so a small hostile row cannot expand into gigabytes: per
//! row ([`CompressedSerializer::with_max_decompressed_size`]) and per saver call
//! ([`DecompressionBudget`]).
//!
//! # Its layer
//!
//! A serializer wrapper of its own, above the serializer protocol ([`Serializer`]) and below
//! [`crypto`](crate::crypto): it names only the serializer protocol and the value
//! model, so a saver or tool that compresses without encrypting does not depend on the
//! crypto layer. The crypto layer composes it (`msgpack+zlib+aes` is an
//! `EncryptedSerializer` over a `CompressedSerializer`). Its failures are the crate's
//! [`Error`] with kind [`ErrorKind::DecompressionLimit`],
//! [`ErrorKind::DecompressionBudget`] or [`ErrorKind::InvalidCompressedData`] (and the
//! limit in force as [`Error::limit`]), through any wrapper and saver.
//!
//! # Why the per-call budget is a thread-local scope, not an argument
//!
//! A saver holds its serializer as `Arc<dyn Serializer>`, composed by the user: the
//! `CompressedSerializer` may sit under an `EncryptedSerializer`, under a user's own
//! wrapper, or not be there at all. For a budget to travel with the call it would
//! have to be a parameter of every [`Serializer`] method (`loads_typed`,
//! `unwrap_serialized`, the typed layer's entry points) and every wrapper, including
//! serializers written outside this crate, would have to forward it; one that did not
//! (a default method) would silently drop the limit. The saver cannot instead build a
//! budgeted copy of its serializer per call, since it does not know where in the
//! `dyn` stack the compressor is. A [`DecompressionBudget::scope`] reaches the
//! compressor under any wrapper without changing the protocol, and costs one
//! thread-local read per inflated row. Its limits, stated where it is used: decoding
//! is synchronous, so a scope never spans an `.await` (an async call opens one scope
//! per row on clones of one budget, which share the total), and work a serializer hands
//! to another thread is not charged. The options values of this crate
//! ([`DecodeOptions`](crate::msgpack::DecodeOptions),
//! [`TypedOptions`](crate::TypedOptions)) configure one decode, below the
//! [`Serializer`] trait, so they cannot carry it either; if that trait ever takes a
//! per-call options value, the budget belongs there.

use std::cell::RefCell;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;

use std::fmt;

use crate::error::{Error, Result};
use crate::kind::ErrorKind;
use crate::serializer::{JsonPlusSerializer, Serializer, TypedBytes};
use crate::value::Value;

/// [`ErrorKind::DecompressionLimit`]: more than `limit` bytes would come out of one row.
fn limit_exceeded(limit: usize) -> Error {
    Error::new(
        ErrorKind::DecompressionLimit,
        format!("decompressed data exceeds the limit of {limit} bytes"),
    )
    .with_limit(limit)
}

/// [`ErrorKind::DecompressionBudget`]: the rows of one call would inflate past `limit`.
fn budget_exceeded(limit: usize) -> Error {
    Error::new(
        ErrorKind::DecompressionBudget,
        format!(
            "decompressed data of this call exceeds its budget of {limit} bytes \
             (a total over all its +zlib rows)"
        ),
    )
    .with_limit(limit)
}

/// [`ErrorKind::InvalidCompressedData`].
fn invalid(reason: impl fmt::Display) -> Error {
    Error::new(
        ErrorKind::InvalidCompressedData,
        format!("invalid compressed payload: {reason}"),
    )
}

/// The tag suffix of compressed rows.
pub const ZLIB_SUFFIX: &str = "+zlib";
/// The 4-byte marker in front of every compressed payload.
pub const ZLIB_MARKER: &[u8; 4] = b"LGZ\x01";
/// The default limit on decompressed size: 256 MiB.
pub const DEFAULT_MAX_DECOMPRESSED: usize = 256 << 20;

/// The default total a [`DecompressionBudget`] allows one saver call: 1 GiB.
pub const DEFAULT_MAX_DECOMPRESSED_PER_CALL: usize = 1 << 30;

/// A total of decompressed bytes shared by every `+zlib` row one saver call reads.
///
/// The per-row limit of [`CompressedSerializer`] stops one bomb; a call that reads many
/// rows (`get_tuple` with its blobs and writes, `list` over a thread's history) could
/// still inflate many of them. A saver creates one budget per call and runs the call's
/// decoding inside [`scope`](Self::scope): every `+zlib` row a [`CompressedSerializer`]
/// inflates on this thread within the scope — under any wrappers (`+zlib+aes`), through
/// [`Serializer::loads_typed`] or the typed layer — is charged to it, and a row that
/// would go past the total fails with [`ErrorKind::DecompressionBudget`] before
/// inflating further. The serializer API does not change. Clones share the total, so
/// a call that decodes rows in several places (even across `.await`s, one `scope` per
/// row) charges one budget.
///
/// ```
/// use langgraph_codec::compression::{CompressedSerializer, DecompressionBudget};
/// use langgraph_codec::{ErrorKind, JsonPlusSerializer, Serializer, Value};
///
/// let serde = CompressedSerializer::new(JsonPlusSerializer::new());
/// let row = serde.dumps_typed(&Value::from("x".repeat(600)))?; // 603 bytes inflated
/// let budget = DecompressionBudget::new(1_000);
/// let first = budget.scope(|| serde.loads_typed(&row.type_tag, &row.data));
/// assert!(first.is_ok());
/// assert_eq!(budget.used(), 603);
/// let second = budget.scope(|| serde.loads_typed(&row.type_tag, &row.data));
/// let second = second.unwrap_err();
/// assert_eq!(second.kind(), ErrorKind::DecompressionBudget);
/// assert_eq!(second.limit(), Some(1_000));
/// // Outside a scope only the per-row limit applies.
/// assert!(serde.loads_typed(&row.type_tag, &row.data).is_ok());
/// # Ok::<(), langgraph_codec::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct DecompressionBudget {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    limit: usize,
    used: AtomicUsize,
}

thread_local! {
    static CURRENT: RefCell<Option<DecompressionBudget>> = const { RefCell::new(None) };
}

impl DecompressionBudget {
    /// A budget of `limit` decompressed bytes in total.
    pub fn new(limit: usize) -> Self {
        DecompressionBudget {
            shared: Arc::new(Shared {
                limit,
                used: AtomicUsize::new(0),
            }),
        }
    }

    /// The total allowed.
    pub fn limit(&self) -> usize {
        self.shared.limit
    }

    /// Bytes charged so far.
    pub fn used(&self) -> usize {
        self.shared.used.load(Ordering::Relaxed)
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.limit().saturating_sub(self.used())
    }

    /// Charges `bytes` (for a saver that inflates data by other means).
    ///
    /// # Errors
    /// [`ErrorKind::DecompressionBudget`] when the total would pass the limit
    /// (nothing is charged then).
    pub fn charge(&self, bytes: usize) -> Result<()> {
        let limit = self.limit();
        self.shared
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                used.checked_add(bytes).filter(|total| *total <= limit)
            })
            .map(|_| ())
            .map_err(|_| budget_exceeded(limit))
    }

    /// Runs `f` with this budget charged for every `+zlib` row inflated on this thread
    /// inside it. Scopes nest: the innermost budget is charged.
    pub fn scope<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Restore(Option<DecompressionBudget>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let previous = self.0.take();
                CURRENT.with(|c| *c.borrow_mut() = previous);
            }
        }
        let previous = CURRENT.with(|c| c.borrow_mut().replace(self.clone()));
        let _restore = Restore(previous);
        f()
    }

    /// The budget of the innermost [`scope`](Self::scope) running on this thread.
    pub fn current() -> Option<DecompressionBudget> {
        CURRENT.with(|c| c.borrow().clone())
    }
}

/// Inflates one row: at most `row_limit` bytes, and within the current budget.
fn inflate(payload: &[u8], row_limit: usize) -> Result<Vec<u8>> {
    let Some(budget) = DecompressionBudget::current() else {
        return decompress(payload, row_limit);
    };
    let remaining = budget.remaining();
    if remaining < row_limit {
        let out = decompress(payload, remaining).map_err(|e| match e.kind() {
            ErrorKind::DecompressionLimit => budget_exceeded(budget.limit()),
            _ => e,
        })?;
        budget.charge(out.len())?;
        return Ok(out);
    }
    let out = decompress(payload, row_limit)?;
    budget.charge(out.len())?;
    Ok(out)
}

/// Wraps any [`Serializer`] with zlib compression (tag `"<inner>+zlib"`), compatible
/// with upstream LangGraph's `CompressedSerializer`. Tags without the suffix go to the
/// inner serializer unchanged (rows written before compression was turned on).
///
/// Put it *inside* an [`EncryptedSerializer`](crate::crypto::EncryptedSerializer) to compress
/// before encrypting (`msgpack+zlib+aes`); Python 4.3.2 cannot read such rows.
///
/// ```
/// use langgraph_codec::compression::CompressedSerializer;
/// use langgraph_codec::{JsonPlusSerializer, Serializer, Value};
///
/// let serde = CompressedSerializer::new(JsonPlusSerializer::new());
/// let value = Value::from("x".repeat(10_000));
/// let typed = serde.dumps_typed(&value)?;
/// assert_eq!(typed.type_tag, "msgpack+zlib");
/// assert!(typed.data.starts_with(b"LGZ\x01") && typed.data.len() < 200);
/// assert_eq!(serde.loads_typed(&typed.type_tag, &typed.data)?, value);
/// // Refuses to inflate beyond its limit.
/// let small = serde.with_max_decompressed_size(1_000);
/// assert!(small.loads_typed(&typed.type_tag, &typed.data).is_err());
/// # Ok::<(), langgraph_codec::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct CompressedSerializer<S = JsonPlusSerializer> {
    inner: S,
    level: u32,
    max_decompressed: usize,
}

impl<S: Serializer> CompressedSerializer<S> {
    /// Wraps `inner`; level 6 (Python's default), 256 MiB decompression limit.
    pub fn new(inner: S) -> Self {
        CompressedSerializer {
            inner,
            level: 6,
            max_decompressed: DEFAULT_MAX_DECOMPRESSED,
        }
    }

    /// The zlib level, 0 (store) to 9 (smallest); larger values are taken as 9.
    pub fn with_level(mut self, level: u32) -> Self {
        self.level = level.min(9);
        self
    }

    /// The most bytes one payload may decompress to (default
    /// [`DEFAULT_MAX_DECOMPRESSED`]). For a total over the rows of one saver call, see
    /// [`DecompressionBudget`].
    pub fn with_max_decompressed_size(mut self, limit: usize) -> Self {
        self.max_decompressed = limit;
        self
    }

    /// The wrapped serializer.
    pub fn inner(&self) -> &S {
        &self.inner
    }
}

impl<S: Serializer> Serializer for CompressedSerializer<S> {
    fn dumps_typed(&self, value: &Value) -> Result<TypedBytes> {
        let plain = self.inner.dumps_typed(value)?;
        let data = compress(&plain.data, self.level)?;
        Ok(TypedBytes::new(
            format!("{}{ZLIB_SUFFIX}", plain.type_tag),
            data,
        ))
    }

    fn loads_typed(&self, type_tag: &str, data: &[u8]) -> Result<Value> {
        match type_tag.strip_suffix(ZLIB_SUFFIX) {
            Some(inner_tag) => {
                let plain = inflate(data, self.max_decompressed)?;
                self.inner.loads_typed(inner_tag, &plain)
            }
            None => self.inner.loads_typed(type_tag, data),
        }
    }

    fn confidential(&self) -> bool {
        self.inner.confidential()
    }

    fn refuses_plaintext(&self) -> bool {
        self.inner.refuses_plaintext()
    }

    /// Typed (serde) values: the inner serializer's pair, then compressed; `aad` goes
    /// to the inner serializer.
    fn wrap_serialized(&self, raw: TypedBytes, aad: &[u8]) -> Result<TypedBytes> {
        let plain = self.inner.wrap_serialized(raw, aad)?;
        let data = compress(&plain.data, self.level)?;
        Ok(TypedBytes::new(
            format!("{}{ZLIB_SUFFIX}", plain.type_tag),
            data,
        ))
    }

    /// Typed (serde) values: inflated, then handed to the inner serializer with `aad`.
    fn unwrap_serialized(
        &self,
        type_tag: &str,
        data: &[u8],
        aad: &[u8],
        read: &mut dyn FnMut(&str, &[u8]) -> Result<()>,
    ) -> Result<()> {
        match type_tag.strip_suffix(ZLIB_SUFFIX) {
            Some(inner_tag) => {
                let plain = inflate(data, self.max_decompressed)?;
                self.inner.unwrap_serialized(inner_tag, &plain, aad, read)
            }
            None => self.inner.unwrap_serialized(type_tag, data, aad, read),
        }
    }
}

/// `b"LGZ\x01" + zlib.compress(data, level)`.
///
/// # Errors
/// [`ErrorKind::InvalidCompressedData`] if the zlib encoder fails (writing to memory,
/// not expected).
pub fn compress(data: &[u8], level: u32) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len() / 2 + 16);
    out.extend_from_slice(ZLIB_MARKER);
    let mut encoder = ZlibEncoder::new(out, Compression::new(level.min(9)));
    let io = |e: std::io::Error| invalid(format_args!("zlib compression failed: {e}"));
    encoder.write_all(data).map_err(io)?;
    encoder.finish().map_err(io)
}

/// Checks the marker and inflates the zlib stream after it, refusing output larger
/// than `limit`, truncated streams and bytes after the end of the stream.
///
/// # Errors
/// [`ErrorKind::InvalidCompressedData`] without the marker, for a truncated or
/// corrupt stream or bytes after it; [`ErrorKind::DecompressionLimit`] past `limit`.
pub fn decompress(payload: &[u8], limit: usize) -> Result<Vec<u8>> {
    let stream = payload
        .strip_prefix(ZLIB_MARKER.as_slice())
        .ok_or_else(|| invalid("missing the b\"LGZ\\x01\" marker"))?;
    let mut decoder = ZlibDecoder::new(stream);
    let mut out = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    (&mut decoder)
        .take(cap)
        .read_to_end(&mut out)
        .map_err(|e| invalid(format_args!("invalid zlib stream: {e}")))?;
    if out.len() > limit {
        return Err(limit_exceeded(limit));
    }
    let consumed = decoder.total_in();
    if consumed != u64::try_from(stream.len()).unwrap_or(u64::MAX) {
        return Err(invalid(format_args!(
            "{} byte(s) after the end of the zlib stream",
            (stream.len() as u64).saturating_sub(consumed)
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // `b"LGZ\x01" + zlib.compress(b"hello hello hello hello", 6)` from CPython's zlib
    // (the payload upstream LangGraph's CompressedSerializer writes).
    const PY_PAYLOAD: &str = "4c475a01789ccb48cdc9c957c8402701680308b1";

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    }

    #[test]
    fn reads_python_payload() {
        let out = decompress(&unhex(PY_PAYLOAD), 1 << 20).expect("valid payload");
        assert_eq!(out, b"hello hello hello hello");
    }

    #[test]
    fn refuses_bad_payloads() {
        let good = unhex(PY_PAYLOAD);
        // no marker
        assert_eq!(
            decompress(&good[4..], 1 << 20).map_err(|e| e.kind()),
            Err(ErrorKind::InvalidCompressedData)
        );
        // every truncation
        for cut in 4..good.len() {
            assert!(
                decompress(&good[..cut], 1 << 20).is_err(),
                "truncated at {cut} accepted"
            );
        }
        // trailing bytes
        let mut long = good.clone();
        long.push(0);
        assert!(decompress(&long, 1 << 20).is_err());
        // limit: 23 bytes of output
        assert!(decompress(&good, 23).is_ok());
        assert_eq!(
            decompress(&good, 22).map_err(|e| (e.kind(), e.limit())),
            Err((ErrorKind::DecompressionLimit, Some(22)))
        );
    }

    #[test]
    fn zip_bomb_is_bounded() {
        let bomb = compress(&vec![0u8; 8 << 20], 9).expect("compress");
        assert!(bomb.len() < 20_000);
        assert_eq!(
            decompress(&bomb, 1 << 20).map_err(|e| e.kind()),
            Err(ErrorKind::DecompressionLimit)
        );
    }
}
