//! bytes → [`Value`], by recursive descent on a guarded stack.
//!
//! The checks — markers, lengths, canonical forms, nesting limits — are the shared
//! [reader](super::read)'s, so this decoder, the borrowed one and the typed deserializer
//! give the same error for the same bytes. Nesting is bounded by
//! [`DecodeOptions::max_depth`] and deep input continues on heap-allocated stack
//! segments ([`crate::stack`]), so depth never overflows the call stack, on any thread.
//! Every length prefix is checked against the bytes left before anything is allocated
//! for it.
//!
//! Extension payloads of codes 0–7 are decoded in place as nested documents. A payload
//! that is not exactly the tuple Python writes — malformed, short, non-canonical, with
//! trailing bytes — is kept as a [`RawExt`] instead, so nothing is lost and re-encoding
//! gives the same bytes.

use bytes::Bytes;

use super::error::{DecodeError, DecodeErrorKind as Kind};
use super::marker as M;
use super::read::{DecodeOptions, Fail, Head, Reader, SeenStrs, Walk};
use crate::value::{Int, NdArray, ObjectKind, PyObject, PyStr, RawExt, Value};

/// Arrays reserve at most this many items (maps half as many entries) before the items
/// arrive; longer ones grow as they are read. A declared length then never reserves
/// memory ahead of the data (a 1 MB input declaring a million elements does not reserve
/// 40 MB), and no large block is requested before the many small ones of its items,
/// which keeps glibc's malloc on its fast paths: decoding `messages300` (a 300-item
/// array) got about 35% faster in wall-clock time, same instruction count.
const MAX_PREALLOC: usize = 64;

/// Decodes one msgpack document with the default options. Bin payloads are copied.
/// Other options: [`DecodeOptions::decode`].
///
/// # Errors
/// [`DecodeError`] with the byte offset: truncated input, a reserved byte, invalid
/// UTF-8, a length beyond the input, nesting beyond the default limits, a non-canonical
/// form, or bytes after the value.
pub fn decode(input: &[u8]) -> Result<Value, DecodeError> {
    Decoder::new(input, None, DecodeOptions::default()).run()
}

/// Decodes one msgpack document; bin and raw-ext payloads share `input`'s buffer
/// instead of being copied. Other options: [`DecodeOptions::decode_bytes`].
///
/// # Errors
/// As [`decode`].
pub fn decode_bytes(input: &Bytes) -> Result<Value, DecodeError> {
    Decoder::new(input, Some(input), DecodeOptions::default()).run()
}

/// Decoding with options other than the defaults: the options value makes the call.
impl DecodeOptions {
    /// [`decode`](super::decode) under these options.
    ///
    /// ```
    /// use langgraph_codec::msgpack::{self, DecodeOptions};
    ///
    /// // A uint16 holding 5: ormsgpack writes 5 as the single byte 0x05.
    /// let long_five = b"\xcd\x00\x05";
    /// assert!(msgpack::decode(long_five).is_err());
    /// let liberal = DecodeOptions::new().allow_non_canonical(true);
    /// assert_eq!(liberal.decode(long_five)?.as_u64(), Some(5));
    /// # Ok::<(), langgraph_codec::msgpack::DecodeError>(())
    /// ```
    ///
    /// # Errors
    /// As [`decode`](super::decode), under these limits and canonical-form rule.
    pub fn decode(&self, input: &[u8]) -> Result<Value, DecodeError> {
        Decoder::new(input, None, *self).run()
    }

    /// [`decode_bytes`](super::decode_bytes) under these options: payloads share
    /// `input`'s buffer.
    ///
    /// # Errors
    /// As [`DecodeOptions::decode`].
    pub fn decode_bytes(&self, input: &Bytes) -> Result<Value, DecodeError> {
        Decoder::new(input, Some(input), *self).run()
    }
}

/// Decodes the item at `r`'s position into an owned [`Value`] on the same reader (same
/// errors, offsets and depth counts as a whole-document decode), for the typed
/// deserializer's [`Value`] parts; `r` is left after the item.
pub(crate) fn read_owned(r: &mut Reader<'_>) -> Result<Value, DecodeError> {
    let mut d = Decoder {
        r: *r,
        shared: None,
        seen: SeenStrs::new(),
    };
    let value = d.value().map_err(|e| *e);
    *r = d.r;
    value
}

/// A recursive-descent reader on the shared [`Reader`], which owns the checks and the
/// depth accounting (and runs deep input on heap-allocated stack segments). Each
/// container builds its `Vec` directly, so a value is moved once into its parent and
/// nothing else is buffered.
struct Decoder<'a> {
    r: Reader<'a>,
    shared: Option<&'a Bytes>,
    /// Short strings already checked as UTF-8 (see [`SeenStrs`]).
    seen: SeenStrs<'a>,
}

impl<'a> Walk<'a> for Decoder<'a> {
    #[inline(always)]
    fn reader(&mut self) -> &mut Reader<'a> {
        &mut self.r
    }
}

impl<'a> Decoder<'a> {
    fn new(input: &'a [u8], shared: Option<&'a Bytes>, options: DecodeOptions) -> Self {
        Decoder {
            r: Reader::new(input, options),
            shared,
            seen: SeenStrs::new(),
        }
    }

    fn run(mut self) -> Result<Value, DecodeError> {
        let value = self.value().map_err(|e| *e)?;
        self.r.finish()?;
        Ok(value)
    }

    fn raw_ext(&self, code: i8, start: usize, end: usize) -> Value {
        Value::from(RawExt {
            code,
            data: self.payload(start, end),
        })
    }

    fn payload(&self, start: usize, end: usize) -> Bytes {
        match self.shared {
            Some(b) => b.slice(start..end),
            None => Bytes::copy_from_slice(self.r.slice(start, end)),
        }
    }

    /// Reads one complete value into `slot`.
    ///
    /// Writing in place instead of returning the value matters for speed: a returned
    /// `Result<Value, _>` is stored field by field and then copied into the parent with
    /// wide loads, which stall on store forwarding at every item (about a quarter of the
    /// decode time on flat records).
    fn read_into(&mut self, slot: &mut Value) -> Result<(), Fail> {
        let at = self.r.pos;
        let value = match self.r.head_seen(&mut self.seen)? {
            Head::U(n) => Value::Int(Int::from(n)),
            Head::I(n) => Value::Int(Int::from(n)),
            Head::Nil => return Ok(()),
            Head::Bool(b) => Value::Bool(b),
            Head::F32(f) => Value::F32(f),
            Head::F64(f) => Value::F64(f),
            Head::Str(s) => {
                // Filled in place from a constant: a `PyStr` built here and moved in is
                // staged on the stack and reloaded with stalls (see `put`); a constant
                // is copied from read-only memory with wide stores.
                put(slot, EMPTY_STR);
                if let Value::Str(text) = slot {
                    text.push_str(s);
                }
                return Ok(());
            }
            Head::Bin(b) => {
                let end = self.r.pos;
                Value::Bin(self.payload(end - b.len(), end))
            }
            Head::Array(n) => return self.array(n, at, slot),
            Head::Map(n) => return self.map(n, at, slot),
            Head::Ext { code, len } => return self.ext(code, len, at, slot),
        };
        put(slot, value);
        Ok(())
    }

    /// Reads one complete value.
    fn value(&mut self) -> Result<Value, Fail> {
        let mut v = Value::Nil;
        self.read_into(&mut v)?;
        Ok(v)
    }

    /// Each item is pushed as `Nil` and then read in place (see [`Self::read_into`]).
    // Each pushed `NIL` is overwritten at once: not the same item pushed n times.
    #[allow(clippy::same_item_push)]
    fn array(&mut self, n: usize, at: usize, slot: &mut Value) -> Result<(), Fail> {
        if n == 0 {
            put(slot, Value::Array(Vec::new()));
            return Ok(());
        }
        self.nested(at, |d| {
            let mut items = Vec::with_capacity(n.min(MAX_PREALLOC));
            for _ in 0..n {
                items.push(NIL);
                if let Some(item) = items.last_mut() {
                    d.read_into(item)?;
                }
            }
            put(slot, Value::Array(items));
            Ok(())
        })
    }

    /// Like [`Self::array`], two slots an entry.
    #[allow(clippy::same_item_push)]
    fn map(&mut self, n: usize, at: usize, slot: &mut Value) -> Result<(), Fail> {
        if n == 0 {
            put(slot, Value::Map(Vec::new()));
            return Ok(());
        }
        self.nested(at, |d| {
            let mut entries = Vec::with_capacity(n.min(MAX_PREALLOC / 2));
            for _ in 0..n {
                entries.push(NIL_ENTRY);
                if let Some((key, value)) = entries.last_mut() {
                    d.read_into(key)?;
                    d.read_into(value)?;
                }
            }
            put(slot, Value::Map(entries));
            Ok(())
        })
    }

    /// An extension value of `n` payload bytes (its header read, its marker at `at`).
    /// Codes 0–7 are decoded as a nested document confined to the payload; if that
    /// fails for any reason but the depth limit, or the payload is not the tuple Python
    /// writes, the ext is kept raw.
    fn ext(&mut self, code: i8, n: usize, at: usize, slot: &mut Value) -> Result<(), Fail> {
        let start = self.r.pos;
        let end = start + n;
        if !(0..=7).contains(&code) || n == 0 {
            self.r.take(n)?;
            put(slot, self.raw_ext(code, start, end));
            return Ok(());
        }
        let payload = self.ext_document(at, n, |d| match ObjectKind::from_code(code) {
            Some(kind) => d.object_payload(kind),
            None => Ok(ndarray_or_delta(code, d.value()?)),
        });
        let structured = match payload {
            Ok(v) if self.r.pos == end => v,
            Ok(_) => None,
            Err(e) if matches!(e.kind(), Kind::DepthLimit { .. }) => return Err(e),
            Err(_) => None,
        };
        self.r.pos = end;
        put(
            slot,
            structured.unwrap_or_else(|| self.raw_ext(code, start, end)),
        );
        Ok(())
    }

    /// The payload of an object envelope (ext 0–5): `Some` if it is the tuple Python
    /// writes, `(module: str, name: str, arg)` or `(module, name, arg, method: str)`.
    ///
    /// The tuple's items are read into a small array instead of a `Vec`, and every item
    /// is read exactly once whatever its shape, so nested envelopes cost linear time.
    fn object_payload(&mut self, kind: ObjectKind) -> Result<Option<Value>, Fail> {
        let at = self.r.pos;
        let len = match self.r.peek() {
            Some(M::FIXARRAY_3) => 3,
            Some(M::FIXARRAY_4) => 4,
            // Not a 3- or 4-tuple (a longer header for 3 or 4 items is non-canonical,
            // refused in a payload): checked for its errors, it stays raw either way.
            _ => {
                super::borrowed::skip(&mut self.r)?;
                return Ok(None);
            }
        };
        self.r.pos += 1;
        let mut items: [Value; 4] = Default::default();
        self.nested(at, |d| {
            for item in items.iter_mut().take(len) {
                d.read_into(item)?;
            }
            Ok::<_, Fail>(())
        })?;
        let [module, name, arg, method] = items;
        let (Ok(module), Ok(name)) = (module.into_str(), name.into_str()) else {
            return Ok(None);
        };
        let method = match (len, method.into_str()) {
            (3, _) => None,
            (_, Ok(m)) => Some(m),
            _ => return Ok(None),
        };
        Ok(Some(Value::Object(Box::new(PyObject {
            kind,
            module,
            name,
            arg,
            method,
        }))))
    }
}

/// An empty string value, filled in place by [`Decoder::str`]. A constant is copied from
/// read-only memory with wide stores, whereas `PyStr::default()` was staged on the stack
/// and reloaded with two store-forwarding stalls per string (measured: about 15% of the
/// decode time of messages300).
const EMPTY_STR: Value = Value::Str(PyStr::EMPTY);

/// The slot an array pushes before reading an item into it, and a map's entry: pushed
/// from a constant, copied from read-only memory. A `(Value::Nil, Value::Nil)` built
/// in place was staged on the stack with byte stores and copied into the `Vec` with
/// 16-byte loads that stalled on store forwarding (`perf annotate`: 43% of the map
/// loop's samples on that one load in `checkpoint_plain`).
const NIL: Value = Value::Nil;
const NIL_ENTRY: (Value, Value) = (Value::Nil, Value::Nil);

/// Stores `value` in `slot`, which must hold the `Nil` it was created with.
///
/// Why not `*slot = value`: assignment drops the old value first, and that call sits
/// between building `value` and storing it, so `value` is spilled and then copied with
/// wide loads that stall on store forwarding — measured at a third of the decode time on
/// flat records. Replacing and forgetting the `Nil` (which owns nothing) has no call in
/// between.
#[inline(always)]
fn put(slot: &mut Value, value: Value) {
    let old = std::mem::replace(slot, value);
    debug_assert!(matches!(old, Value::Nil), "decoder slots start as Nil");
    std::mem::forget(old);
}

/// Turns a decoded ext 6 or 7 payload into its structured form, or `None` if it is not
/// the tuple Python writes (object envelopes, 0–5, are read by `object_payload`).
fn ndarray_or_delta(code: i8, payload: Value) -> Option<Value> {
    if code == 7 {
        return Some(Value::DeltaSnapshot(Box::new(payload)));
    }
    let items = payload.into_array().ok()?;
    if code == 6 {
        let [dtype, shape, order, buffer] = <[Value; 4]>::try_from(items).ok()?;
        let (Ok(dtype), Ok(shape), Ok(order), Ok(buffer)) = (
            dtype.into_str(),
            shape.into_array(),
            order.into_str(),
            buffer.into_bin(),
        ) else {
            return None;
        };
        let shape = shape
            .iter()
            .map(Value::as_u64)
            .collect::<Option<Vec<u64>>>()?;
        return Some(Value::NdArray(Box::new(NdArray {
            dtype: dtype.into_string(),
            shape,
            order: order.into_string(),
            buffer,
        })));
    }
    None
}
