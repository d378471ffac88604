//! bytes → [`Value`], by recursive descent on a guarded stack.
//!
//! Nesting is bounded by [`DecodeOptions::max_depth`] and deep input continues on
//! heap-allocated stack segments ([`crate::stack`]), so depth never overflows the call
//! stack, on any thread. Every length prefix is checked against the bytes left before
//! anything is allocated for it.
//!
//! Extension payloads of codes 0–7 are decoded in place as nested documents. A payload
//! that is not exactly the tuple Python writes — malformed, short, non-canonical, with
//! trailing bytes — is kept as a [`RawExt`] instead, so nothing is lost and re-encoding
//! gives the same bytes.

use bytes::Bytes;

use super::error::{DecodeError, DecodeErrorKind as Kind};
use crate::value::{Int, NdArray, ObjectKind, PyObject, PyStr, RawExt, Value};

/// The nesting limit ormsgpack reads (it writes at most 255 levels), per document.
///
/// Python writes and reads each extension payload as a document of its own (every
/// object envelope is a separate `packb`/`unpackb`), so the limit applies to the levels
/// of one payload, counted from its tuple, not to the whole value: Python writes 480
/// nested dataclasses or `Send`s in one row.
pub const DEFAULT_MAX_DEPTH: usize = 1024;

/// The limit on all levels together, extension payloads included (Python can write
/// about 480 nested envelopes of up to 255 levels each: 122,880). It bounds the memory
/// deep input costs: each level takes a few hundred bytes of (heap-allocated) stack
/// while it is read.
pub const DEFAULT_MAX_TOTAL_DEPTH: usize = 131_072;

/// Arrays reserve at most this many items (maps half as many entries) before the items
/// arrive; longer ones grow as they are read. A declared length then never reserves
/// memory ahead of the data (a 1 MB input declaring a million elements does not reserve
/// 40 MB), and no large block is requested before the many small ones of its items,
/// which keeps glibc's malloc on its fast paths: decoding `messages300` (a 300-item
/// array) got about 35% faster in wall-clock time, same instruction count.
const MAX_PREALLOC: usize = 64;

/// How to decode. `Default` is what Python reads: depth 1,024 per document (the top level
/// or one extension payload), 131,072 in all, canonical forms only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DecodeOptions {
    max_depth: usize,
    max_total_depth: usize,
    allow_non_canonical: bool,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            max_depth: DEFAULT_MAX_DEPTH,
            max_total_depth: DEFAULT_MAX_TOTAL_DEPTH,
            allow_non_canonical: false,
        }
    }
}

impl DecodeOptions {
    /// The default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Arrays and maps may nest at most this deep within one document: the top level,
    /// or one extension payload, which Python reads as a document of its own (a
    /// top-level array is depth 1; an envelope's payload tuple is depth 1 of its
    /// payload). Deeper input is a [`Kind::DepthLimit`] error. Default
    /// [`DEFAULT_MAX_DEPTH`].
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// The configured depth limit.
    pub fn depth_limit(&self) -> usize {
        self.max_depth
    }

    /// All levels together, extension payloads included (each envelope counts one
    /// level, its payload's levels count too), may nest at most this deep. Deeper input
    /// is a [`Kind::DepthLimit`] error with this limit. Default
    /// [`DEFAULT_MAX_TOTAL_DEPTH`].
    pub fn max_total_depth(mut self, depth: usize) -> Self {
        self.max_total_depth = depth;
        self
    }

    /// The configured limit on all levels together.
    pub fn total_depth_limit(&self) -> usize {
        self.max_total_depth
    }

    /// Accept forms ormsgpack never writes (an int16 holding 5, a str8 of 3 bytes, …) at
    /// the top level instead of failing with [`Kind::NonCanonical`]. Such input then
    /// re-encodes to the shorter canonical bytes. Extension payloads in a non-canonical
    /// form are always kept raw, whatever this says.
    pub fn allow_non_canonical(mut self, allow: bool) -> Self {
        self.allow_non_canonical = allow;
        self
    }
}

/// Decodes one msgpack document with the default options. Bin payloads are copied.
pub fn decode(input: &[u8]) -> Result<Value, DecodeError> {
    decode_with(input, &DecodeOptions::default())
}

/// Decodes one msgpack document; bin and raw-ext payloads share `input`'s buffer
/// instead of being copied.
pub fn decode_bytes(input: &Bytes) -> Result<Value, DecodeError> {
    Decoder::new(input, Some(input), DecodeOptions::default()).run()
}

/// Decodes one msgpack document with the given options.
pub fn decode_with(input: &[u8], options: &DecodeOptions) -> Result<Value, DecodeError> {
    Decoder::new(input, None, *options).run()
}

/// Decodes with the given options, sharing `input`'s buffer for payloads.
pub fn decode_bytes_with(input: &Bytes, options: &DecodeOptions) -> Result<Value, DecodeError> {
    Decoder::new(input, Some(input), *options).run()
}

/// Container levels between two checks of the remaining call stack. Each level costs two
/// small frames (`value` and the container's reader), so this many levels stay far
/// inside [`crate::stack`]'s red zone while the check itself is paid rarely.
const STACK_CHECK_EVERY: usize = 8;

/// A recursive-descent reader. Recursion is bounded by [`DecodeOptions::max_depth`] and
/// every [`STACK_CHECK_EVERY`] levels runs under [`crate::stack::guard`], so any depth
/// costs heap, never a stack overflow, on any thread. Each container builds its `Vec`
/// directly, so a value is moved once into its parent and nothing else is buffered.
struct Decoder<'a> {
    input: &'a [u8],
    shared: Option<&'a Bytes>,
    options: DecodeOptions,
    pos: usize,
    /// Reads may not go past this: the end of the input or of the current ext payload.
    limit: usize,
    /// Open arrays and maps in the current document (the top level or one extension
    /// payload).
    depth: usize,
    /// Open arrays, maps and extension payloads, in all documents.
    total: usize,
    /// How many of those are extension payloads.
    ext_depth: usize,
}

impl<'a> Decoder<'a> {
    fn new(input: &'a [u8], shared: Option<&'a Bytes>, options: DecodeOptions) -> Self {
        Decoder {
            input,
            shared,
            options,
            pos: 0,
            limit: input.len(),
            depth: 0,
            total: 0,
            ext_depth: 0,
        }
    }

    fn run(mut self) -> Result<Value, DecodeError> {
        let value = self.value()?;
        if self.pos != self.input.len() {
            return Err(self.err(
                Kind::TrailingBytes {
                    count: self.input.len() - self.pos,
                },
                self.pos,
            ));
        }
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
            None => Bytes::copy_from_slice(self.input.get(start..end).unwrap_or_default()),
        }
    }

    fn err(&self, kind: Kind, offset: usize) -> DecodeError {
        DecodeError::new(kind, offset)
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let input: &'a [u8] = self.input;
        let s = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.limit)
            .and_then(|end| input.get(self.pos..end))
            .ok_or_else(|| DecodeError::new(Kind::Truncated, self.pos))?;
        self.pos += n;
        Ok(s)
    }

    #[inline]
    fn take_array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let s = self.take(N)?;
        s.try_into()
            .map_err(|_| DecodeError::new(Kind::Truncated, self.pos))
    }

    #[inline]
    fn u8(&mut self) -> Result<u8, DecodeError> {
        if self.pos < self.limit {
            if let Some(&b) = self.input.get(self.pos) {
                self.pos += 1;
                return Ok(b);
            }
        }
        Err(DecodeError::new(Kind::Truncated, self.pos))
    }
    fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.take_array()?))
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.take_array()?))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(self.take_array()?))
    }

    /// Fails unless non-canonical forms are allowed here.
    #[inline]
    fn canonical(&self, ok: bool, what: &'static str, at: usize) -> Result<(), DecodeError> {
        if ok || (self.options.allow_non_canonical && self.ext_depth == 0) {
            Ok(())
        } else {
            Err(self.err(Kind::NonCanonical { what }, at))
        }
    }

    /// Checks a declared length against the bytes left (each element needs at least
    /// `min_size` bytes) before anything is allocated.
    #[inline]
    fn check_len(&self, declared: usize, min_size: usize, at: usize) -> Result<(), DecodeError> {
        let remaining = self.limit.saturating_sub(self.pos);
        if declared.saturating_mul(min_size) > remaining {
            Err(self.err(
                Kind::LengthExceedsInput {
                    declared: declared as u64,
                    remaining,
                },
                at,
            ))
        } else {
            Ok(())
        }
    }

    /// Reads one complete value into `slot`.
    ///
    /// Writing in place instead of returning the value matters for speed: a returned
    /// `Result<Value, _>` is stored field by field and then copied into the parent with
    /// wide loads, which stall on store forwarding at every item (about a quarter of the
    /// decode time on flat records).
    fn read_into(&mut self, slot: &mut Value) -> Result<(), DecodeError> {
        let at = self.pos;
        let marker = self.u8()?;
        let value = match marker {
            0x00..=0x7f => Value::Int(Int::from(marker)),
            0x80..=0x8f => return self.map(usize::from(marker & 0x0f), at, slot),
            0x90..=0x9f => return self.array(usize::from(marker & 0x0f), at, slot),
            0xa0..=0xbf => return self.str(usize::from(marker & 0x1f), at, slot),
            0xc0 => Value::Nil,
            0xc1 => return Err(self.err(Kind::ReservedByte(0xc1), at)),
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4 => {
                let n = usize::from(self.u8()?);
                return self.bin(n, at, slot);
            }
            0xc5 => {
                let n = usize::from(self.u16()?);
                self.canonical(n > 0xff, "bin16 holding a shorter bin", at)?;
                return self.bin(n, at, slot);
            }
            0xc6 => {
                let n = self.u32()? as usize;
                self.canonical(n > 0xffff, "bin32 holding a shorter bin", at)?;
                return self.bin(n, at, slot);
            }
            0xc7 => {
                let n = usize::from(self.u8()?);
                self.canonical(
                    !matches!(n, 1 | 2 | 4 | 8 | 16),
                    "ext8 holding a fixext",
                    at,
                )?;
                return self.ext(n, at, slot);
            }
            0xc8 => {
                let n = usize::from(self.u16()?);
                self.canonical(n > 0xff, "ext16 holding a shorter payload", at)?;
                return self.ext(n, at, slot);
            }
            0xc9 => {
                let n = self.u32()? as usize;
                self.canonical(n > 0xffff, "ext32 holding a shorter payload", at)?;
                return self.ext(n, at, slot);
            }
            0xca => Value::F32(f32::from_bits(self.u32()?)),
            0xcb => Value::F64(f64::from_bits(self.u64()?)),
            0xcc => {
                let n = self.u8()?;
                self.canonical(n >= 0x80, "uint8 holding a positive fixint", at)?;
                Value::Int(Int::from(n))
            }
            0xcd => {
                let n = self.u16()?;
                self.canonical(n > 0xff, "uint16 holding a smaller integer", at)?;
                Value::Int(Int::from(n))
            }
            0xce => {
                let n = self.u32()?;
                self.canonical(n > 0xffff, "uint32 holding a smaller integer", at)?;
                Value::Int(Int::from(n))
            }
            0xcf => {
                let n = self.u64()?;
                self.canonical(n > 0xffff_ffff, "uint64 holding a smaller integer", at)?;
                Value::Int(Int::from(n))
            }
            0xd0 => {
                let n = i8::from_be_bytes(self.take_array()?);
                self.canonical(n < -32, "int8 holding a fixint", at)?;
                Value::Int(Int::from(n))
            }
            0xd1 => {
                let n = i16::from_be_bytes(self.take_array()?);
                self.canonical(n < -0x80, "int16 holding a smaller integer", at)?;
                Value::Int(Int::from(n))
            }
            0xd2 => {
                let n = i32::from_be_bytes(self.take_array()?);
                self.canonical(n < -0x8000, "int32 holding a smaller integer", at)?;
                Value::Int(Int::from(n))
            }
            0xd3 => {
                let n = i64::from_be_bytes(self.take_array()?);
                self.canonical(n < -0x8000_0000, "int64 holding a smaller integer", at)?;
                Value::Int(Int::from(n))
            }
            0xd4 => return self.ext(1, at, slot),
            0xd5 => return self.ext(2, at, slot),
            0xd6 => return self.ext(4, at, slot),
            0xd7 => return self.ext(8, at, slot),
            0xd8 => return self.ext(16, at, slot),
            0xd9 => {
                let n = usize::from(self.u8()?);
                self.canonical(n >= 32, "str8 holding a fixstr", at)?;
                return self.str(n, at, slot);
            }
            0xda => {
                let n = usize::from(self.u16()?);
                self.canonical(n > 0xff, "str16 holding a shorter string", at)?;
                return self.str(n, at, slot);
            }
            0xdb => {
                let n = self.u32()? as usize;
                self.canonical(n > 0xffff, "str32 holding a shorter string", at)?;
                return self.str(n, at, slot);
            }
            0xdc => {
                let n = usize::from(self.u16()?);
                self.canonical(n >= 16, "array16 holding a fixarray", at)?;
                return self.array(n, at, slot);
            }
            0xdd => {
                let n = self.u32()? as usize;
                self.canonical(n > 0xffff, "array32 holding a shorter array", at)?;
                return self.array(n, at, slot);
            }
            0xde => {
                let n = usize::from(self.u16()?);
                self.canonical(n >= 16, "map16 holding a fixmap", at)?;
                return self.map(n, at, slot);
            }
            0xdf => {
                let n = self.u32()? as usize;
                self.canonical(n > 0xffff, "map32 holding a shorter map", at)?;
                return self.map(n, at, slot);
            }
            0xe0..=0xff => Value::Int(Int::from(i8::from_be_bytes([marker]))),
        };
        put(slot, value);
        Ok(())
    }

    /// Reads one complete value.
    fn value(&mut self) -> Result<Value, DecodeError> {
        let mut v = Value::Nil;
        self.read_into(&mut v)?;
        Ok(v)
    }

    fn str(&mut self, n: usize, at: usize, slot: &mut Value) -> Result<(), DecodeError> {
        self.check_len(n, 1, at)?;
        let start = self.pos;
        let bytes = self.take(n)?;
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                // Filled in place from a constant: a `PyStr` built here and moved in is
                // staged on the stack and reloaded with stalls (see `put`); a constant
                // is copied from read-only memory with wide stores.
                put(slot, EMPTY_STR);
                if let Value::Str(text) = slot {
                    text.push_str(s);
                }
                Ok(())
            }
            Err(e) => Err(self.err(Kind::InvalidUtf8, start + e.valid_up_to())),
        }
    }

    fn bin(&mut self, n: usize, at: usize, slot: &mut Value) -> Result<(), DecodeError> {
        self.check_len(n, 1, at)?;
        let start = self.pos;
        self.take(n)?;
        put(slot, Value::Bin(self.payload(start, start + n)));
        Ok(())
    }

    /// Opens one nesting level (the opener is at `at`), unless that would nest deeper
    /// than the limit, and runs `read` inside it, on a fresh stack segment if needed.
    #[inline]
    fn nested<T>(
        &mut self,
        at: usize,
        read: impl FnOnce(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<T, DecodeError> {
        if self.depth >= self.options.max_depth {
            return Err(self.err(
                Kind::DepthLimit {
                    limit: self.options.max_depth,
                },
                at,
            ));
        }
        self.depth += 1;
        let result = self.counted(at, read);
        self.depth -= 1;
        result
    }

    /// Counts one level against the total limit and runs `read` inside it, on a fresh
    /// stack segment if needed.
    #[inline]
    fn counted<T>(
        &mut self,
        at: usize,
        read: impl FnOnce(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<T, DecodeError> {
        if self.total >= self.options.max_total_depth {
            return Err(self.err(
                Kind::DepthLimit {
                    limit: self.options.max_total_depth,
                },
                at,
            ));
        }
        self.total += 1;
        // Level 1 is checked too, so a small-stack thread moves to a heap segment at once.
        let result = if self.total % STACK_CHECK_EVERY == 1 {
            crate::stack::guard(|| read(self))
        } else {
            read(self)
        };
        self.total -= 1;
        result
    }

    /// Reads an extension payload as Python does: a document of its own, whose levels
    /// are counted from zero against `max_depth` (and, with the levels around it,
    /// against `max_total_depth`). The envelope is one level of the total.
    fn ext_document<T>(
        &mut self,
        at: usize,
        read: impl FnOnce(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<T, DecodeError> {
        let outer = std::mem::replace(&mut self.depth, 0);
        let result = self.counted(at, read);
        self.depth = outer;
        result
    }

    /// Each item is pushed as `Nil` and then read in place (see [`Self::read_into`]).
    fn array(&mut self, n: usize, at: usize, slot: &mut Value) -> Result<(), DecodeError> {
        if n == 0 {
            put(slot, Value::Array(Vec::new()));
            return Ok(());
        }
        self.check_len(n, 1, at)?;
        self.nested(at, |d| {
            let mut items = Vec::with_capacity(n.min(MAX_PREALLOC));
            for _ in 0..n {
                items.push(Value::Nil);
                if let Some(item) = items.last_mut() {
                    d.read_into(item)?;
                }
            }
            put(slot, Value::Array(items));
            Ok(())
        })
    }

    /// Like [`Self::array`], two slots an entry.
    fn map(&mut self, n: usize, at: usize, slot: &mut Value) -> Result<(), DecodeError> {
        if n == 0 {
            put(slot, Value::Map(Vec::new()));
            return Ok(());
        }
        self.check_len(n, 2, at)?;
        self.nested(at, |d| {
            let mut entries = Vec::with_capacity(n.min(MAX_PREALLOC / 2));
            for _ in 0..n {
                entries.push((Value::Nil, Value::Nil));
                if let Some((key, value)) = entries.last_mut() {
                    d.read_into(key)?;
                    d.read_into(value)?;
                }
            }
            put(slot, Value::Map(entries));
            Ok(())
        })
    }

    /// An extension value of `n` payload bytes. Codes 0–7 are decoded as a nested
    /// document confined to the payload; if that fails for any reason but the depth
    /// limit, or the payload is not the tuple Python writes, the ext is kept raw.
    fn ext(&mut self, n: usize, at: usize, slot: &mut Value) -> Result<(), DecodeError> {
        let code = i8::from_be_bytes(self.take_array()?);
        self.check_len(n, 1, at)?;
        let start = self.pos;
        let end = start + n;
        if !(0..=7).contains(&code) || n == 0 {
            self.take(n)?;
            put(slot, self.raw_ext(code, start, end));
            return Ok(());
        }
        let outer_limit = self.limit;
        self.limit = end;
        self.ext_depth += 1;
        let payload = self.ext_document(at, |d| match ObjectKind::from_code(code) {
            Some(kind) => d.object_payload(kind),
            None => Ok(ndarray_or_delta(code, d.value()?)),
        });
        self.ext_depth -= 1;
        self.limit = outer_limit;
        let structured = match payload {
            Ok(v) if self.pos == end => v,
            Ok(_) => None,
            Err(e) if matches!(e.kind(), Kind::DepthLimit { .. }) => return Err(e),
            Err(_) => None,
        };
        self.pos = end;
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
    fn object_payload(&mut self, kind: ObjectKind) -> Result<Option<Value>, DecodeError> {
        let at = self.pos;
        let len = match self.input.get(at) {
            Some(0x93) if at < self.limit => 3,
            Some(0x94) if at < self.limit => 4,
            // Not a 3- or 4-tuple (a longer header for 3 or 4 items is non-canonical,
            // refused in a payload): read it for its errors, it stays raw either way.
            _ => {
                self.value()?;
                return Ok(None);
            }
        };
        self.pos += 1;
        let mut items: [Value; 4] = Default::default();
        self.nested(at, |d| {
            for item in items.iter_mut().take(len) {
                d.read_into(item)?;
            }
            Ok(())
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
