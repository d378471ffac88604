//! bytes → [`Value`], without recursion.
//!
//! The decoder keeps its own stack of open arrays, maps and extension payloads, so the
//! depth of the input costs heap (bounded by [`DecodeOptions::max_depth`]), never call
//! stack. Every length prefix is checked against the bytes left before anything is
//! allocated for it.
//!
//! Extension payloads of codes 0–7 are decoded in place as nested documents. A payload
//! that is not exactly the tuple Python writes — malformed, short, non-canonical, with
//! trailing bytes — is kept as a [`RawExt`] instead, so nothing is lost and re-encoding
//! gives the same bytes.

use bytes::Bytes;
use rmp::Marker;

use crate::error::{DecodeError, DecodeErrorKind as Kind};
use crate::value::{Int, NdArray, ObjectKind, PyObject, RawExt, Value};

/// The nesting limit ormsgpack reads (it writes at most 255 levels).
pub const DEFAULT_MAX_DEPTH: usize = 1024;

/// Arrays reserve at most this many items (maps half as many entries) before the items
/// arrive; longer ones grow as they are read. A declared length then never reserves
/// memory ahead of the data (a 1 MB input declaring a million elements does not reserve
/// 40 MB), and no large block is requested before the many small ones of its items,
/// which keeps glibc's malloc on its fast paths: decoding `messages300` (a 300-item
/// array) got about 35% faster in wall-clock time, same instruction count.
const MAX_PREALLOC: usize = 64;

/// How to decode. `Default` is what Python reads: depth 1,024, canonical forms only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DecodeOptions {
    max_depth: usize,
    allow_non_canonical: bool,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            max_depth: DEFAULT_MAX_DEPTH,
            allow_non_canonical: false,
        }
    }
}

impl DecodeOptions {
    /// The default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Arrays, maps and extension payloads may nest at most this deep (a top-level
    /// array is depth 1). Deeper input is a [`Kind::DepthLimit`] error.
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// The configured depth limit.
    pub fn depth_limit(&self) -> usize {
        self.max_depth
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

enum Frame {
    Array {
        items: Vec<Value>,
        remaining: usize,
    },
    Map {
        entries: Vec<(Value, Value)>,
        key: Option<Value>,
        remaining: usize,
    },
    /// An extension payload being decoded as a nested document in `start..end`.
    Ext {
        code: i8,
        start: usize,
        end: usize,
        /// The region limit to restore once the payload is done.
        outer_limit: usize,
    },
}

struct Decoder<'a> {
    input: &'a [u8],
    shared: Option<&'a Bytes>,
    options: DecodeOptions,
    pos: usize,
    /// Reads may not go past this: the end of the input or of the current ext payload.
    limit: usize,
    stack: Vec<Frame>,
    /// How many `Frame::Ext` are on the stack.
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
            stack: Vec::new(),
            ext_depth: 0,
        }
    }

    fn run(mut self) -> Result<Value, DecodeError> {
        loop {
            // `None`: a container or extension payload was opened (its frame pushed).
            let mut value = match self.read_item() {
                Ok(Some(v)) => v,
                Ok(None) => continue,
                // An error inside an extension payload turns that payload into a raw
                // ext; the depth limit is never swallowed.
                Err(e) => self.recover_raw_ext(e)?,
            };
            // Hand the finished value to the open frames, closing those it completes.
            // The top frame is updated in place; a frame is only moved when it closes.
            loop {
                let closed = match self.stack.last_mut() {
                    None => {
                        if self.pos != self.input.len() {
                            return Err(self.err(
                                Kind::TrailingBytes {
                                    count: self.input.len() - self.pos,
                                },
                                self.pos,
                            ));
                        }
                        return Ok(value);
                    }
                    Some(Frame::Array { items, remaining }) => {
                        items.push(value);
                        *remaining -= 1;
                        if *remaining > 0 {
                            break;
                        }
                        match self.stack.pop() {
                            Some(Frame::Array { items, .. }) => Value::Array(items),
                            _ => return Err(self.err(Kind::Truncated, self.pos)),
                        }
                    }
                    Some(Frame::Map {
                        entries,
                        key,
                        remaining,
                    }) => {
                        let Some(k) = key.take() else {
                            *key = Some(value);
                            break;
                        };
                        entries.push((k, value));
                        *remaining -= 1;
                        if *remaining > 0 {
                            break;
                        }
                        match self.stack.pop() {
                            Some(Frame::Map { entries, .. }) => Value::Map(entries),
                            _ => return Err(self.err(Kind::Truncated, self.pos)),
                        }
                    }
                    Some(Frame::Ext { .. }) => {
                        let Some(Frame::Ext {
                            code,
                            start,
                            end,
                            outer_limit,
                        }) = self.stack.pop()
                        else {
                            return Err(self.err(Kind::Truncated, self.pos));
                        };
                        self.ext_depth -= 1;
                        self.limit = outer_limit;
                        let v = if self.pos == end {
                            interpret_ext(code, value)
                        } else {
                            None
                        }
                        .unwrap_or_else(|| self.raw_ext(code, start, end));
                        self.pos = end;
                        v
                    }
                };
                value = closed;
            }
        }
    }

    /// After an error: if we are inside an extension payload and the error is
    /// about the payload's shape (not the depth limit), unwind to the innermost payload
    /// and keep it raw. Otherwise the error stands.
    fn recover_raw_ext(&mut self, e: DecodeError) -> Result<Value, DecodeError> {
        if self.ext_depth == 0 || matches!(e.kind(), Kind::DepthLimit { .. }) {
            return Err(e);
        }
        while let Some(frame) = self.stack.pop() {
            if let Frame::Ext {
                code,
                start,
                end,
                outer_limit,
            } = frame
            {
                self.ext_depth -= 1;
                self.limit = outer_limit;
                self.pos = end;
                return Ok(self.raw_ext(code, start, end));
            }
        }
        Err(e)
    }

    fn raw_ext(&self, code: i8, start: usize, end: usize) -> Value {
        Value::Ext(RawExt {
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

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.limit)
            .ok_or_else(|| DecodeError::new(Kind::Truncated, self.pos))?;
        let input: &'a [u8] = self.input;
        let s = input
            .get(self.pos..end)
            .ok_or_else(|| DecodeError::new(Kind::Truncated, self.pos))?;
        self.pos = end;
        Ok(s)
    }

    fn take_array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let s = self.take(N)?;
        s.try_into()
            .map_err(|_| DecodeError::new(Kind::Truncated, self.pos))
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(u8::from_be_bytes(self.take_array()?))
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
    fn canonical(&self, ok: bool, what: &'static str, at: usize) -> Result<(), DecodeError> {
        if ok || (self.options.allow_non_canonical && self.ext_depth == 0) {
            Ok(())
        } else {
            Err(self.err(Kind::NonCanonical { what }, at))
        }
    }

    /// Checks a declared length against the bytes left (each element needs at least
    /// `min_size` bytes) before anything is allocated.
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

    /// Reads one item: `Some(value)` for a finished value, `None` after opening a
    /// container or extension payload (its frame is pushed).
    fn read_item(&mut self) -> Result<Option<Value>, DecodeError> {
        let at = self.pos;
        let marker = Marker::from_u8(self.u8()?);
        let v = match marker {
            Marker::Null => Value::Nil,
            Marker::True => Value::Bool(true),
            Marker::False => Value::Bool(false),
            Marker::FixPos(n) => Value::Int(Int::from(n)),
            Marker::FixNeg(n) => Value::Int(Int::from(n)),
            Marker::U8 => {
                let n = self.u8()?;
                self.canonical(n >= 0x80, "uint8 holding a positive fixint", at)?;
                Value::Int(Int::from(n))
            }
            Marker::U16 => {
                let n = self.u16()?;
                self.canonical(n > 0xff, "uint16 holding a smaller integer", at)?;
                Value::Int(Int::from(n))
            }
            Marker::U32 => {
                let n = self.u32()?;
                self.canonical(n > 0xffff, "uint32 holding a smaller integer", at)?;
                Value::Int(Int::from(n))
            }
            Marker::U64 => {
                let n = self.u64()?;
                self.canonical(n > 0xffff_ffff, "uint64 holding a smaller integer", at)?;
                Value::Int(Int::from(n))
            }
            Marker::I8 => {
                let n = i8::from_be_bytes(self.take_array()?);
                self.canonical(n < -32, "int8 holding a fixint", at)?;
                Value::Int(Int::from(n))
            }
            Marker::I16 => {
                let n = i16::from_be_bytes(self.take_array()?);
                self.canonical(n < -0x80, "int16 holding a smaller integer", at)?;
                Value::Int(Int::from(n))
            }
            Marker::I32 => {
                let n = i32::from_be_bytes(self.take_array()?);
                self.canonical(n < -0x8000, "int32 holding a smaller integer", at)?;
                Value::Int(Int::from(n))
            }
            Marker::I64 => {
                let n = i64::from_be_bytes(self.take_array()?);
                self.canonical(n < -0x8000_0000, "int64 holding a smaller integer", at)?;
                Value::Int(Int::from(n))
            }
            Marker::F32 => Value::F32(f32::from_bits(self.u32()?)),
            Marker::F64 => Value::F64(f64::from_bits(self.u64()?)),
            Marker::FixStr(n) => self.read_str(usize::from(n), at)?,
            Marker::Str8 => {
                let n = usize::from(self.u8()?);
                self.canonical(n >= 32, "str8 holding a fixstr", at)?;
                self.read_str(n, at)?
            }
            Marker::Str16 => {
                let n = usize::from(self.u16()?);
                self.canonical(n > 0xff, "str16 holding a shorter string", at)?;
                self.read_str(n, at)?
            }
            Marker::Str32 => {
                let n = self.u32()? as usize;
                self.canonical(n > 0xffff, "str32 holding a shorter string", at)?;
                self.read_str(n, at)?
            }
            Marker::Bin8 => {
                let n = usize::from(self.u8()?);
                self.read_bin(n, at)?
            }
            Marker::Bin16 => {
                let n = usize::from(self.u16()?);
                self.canonical(n > 0xff, "bin16 holding a shorter bin", at)?;
                self.read_bin(n, at)?
            }
            Marker::Bin32 => {
                let n = self.u32()? as usize;
                self.canonical(n > 0xffff, "bin32 holding a shorter bin", at)?;
                self.read_bin(n, at)?
            }
            Marker::FixArray(n) => return self.open_array(usize::from(n), at),
            Marker::Array16 => {
                let n = usize::from(self.u16()?);
                self.canonical(n >= 16, "array16 holding a fixarray", at)?;
                return self.open_array(n, at);
            }
            Marker::Array32 => {
                let n = self.u32()? as usize;
                self.canonical(n > 0xffff, "array32 holding a shorter array", at)?;
                return self.open_array(n, at);
            }
            Marker::FixMap(n) => return self.open_map(usize::from(n), at),
            Marker::Map16 => {
                let n = usize::from(self.u16()?);
                self.canonical(n >= 16, "map16 holding a fixmap", at)?;
                return self.open_map(n, at);
            }
            Marker::Map32 => {
                let n = self.u32()? as usize;
                self.canonical(n > 0xffff, "map32 holding a shorter map", at)?;
                return self.open_map(n, at);
            }
            Marker::FixExt1 => return self.open_ext(1, at),
            Marker::FixExt2 => return self.open_ext(2, at),
            Marker::FixExt4 => return self.open_ext(4, at),
            Marker::FixExt8 => return self.open_ext(8, at),
            Marker::FixExt16 => return self.open_ext(16, at),
            Marker::Ext8 => {
                let n = usize::from(self.u8()?);
                self.canonical(
                    !matches!(n, 1 | 2 | 4 | 8 | 16),
                    "ext8 holding a fixext",
                    at,
                )?;
                return self.open_ext(n, at);
            }
            Marker::Ext16 => {
                let n = usize::from(self.u16()?);
                self.canonical(n > 0xff, "ext16 holding a shorter payload", at)?;
                return self.open_ext(n, at);
            }
            Marker::Ext32 => {
                let n = self.u32()? as usize;
                self.canonical(n > 0xffff, "ext32 holding a shorter payload", at)?;
                return self.open_ext(n, at);
            }
            Marker::Reserved => return Err(self.err(Kind::ReservedByte(0xc1), at)),
        };
        Ok(Some(v))
    }

    fn read_str(&mut self, n: usize, at: usize) -> Result<Value, DecodeError> {
        self.check_len(n, 1, at)?;
        let start = self.pos;
        let bytes = self.take(n)?;
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(Value::Str(s.to_owned())),
            Err(e) => Err(self.err(Kind::InvalidUtf8, start + e.valid_up_to())),
        }
    }

    fn read_bin(&mut self, n: usize, at: usize) -> Result<Value, DecodeError> {
        self.check_len(n, 1, at)?;
        let start = self.pos;
        self.take(n)?;
        Ok(Value::Bin(self.payload(start, start + n)))
    }

    /// Pushes a frame, unless that would nest deeper than the limit.
    fn push(&mut self, frame: Frame, at: usize) -> Result<Option<Value>, DecodeError> {
        if self.stack.len() >= self.options.max_depth {
            return Err(self.err(
                Kind::DepthLimit {
                    limit: self.options.max_depth,
                },
                at,
            ));
        }
        if let Frame::Ext { end, .. } = frame {
            self.ext_depth += 1;
            self.limit = end;
        }
        self.stack.push(frame);
        Ok(None)
    }

    fn open_array(&mut self, n: usize, at: usize) -> Result<Option<Value>, DecodeError> {
        if n == 0 {
            return Ok(Some(Value::Array(Vec::new())));
        }
        self.check_len(n, 1, at)?;
        self.push(
            Frame::Array {
                items: Vec::with_capacity(n.min(MAX_PREALLOC)),
                remaining: n,
            },
            at,
        )
    }

    fn open_map(&mut self, n: usize, at: usize) -> Result<Option<Value>, DecodeError> {
        if n == 0 {
            return Ok(Some(Value::Map(Vec::new())));
        }
        self.check_len(n, 2, at)?;
        self.push(
            Frame::Map {
                entries: Vec::with_capacity(n.min(MAX_PREALLOC / 2)),
                key: None,
                remaining: n,
            },
            at,
        )
    }

    fn open_ext(&mut self, n: usize, at: usize) -> Result<Option<Value>, DecodeError> {
        let code = i8::from_be_bytes(self.take_array()?);
        self.check_len(n, 1, at)?;
        let start = self.pos;
        let end = start + n;
        if !(0..=7).contains(&code) || n == 0 {
            self.take(n)?;
            return Ok(Some(self.raw_ext(code, start, end)));
        }
        self.push(
            Frame::Ext {
                code,
                start,
                end,
                outer_limit: self.limit,
            },
            at,
        )
    }
}

/// Turns a decoded ext payload into its structured form, or `None` if it is not the
/// tuple Python writes for `code`.
fn interpret_ext(code: i8, payload: Value) -> Option<Value> {
    if code == 7 {
        return Some(Value::DeltaSnapshot(Box::new(payload)));
    }
    let Value::Array(items) = payload else {
        return None;
    };
    if code == 6 {
        let [dtype, shape, order, buffer] = <[Value; 4]>::try_from(items).ok()?;
        let (Value::Str(dtype), Value::Array(shape), Value::Str(order), Value::Bin(buffer)) =
            (dtype, shape, order, buffer)
        else {
            return None;
        };
        let shape = shape
            .iter()
            .map(Value::as_u64)
            .collect::<Option<Vec<u64>>>()?;
        return Some(Value::NdArray(Box::new(NdArray {
            dtype,
            shape,
            order,
            buffer,
        })));
    }
    let kind = ObjectKind::from_code(code)?;
    let mut items = items.into_iter();
    let (Some(Value::Str(module)), Some(Value::Str(name)), Some(arg)) =
        (items.next(), items.next(), items.next())
    else {
        return None;
    };
    let method = match (items.next(), items.next()) {
        (None, _) => None,
        (Some(Value::Str(m)), None) => Some(m),
        _ => return None,
    };
    Some(Value::Object(Box::new(PyObject {
        kind,
        module,
        name,
        arg,
        method,
    })))
}
