//! Zero-copy reads: [`ValueRef`], a decoded value that borrows every string and byte
//! string from the input, and [`LazyValue`], one item of the input reached by key or
//! index without decoding the rest.
//!
//! Both run on the same [reader](super::read) as the owned decoder, with the same
//! [`DecodeOptions`]: the same bytes give the same error kind at the same offset, the
//! same depth limits apply, every length is checked against the input before anything
//! is allocated, and deep input runs on heap-allocated stack segments.

use super::error::{DecodeError, DecodeErrorKind as Kind};
use super::marker as M;
use super::read::{DecodeOptions, Fail, Head, Reader, Walk};
use crate::value::{Int, NdArray, ObjectKind, PyObject, PyStr, RawExt, Value};

/// One decoded msgpack document that borrows its strings and bytes from the input: the
/// borrowed twin of [`Value`], covering the whole Python format (extension codes 0–7
/// structured exactly when [`decode`](super::decode) structures them, raw otherwise).
///
/// Decoding allocates only the arrays, maps and envelope boxes, never a string or a
/// byte string. [`ValueRef::to_owned_value`] (or [`From`]) makes the owned [`Value`]
/// in one call, equal to what [`decode`](super::decode) gives for the same bytes.
///
/// ```
/// use langgraph_codec::msgpack::{self, ValueRef};
///
/// // {"messages": ["hi"], "step": 3}
/// let bytes = b"\x82\xa8messages\x91\xa2hi\xa4step\x03";
/// let value = ValueRef::decode(bytes)?;
/// let hi: &str = value.get("messages").and_then(|m| m.as_array()?.first()?.as_str()).unwrap_or("");
/// assert_eq!(hi, "hi");
/// assert!(std::ptr::eq(hi.as_ptr(), &bytes[12])); // borrowed, not copied
/// assert_eq!(value.to_owned_value(), msgpack::decode(bytes)?);
/// # Ok::<(), langgraph_codec::msgpack::DecodeError>(())
/// ```
///
/// Equality compares floats by their bit patterns, as [`Value`]'s does.
#[derive(Default)]
pub enum ValueRef<'a> {
    /// msgpack nil, Python `None`.
    #[default]
    Nil,
    /// Python `bool`.
    Bool(bool),
    /// An integer in `i64::MIN ..= u64::MAX`.
    Int(Int),
    /// A msgpack float32.
    F32(f32),
    /// A msgpack float64, Python `float`.
    F64(f64),
    /// A UTF-8 string, borrowed from the input.
    Str(&'a str),
    /// msgpack bin, borrowed from the input.
    Bin(&'a [u8]),
    /// msgpack array.
    Array(Vec<ValueRef<'a>>),
    /// msgpack map in wire order, duplicate keys kept.
    Map(Vec<(ValueRef<'a>, ValueRef<'a>)>),
    /// Ext codes 0–5: a Python object envelope.
    Object(Box<PyObjectRef<'a>>),
    /// Ext code 6: a numpy array.
    NdArray(Box<NdArrayRef<'a>>),
    /// Ext code 7: LangGraph's `_DeltaSnapshot(value)`.
    DeltaSnapshot(Box<ValueRef<'a>>),
    /// Any other extension, or an ext 0–7 whose payload is not what Python writes.
    Ext(RawExtRef<'a>),
}

/// A Python object envelope (ext codes 0–5), borrowed: see [`PyObject`].
#[derive(Clone, Debug, PartialEq)]
pub struct PyObjectRef<'a> {
    /// Which ext code, i.e. how Python rebuilds it.
    pub kind: ObjectKind,
    /// `obj.__class__.__module__`.
    pub module: &'a str,
    /// `obj.__class__.__name__`.
    pub name: &'a str,
    /// The third tuple element.
    pub arg: ValueRef<'a>,
    /// The fourth tuple element when present.
    pub method: Option<&'a str>,
}

impl PyObjectRef<'_> {
    /// `true` if this is an instance of `module.name`.
    pub fn is(&self, module: &str, name: &str) -> bool {
        self.module == module && self.name == name
    }
}

/// A numpy array (ext code 6), borrowed: see [`NdArray`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NdArrayRef<'a> {
    /// `dtype.str`, e.g. `"<f8"`.
    pub dtype: &'a str,
    /// The shape; empty for a 0-d array.
    pub shape: Vec<u64>,
    /// `"C"` or `"F"`.
    pub order: &'a str,
    /// The raw element bytes.
    pub buffer: &'a [u8],
}

/// An extension value kept as it was on the wire, borrowed: see [`RawExt`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RawExtRef<'a> {
    /// The ext type code.
    pub code: i8,
    /// The payload bytes.
    pub data: &'a [u8],
}

impl<'a> ValueRef<'a> {
    /// Decodes one msgpack document with the default options, borrowing from `input`.
    /// Other options: [`DecodeOptions::decode_ref`].
    ///
    /// # Errors
    ///
    /// A [`DecodeError`] for malformed input — the same kind at the same offset as
    /// [`decode`](super::decode) gives for the same bytes (truncation, invalid UTF-8,
    /// non-canonical forms, nesting past the limits, trailing bytes).
    pub fn decode(input: &'a [u8]) -> Result<Self, DecodeError> {
        DecodeOptions::default().decode_ref(input)
    }

    /// The owned [`Value`]: strings and bytes copied out of the input. Equal to what
    /// [`decode`](super::decode) gives for the same bytes.
    pub fn to_owned_value(&self) -> Value {
        match self {
            ValueRef::Nil => Value::Nil,
            ValueRef::Bool(b) => Value::Bool(*b),
            ValueRef::Int(i) => Value::Int(*i),
            ValueRef::F32(f) => Value::F32(*f),
            ValueRef::F64(f) => Value::F64(*f),
            ValueRef::Str(s) => Value::Str(PyStr::new(s)),
            ValueRef::Bin(b) => Value::Bin(bytes::Bytes::copy_from_slice(b)),
            ValueRef::Array(items) => crate::stack::guard(|| {
                Value::Array(items.iter().map(ValueRef::to_owned_value).collect())
            }),
            ValueRef::Map(entries) => crate::stack::guard(|| {
                Value::Map(
                    entries
                        .iter()
                        .map(|(k, v)| (k.to_owned_value(), v.to_owned_value()))
                        .collect(),
                )
            }),
            ValueRef::Object(o) => crate::stack::guard(|| {
                Value::Object(Box::new(PyObject {
                    kind: o.kind,
                    module: PyStr::new(o.module),
                    name: PyStr::new(o.name),
                    arg: o.arg.to_owned_value(),
                    method: o.method.map(PyStr::new),
                }))
            }),
            ValueRef::NdArray(a) => Value::NdArray(Box::new(NdArray {
                dtype: a.dtype.to_owned(),
                shape: a.shape.clone(),
                order: a.order.to_owned(),
                buffer: bytes::Bytes::copy_from_slice(a.buffer),
            })),
            ValueRef::DeltaSnapshot(v) => {
                crate::stack::guard(|| Value::DeltaSnapshot(Box::new(v.to_owned_value())))
            }
            ValueRef::Ext(e) => Value::Ext(Box::new(RawExt {
                code: e.code,
                data: bytes::Bytes::copy_from_slice(e.data),
            })),
        }
    }

    crate::value::accessors! {
        ValueRef,
        str: &'a str, str_note: "; it borrows from the input",
        bytes: &'a [u8], bytes_note: "; they borrow from the input",
        array: &[ValueRef<'a>],
        map: &[(ValueRef<'a>, ValueRef<'a>)],
        object: &PyObjectRef<'a>,
        item: &ValueRef<'a>,
        kind_name_doc: "A short name of the variant, as [`Value::kind_name`] gives it.",
        more_kinds: {},
    }

    fn is_container(&self) -> bool {
        matches!(
            self,
            ValueRef::Array(_)
                | ValueRef::Map(_)
                | ValueRef::Object(_)
                | ValueRef::DeltaSnapshot(_)
        )
    }
}

impl From<&ValueRef<'_>> for Value {
    fn from(v: &ValueRef<'_>) -> Self {
        v.to_owned_value()
    }
}

impl From<ValueRef<'_>> for Value {
    fn from(v: ValueRef<'_>) -> Self {
        v.to_owned_value()
    }
}

// Drop, Clone, Debug and PartialEq walk the tree recursively; each container level
// runs under the stack guard, as `Value`'s do, so the deepest value the decoder accepts
// is safe on any thread.

impl Drop for ValueRef<'_> {
    #[inline]
    fn drop(&mut self) {
        match self {
            ValueRef::Array(items) if !items.is_empty() => {
                let items = std::mem::take(items);
                crate::stack::guard(move || drop(items));
            }
            ValueRef::Map(entries) if !entries.is_empty() => {
                let entries = std::mem::take(entries);
                crate::stack::guard(move || drop(entries));
            }
            ValueRef::Object(o) if o.arg.is_container() => {
                let arg = std::mem::take(&mut o.arg);
                crate::stack::guard(move || drop(arg));
            }
            ValueRef::DeltaSnapshot(inner) if inner.is_container() => {
                let inner = std::mem::take(&mut **inner);
                crate::stack::guard(move || drop(inner));
            }
            _ => {}
        }
    }
}

impl Clone for ValueRef<'_> {
    fn clone(&self) -> Self {
        match self {
            ValueRef::Nil => ValueRef::Nil,
            ValueRef::Bool(b) => ValueRef::Bool(*b),
            ValueRef::Int(i) => ValueRef::Int(*i),
            ValueRef::F32(f) => ValueRef::F32(*f),
            ValueRef::F64(f) => ValueRef::F64(*f),
            ValueRef::Str(s) => ValueRef::Str(s),
            ValueRef::Bin(b) => ValueRef::Bin(b),
            ValueRef::Ext(e) => ValueRef::Ext(*e),
            ValueRef::NdArray(a) => ValueRef::NdArray(a.clone()),
            ValueRef::Array(items) => ValueRef::Array(crate::stack::guard(|| items.clone())),
            ValueRef::Map(entries) => ValueRef::Map(crate::stack::guard(|| entries.clone())),
            ValueRef::Object(o) => ValueRef::Object(crate::stack::guard(|| o.clone())),
            ValueRef::DeltaSnapshot(v) => {
                ValueRef::DeltaSnapshot(crate::stack::guard(|| v.clone()))
            }
        }
    }
}

crate::value::debug_by_variant!(ValueRef<'_>);
crate::value::eq_by_variant!(ValueRef<'_>);

/// Arrays reserve at most this many items before they arrive (see the owned decoder's
/// `MAX_PREALLOC`): a declared length never reserves memory ahead of the data.
const MAX_PREALLOC: usize = 64;

/// What a walk over one item builds: a [`ValueRef`], or nothing (`()`: the walk only
/// checks and skips the item, allocating nothing, since a `Vec<()>` never allocates).
/// One walker serves both, so skipping checks exactly what decoding checks.
pub(crate) trait Build<'a>: Sized + Default {
    /// The empty slot a container pushes before reading an item into it, a constant:
    /// `Self::default()` is staged on the stack with byte stores and copied into the
    /// `Vec` with 16-byte loads that stall on store forwarding (`perf annotate` put
    /// about a fifth of the `checkpoint_plain` decode on that one load), whereas a
    /// constant is copied from read-only memory.
    const EMPTY: Self;
    /// A map's empty entry, as [`Self::EMPTY`].
    const EMPTY_ENTRY: (Self, Self);
    fn scalar(head: Head<'a>) -> Self;
    fn array(items: Vec<Self>) -> Self;
    fn map(entries: Vec<(Self, Self)>) -> Self;
    fn raw_ext(code: i8, data: &'a [u8]) -> Self;
    /// The envelope from its tuple items, if they have the shape Python writes.
    fn object(kind: ObjectKind, items: [Self; 4], len: usize) -> Option<Self>;
    /// Ext 6 or 7 from its decoded payload, if it has the shape Python writes.
    fn ndarray_or_delta(code: i8, payload: Self) -> Option<Self>;
}

impl<'a> Build<'a> for () {
    const EMPTY: () = ();
    const EMPTY_ENTRY: ((), ()) = ((), ());
    #[inline]
    fn scalar(_: Head<'a>) {}
    #[inline]
    fn array(_: Vec<()>) {}
    #[inline]
    fn map(_: Vec<((), ())>) {}
    #[inline]
    fn raw_ext(_: i8, _: &'a [u8]) {}
    #[inline]
    fn object(_: ObjectKind, _: [(); 4], _: usize) -> Option<()> {
        Some(())
    }
    #[inline]
    fn ndarray_or_delta(_: i8, _: ()) -> Option<()> {
        Some(())
    }
}

impl<'a> Build<'a> for ValueRef<'a> {
    const EMPTY: Self = ValueRef::Nil;
    const EMPTY_ENTRY: (Self, Self) = (ValueRef::Nil, ValueRef::Nil);
    #[inline]
    fn scalar(head: Head<'a>) -> Self {
        match head {
            Head::Nil => ValueRef::Nil,
            Head::Bool(b) => ValueRef::Bool(b),
            Head::U(n) => ValueRef::Int(Int::from(n)),
            Head::I(n) => ValueRef::Int(Int::from(n)),
            Head::F32(f) => ValueRef::F32(f),
            Head::F64(f) => ValueRef::F64(f),
            Head::Str(s) => ValueRef::Str(s),
            Head::Bin(b) => ValueRef::Bin(b),
            // Never passed here: containers and exts are walked.
            Head::Array(_) | Head::Map(_) | Head::Ext { .. } => ValueRef::Nil,
        }
    }
    #[inline]
    fn array(items: Vec<Self>) -> Self {
        ValueRef::Array(items)
    }
    #[inline]
    fn map(entries: Vec<(Self, Self)>) -> Self {
        ValueRef::Map(entries)
    }
    #[inline]
    fn raw_ext(code: i8, data: &'a [u8]) -> Self {
        ValueRef::Ext(RawExtRef { code, data })
    }
    fn object(kind: ObjectKind, items: [Self; 4], len: usize) -> Option<Self> {
        let [module, name, arg, method] = items;
        let (Some(module), Some(name)) = (module.as_str(), name.as_str()) else {
            return None;
        };
        let method = match (len, method.as_str()) {
            (3, _) => None,
            (_, Some(m)) => Some(m),
            _ => return None,
        };
        Some(ValueRef::Object(Box::new(PyObjectRef {
            kind,
            module,
            name,
            arg,
            method,
        })))
    }
    fn ndarray_or_delta(code: i8, payload: Self) -> Option<Self> {
        if code == 7 {
            return Some(ValueRef::DeltaSnapshot(Box::new(payload)));
        }
        let ValueRef::Array(items) = &payload else {
            return None;
        };
        let [dtype, shape, order, buffer] = items.as_slice() else {
            return None;
        };
        let (Some(dtype), Some(shape), Some(order), Some(buffer)) = (
            dtype.as_str(),
            shape.as_array(),
            order.as_str(),
            buffer.as_bytes(),
        ) else {
            return None;
        };
        let shape = shape
            .iter()
            .map(ValueRef::as_u64)
            .collect::<Option<Vec<u64>>>()?;
        Some(ValueRef::NdArray(Box::new(NdArrayRef {
            dtype,
            shape,
            order,
            buffer,
        })))
    }
}

/// Reads one complete value at the reader's position.
pub(crate) fn read_value<'a>(r: &mut Reader<'a>) -> Result<ValueRef<'a>, DecodeError> {
    walk(r).map_err(|e| *e)
}

/// Checks and skips one complete item at the reader's position, exactly as decoding it
/// would check it (same errors at the same offsets), allocating nothing.
pub(crate) fn skip(r: &mut Reader<'_>) -> Result<(), DecodeError> {
    walk::<()>(r).map_err(|e| *e)
}

/// Reads one complete item at the reader's position.
#[inline]
fn walk<'a, B: Build<'a>>(r: &mut Reader<'a>) -> Result<B, Fail> {
    let mut value = B::default();
    walk_into(r, &mut value)?;
    Ok(value)
}

/// Reads one complete item into `slot`, which holds `B::default()`.
///
/// In place, as the owned decoder reads (see its `read_into`): a returned
/// `Result<ValueRef, _>` is stored field by field and then copied into the parent with
/// wide loads that stall on store forwarding (the hottest instructions of this walk on
/// flat records before it wrote in place).
#[inline]
fn walk_into<'a, B: Build<'a>>(r: &mut Reader<'a>, slot: &mut B) -> Result<(), Fail> {
    let at = r.pos;
    let head = r.head()?;
    // Scalars, most items of a row, are stored here: no second call per item.
    if head.is_scalar() {
        put(slot, B::scalar(head));
        Ok(())
    } else {
        walk_from_into(r, head, at, slot)
    }
}

/// Checks and skips the rest of the item whose header (at `at`) was just read.
pub(crate) fn skip_from<'a>(
    r: &mut Reader<'a>,
    head: Head<'a>,
    at: usize,
) -> Result<(), DecodeError> {
    walk_from_into(r, head, at, &mut ()).map_err(|e| *e)
}

/// Reads the item whose header (at `at`) was just read into `slot`.
fn walk_from_into<'a, B: Build<'a>>(
    r: &mut Reader<'a>,
    head: Head<'a>,
    at: usize,
    slot: &mut B,
) -> Result<(), Fail> {
    match head {
        Head::Array(0) => put(slot, B::array(Vec::new())),
        Head::Map(0) => put(slot, B::map(Vec::new())),
        Head::Array(n) => r.nested(at, |r| {
            let mut items = Vec::with_capacity(n.min(MAX_PREALLOC));
            for _ in 0..n {
                items.push(B::EMPTY);
                if let Some(item) = items.last_mut() {
                    walk_into(r, item)?;
                }
            }
            put(slot, B::array(items));
            Ok::<_, Fail>(())
        })?,
        Head::Map(n) => r.nested(at, |r| {
            let mut entries = Vec::with_capacity(n.min(MAX_PREALLOC / 2));
            for _ in 0..n {
                entries.push(B::EMPTY_ENTRY);
                if let Some((key, value)) = entries.last_mut() {
                    walk_into(r, key)?;
                    walk_into(r, value)?;
                }
            }
            put(slot, B::map(entries));
            Ok::<_, Fail>(())
        })?,
        Head::Ext { code, len } => {
            let value = ext(r, code, len, at)?;
            put(slot, value);
        }
        scalar => put(slot, B::scalar(scalar)),
    }
    Ok(())
}

/// Stores `value` in `slot`, which holds the default it was created with (which owns
/// nothing): replaced and forgotten, so no drop call sits between building `value` and
/// storing it (see the owned decoder's `put`).
#[inline(always)]
fn put<T>(slot: &mut T, value: T) {
    std::mem::forget(std::mem::replace(slot, value));
}

/// An extension value of `len` payload bytes, as the owned decoder reads it: codes 0–7
/// are decoded as a nested document confined to the payload; if that fails for any
/// reason but the depth limit, or the payload is not the tuple Python writes, the ext
/// is kept raw.
fn ext<'a, B: Build<'a>>(r: &mut Reader<'a>, code: i8, len: usize, at: usize) -> Result<B, Fail> {
    let start = r.pos;
    let end = start + len;
    if !(0..=7).contains(&code) || len == 0 {
        let data = r.take(len)?;
        return Ok(B::raw_ext(code, data));
    }
    let payload = r.ext_document(at, len, |r| match ObjectKind::from_code(code) {
        Some(kind) => object_payload(r, kind),
        None => Ok(B::ndarray_or_delta(code, walk(r)?)),
    });
    let structured = match payload {
        Ok(v) if r.pos == end => v,
        Ok(_) => None,
        Err(e) if matches!(e.kind(), Kind::DepthLimit { .. }) => return Err(e),
        Err(_) => None,
    };
    r.pos = end;
    Ok(structured.unwrap_or_else(|| B::raw_ext(code, r.slice(start, end))))
}

/// The payload of an object envelope (ext 0–5), as the owned decoder's
/// `object_payload` reads it: a fixarray of 3 or 4 read item by item (no length check
/// up front), anything else read for its errors only.
fn object_payload<'a, B: Build<'a>>(
    r: &mut Reader<'a>,
    kind: ObjectKind,
) -> Result<Option<B>, Fail> {
    let at = r.pos;
    let len = match r.peek() {
        Some(M::FIXARRAY_3) => 3,
        Some(M::FIXARRAY_4) => 4,
        _ => {
            walk::<()>(r)?;
            return Ok(None);
        }
    };
    r.pos += 1;
    let mut items: [B; 4] = Default::default();
    r.nested(at, |r| {
        for item in items.iter_mut().take(len) {
            walk_into(r, item)?;
        }
        Ok::<_, Fail>(())
    })?;
    Ok(B::object(kind, items, len))
}

/// One item of a msgpack document, not decoded yet: reach a part of a row — a key, a
/// channel of a checkpoint, the last message of a list — without decoding the rest.
///
/// Each step reads only what lies before the item it looks for: the entries or items
/// before it are skipped, each checked as decoding checks it (same errors at the same
/// offsets, same depth limits, nothing allocated), and nothing after it is read at all
/// (so bytes after the item are not checked either; [`ValueRef::decode`] checks a whole
/// document). [`LazyValue::decode`] then decodes just the item reached.
///
/// ```
/// use langgraph_codec::msgpack::LazyValue;
///
/// // A checkpoint with two channels; the messages are LangChain envelopes (ext 5).
/// let row = b"\x82\xa2id\xa11\xaechannel_values\x82\xa4step\x07\xa8messages\x92\
///             \xc7\x0c\x05\x94\xa1m\xa5Human\x80\xa1f\
///             \xc7\x09\x05\x94\xa1m\xa2AI\x80\xa1f";
/// let doc = LazyValue::new(row);
/// let step = doc.get("channel_values")?.and_then(|c| c.get("step").transpose()).transpose()?;
/// assert_eq!(step.map(|s| s.decode()).transpose()?.and_then(|v| v.as_u64()), Some(7));
///
/// // The last message, without decoding the ones before it.
/// let last = doc
///     .path(&["channel_values", "messages"])?
///     .and_then(|messages| messages.last().transpose())
///     .transpose()?
///     .map(|m| m.decode())
///     .transpose()?;
/// let message = last.as_ref().and_then(|m| m.as_object()).map(|o| o.name);
/// assert_eq!(message, Some("AI"));
/// # Ok::<(), langgraph_codec::msgpack::DecodeError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct LazyValue<'a> {
    /// Positioned at the item, with the depth counts of the levels around it.
    r: Reader<'a>,
}

/// One entry of a map, as [`LazyValue::entry_spans`] gives it. (The bytes are read by
/// the Postgres saver's split of a SQLite row, a feature away.)
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) struct EntrySpan<'a> {
    pub(crate) key: LazyValue<'a>,
    pub(crate) key_bytes: &'a [u8],
    pub(crate) value: LazyValue<'a>,
    pub(crate) value_bytes: &'a [u8],
}

/// Borrowed and lazy reads with options other than the defaults.
impl DecodeOptions {
    /// [`ValueRef::decode`] under these options, borrowing from `input`.
    ///
    /// # Errors
    ///
    /// As [`ValueRef::decode`], under these limits.
    pub fn decode_ref<'a>(&self, input: &'a [u8]) -> Result<ValueRef<'a>, DecodeError> {
        let mut r = Reader::new(input, *self);
        let value = read_value(&mut r)?;
        r.finish()?;
        Ok(value)
    }

    /// [`LazyValue::new`] read with these options: the top-level item of `input`.
    pub fn lazy<'a>(&self, input: &'a [u8]) -> LazyValue<'a> {
        LazyValue {
            r: Reader::new(input, *self),
        }
    }
}

impl<'a> LazyValue<'a> {
    /// The top-level item of `input`, with the default options. Other options:
    /// [`DecodeOptions::lazy`].
    pub fn new(input: &'a [u8]) -> Self {
        DecodeOptions::default().lazy(input)
    }

    /// The byte offset of this item in the input.
    pub fn offset(&self) -> usize {
        self.r.pos
    }

    /// For a map: the value of the first entry whose key is the string `key`; `None`
    /// if there is no such entry or this is not a map.
    ///
    /// # Errors
    ///
    /// A [`DecodeError`] if the bytes read on the way (this item's header, the entries
    /// before the one found) are malformed or nest too deep.
    pub fn get(&self, key: &str) -> Result<Option<LazyValue<'a>>, DecodeError> {
        let Some((mut r, n)) = self.open_map()? else {
            return Ok(None);
        };
        for _ in 0..n {
            let key_at = r.pos;
            let head = r.head()?;
            if let Head::Str(k) = head {
                if k == key {
                    return Ok(Some(LazyValue { r }));
                }
            } else {
                skip_from(&mut r, head, key_at)?;
            }
            skip(&mut r)?;
        }
        Ok(None)
    }

    /// For a map: a reader at its first entry (inside it, for the depth limits) and its
    /// number of entries; `None` if this is not a map.
    fn open_map(&self) -> Result<Option<(Reader<'a>, usize)>, DecodeError> {
        let mut r = self.r;
        let at = r.pos;
        let Head::Map(n) = r.head()? else {
            return Ok(None);
        };
        if n > 0 {
            r.open(at)?;
        }
        Ok(Some((r, n)))
    }

    /// For a map: its entries in wire order (duplicate keys kept), each key and value
    /// lazy; `None` if this is not a map.
    ///
    /// ```
    /// use langgraph_codec::msgpack::LazyValue;
    ///
    /// // {"a": 1, "b": [true]}
    /// let doc = [0x82, 0xa1, b'a', 0x01, 0xa1, b'b', 0x91, 0xc3];
    /// let entries = LazyValue::new(&doc).entries()?.unwrap_or_default();
    /// let keys: Vec<&[u8]> = entries.iter().map(|(k, _)| k.bytes()).collect::<Result<_, _>>()?;
    /// assert_eq!(keys, [&[0xa1, b'a'][..], &[0xa1, b'b'][..]]);
    /// assert_eq!(entries[1].1.bytes()?, &[0x91, 0xc3]);
    /// # Ok::<(), langgraph_codec::msgpack::DecodeError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A [`DecodeError`] if the bytes of the map's keys (and of every value but the
    /// last) are malformed or nest too deep: each is walked to find the next.
    pub fn entries(&self) -> Result<Option<Vec<(LazyValue<'a>, LazyValue<'a>)>>, DecodeError> {
        Ok(self
            .entry_spans()?
            .map(|(entries, _)| entries.into_iter().map(|e| (e.key, e.value)).collect()))
    }

    /// For a map: its entries in wire order, each key and value lazy and with its
    /// bytes, and the offset just past the map; `None` if this is not a map. One walk,
    /// where [`entries`](Self::entries) and then [`bytes`](Self::bytes) of each walk
    /// every entry twice.
    ///
    /// # Errors
    ///
    /// A [`DecodeError`] if the bytes of any key or value are malformed or nest too
    /// deep.
    pub(crate) fn entry_spans(&self) -> Result<Option<(Vec<EntrySpan<'a>>, usize)>, DecodeError> {
        let Some((mut r, n)) = self.open_map()? else {
            return Ok(None);
        };
        // (Nothing reserved from the header's count: a short input ends the loop with
        // an error at its end.)
        let mut out = Vec::new();
        for _ in 0..n {
            let key = LazyValue { r };
            skip(&mut r)?;
            let key_bytes = r.slice(key.r.pos, r.pos);
            let value = LazyValue { r };
            skip(&mut r)?;
            let value_bytes = r.slice(value.r.pos, r.pos);
            out.push(EntrySpan {
                key,
                key_bytes,
                value,
                value_bytes,
            });
        }
        Ok(Some((out, r.pos)))
    }

    /// For an array: item `index`; `None` if there is no such item or this is not an
    /// array.
    ///
    /// # Errors
    ///
    /// As [`LazyValue::get`]: the items before the one found are checked.
    pub fn index(&self, index: usize) -> Result<Option<LazyValue<'a>>, DecodeError> {
        let mut r = self.r;
        let at = r.pos;
        let Head::Array(n) = r.head()? else {
            return Ok(None);
        };
        if index >= n {
            return Ok(None);
        }
        r.open(at)?;
        for _ in 0..index {
            skip(&mut r)?;
        }
        Ok(Some(LazyValue { r }))
    }

    /// For an array: its last item; `None` if it is empty or this is not an array.
    ///
    /// # Errors
    ///
    /// As [`LazyValue::index`].
    pub fn last(&self) -> Result<Option<LazyValue<'a>>, DecodeError> {
        match self.len()? {
            Some(n) if n > 0 => self.index(n - 1),
            _ => Ok(None),
        }
    }

    /// The number of items of an array or entries of a map; `None` for other items.
    ///
    /// # Errors
    ///
    /// A [`DecodeError`] if the item's header is malformed.
    pub fn len(&self) -> Result<Option<usize>, DecodeError> {
        let mut r = self.r;
        Ok(match r.head()? {
            Head::Array(n) | Head::Map(n) => Some(n),
            _ => None,
        })
    }

    /// Follows a path of map keys ([`LazyValue::get`] for each).
    ///
    /// # Errors
    ///
    /// As [`LazyValue::get`], for every step.
    pub fn path(&self, keys: &[&str]) -> Result<Option<LazyValue<'a>>, DecodeError> {
        let mut item = *self;
        for key in keys {
            match item.get(key)? {
                Some(next) => item = next,
                None => return Ok(None),
            }
        }
        Ok(Some(item))
    }

    /// Decodes this item (and only it), borrowing from the input.
    ///
    /// # Errors
    ///
    /// A [`DecodeError`] as [`ValueRef::decode`] gives for the same bytes, with offsets
    /// into the whole input and the depth limits counted from the document's top.
    pub fn decode(&self) -> Result<ValueRef<'a>, DecodeError> {
        let mut r = self.r;
        read_value(&mut r)
    }

    /// The bytes of this item (checked as [`LazyValue::decode`] checks them).
    ///
    /// # Errors
    ///
    /// As [`LazyValue::decode`].
    pub fn bytes(&self) -> Result<&'a [u8], DecodeError> {
        let mut r = self.r;
        let start = r.pos;
        skip(&mut r)?;
        Ok(r.slice(start, r.pos))
    }
}
