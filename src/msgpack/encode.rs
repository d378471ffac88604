//! [`Value`] → bytes, in exactly the forms ormsgpack writes.
//!
//! ormsgpack always picks the shortest form: the smallest integer width (unsigned for
//! non-negative numbers), fixstr/str8/16/32, bin8/16/32, fixarray/array16/32,
//! fixmap/map16/32, and fixext for payloads of exactly 1, 2, 4, 8 or 16 bytes. Floats are
//! always float64 (this crate also writes float32 for [`Value::F32`], which Python never
//! produces). The primitive writers are public so that the typed serde layer writes the
//! same bytes without building a [`Value`].

use super::error::EncodeError;
use super::read::{DEFAULT_MAX_DEPTH, DEFAULT_MAX_TOTAL_DEPTH};
use crate::value::{Int, NdArray, PyObject, Value};

/// Container levels between two checks of the remaining call stack.
const STACK_CHECK_EVERY: usize = 8;

/// Encodes a value as ormsgpack would.
///
/// # Errors
/// [`EncodeError::DepthLimit`] for nesting deeper than Python reads back,
/// [`EncodeError::TooLong`] for a length beyond 2^32-1, [`EncodeError::NotMsgpack`] for
/// a value only a `json` row holds.
pub fn encode(value: &Value) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::with_capacity(64);
    encode_into(value, &mut out)?;
    Ok(out)
}

/// Appends the encoding of `value` to `out`.
///
/// # Errors
/// As [`encode`]; `out` may then hold part of the value.
pub fn encode_into(value: &Value, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    write_value(out, value, Level::default())
}

/// Open levels: in the current document (the top level or one extension payload, which
/// Python packs separately) and in all documents, as the decoder counts them.
#[derive(Clone, Copy, Default)]
struct Level {
    doc: usize,
    total: usize,
}

/// Appends the encoding of `value`, written inside `open` levels that the caller has
/// already opened (the typed serializer's structs and lists around a `Value` part): the
/// depth limit then counts those too, so nothing is written that a reader would refuse.
pub(crate) fn encode_into_at_depth(
    value: &Value,
    out: &mut Vec<u8>,
    open: usize,
) -> Result<(), EncodeError> {
    write_value(
        out,
        value,
        Level {
            doc: open,
            total: open,
        },
    )
}

fn write_value(out: &mut Vec<u8>, value: &Value, depth: Level) -> Result<(), EncodeError> {
    match value {
        Value::Nil => out.push(0xc0),
        Value::Bool(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Int(i) => write_int(out, *i),
        Value::F32(f) => {
            out.push(0xca);
            out.extend_from_slice(&f.to_bits().to_be_bytes());
        }
        Value::F64(f) => write_f64(out, *f),
        Value::Str(s) => write_str(out, s)?,
        Value::Bin(b) => write_bin(out, b)?,
        Value::Ext(raw) => write_ext(out, raw.code, &raw.data)?,
        Value::BigInt(_) | Value::WStr(_) => {
            return Err(EncodeError::NotMsgpack {
                kind: value.kind_name(),
            })
        }
        // The remaining stack is checked every few levels, not at every container. An
        // object envelope adds two levels at once, so checking at two residues makes
        // sure every run of `STACK_CHECK_EVERY` levels, odd or even, is checked.
        container if depth.total % STACK_CHECK_EVERY < 2 => {
            crate::stack::guard(|| write_container(out, container, depth))?
        }
        container => write_container(out, container, depth)?,
    }
    Ok(())
}

/// The nested cases of [`write_value`], each run under the stack guard.
fn write_container(out: &mut Vec<u8>, value: &Value, depth: Level) -> Result<(), EncodeError> {
    match value {
        Value::Array(items) => {
            // Empty containers open no level, as in the decoder.
            let depth = if items.is_empty() {
                depth
            } else {
                enter(depth)?
            };
            write_array_len(out, items.len())?;
            for item in items {
                write_value(out, item, depth)?;
            }
        }
        Value::Map(entries) => {
            let depth = if entries.is_empty() {
                depth
            } else {
                enter(depth)?
            };
            write_map_len(out, entries.len())?;
            for (k, v) in entries {
                write_value(out, k, depth)?;
                write_value(out, v, depth)?;
            }
        }
        Value::Object(obj) => {
            let depth = enter_ext(depth)?;
            write_ext_with(out, obj.kind.code(), |out| {
                write_object_payload(out, obj, depth)
            })?;
        }
        Value::NdArray(arr) => {
            let depth = enter_ext(depth)?;
            write_ext_with(out, 6, |out| write_ndarray_payload(out, arr, depth))?;
        }
        Value::DeltaSnapshot(inner) => {
            let depth = enter_ext(depth)?;
            write_ext_with(out, 7, |out| write_value(out, inner, depth))?;
        }
        scalar => write_value(out, scalar, depth)?,
    }
    Ok(())
}

/// Counts one more level of nesting, as the decoder does: nothing is written that it
/// would refuse to read.
fn enter(depth: Level) -> Result<Level, EncodeError> {
    if depth.doc >= DEFAULT_MAX_DEPTH {
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

fn enter_total(total: usize) -> Result<usize, EncodeError> {
    if total >= DEFAULT_MAX_TOTAL_DEPTH {
        Err(EncodeError::DepthLimit {
            limit: DEFAULT_MAX_TOTAL_DEPTH,
        })
    } else {
        Ok(total + 1)
    }
}

fn write_object_payload(
    out: &mut Vec<u8>,
    obj: &PyObject,
    depth: Level,
) -> Result<(), EncodeError> {
    let depth = enter(depth)?;
    write_array_len(out, if obj.method.is_some() { 4 } else { 3 })?;
    write_str(out, &obj.module)?;
    write_str(out, &obj.name)?;
    write_value(out, &obj.arg, depth)?;
    if let Some(m) = &obj.method {
        write_str(out, m)?;
    }
    Ok(())
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

/// Writes an integer in its shortest form.
pub fn write_int(out: &mut Vec<u8>, i: Int) {
    match i.as_u64() {
        Some(u) => write_u64(out, u),
        None => write_i64(out, i.as_i64().unwrap_or(i64::MIN)),
    }
}

/// Writes a non-negative integer in its shortest form.
#[inline]
pub fn write_u64(out: &mut Vec<u8>, u: u64) {
    if u < 0x80 {
        out.push(u as u8);
    } else if u <= 0xff {
        out.extend_from_slice(&[0xcc, u as u8]);
    } else if u <= 0xffff {
        out.push(0xcd);
        out.extend_from_slice(&(u as u16).to_be_bytes());
    } else if u <= 0xffff_ffff {
        out.push(0xce);
        out.extend_from_slice(&(u as u32).to_be_bytes());
    } else {
        out.push(0xcf);
        out.extend_from_slice(&u.to_be_bytes());
    }
}

/// Writes a signed integer in its shortest form (unsigned forms for `i >= 0`).
#[inline]
pub fn write_i64(out: &mut Vec<u8>, i: i64) {
    if let Ok(u) = u64::try_from(i) {
        write_u64(out, u);
    } else if i >= -32 {
        out.push(i as u8);
    } else if i >= -0x80 {
        out.extend_from_slice(&[0xd0, i as u8]);
    } else if i >= -0x8000 {
        out.push(0xd1);
        out.extend_from_slice(&(i as i16).to_be_bytes());
    } else if i >= -0x8000_0000 {
        out.push(0xd2);
        out.extend_from_slice(&(i as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&i.to_be_bytes());
    }
}

/// Writes a float64 (the only float form Python writes), bits as they are.
#[inline]
pub fn write_f64(out: &mut Vec<u8>, f: f64) {
    out.push(0xcb);
    out.extend_from_slice(&f.to_bits().to_be_bytes());
}

fn len32(what: &'static str, len: usize) -> Result<u32, EncodeError> {
    u32::try_from(len).map_err(|_| EncodeError::TooLong { what, len })
}

/// Writes a string.
///
/// # Errors
/// [`EncodeError::TooLong`] for a string longer than 2^32-1 bytes.
#[inline]
pub fn write_str(out: &mut Vec<u8>, s: &str) -> Result<(), EncodeError> {
    let len = s.len();
    if len < 32 {
        out.push(0xa0 | len as u8);
    } else if len <= 0xff {
        out.extend_from_slice(&[0xd9, len as u8]);
    } else if len <= 0xffff {
        out.push(0xda);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&len32("str", len)?.to_be_bytes());
    }
    out.extend_from_slice(s.as_bytes());
    Ok(())
}

/// Writes a bin.
///
/// # Errors
/// [`EncodeError::TooLong`] for more than 2^32-1 bytes.
#[inline]
pub fn write_bin(out: &mut Vec<u8>, b: &[u8]) -> Result<(), EncodeError> {
    let len = b.len();
    if len <= 0xff {
        out.extend_from_slice(&[0xc4, len as u8]);
    } else if len <= 0xffff {
        out.push(0xc5);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0xc6);
        out.extend_from_slice(&len32("bin", len)?.to_be_bytes());
    }
    out.extend_from_slice(b);
    Ok(())
}

/// Writes an array header for `len` items.
///
/// # Errors
/// [`EncodeError::TooLong`] for a length beyond 2^32-1.
#[inline]
pub fn write_array_len(out: &mut Vec<u8>, len: usize) -> Result<(), EncodeError> {
    if len < 16 {
        out.push(0x90 | len as u8);
    } else if len <= 0xffff {
        out.push(0xdc);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0xdd);
        out.extend_from_slice(&len32("array", len)?.to_be_bytes());
    }
    Ok(())
}

/// Writes a map header for `len` entries.
///
/// # Errors
/// [`EncodeError::TooLong`] for a length beyond 2^32-1.
#[inline]
pub fn write_map_len(out: &mut Vec<u8>, len: usize) -> Result<(), EncodeError> {
    if len < 16 {
        out.push(0x80 | len as u8);
    } else if len <= 0xffff {
        out.push(0xde);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0xdf);
        out.extend_from_slice(&len32("map", len)?.to_be_bytes());
    }
    Ok(())
}

fn ext_header(len: usize, code: i8) -> Result<([u8; 6], usize), EncodeError> {
    let c = code as u8;
    let mut h = [0u8; 6];
    let n = match len {
        1 => {
            h[..2].copy_from_slice(&[0xd4, c]);
            2
        }
        2 => {
            h[..2].copy_from_slice(&[0xd5, c]);
            2
        }
        4 => {
            h[..2].copy_from_slice(&[0xd6, c]);
            2
        }
        8 => {
            h[..2].copy_from_slice(&[0xd7, c]);
            2
        }
        16 => {
            h[..2].copy_from_slice(&[0xd8, c]);
            2
        }
        0..=0xff => {
            h[..3].copy_from_slice(&[0xc7, len as u8, c]);
            3
        }
        0x100..=0xffff => {
            h[0] = 0xc8;
            h[1..3].copy_from_slice(&(len as u16).to_be_bytes());
            h[3] = c;
            4
        }
        _ => {
            h[0] = 0xc9;
            h[1..5].copy_from_slice(&len32("ext", len)?.to_be_bytes());
            h[5] = c;
            6
        }
    };
    Ok((h, n))
}

/// Writes an extension with the given payload bytes.
///
/// # Errors
/// [`EncodeError::TooLong`] for a payload longer than 2^32-1 bytes.
pub fn write_ext(out: &mut Vec<u8>, code: i8, payload: &[u8]) -> Result<(), EncodeError> {
    let (h, n) = ext_header(payload.len(), code)?;
    out.extend_from_slice(h.get(..n).unwrap_or_default());
    out.extend_from_slice(payload);
    Ok(())
}

/// Writes an extension whose payload `body` writes straight into `out`: the payload is
/// written once after a maximal header slot, then moved down over the unused part of
/// the slot, so no temporary buffer is needed.
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
    let slot = out.len();
    out.extend_from_slice(&[0u8; 6]);
    body(out)?;
    let payload_start = slot + 6;
    let len = out.len() - payload_start;
    let (h, n) = ext_header(len, code)?;
    out.copy_within(payload_start.., slot + n);
    out.truncate(slot + n + len);
    if let Some(dst) = out.get_mut(slot..slot + n) {
        dst.copy_from_slice(h.get(..n).unwrap_or_default());
    }
    Ok(())
}
