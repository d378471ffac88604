//! Writing and reading Python object envelopes (ext codes 0–7) from serde impls.
//!
//! Writing: [`write_object`] / [`write_ext`] hand the serializer a private newtype
//! marker wrapping the pair `(code, payload)`; this crate's serializer turns it into an
//! ext whose payload it writes in place. Reading: [`read_ext`] asks the deserializer
//! for the same marker; this crate's deserializer presents the next ext as
//! `(code, payload)`. Both also work after serde buffered the input (`flatten`,
//! untagged enums), where an ext arrives as its raw bytes under the raw marker.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeTuple, Serializer};

use super::de::{ByteVec, De};
use super::error::{de_error, relay, CLASS_MISMATCH_PREFIX};
use super::TypedErrorKind;
use super::{EXT_MARKER, RAW_MARKER};
use crate::value::ObjectKind;

struct ExtPair<'a, P: ?Sized> {
    code: i8,
    payload: &'a P,
}

impl<P: Serialize + ?Sized> Serialize for ExtPair<'_, P> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut t = s.serialize_tuple(2)?;
        t.serialize_element(&self.code)?;
        t.serialize_element(self.payload)?;
        t.end()
    }
}

/// Writes an ext with code `code` whose payload is the msgpack encoding of `payload`.
pub(crate) fn write_ext<S: Serializer, P: Serialize + ?Sized>(
    s: S,
    code: i8,
    payload: &P,
) -> Result<S::Ok, S::Error> {
    s.serialize_newtype_struct(EXT_MARKER, &ExtPair { code, payload })
}

struct ObjectTuple<'a, A: ?Sized> {
    module: &'a str,
    name: &'a str,
    arg: &'a A,
    method: Option<&'a str>,
}

impl<A: Serialize + ?Sized> Serialize for ObjectTuple<'_, A> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut t = s.serialize_tuple(if self.method.is_some() { 4 } else { 3 })?;
        t.serialize_element(self.module)?;
        t.serialize_element(self.name)?;
        t.serialize_element(self.arg)?;
        if let Some(m) = self.method {
            t.serialize_element(m)?;
        }
        t.end()
    }
}

/// Writes the envelope `ext(kind, (module, name, arg[, method]))`.
pub(crate) fn write_object<S: Serializer, A: Serialize + ?Sized>(
    s: S,
    kind: ObjectKind,
    module: &str,
    name: &str,
    arg: &A,
    method: Option<&str>,
) -> Result<S::Ok, S::Error> {
    write_ext(
        s,
        kind.code(),
        &ObjectTuple {
            module,
            name,
            arg,
            method,
        },
    )
}

/// Reads an ext payload of a given code.
pub(crate) trait ExtRead: Sized {
    type Out;
    /// What is expected, for messages, e.g. `"class uuid.UUID (ext 0)"`.
    fn expected(&self) -> String;
    /// Reads the payload of an ext with code `code`.
    fn read<'de, D: Deserializer<'de>>(self, code: i8, payload: D) -> Result<Self::Out, D::Error>;
}

/// Reads the next ext through `reader`.
pub(crate) fn read_ext<'de, D: Deserializer<'de>, R: ExtRead>(
    d: D,
    reader: R,
) -> Result<R::Out, D::Error> {
    d.deserialize_newtype_struct(EXT_MARKER, ExtVisitor { reader })
}

struct ExtVisitor<R> {
    reader: R,
}

/// Reads the payload with the reader it takes from `reader`; the reader stays behind if
/// the payload is missing, to say what was expected (built only then: it allocates).
struct PayloadSeed<'a, R> {
    code: i8,
    reader: &'a mut Option<R>,
}

impl<'de, R: ExtRead> DeserializeSeed<'de> for PayloadSeed<'_, R> {
    type Value = R::Out;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<R::Out, D::Error> {
        match self.reader.take() {
            Some(reader) => reader.read(self.code, d),
            None => Err(de::Error::custom("internal: ext payload read twice")),
        }
    }
}

impl<'de, R: ExtRead> Visitor<'de> for ExtVisitor<R> {
    type Value = R::Out;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a Python object: {}", self.reader.expected())
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<R::Out, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<R::Out, A::Error> {
        let code: i8 = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &"an ext (code, payload) pair"))?;
        let mut reader = Some(self.reader);
        let out = seq.next_element_seed(PayloadSeed {
            code,
            reader: &mut reader,
        })?;
        out.ok_or_else(|| {
            let expected = reader.map(|r| r.expected()).unwrap_or_default();
            de::Error::custom(format!("missing ext payload for {expected}"))
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<R::Out, A::Error> {
        // An ext buffered by serde: its raw bytes under the raw marker.
        let key: Option<String> = map.next_key()?;
        if key.as_deref() != Some(RAW_MARKER) {
            return Err(de::Error::custom(format!(
                "expected {}, found a map",
                self.reader.expected()
            )));
        }
        let raw: ByteVec<'_> = map.next_value()?;
        let mut sub = De::new(&raw.0, super::default_options());
        let out = sub
            .deserialize_newtype_struct(EXT_MARKER, self)
            .map_err(relay)?;
        sub.end().map_err(relay)?;
        Ok(out)
    }
}

/// Reads a Python object envelope `(module, name, arg[, method])`.
pub(crate) trait ObjectRead: Sized {
    type Out;
    /// The accepted classes, for messages, e.g. `"class uuid.UUID (ext 0)"`.
    fn expected(&self) -> String;
    /// Whether an envelope of this code and class is accepted.
    fn accepts(&self, code: i8, module: &str, name: &str) -> bool;
    /// Reads the argument (the third tuple element) from `seq`.
    fn read_arg<'de, A: SeqAccess<'de>>(
        self,
        code: i8,
        module: &str,
        name: &str,
        seq: &mut A,
    ) -> Result<Self::Out, A::Error>;
    /// Receives the fourth tuple element, if any, once the argument was read.
    fn finish(out: Self::Out, _method: Option<&str>) -> Self::Out {
        out
    }
}

/// A class mismatch, of kind [`TypedErrorKind::ClassMismatch`].
pub(crate) fn mismatch<E: de::Error>(expected: &str, code: i8, module: &str, name: &str) -> E {
    de_error(
        TypedErrorKind::ClassMismatch,
        format!("{CLASS_MISMATCH_PREFIX}{expected}, found class {module}.{name} (ext {code})"),
    )
}

struct Envelope<R>(R);

impl<R: ObjectRead> ExtRead for Envelope<R> {
    type Out = R::Out;
    fn expected(&self) -> String {
        self.0.expected()
    }
    fn read<'de, D: Deserializer<'de>>(self, code: i8, d: D) -> Result<R::Out, D::Error> {
        if !(0..=5).contains(&code) {
            return Err(de_error(
                TypedErrorKind::ClassMismatch,
                format!(
                    "{CLASS_MISMATCH_PREFIX}{}, found ext {code}",
                    self.0.expected()
                ),
            ));
        }
        d.deserialize_seq(EnvelopeVisitor {
            reader: self.0,
            code,
        })
    }
}

struct EnvelopeVisitor<R> {
    reader: R,
    code: i8,
}

impl<'de, R: ObjectRead> Visitor<'de> for EnvelopeVisitor<R> {
    type Value = R::Out;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the envelope tuple of {}", self.reader.expected())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<R::Out, A::Error> {
        let module: std::borrow::Cow<'_, str> = seq
            .next_element::<CowStr<'de>>()?
            .map(|c| c.0)
            .ok_or_else(|| de::Error::invalid_length(0, &"(module, name, arg)"))?;
        let name: std::borrow::Cow<'_, str> = seq
            .next_element::<CowStr<'de>>()?
            .map(|c| c.0)
            .ok_or_else(|| de::Error::invalid_length(1, &"(module, name, arg)"))?;
        if !self.reader.accepts(self.code, &module, &name) {
            return Err(mismatch(&self.reader.expected(), self.code, &module, &name));
        }
        let out = self.reader.read_arg(self.code, &module, &name, &mut seq)?;
        // The optional method name (`fromisoformat`, `model_validate_json`).
        // Borrowed: most readers ignore it, so it is not allocated for them.
        let method: Option<Option<CowStr<'de>>> = seq.next_element()?;
        Ok(R::finish(out, method.flatten().as_ref().map(|m| &*m.0)))
    }
}

/// A string that borrows from the input when it can.
pub(crate) struct CowStr<'de>(pub(crate) std::borrow::Cow<'de, str>);

impl<'de> de::Deserialize<'de> for CowStr<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CowStr<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(CowStr(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(CowStr(std::borrow::Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(CowStr(std::borrow::Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// Reads a Python object envelope through `reader`.
pub(crate) fn read_object<'de, D: Deserializer<'de>, R: ObjectRead>(
    d: D,
    reader: R,
) -> Result<R::Out, D::Error> {
    read_ext(d, Envelope(reader))
}

/// An envelope of one of a few classes of one module, with one ext code, whose
/// argument is an `A`. Reads `(class name, arg)`.
pub(crate) struct Simple<A> {
    pub(crate) code: i8,
    pub(crate) module: &'static str,
    pub(crate) names: &'static [&'static str],
    _arg: PhantomData<A>,
}

impl<A> Simple<A> {
    pub(crate) fn new(
        kind: ObjectKind,
        module: &'static str,
        names: &'static [&'static str],
    ) -> Self {
        Simple {
            code: kind.code(),
            module,
            names,
            _arg: PhantomData,
        }
    }
}

impl<A: de::DeserializeOwned> ObjectRead for Simple<A> {
    type Out = (String, A);
    fn expected(&self) -> String {
        let classes: Vec<String> = self
            .names
            .iter()
            .map(|n| format!("{}.{n}", self.module))
            .collect();
        format!("class {} (ext {})", classes.join(" or "), self.code)
    }
    fn accepts(&self, code: i8, module: &str, name: &str) -> bool {
        code == self.code && module == self.module && self.names.contains(&name)
    }
    fn read_arg<'de, S: SeqAccess<'de>>(
        self,
        _code: i8,
        _module: &str,
        name: &str,
        seq: &mut S,
    ) -> Result<(String, A), S::Error> {
        let arg = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(2, &"(module, name, arg)"))?;
        Ok((name.to_owned(), arg))
    }
}

/// Reads an envelope of exactly one class, returning its argument.
pub(crate) fn read_simple<'de, D: Deserializer<'de>, A: de::DeserializeOwned>(
    d: D,
    kind: ObjectKind,
    module: &'static str,
    names: &'static [&'static str],
) -> Result<(String, A), D::Error> {
    read_object(d, Simple::new(kind, module, names))
}

/// An envelope of a class given at run time (user classes).
pub(crate) struct Dynamic<'a, A> {
    pub(crate) code: i8,
    pub(crate) module: &'a str,
    pub(crate) name: &'a str,
    pub(crate) _arg: PhantomData<A>,
}

impl<A: de::DeserializeOwned> ObjectRead for Dynamic<'_, A> {
    type Out = A;
    fn expected(&self) -> String {
        format!("class {}.{} (ext {})", self.module, self.name, self.code)
    }
    fn accepts(&self, code: i8, module: &str, name: &str) -> bool {
        code == self.code && module == self.module && name == self.name
    }
    fn read_arg<'de, S: SeqAccess<'de>>(
        self,
        _code: i8,
        _module: &str,
        _name: &str,
        seq: &mut S,
    ) -> Result<A, S::Error> {
        seq.next_element()?
            .ok_or_else(|| de::Error::invalid_length(2, &"(module, name, arg)"))
    }
}

/// Reads an ext of code `code` whose payload is a `T` (the delta snapshot).
pub(crate) struct Payload<T> {
    pub(crate) code: i8,
    pub(crate) what: &'static str,
    pub(crate) _t: PhantomData<T>,
}

impl<T: de::DeserializeOwned> ExtRead for Payload<T> {
    type Out = T;
    fn expected(&self) -> String {
        format!("{} (ext {})", self.what, self.code)
    }
    fn read<'de, D: Deserializer<'de>>(self, code: i8, d: D) -> Result<T, D::Error> {
        if code != self.code {
            return Err(de_error(
                TypedErrorKind::ClassMismatch,
                format!(
                    "{CLASS_MISMATCH_PREFIX}{}, found ext {code}",
                    self.expected()
                ),
            ));
        }
        T::deserialize(d)
    }
}
