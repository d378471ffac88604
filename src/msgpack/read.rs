//! The one low-level msgpack reader under every decoder of this crate: the owned
//! [`Value`](crate::Value) decoder, the borrowed [`ValueRef`](super::ValueRef) decoder
//! and its skipping lookups, and the typed serde deserializer.
//!
//! It owns the rules, so that the same bytes give the same error kind at the same
//! offset through every reader:
//! - markers and their lengths; a fixed-width read past the end is
//!   [`Truncated`](Kind::Truncated) at the first missing byte, a declared length (of a
//!   string, bin, array, map or ext payload) beyond the bytes left is
//!   [`LengthExceedsInput`](Kind::LengthExceedsInput) at the item's marker, checked before
//!   anything is allocated;
//! - canonical forms ([`DecodeOptions::allow_non_canonical`]);
//! - nesting, per document (the top level or one extension payload, as Python reads)
//!   and in total, with the stack guard that lets any depth run on any thread;
//! - extension payload scopes: reads inside a payload stop at its end.

use super::error::{DecodeError, DecodeErrorKind as Kind};
use super::marker as M;

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

/// How to decode, for every reader of this crate. The options value makes the call:
/// [`decode`](Self::decode), [`decode_bytes`](Self::decode_bytes),
/// [`decode_ref`](Self::decode_ref) (a [`ValueRef`](super::ValueRef)),
/// [`lazy`](Self::lazy) (a [`LazyValue`](super::LazyValue)) and, in the typed layer,
/// [`from_slice`](Self::from_slice) and [`loads`](Self::loads); the plain functions
/// ([`msgpack::decode`](super::decode), [`typed::from_slice`](crate::typed::from_slice),
/// …) use the defaults.
///
/// `Default` is what Python reads: depth 1,024 per document (the top level or one
/// extension payload), 131,072 in all, canonical forms only.
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

    /// Whether non-canonical forms are accepted at the top level.
    pub fn non_canonical_allowed(&self) -> bool {
        self.allow_non_canonical
    }
}

/// The error inside the recursive decoders (owned and borrowed), boxed: a
/// `Result<(), DecodeError>` (32 bytes) is returned through memory, written by the
/// callee in pieces and copied by the caller with 16-byte loads that stall on store
/// forwarding, at every container level, where [`Walk::nested`] hands its closure's
/// result on (`perf annotate`: 10% of the owned `read_into`'s samples on
/// `checkpoint_plain`, one per record). `Result<(), Box<_>>` is one register; the box
/// is made only on the (cold) error path; the decoders' entry points unbox it.
pub(crate) type Fail = Box<DecodeError>;

/// One item's header, read and checked: scalars with their value, strings and bins
/// with their (checked, borrowed) bytes, containers with their (checked) length, an
/// extension with its code and payload length, the reader left at the payload.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Head<'a> {
    Nil,
    Bool(bool),
    /// Any non-negative integer.
    U(u64),
    /// A negative integer.
    I(i64),
    F32(f32),
    F64(f64),
    Str(&'a str),
    Bin(&'a [u8]),
    Array(usize),
    Map(usize),
    Ext {
        code: i8,
        len: usize,
    },
}

impl Head<'_> {
    /// `true` unless this is an array, map or extension header (whose contents follow).
    #[inline(always)]
    pub(crate) fn is_scalar(&self) -> bool {
        !matches!(self, Head::Array(_) | Head::Map(_) | Head::Ext { .. })
    }
}

/// Container levels between two checks of the remaining call stack. Each level of the
/// `Value` decoder costs two small frames, a typed level a few larger ones; this many
/// levels stay far inside [`crate::stack`]'s red zone while the check is paid rarely.
const STACK_CHECK_EVERY: usize = 8;

/// The reader state: where it is, where the current document ends, how deep it is.
/// `Copy`, so a decoder can take it over for a part of the input and hand it back.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reader<'a> {
    input: &'a [u8],
    pub(crate) pos: usize,
    /// Reads may not go past this: the end of the input or of the current ext payload.
    limit: usize,
    /// Open arrays and maps in the current document (the top level or one extension
    /// payload).
    depth: usize,
    /// Open arrays, maps and extension payloads, in all documents.
    total: usize,
    /// How many of those are extension payloads.
    ext_depth: usize,
    options: DecodeOptions,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(input: &'a [u8], options: DecodeOptions) -> Self {
        Reader {
            input,
            pos: 0,
            limit: input.len(),
            depth: 0,
            total: 0,
            ext_depth: 0,
            options,
        }
    }

    /// Fails unless the whole input was read.
    pub(crate) fn finish(&self) -> Result<(), DecodeError> {
        if self.pos == self.input.len() {
            Ok(())
        } else {
            Err(DecodeError::new(
                Kind::TrailingBytes {
                    count: self.input.len().saturating_sub(self.pos),
                },
                self.pos,
            ))
        }
    }

    /// The next byte, if the current document has one; nothing is consumed.
    #[inline]
    pub(crate) fn peek(&self) -> Option<u8> {
        if self.pos < self.limit {
            self.input.get(self.pos).copied()
        } else {
            None
        }
    }

    /// The bytes `start..end` of the input (empty if out of range, which the callers'
    /// own checks rule out).
    #[inline]
    pub(crate) fn slice(&self, start: usize, end: usize) -> &'a [u8] {
        self.input.get(start..end).unwrap_or_default()
    }

    #[inline]
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
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
    pub(crate) fn u8(&mut self) -> Result<u8, DecodeError> {
        if let Some(b) = self.peek() {
            self.pos += 1;
            return Ok(b);
        }
        Err(DecodeError::new(Kind::Truncated, self.pos))
    }
    #[inline]
    fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.take_array()?))
    }
    #[inline]
    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.take_array()?))
    }
    #[inline]
    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(self.take_array()?))
    }

    /// Fails unless non-canonical forms are allowed here (never inside an ext payload).
    #[inline]
    fn canonical(&self, ok: bool, what: &'static str, at: usize) -> Result<(), DecodeError> {
        if ok || (self.options.allow_non_canonical && self.ext_depth == 0) {
            Ok(())
        } else {
            Err(DecodeError::new(Kind::NonCanonical { what }, at))
        }
    }

    /// Checks a declared length against the bytes left (each element needs at least
    /// `min_size` bytes) before anything is allocated; the error points at `at`, the
    /// item's marker.
    #[inline]
    pub(crate) fn check_len(
        &self,
        declared: usize,
        min_size: usize,
        at: usize,
    ) -> Result<(), DecodeError> {
        let remaining = self.limit.saturating_sub(self.pos);
        if declared.saturating_mul(min_size) > remaining {
            Err(DecodeError::new(
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

    #[inline(always)]
    fn str<S: StrCheck<'a>>(
        &mut self,
        n: usize,
        at: usize,
        seen: &mut S,
    ) -> Result<Head<'a>, DecodeError> {
        self.check_len(n, 1, at)?;
        let start = self.pos;
        let bytes = self.take(n)?;
        match seen.check(bytes) {
            Ok(s) => Ok(Head::Str(s)),
            Err(e) => Err(DecodeError::new(Kind::InvalidUtf8, start + e.valid_up_to())),
        }
    }

    #[inline]
    fn bin(&mut self, n: usize, at: usize) -> Result<Head<'a>, DecodeError> {
        self.check_len(n, 1, at)?;
        Ok(Head::Bin(self.take(n)?))
    }

    #[inline]
    fn ext(&mut self, n: usize, at: usize) -> Result<Head<'a>, DecodeError> {
        let code = i8::from_be_bytes(self.take_array()?);
        self.check_len(n, 1, at)?;
        Ok(Head::Ext { code, len: n })
    }

    #[inline]
    fn array(&self, n: usize, at: usize) -> Result<Head<'a>, DecodeError> {
        self.check_len(n, 1, at)?;
        Ok(Head::Array(n))
    }

    #[inline]
    fn map(&self, n: usize, at: usize) -> Result<Head<'a>, DecodeError> {
        self.check_len(n, 2, at)?;
        Ok(Head::Map(n))
    }

    /// Reads the header of the item at `self.pos` (its marker is at `at == self.pos`):
    /// the whole item for scalars, strings and bins; the header only for containers and
    /// extensions. Every length is checked against the bytes left, every form against
    /// the canonical rules.
    #[inline(always)]
    pub(crate) fn head(&mut self) -> Result<Head<'a>, DecodeError> {
        self.head_with(&mut Utf8)
    }

    /// As [`Self::head`], with strings checked through `seen` (see [`SeenStrs`]):
    /// the same heads and the same errors at the same offsets.
    #[inline(always)]
    pub(crate) fn head_seen(&mut self, seen: &mut SeenStrs<'a>) -> Result<Head<'a>, DecodeError> {
        self.head_with(seen)
    }

    #[inline(always)]
    fn head_with<S: StrCheck<'a>>(&mut self, seen: &mut S) -> Result<Head<'a>, DecodeError> {
        let at = self.pos;
        let marker = self.u8()?;
        Ok(match marker {
            0x00..=M::POS_FIXINT_MAX => Head::U(u64::from(marker)),
            M::FIXMAP..=M::FIXMAP_MAX => self.map(usize::from(marker & 0x0f), at)?,
            M::FIXARRAY..=M::FIXARRAY_MAX => self.array(usize::from(marker & 0x0f), at)?,
            M::FIXSTR..=M::FIXSTR_MAX => self.str(usize::from(marker & 0x1f), at, seen)?,
            M::NIL => Head::Nil,
            M::RESERVED => return Err(DecodeError::new(Kind::ReservedByte(M::RESERVED), at)),
            M::FALSE => Head::Bool(false),
            M::TRUE => Head::Bool(true),
            M::BIN8 => {
                let n = usize::from(self.u8()?);
                self.bin(n, at)?
            }
            M::BIN16 => {
                let n = usize::from(self.u16()?);
                self.canonical(n > 0xff, "bin16 holding a shorter bin", at)?;
                self.bin(n, at)?
            }
            M::BIN32 => {
                let n = self.u32()? as usize;
                self.canonical(n > 0xffff, "bin32 holding a shorter bin", at)?;
                self.bin(n, at)?
            }
            M::EXT8 => {
                let n = usize::from(self.u8()?);
                self.canonical(
                    !matches!(n, 1 | 2 | 4 | 8 | 16),
                    "ext8 holding a fixext",
                    at,
                )?;
                self.ext(n, at)?
            }
            M::EXT16 => {
                let n = usize::from(self.u16()?);
                self.canonical(n > 0xff, "ext16 holding a shorter payload", at)?;
                self.ext(n, at)?
            }
            M::EXT32 => {
                let n = self.u32()? as usize;
                self.canonical(n > 0xffff, "ext32 holding a shorter payload", at)?;
                self.ext(n, at)?
            }
            M::F32 => Head::F32(f32::from_bits(self.u32()?)),
            M::F64 => Head::F64(f64::from_bits(self.u64()?)),
            M::U8 => {
                let n = self.u8()?;
                self.canonical(n >= 0x80, "uint8 holding a positive fixint", at)?;
                Head::U(u64::from(n))
            }
            M::U16 => {
                let n = self.u16()?;
                self.canonical(n > 0xff, "uint16 holding a smaller integer", at)?;
                Head::U(u64::from(n))
            }
            M::U32 => {
                let n = self.u32()?;
                self.canonical(n > 0xffff, "uint32 holding a smaller integer", at)?;
                Head::U(u64::from(n))
            }
            M::U64 => {
                let n = self.u64()?;
                self.canonical(n > 0xffff_ffff, "uint64 holding a smaller integer", at)?;
                Head::U(n)
            }
            M::I8 => {
                let n = i8::from_be_bytes(self.take_array()?);
                self.canonical(n < -32, "int8 holding a fixint", at)?;
                int(i64::from(n))
            }
            M::I16 => {
                let n = i16::from_be_bytes(self.take_array()?);
                self.canonical(n < -0x80, "int16 holding a smaller integer", at)?;
                int(i64::from(n))
            }
            M::I32 => {
                let n = i32::from_be_bytes(self.take_array()?);
                self.canonical(n < -0x8000, "int32 holding a smaller integer", at)?;
                int(i64::from(n))
            }
            M::I64 => {
                let n = i64::from_be_bytes(self.take_array()?);
                self.canonical(n < -0x8000_0000, "int64 holding a smaller integer", at)?;
                int(n)
            }
            M::FIXEXT1 => self.ext(1, at)?,
            M::FIXEXT2 => self.ext(2, at)?,
            M::FIXEXT4 => self.ext(4, at)?,
            M::FIXEXT8 => self.ext(8, at)?,
            M::FIXEXT16 => self.ext(16, at)?,
            M::STR8 => {
                let n = usize::from(self.u8()?);
                self.canonical(n >= 32, "str8 holding a fixstr", at)?;
                self.str(n, at, seen)?
            }
            M::STR16 => {
                let n = usize::from(self.u16()?);
                self.canonical(n > 0xff, "str16 holding a shorter string", at)?;
                self.str(n, at, seen)?
            }
            M::STR32 => {
                let n = self.u32()? as usize;
                self.canonical(n > 0xffff, "str32 holding a shorter string", at)?;
                self.str(n, at, seen)?
            }
            M::ARRAY16 => {
                let n = usize::from(self.u16()?);
                self.canonical(n >= 16, "array16 holding a fixarray", at)?;
                self.array(n, at)?
            }
            M::ARRAY32 => {
                let n = self.u32()? as usize;
                self.canonical(n > 0xffff, "array32 holding a shorter array", at)?;
                self.array(n, at)?
            }
            M::MAP16 => {
                let n = usize::from(self.u16()?);
                self.canonical(n >= 16, "map16 holding a fixmap", at)?;
                self.map(n, at)?
            }
            M::MAP32 => {
                let n = self.u32()? as usize;
                self.canonical(n > 0xffff, "map32 holding a shorter map", at)?;
                self.map(n, at)?
            }
            M::NEG_FIXINT..=0xff => Head::I(i64::from(i8::from_be_bytes([marker]))),
        })
    }

    /// Opens one array or map level (its opener at `at`) without running anything
    /// inside it, for lookups that descend without recursing. Undo with
    /// [`Self::close`].
    pub(crate) fn open(&mut self, at: usize) -> Result<(), DecodeError> {
        if self.depth >= self.options.max_depth {
            return Err(DecodeError::new(
                Kind::DepthLimit {
                    limit: self.options.max_depth,
                },
                at,
            ));
        }
        self.open_total(at)?;
        self.depth += 1;
        Ok(())
    }

    /// Counts one level against the total limit only (an ext payload's envelope).
    fn open_total(&mut self, at: usize) -> Result<(), DecodeError> {
        if self.total >= self.options.max_total_depth {
            return Err(DecodeError::new(
                Kind::DepthLimit {
                    limit: self.options.max_total_depth,
                },
                at,
            ));
        }
        self.total += 1;
        Ok(())
    }

    /// Closes a level opened by [`Self::open`].
    pub(crate) fn close(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        self.total = self.total.saturating_sub(1);
    }

    /// Enters the payload of an ext whose header was just read (`len` bytes at
    /// `self.pos`, the ext's marker at `at`): a document of its own, whose levels count
    /// from zero against `max_depth` (and, with the levels around it, against
    /// `max_total_depth`), in which reads stop at the payload's end and non-canonical
    /// forms are refused. Returns what [`Self::leave_ext`] restores.
    pub(crate) fn enter_ext(&mut self, at: usize, len: usize) -> Result<ExtScope, DecodeError> {
        self.open_total(at)?;
        let scope = ExtScope {
            limit: self.limit,
            depth: self.depth,
        };
        self.limit = self.pos.saturating_add(len).min(self.limit);
        self.depth = 0;
        self.ext_depth += 1;
        Ok(scope)
    }

    /// Leaves an ext payload entered by [`Self::enter_ext`]; the position is left where
    /// the payload's reader stopped.
    pub(crate) fn leave_ext(&mut self, scope: ExtScope) {
        self.limit = scope.limit;
        self.depth = scope.depth;
        self.ext_depth = self.ext_depth.saturating_sub(1);
        self.total = self.total.saturating_sub(1);
    }
}

/// How a string's bytes become a `&str`: the UTF-8 check, or a cache of strings
/// already checked in the same input.
pub(crate) trait StrCheck<'a> {
    fn check(&mut self, bytes: &'a [u8]) -> Result<&'a str, std::str::Utf8Error>;
}

/// Every string checked with [`std::str::from_utf8`].
struct Utf8;

impl<'a> StrCheck<'a> for Utf8 {
    #[inline(always)]
    fn check(&mut self, bytes: &'a [u8]) -> Result<&'a str, std::str::Utf8Error> {
        std::str::from_utf8(bytes)
    }
}

/// Slots of [`SeenStrs`].
const SEEN_SLOTS: usize = 64;

/// Strings longer than this are always checked (a miss costs a compare on top of the
/// check, and long strings rarely repeat; the ones that do are cheap to check).
const SEEN_MAX_LEN: usize = 32;

/// The short strings of one input already checked as UTF-8, as slices of the input,
/// in a small direct-mapped table: a string whose bytes equal a slot's is that slot's
/// `&str`, with no second UTF-8 check (equal bytes are equally valid). Map keys and
/// class names repeat in every message of a checkpoint (`type`, `content`, `id`,
/// `langchain_core.messages.ai`, …: 284 of the 361 strings of the benches' 20-message
/// blob), and std's check of a short string runs byte by byte. A miss costs one
/// compare of at most [`SEEN_MAX_LEN`] bytes; invalid UTF-8 is never stored, so errors
/// and their offsets are those of the plain check.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SeenStrs<'a> {
    slots: [&'a str; SEEN_SLOTS],
}

impl<'a> SeenStrs<'a> {
    pub(crate) const fn new() -> Self {
        SeenStrs {
            slots: [""; SEEN_SLOTS],
        }
    }

    /// The slot of `bytes` (1 to [`SEEN_MAX_LEN`] bytes): its length, first, second
    /// and last byte mixed.
    #[inline(always)]
    fn slot(bytes: &[u8]) -> usize {
        let first = usize::from(bytes.first().copied().unwrap_or_default());
        let second = usize::from(bytes.get(1).copied().unwrap_or_default());
        let last = usize::from(bytes.last().copied().unwrap_or_default());
        (bytes.len().wrapping_mul(0x9e) ^ first ^ second.wrapping_mul(5) ^ last.wrapping_mul(3))
            % SEEN_SLOTS
    }
}

impl<'a> StrCheck<'a> for SeenStrs<'a> {
    #[inline(always)]
    fn check(&mut self, bytes: &'a [u8]) -> Result<&'a str, std::str::Utf8Error> {
        if bytes.is_empty() || bytes.len() > SEEN_MAX_LEN {
            return std::str::from_utf8(bytes);
        }
        let i = Self::slot(bytes);
        match self.slots.get_mut(i) {
            Some(slot) if slot.as_bytes() == bytes => Ok(*slot),
            Some(slot) => {
                let s = std::str::from_utf8(bytes)?;
                *slot = s;
                Ok(s)
            }
            None => std::str::from_utf8(bytes),
        }
    }
}

/// What [`Reader::enter_ext`] changed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ExtScope {
    limit: usize,
    depth: usize,
}

#[inline(always)]
fn int(n: i64) -> Head<'static> {
    match u64::try_from(n) {
        Ok(u) => Head::U(u),
        Err(_) => Head::I(n),
    }
}

/// A walk over the input that recurses into containers: gives it one level at a time,
/// with the reader's depth accounting and stack guard.
pub(crate) trait Walk<'a>: Sized {
    fn reader(&mut self) -> &mut Reader<'a>;

    /// Opens one nesting level (the opener is at `at`), unless that would nest deeper
    /// than a limit, and runs `read` inside it, on a fresh stack segment every
    /// [`STACK_CHECK_EVERY`] levels (level 1 included, so a small-stack thread moves to
    /// a heap segment at once).
    #[inline]
    fn nested<T, E: From<DecodeError>>(
        &mut self,
        at: usize,
        read: impl FnOnce(&mut Self) -> Result<T, E>,
    ) -> Result<T, E> {
        self.reader().open(at)?;
        let total = self.reader().total;
        let result = guarded(self, total, read);
        self.reader().close();
        result
    }

    /// Runs `read` on the payload of the ext whose header was just read (see
    /// [`Reader::enter_ext`]); the position is left where `read` stopped.
    #[inline]
    fn ext_document<T, E: From<DecodeError>>(
        &mut self,
        at: usize,
        len: usize,
        read: impl FnOnce(&mut Self) -> Result<T, E>,
    ) -> Result<T, E> {
        let scope = self.reader().enter_ext(at, len)?;
        let total = self.reader().total;
        let result = guarded(self, total, read);
        self.reader().leave_ext(scope);
        result
    }
}

#[inline(always)]
fn guarded<W, T>(walk: &mut W, total: usize, read: impl FnOnce(&mut W) -> T) -> T {
    if total % STACK_CHECK_EVERY == 1 {
        crate::stack::guard(|| read(walk))
    } else {
        read(walk)
    }
}

impl<'a> Walk<'a> for Reader<'a> {
    fn reader(&mut self) -> &mut Reader<'a> {
        self
    }
}
