//! [`Value`] → bytes, in exactly the forms ormsgpack writes.
//!
//! ormsgpack always picks the shortest form: the smallest integer width (unsigned for
//! non-negative numbers), fixstr/str8/16/32, bin8/16/32, fixarray/array16/32,
//! fixmap/map16/32, and fixext for payloads of exactly 1, 2, 4, 8 or 16 bytes. Floats are
//! always float64 (this crate also writes float32 for [`Value::F32`], which Python never
//! produces). The primitive writers are public so that the typed serde layer writes the
//! same bytes without building a [`Value`].

use super::error::EncodeError;
use super::marker as M;
use super::read::{DEFAULT_MAX_DEPTH, DEFAULT_MAX_TOTAL_DEPTH};
use crate::value::{Int, NdArray, PyObject, Value};

/// Container levels between two checks of the remaining call stack.
const STACK_CHECK_EVERY: usize = 8;

// The hot writers are `inline(always)` in optimised builds (so the loops over arrays
// and maps write scalars without a call), plain `inline` in debug builds, where
// forced inlining would give every container level a frame of several KiB.

/// The encoder's own result: the error boxed, so that the `Ok` path (every item of
/// every value) returns in a register instead of through a 24-byte slot in memory.
type Res<T = ()> = Result<T, Box<EncodeError>>;

/// The first allocation of a buffer that has none.
const MIN_CAPACITY: usize = 64;

/// Extension nesting levels with their own header-length guess (see [`finish_ext`]).
const EXT_GUESS_LEVELS: usize = 4;

/// Encodes a value as ormsgpack would.
///
/// # Errors
/// [`EncodeError::DepthLimit`] for nesting deeper than Python reads back,
/// [`EncodeError::TooLong`] for a length beyond 2^32-1, [`EncodeError::NotMsgpack`] for
/// a value only a `json` row holds.
pub fn encode(value: &Value) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::new();
    encode_into(value, &mut out)?;
    Ok(out)
}

/// Appends the encoding of `value` to `out`.
///
/// `out` is sized for the whole value before anything is written, and when a writer of
/// this module must grow a buffer, the bytes move to a new allocation and the old one
/// is wiped before it is freed: a value serialized for encryption leaves no copy of
/// itself in freed memory.
///
/// # Errors
/// As [`encode`]; `out` may then hold part of the value.
pub fn encode_into(value: &Value, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    encode_from(value, out, Level::default())
}

/// Appends the encoding of `value`, written inside `open` levels that the caller has
/// already opened (the typed serializer's structs and lists around a `Value` part): the
/// depth limit then counts those too, so nothing is written that a reader would refuse.
pub(crate) fn encode_into_at_depth(
    value: &Value,
    out: &mut Vec<u8>,
    open: usize,
) -> Result<(), EncodeError> {
    let open = u32::try_from(open).unwrap_or(u32::MAX);
    encode_from(
        value,
        out,
        Level {
            doc: open,
            total: open,
        },
    )
}

fn encode_from(value: &Value, out: &mut Vec<u8>, depth: Level) -> Result<(), EncodeError> {
    // Sized first (a walk that reads lengths, not bytes), so that the writes never
    // grow the buffer: growing means copying and wiping what was written so far.
    room(out, encoded_len(value, depth));
    // The encoder owns the buffer while it writes (one indirection less per write).
    let mut enc = Enc {
        out: std::mem::take(out),
        exts: 0,
        ext_guess: [3; EXT_GUESS_LEVELS],
    };
    let r = enc.value(value, depth);
    *out = enc.out;
    r.map_err(|e| *e)
}

/// Open levels: in the current document (the top level or one extension payload, which
/// Python packs separately) and in all documents, as the decoder counts them. Two
/// `u32`s, so that it travels in one register.
#[derive(Clone, Copy, Default)]
struct Level {
    doc: u32,
    total: u32,
}

impl Level {
    /// Whether the remaining stack is checked at this level: every few levels, not
    /// at every container. An object envelope adds two levels at once, so checking at
    /// two residues makes sure every run of `STACK_CHECK_EVERY` levels, odd or even, is
    /// checked.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn check_stack(self) -> bool {
        self.total as usize % STACK_CHECK_EVERY < 2
    }
}

/// An upper bound of the length of `value`'s encoding (exact but for containers and
/// extension headers, counted at their longest), to size the output buffer once.
/// Where the writer will fail (too deep, not msgpack) the count stops early: the
/// writer reports the error.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn encoded_len(value: &Value, depth: Level) -> usize {
    match value {
        Value::Nil | Value::Bool(_) => 1,
        Value::Int(_) | Value::F64(_) => 9,
        Value::F32(_) => 5,
        Value::Str(s) => s.len().saturating_add(5),
        Value::Bin(b) => b.len().saturating_add(5),
        Value::Ext(raw) => raw.data.len().saturating_add(6),
        Value::BigInt(_) | Value::WStr(_) => 0,
        container => nested_len(container, depth),
    }
}

/// [`encoded_len`] of an array, map or extension, under the stack guard every few
/// levels like the writer.
#[inline(never)]
fn nested_len(value: &Value, depth: Level) -> usize {
    if depth.check_stack() {
        crate::stack::guard(|| container_len(value, depth))
    } else {
        container_len(value, depth)
    }
}

fn container_len(value: &Value, depth: Level) -> usize {
    match value {
        Value::Array(items) => {
            let Ok(inner) = enter(depth) else { return 0 };
            let mut n = 5usize;
            for v in items {
                n = n.saturating_add(encoded_len(v, inner));
            }
            n
        }
        Value::Map(entries) => {
            let Ok(inner) = enter(depth) else { return 0 };
            let mut n = 5usize;
            for (k, v) in entries {
                n = n
                    .saturating_add(encoded_len(k, inner))
                    .saturating_add(encoded_len(v, inner));
            }
            n
        }
        Value::Object(obj) => {
            let Ok(tuple) = enter_ext(depth).and_then(enter) else {
                return 0;
            };
            obj.module
                .len()
                .saturating_add(obj.name.len())
                .saturating_add(obj.method.as_ref().map_or(0, |m| m.len()))
                .saturating_add(encoded_len(&obj.arg, tuple))
                .saturating_add(6 + 1 + 3 * 5)
        }
        Value::NdArray(arr) => arr
            .buffer
            .len()
            .saturating_add(arr.dtype.len())
            .saturating_add(arr.order.len())
            .saturating_add(arr.shape.len().saturating_mul(9))
            .saturating_add(6 + 1 + 5 + 5 + 5 + 5),
        Value::DeltaSnapshot(inner) => {
            let Ok(ext) = enter_ext(depth) else { return 0 };
            encoded_len(inner, ext).saturating_add(6)
        }
        _ => 0,
    }
}

#[cold]
#[inline(never)]
fn fail(e: EncodeError) -> Box<EncodeError> {
    Box::new(e)
}

/// Makes room for `n` more bytes in `out`, so that the writes that follow never make
/// the `Vec` reallocate by itself (which would free the old block unwiped).
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn room(out: &mut Vec<u8>, n: usize) {
    if out.capacity() - out.len() < n {
        grow(out, n);
    }
}

/// Moves `out` to an allocation at least twice as large with room for `n` more bytes,
/// and wipes the old allocation before freeing it.
#[cold]
#[inline(never)]
fn grow(out: &mut Vec<u8>, n: usize) {
    let cap = out
        .len()
        .saturating_add(n)
        .max(out.capacity().saturating_mul(2))
        .max(MIN_CAPACITY);
    let mut bigger = Vec::with_capacity(cap);
    bigger.extend_from_slice(out);
    let mut old = std::mem::replace(out, bigger);
    crate::wipe::wipe_allocation(&mut old);
}

/// Appends `bytes` (a few header bytes, usually of constant length).
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    room(out, bytes.len());
    out.extend_from_slice(bytes);
}

/// The recursive writer over a [`Value`] tree.
struct Enc {
    out: Vec<u8>,
    /// Extensions open around the current item.
    exts: usize,
    /// The header length the last extension at each extension nesting level needed:
    /// the room left for the next one's header (sibling extensions, such as the
    /// messages of a list, are mostly alike), see [`finish_ext`].
    ext_guess: [u8; EXT_GUESS_LEVELS],
}

impl Enc {
    /// One value: scalars inline (this is inlined into the loops over arrays and
    /// maps), containers through [`nested`](Self::nested).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn value(&mut self, value: &Value, depth: Level) -> Res {
        let out = &mut self.out;
        match value {
            Value::Nil => put(out, &[M::NIL]),
            Value::Bool(b) => put(out, &[if *b { M::TRUE } else { M::FALSE }]),
            Value::Int(i) => put_int(out, *i),
            Value::F32(f) => {
                let [a, b, c, d] = f.to_bits().to_be_bytes();
                put(out, &[M::F32, a, b, c, d]);
            }
            Value::F64(f) => put_f64(out, *f),
            Value::Str(s) => return put_str(out, s),
            Value::Bin(b) => return put_bin(out, b),
            Value::Ext(raw) => return put_ext(out, raw.code, &raw.data),
            Value::BigInt(_) | Value::WStr(_) => {
                return Err(fail(EncodeError::NotMsgpack {
                    kind: value.kind_name(),
                }))
            }
            container => return self.nested(container, depth),
        }
        Ok(())
    }

    /// A container, under the stack guard every few levels.
    #[inline(never)]
    fn nested(&mut self, value: &Value, depth: Level) -> Res {
        if depth.check_stack() {
            crate::stack::guard(|| self.container(value, depth))
        } else {
            self.container(value, depth)
        }
    }

    fn container(&mut self, value: &Value, depth: Level) -> Res {
        match value {
            Value::Array(items) => {
                // Empty containers open no level, as in the decoder.
                let depth = if items.is_empty() {
                    depth
                } else {
                    enter(depth)?
                };
                put_array_len(&mut self.out, items.len())?;
                for item in items {
                    self.value(item, depth)?;
                }
            }
            Value::Map(entries) => {
                let depth = if entries.is_empty() {
                    depth
                } else {
                    enter(depth)?
                };
                put_map_len(&mut self.out, entries.len())?;
                for (k, v) in entries {
                    self.value(k, depth)?;
                    self.value(v, depth)?;
                }
            }
            Value::Object(obj) => {
                let depth = enter_ext(depth)?;
                self.ext(obj.kind.code(), |enc| enc.object_payload(obj, depth))?;
            }
            Value::NdArray(arr) => {
                let depth = enter_ext(depth)?;
                self.ext(6, |enc| {
                    write_ndarray_payload(&mut enc.out, arr, depth).map_err(fail)
                })?;
            }
            Value::DeltaSnapshot(inner) => {
                let depth = enter_ext(depth)?;
                self.ext(7, |enc| enc.value(inner, depth))?;
            }
            scalar => self.value(scalar, depth)?,
        }
        Ok(())
    }

    /// An extension whose payload `body` writes straight into the output after room
    /// for the header, guessed from the previous extension at this nesting level.
    #[inline]
    fn ext(&mut self, code: i8, body: impl FnOnce(&mut Self) -> Res) -> Res {
        let slot = self.exts.min(EXT_GUESS_LEVELS - 1);
        let guess = self.ext_guess.get(slot).copied().unwrap_or(3);
        let start = self.out.len();
        put(
            &mut self.out,
            ZEROS.get(..usize::from(guess)).unwrap_or_default(),
        );
        self.exts += 1;
        let r = body(self);
        self.exts -= 1;
        r?;
        let n = finish_ext(&mut self.out, start, usize::from(guess), code)?;
        if let Some(g) = self.ext_guess.get_mut(slot) {
            *g = n;
        }
        Ok(())
    }

    fn object_payload(&mut self, obj: &PyObject, depth: Level) -> Res {
        let depth = enter(depth)?;
        let out = &mut self.out;
        put_array_len(out, if obj.method.is_some() { 4 } else { 3 })?;
        put_str(out, &obj.module)?;
        put_str(out, &obj.name)?;
        self.value(&obj.arg, depth)?;
        if let Some(m) = &obj.method {
            put_str(&mut self.out, m)?;
        }
        Ok(())
    }
}

/// Room for the longest extension header.
const ZEROS: [u8; 6] = [0; 6];

/// Finishes an extension whose payload was written at `start + taken`, `taken` bytes
/// after the header's place (room left for it, and whatever prefix the writer put
/// there): writes the header ormsgpack writes for the payload's length into the
/// room, moving the payload when the header is not exactly `taken` bytes long.
/// Returns the header's length.
pub(crate) fn finish_ext(out: &mut Vec<u8>, start: usize, taken: usize, code: i8) -> Res<u8> {
    let payload_start = start.saturating_add(taken);
    let len = out.len().saturating_sub(payload_start);
    let (header, n) = ext_header(len, code).map_err(fail)?;
    replace_prefix(out, start, taken, header.get(..n).unwrap_or_default());
    Ok(n as u8)
}

/// Replaces the `old_len` bytes at `start` by `new` (a header whose length turned
/// out other than the room left for it), moving what follows; growth goes through
/// [`room`], so no unwiped copy is left behind.
pub(crate) fn replace_prefix(out: &mut Vec<u8>, start: usize, old_len: usize, new: &[u8]) {
    let end = out.len();
    let tail = start.saturating_add(old_len).min(end);
    let new_end = start.saturating_add(new.len());
    if new.len() > old_len {
        let extra = new.len() - old_len;
        room(out, extra);
        out.resize(end + extra, 0);
        out.copy_within(tail..end, new_end);
    } else if new.len() < old_len {
        out.copy_within(tail..end, new_end);
        out.truncate(end - (old_len - new.len()));
    }
    if let Some(dst) = out.get_mut(start..new_end) {
        dst.copy_from_slice(new);
    }
}

/// Counts one more level of nesting, as the decoder does: nothing is written that it
/// would refuse to read.
fn enter(depth: Level) -> Result<Level, EncodeError> {
    if depth.doc as usize >= DEFAULT_MAX_DEPTH {
        return Err(EncodeError::DepthLimit {
            limit: DEFAULT_MAX_DEPTH,
        });
    }
    let total = enter_total(depth.total)?;
    Ok(Level {
        doc: depth.doc + 1,
        total,
    })
}

/// Checks, without recursion, that `value` nests within the limits the encoder (and
/// the decoder) enforce, counting levels as they do.
pub(crate) fn check_depth(value: &Value) -> Result<(), EncodeError> {
    let mut stack = vec![(value, Level::default())];
    while let Some((v, depth)) = stack.pop() {
        match v {
            Value::Array(items) if !items.is_empty() => {
                let inner = enter(depth)?;
                stack.extend(items.iter().map(|i| (i, inner)));
            }
            Value::Map(entries) if !entries.is_empty() => {
                let inner = enter(depth)?;
                for (k, val) in entries {
                    stack.push((k, inner));
                    stack.push((val, inner));
                }
            }
            // The payload tuple is level 1 of the payload's own document.
            Value::Object(o) => stack.push((&o.arg, enter(enter_ext(depth)?)?)),
            Value::NdArray(arr) => {
                let tuple = enter(enter_ext(depth)?)?;
                if !arr.shape.is_empty() {
                    enter(tuple)?;
                }
            }
            Value::DeltaSnapshot(inner) => stack.push((inner, enter_ext(depth)?)),
            _ => {}
        }
    }
    Ok(())
}

/// An extension: one level of the total, and its payload a document of its own.
fn enter_ext(depth: Level) -> Result<Level, EncodeError> {
    Ok(Level {
        doc: 0,
        total: enter_total(depth.total)?,
    })
}

fn enter_total(total: u32) -> Result<u32, EncodeError> {
    if total as usize >= DEFAULT_MAX_TOTAL_DEPTH {
        Err(EncodeError::DepthLimit {
            limit: DEFAULT_MAX_TOTAL_DEPTH,
        })
    } else {
        Ok(total + 1)
    }
}

fn write_ndarray_payload(
    out: &mut Vec<u8>,
    arr: &NdArray,
    depth: Level,
) -> Result<(), EncodeError> {
    let depth = enter(depth)?;
    if !arr.shape.is_empty() {
        enter(depth)?;
    }
    write_array_len(out, 4)?;
    write_str(out, &arr.dtype)?;
    write_array_len(out, arr.shape.len())?;
    for dim in &arr.shape {
        write_int(out, Int::from(*dim));
    }
    write_str(out, &arr.order)?;
    write_bin(out, &arr.buffer)
}

// The primitive writers. Each makes room for everything it writes first (see
// [`room`]); the public `write_*` functions are the same code with the crate's
// public error type.

#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn put_int(out: &mut Vec<u8>, i: Int) {
    match i.as_u64() {
        Some(u) => put_u64(out, u),
        None => put_i64(out, i.as_i64().unwrap_or(i64::MIN)),
    }
}

#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn put_u64(out: &mut Vec<u8>, u: u64) {
    if u < 0x80 {
        put(out, &[u as u8]);
    } else if u <= 0xff {
        put(out, &[M::U8, u as u8]);
    } else if u <= 0xffff {
        let [a, b] = (u as u16).to_be_bytes();
        put(out, &[M::U16, a, b]);
    } else if u <= 0xffff_ffff {
        let [a, b, c, d] = (u as u32).to_be_bytes();
        put(out, &[M::U32, a, b, c, d]);
    } else {
        let [a, b, c, d, e, f, g, h] = u.to_be_bytes();
        put(out, &[M::U64, a, b, c, d, e, f, g, h]);
    }
}

#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn put_i64(out: &mut Vec<u8>, i: i64) {
    if let Ok(u) = u64::try_from(i) {
        put_u64(out, u);
    } else if i >= -32 {
        put(out, &[i as u8]);
    } else if i >= -0x80 {
        put(out, &[M::I8, i as u8]);
    } else if i >= -0x8000 {
        let [a, b] = (i as i16).to_be_bytes();
        put(out, &[M::I16, a, b]);
    } else if i >= -0x8000_0000 {
        let [a, b, c, d] = (i as i32).to_be_bytes();
        put(out, &[M::I32, a, b, c, d]);
    } else {
        let [a, b, c, d, e, f, g, h] = i.to_be_bytes();
        put(out, &[M::I64, a, b, c, d, e, f, g, h]);
    }
}

#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn put_f64(out: &mut Vec<u8>, f: f64) {
    let [a, b, c, d, e, f, g, h] = f.to_bits().to_be_bytes();
    put(out, &[M::F64, a, b, c, d, e, f, g, h]);
}

fn len32(what: &'static str, len: usize) -> Result<u32, EncodeError> {
    u32::try_from(len).map_err(|_| EncodeError::TooLong { what, len })
}

/// A string: a fixstr (the common case: keys, ids, short values) inline, longer
/// headers out of line.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn put_str(out: &mut Vec<u8>, s: &str) -> Res {
    let bytes = s.as_bytes();
    // Keys are mostly a few bytes long: each written as one fixed-size store, not a
    // call to `memcpy`.
    match *bytes {
        [a] => put(out, &[M::FIXSTR | 1, a]),
        [a, b] => put(out, &[M::FIXSTR | 2, a, b]),
        [a, b, c] => put(out, &[M::FIXSTR | 3, a, b, c]),
        [a, b, c, d] => put(out, &[M::FIXSTR | 4, a, b, c, d]),
        _ => {
            let len = bytes.len();
            if len < 32 {
                room(out, len + 1);
                out.push(M::FIXSTR | len as u8);
            } else {
                put_str_header(out, len)?;
            }
            out.extend_from_slice(bytes);
        }
    }
    Ok(())
}

/// The header of a string of 32 bytes or more, with room for the string after it.
#[inline(never)]
fn put_str_header(out: &mut Vec<u8>, len: usize) -> Res {
    room(out, len.saturating_add(5));
    if len <= 0xff {
        out.extend_from_slice(&[M::STR8, len as u8]);
    } else if len <= 0xffff {
        let [a, b] = (len as u16).to_be_bytes();
        out.extend_from_slice(&[M::STR16, a, b]);
    } else {
        let [a, b, c, d] = len32("str", len).map_err(fail)?.to_be_bytes();
        out.extend_from_slice(&[M::STR32, a, b, c, d]);
    }
    Ok(())
}

fn put_bin(out: &mut Vec<u8>, b: &[u8]) -> Res {
    let len = b.len();
    room(out, len.saturating_add(5));
    if len <= 0xff {
        out.extend_from_slice(&[M::BIN8, len as u8]);
    } else if len <= 0xffff {
        let [x, y] = (len as u16).to_be_bytes();
        out.extend_from_slice(&[M::BIN16, x, y]);
    } else {
        let [x, y, z, w] = len32("bin", len).map_err(fail)?.to_be_bytes();
        out.extend_from_slice(&[M::BIN32, x, y, z, w]);
    }
    out.extend_from_slice(b);
    Ok(())
}

#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn put_array_len(out: &mut Vec<u8>, len: usize) -> Res {
    if len < 16 {
        put(out, &[M::FIXARRAY | len as u8]);
    } else if len <= 0xffff {
        let [a, b] = (len as u16).to_be_bytes();
        put(out, &[M::ARRAY16, a, b]);
    } else {
        let [a, b, c, d] = len32("array", len).map_err(fail)?.to_be_bytes();
        put(out, &[M::ARRAY32, a, b, c, d]);
    }
    Ok(())
}

#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn put_map_len(out: &mut Vec<u8>, len: usize) -> Res {
    if len < 16 {
        put(out, &[M::FIXMAP | len as u8]);
    } else if len <= 0xffff {
        let [a, b] = (len as u16).to_be_bytes();
        put(out, &[M::MAP16, a, b]);
    } else {
        let [a, b, c, d] = len32("map", len).map_err(fail)?.to_be_bytes();
        put(out, &[M::MAP32, a, b, c, d]);
    }
    Ok(())
}

fn put_ext(out: &mut Vec<u8>, code: i8, payload: &[u8]) -> Res {
    let (h, n) = ext_header(payload.len(), code).map_err(fail)?;
    room(out, payload.len().saturating_add(n));
    out.extend_from_slice(h.get(..n).unwrap_or_default());
    out.extend_from_slice(payload);
    Ok(())
}

/// Writes an integer in its shortest form.
pub fn write_int(out: &mut Vec<u8>, i: Int) {
    put_int(out, i);
}

/// Writes a non-negative integer in its shortest form.
#[inline]
pub fn write_u64(out: &mut Vec<u8>, u: u64) {
    put_u64(out, u);
}

/// Writes a signed integer in its shortest form (unsigned forms for `i >= 0`).
#[inline]
pub fn write_i64(out: &mut Vec<u8>, i: i64) {
    put_i64(out, i);
}

/// Writes a float64 (the only float form Python writes), bits as they are.
#[inline]
pub fn write_f64(out: &mut Vec<u8>, f: f64) {
    put_f64(out, f);
}

/// Writes a string.
///
/// # Errors
/// [`EncodeError::TooLong`] for a string longer than 2^32-1 bytes.
#[inline]
pub fn write_str(out: &mut Vec<u8>, s: &str) -> Result<(), EncodeError> {
    put_str(out, s).map_err(|e| *e)
}

/// Writes a bin.
///
/// # Errors
/// [`EncodeError::TooLong`] for more than 2^32-1 bytes.
#[inline]
pub fn write_bin(out: &mut Vec<u8>, b: &[u8]) -> Result<(), EncodeError> {
    put_bin(out, b).map_err(|e| *e)
}

/// Writes an array header for `len` items.
///
/// # Errors
/// [`EncodeError::TooLong`] for a length beyond 2^32-1.
#[inline]
pub fn write_array_len(out: &mut Vec<u8>, len: usize) -> Result<(), EncodeError> {
    put_array_len(out, len).map_err(|e| *e)
}

/// Writes a map header for `len` entries.
///
/// # Errors
/// [`EncodeError::TooLong`] for a length beyond 2^32-1.
#[inline]
pub fn write_map_len(out: &mut Vec<u8>, len: usize) -> Result<(), EncodeError> {
    put_map_len(out, len).map_err(|e| *e)
}

/// The ext header ormsgpack writes for a payload of `len` bytes, and its length.
fn ext_header(len: usize, code: i8) -> Result<([u8; 6], usize), EncodeError> {
    let c = code as u8;
    Ok(match len {
        1 => ([M::FIXEXT1, c, 0, 0, 0, 0], 2),
        2 => ([M::FIXEXT2, c, 0, 0, 0, 0], 2),
        4 => ([M::FIXEXT4, c, 0, 0, 0, 0], 2),
        8 => ([M::FIXEXT8, c, 0, 0, 0, 0], 2),
        16 => ([M::FIXEXT16, c, 0, 0, 0, 0], 2),
        0..=0xff => ([M::EXT8, len as u8, c, 0, 0, 0], 3),
        0x100..=0xffff => {
            let [a, b] = (len as u16).to_be_bytes();
            ([M::EXT16, a, b, c, 0, 0], 4)
        }
        _ => {
            let [a, b, d, e] = len32("ext", len)?.to_be_bytes();
            ([M::EXT32, a, b, d, e, c], 6)
        }
    })
}

/// Writes an extension with the given payload bytes.
///
/// # Errors
/// [`EncodeError::TooLong`] for a payload longer than 2^32-1 bytes.
pub fn write_ext(out: &mut Vec<u8>, code: i8, payload: &[u8]) -> Result<(), EncodeError> {
    put_ext(out, code, payload).map_err(|e| *e)
}

/// Writes an extension whose payload `body` writes straight into `out`: the payload is
/// written once after room for an ext8 header (the usual one), and moved only if its
/// length needs another header, so no temporary buffer is needed.
///
/// # Errors
/// `body`'s error, or [`EncodeError::TooLong`] (converted into `E`) for a payload
/// longer than 2^32-1 bytes.
pub fn write_ext_with<E>(
    out: &mut Vec<u8>,
    code: i8,
    body: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
) -> Result<(), E>
where
    E: From<EncodeError>,
{
    let start = out.len();
    put(out, &[0; 3]);
    body(out)?;
    finish_ext(out, start, 3, code).map_err(|e| E::from(*e))?;
    Ok(())
}
