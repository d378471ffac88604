//! The typed layer's error type.

use std::fmt;
use std::sync::Arc;

use crate::json::JsonError;
use crate::kind::ErrorKind;
use crate::msgpack::{DecodeError, EncodeError};
use crate::protocol::TagError;

/// What went wrong in a typed (serde) write or read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TypedErrorKind {
    /// A message from a `Serialize` / `Deserialize` implementation, or a shape mismatch
    /// (a string where a map was expected, a missing field, …).
    Message,
    /// A Python object of another class than the Rust type reads.
    ClassMismatch,
    /// msgpack cannot hold the value (an integer outside `i64::MIN..=u64::MAX`, nesting
    /// deeper than the limit, a length beyond 2^32-1). A fallback codec may hold it.
    Unrepresentable,
    /// The msgpack bytes themselves were malformed.
    Decode(DecodeError),
    /// The value nests deeper than msgpack readers accept (1,024 levels per document,
    /// 131,072 in all); no fallback
    /// is tried (Python could not read it back either).
    DepthLimit,
    /// A `(type, bytes)` pair's type tag that [`loads`](super::loads) cannot read: a
    /// `pickle` row ([`TagError::Pickle`]) or a tag it does not know
    /// ([`TagError::UnknownType`]).
    Tag(TagError),
    /// A `json` row's text was not JSON.
    Json(JsonError),
}

/// A typed value could not be written or read: what, and where (a byte offset into the
/// msgpack input when reading).
///
/// Boxed: every serde call of the typed serializer and deserializer returns a
/// `Result<_, TypedError>`, and with the error one pointer wide those results travel in
/// registers instead of through memory (the unboxed error was about 100 bytes).
#[derive(Clone, PartialEq, Eq)]
pub struct TypedError(Box<Inner>);

#[derive(Clone)]
struct Inner {
    kind: TypedErrorKind,
    message: String,
    offset: Option<usize>,
    /// The error of another codec this one reports (a fallback codec's), for
    /// [`source`](std::error::Error::source).
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

/// Equal when kind, message and offset are; the source is not compared.
impl PartialEq for Inner {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.message == other.message && self.offset == other.offset
    }
}

impl Eq for Inner {}

impl fmt::Debug for TypedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // As the derived `Debug` of the unboxed struct printed it.
        f.debug_struct("TypedError")
            .field("kind", &self.0.kind)
            .field("message", &self.0.message)
            .field("offset", &self.0.offset)
            .finish()
    }
}

impl TypedError {
    #[cold]
    pub(crate) fn new(kind: TypedErrorKind, message: impl Into<String>) -> Self {
        TypedError(Box::new(Inner {
            kind,
            message: message.into(),
            offset: None,
            source: None,
        }))
    }

    /// The same error, reporting `source` as its cause.
    pub(crate) fn with_source(
        mut self,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        self.0.source = Some(Arc::new(source));
        self
    }

    pub(crate) fn msg(message: impl Into<String>) -> Self {
        Self::new(TypedErrorKind::Message, message)
    }

    pub(crate) fn unrepresentable(message: impl Into<String>) -> Self {
        Self::new(TypedErrorKind::Unrepresentable, message)
    }

    pub(crate) fn at(mut self, offset: usize) -> Self {
        if self.0.offset.is_none() {
            self.0.offset = Some(offset);
        }
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> &TypedErrorKind {
        &self.0.kind
    }

    /// The human-readable description.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The byte offset in the msgpack input, when reading.
    pub fn offset(&self) -> Option<usize> {
        self.0.offset
    }

    /// The same error without details that could quote the value read: the message of
    /// a shape or class mismatch becomes a fixed sentence; the kind, the byte offset
    /// and malformed-msgpack and depth messages (offsets and limits only) are kept.
    /// Used for rows read through a [confidential](crate::Serializer::confidential)
    /// (decrypting) serializer.
    #[must_use]
    pub fn redacted(mut self) -> Self {
        let message = match self.0.kind {
            TypedErrorKind::Decode(_)
            | TypedErrorKind::DepthLimit
            | TypedErrorKind::Tag(_)
            | TypedErrorKind::Json(_) => return self,
            TypedErrorKind::ClassMismatch => {
                "the Python object is of another class than the Rust type reads \
                 (class withheld: the row was encrypted)"
            }
            TypedErrorKind::Message | TypedErrorKind::Unrepresentable => {
                "the value does not have the shape or range the Rust type reads \
                 (details withheld: the row was encrypted)"
            }
        };
        self.0.message = message.to_owned();
        // A source (a fallback codec's error) may quote the value too.
        self.0.source = None;
        self
    }

    fn crate_kind(&self) -> ErrorKind {
        match &self.0.kind {
            TypedErrorKind::Message => ErrorKind::Typed,
            TypedErrorKind::ClassMismatch => ErrorKind::ClassMismatch,
            TypedErrorKind::Unrepresentable => ErrorKind::Unrepresentable,
            TypedErrorKind::Decode(d) => ErrorKind::from(d),
            TypedErrorKind::DepthLimit => ErrorKind::DepthLimit,
            TypedErrorKind::Tag(e) => e.kind(),
            TypedErrorKind::Json(e) => e.kind(),
        }
    }

    /// `true` when msgpack cannot hold the value, so a fallback codec may be tried.
    pub fn is_unrepresentable(&self) -> bool {
        matches!(self.0.kind, TypedErrorKind::Unrepresentable)
    }
}

/// The prefix of every class-mismatch message.
pub(crate) const CLASS_MISMATCH_PREFIX: &str = "expected Python ";

impl fmt::Display for TypedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.0.kind, self.0.offset) {
            (TypedErrorKind::Decode(e), _) => write!(f, "{e}"),
            (TypedErrorKind::Json(e), _) => write!(f, "{e}"),
            (TypedErrorKind::Tag(e), _) => write!(f, "{e}"),
            (_, Some(at)) => write!(f, "{} (at byte {at})", self.0.message),
            (_, None) => f.write_str(&self.0.message),
        }
    }
}

impl std::error::Error for TypedError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// The crate-wide kind, e.g. [`ErrorKind::ClassMismatch`]; a malformed-msgpack error
/// has its [`DecodeError`]'s kind.
impl From<&TypedError> for ErrorKind {
    fn from(e: &TypedError) -> Self {
        e.crate_kind()
    }
}

impl From<DecodeError> for TypedError {
    fn from(e: DecodeError) -> Self {
        let offset = e.offset();
        TypedError(Box::new(Inner {
            message: e.to_string(),
            kind: TypedErrorKind::Decode(e),
            offset: Some(offset),
            source: None,
        }))
    }
}

impl From<TagError> for TypedError {
    fn from(e: TagError) -> Self {
        let message = e.to_string();
        TypedError::new(TypedErrorKind::Tag(e), message)
    }
}

impl From<EncodeError> for TypedError {
    fn from(e: EncodeError) -> Self {
        match e {
            EncodeError::DepthLimit { .. } => {
                TypedError::new(TypedErrorKind::DepthLimit, e.to_string())
            }
            _ => TypedError::unrepresentable(e.to_string()),
        }
    }
}

/// The prefix of messages saying msgpack cannot hold a value.
pub(crate) const UNREPRESENTABLE_PREFIX: &str = "msgpack cannot hold this value: ";

thread_local! {
    /// The kind of the error being made by [`de_error`] / [`ser_error`], with its
    /// message, for [`TypedError`]'s `custom` to take.
    static MAKING: std::cell::RefCell<Option<(TypedErrorKind, String)>> =
        const { std::cell::RefCell::new(None) };
}

/// Makes a serde error of a generic error type `E` with its kind set here: when `E` is
/// [`TypedError`] (this crate's serializer or deserializer), its `custom` takes `kind`
/// along with the message; any other error type gets the message. serde's `custom`
/// only carries text, so the kind travels beside it, never guessed from the text.
fn made<E>(kind: TypedErrorKind, message: String, custom: impl FnOnce(&str) -> E) -> E {
    MAKING.with(|m| *m.borrow_mut() = Some((kind, message.clone())));
    let e = custom(&message);
    // Not taken (another error type): forget it.
    MAKING.with(|m| m.borrow_mut().take());
    e
}

/// [`made`] for deserializers.
pub(crate) fn de_error<E: serde::de::Error>(kind: TypedErrorKind, message: String) -> E {
    made(kind, message, |m| E::custom(m))
}

/// [`made`] for serializers.
pub(crate) fn ser_error<E: serde::ser::Error>(kind: TypedErrorKind, message: String) -> E {
    made(kind, message, |m| E::custom(m))
}

/// Hands a [`TypedError`] on through a generic deserializer's error type, kind kept.
pub(crate) fn relay<E: serde::de::Error>(e: TypedError) -> E {
    let message = e.to_string();
    de_error(e.0.kind, message)
}

/// Hands a msgpack [`DecodeError`] on through a generic deserializer's error type: a
/// depth error keeps [`TypedErrorKind::DepthLimit`], others
/// [`TypedErrorKind::Decode`].
pub(crate) fn relay_decode<E: serde::de::Error>(e: DecodeError) -> E {
    let message = e.to_string();
    let kind = match e.kind() {
        crate::msgpack::DecodeErrorKind::DepthLimit { .. } => TypedErrorKind::DepthLimit,
        _ => TypedErrorKind::Decode(e),
    };
    de_error(kind, message)
}

/// `TypedError`'s `custom`: the kind [`made`] set for this very message, else
/// [`TypedErrorKind::Message`] (a `Deserialize` implementation's own message).
fn from_custom(message: String) -> TypedError {
    let kind = MAKING
        .with(|m| {
            let mut m = m.borrow_mut();
            match m.as_ref() {
                Some((_, made)) if *made == message => m.take().map(|(kind, _)| kind),
                _ => None,
            }
        })
        .unwrap_or(TypedErrorKind::Message);
    TypedError::new(kind, message)
}

impl serde::ser::Error for TypedError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        from_custom(msg.to_string())
    }
}

impl serde::de::Error for TypedError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        from_custom(msg.to_string())
    }
}
