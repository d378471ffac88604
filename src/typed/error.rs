//! The typed layer's error type.

use std::fmt;

use crate::msgpack::{DecodeError, EncodeError};

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
}

/// A typed value could not be written or read: what, and where (a byte offset into the
/// msgpack input when reading).
///
/// Boxed: every serde call of the typed serializer and deserializer returns a
/// `Result<_, TypedError>`, and with the error one pointer wide those results travel in
/// registers instead of through memory (the unboxed error was about 100 bytes).
#[derive(Clone, PartialEq, Eq)]
pub struct TypedError(Box<Inner>);

#[derive(Clone, PartialEq, Eq)]
struct Inner {
    kind: TypedErrorKind,
    message: String,
    offset: Option<usize>,
}

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
        }))
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
            TypedErrorKind::Decode(_) | TypedErrorKind::DepthLimit => return self,
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
        self
    }

    /// `true` when msgpack cannot hold the value, so a fallback codec may be tried.
    pub fn is_unrepresentable(&self) -> bool {
        matches!(self.0.kind, TypedErrorKind::Unrepresentable)
    }

    /// A stable snake_case name of the kind (for malformed msgpack, the same names as
    /// [`Error::kind_name`](crate::Error::kind_name) gives decode errors).
    pub fn kind_name(&self) -> &'static str {
        match &self.0.kind {
            TypedErrorKind::Message => "typed",
            TypedErrorKind::ClassMismatch => "class_mismatch",
            TypedErrorKind::Unrepresentable => "unrepresentable",
            TypedErrorKind::Decode(e) => crate::error::decode_kind_name(e.kind()),
            TypedErrorKind::DepthLimit => "depth_limit",
        }
    }
}

/// The prefix of every class-mismatch message; used to give such errors their own kind
/// even when they travel through serde's string-only `custom` errors.
pub(crate) const CLASS_MISMATCH_PREFIX: &str = "expected Python ";

impl fmt::Display for TypedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.0.kind, self.0.offset) {
            (TypedErrorKind::Decode(e), _) => write!(f, "{e}"),
            (_, Some(at)) => write!(f, "{} (at byte {at})", self.0.message),
            (_, None) => f.write_str(&self.0.message),
        }
    }
}

impl std::error::Error for TypedError {}

impl From<DecodeError> for TypedError {
    fn from(e: DecodeError) -> Self {
        let offset = e.offset();
        TypedError(Box::new(Inner {
            message: e.to_string(),
            kind: TypedErrorKind::Decode(e),
            offset: Some(offset),
        }))
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

/// The start of every depth-limit message ([`EncodeError`]'s and the serializer's).
pub(crate) const DEPTH_PREFIX: &str = "value nests deeper than ";

/// The prefix of messages saying msgpack cannot hold a value; such errors keep the
/// [`TypedErrorKind::Unrepresentable`] kind through serde's `custom` errors.
pub(crate) const UNREPRESENTABLE_PREFIX: &str = "msgpack cannot hold this value: ";

fn classify(message: String) -> TypedError {
    if message.starts_with(DEPTH_PREFIX) || message.starts_with("msgpack nesting deeper than") {
        TypedError::new(TypedErrorKind::DepthLimit, message)
    } else if message.starts_with(UNREPRESENTABLE_PREFIX) {
        TypedError::unrepresentable(message)
    } else if message.starts_with(CLASS_MISMATCH_PREFIX) {
        TypedError::new(TypedErrorKind::ClassMismatch, message)
    } else {
        TypedError::msg(message)
    }
}

impl serde::ser::Error for TypedError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        classify(msg.to_string())
    }
}

impl serde::de::Error for TypedError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        classify(msg.to_string())
    }
}
