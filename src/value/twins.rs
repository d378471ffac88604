//! What [`Value`](super::Value) and [`msgpack::ValueRef`](crate::msgpack::ValueRef)
//! share, written once: the accessors (`is_nil`, `as_*`, `get`, `kind_name`), equality
//! and `Debug`. The two enums have the same variants (`Value` has two more, for `json`
//! rows), so the same matches serve both; only the types handed out differ (owned or
//! borrowed from the input). Defined here, in the lowest layer, so `msgpack` can use
//! them without `value` naming a layer above it.

/// Expands, inside `impl $Ty`, to the accessors of an enum with `Value`'s variants.
///
/// - `$Ty`: the enum's name, for the docs' links.
/// - `str`, `bytes`, `array`, `map`, `object`, `item`: what `as_str`, `as_bytes`,
///   `as_array`, `as_map`, `as_object` and `get` hand out (each body is `Some(x)` of the
///   variant's field, so the types only say how far it derefs and what it borrows from).
/// - `str_note`, `bytes_note`: appended to the docs of `as_str` / `as_bytes` (where the
///   borrow comes from).
/// - `kind_name_doc`: the doc of `kind_name`; `more_kinds`: arms for variants beyond the
///   shared ones, with their names.
macro_rules! accessors {
    (
        $Ty:ident,
        str: $str:ty, str_note: $str_note:literal,
        bytes: $bytes:ty, bytes_note: $bytes_note:literal,
        array: $array:ty,
        map: $map:ty,
        object: $object:ty,
        item: $item:ty,
        kind_name_doc: $kind_name_doc:literal,
        more_kinds: { $($more:pat => $more_name:literal),* $(,)? } $(,)?
    ) => {
        #[doc = concat!("`true` for [`", stringify!($Ty), "::Nil`].")]
        pub fn is_nil(&self) -> bool {
            matches!(self, Self::Nil)
        }

        #[doc = concat!("The string, if this is a [`", stringify!($Ty), "::Str`]", $str_note, ".")]
        pub fn as_str(&self) -> Option<$str> {
            match self {
                Self::Str(s) => Some(s),
                _ => None,
            }
        }

        #[doc = concat!("The bytes, if this is a [`", stringify!($Ty), "::Bin`]", $bytes_note, ".")]
        pub fn as_bytes(&self) -> Option<$bytes> {
            match self {
                Self::Bin(b) => Some(b),
                _ => None,
            }
        }

        /// The integer as `i64`, if this is an integer that fits.
        pub fn as_i64(&self) -> Option<i64> {
            match self {
                Self::Int(i) => i.as_i64(),
                _ => None,
            }
        }

        /// The integer as `u64`, if this is a non-negative integer.
        pub fn as_u64(&self) -> Option<u64> {
            match self {
                Self::Int(i) => i.as_u64(),
                _ => None,
            }
        }

        /// The number as `f64`, for floats (and integers, possibly rounded).
        pub fn as_f64(&self) -> Option<f64> {
            match self {
                Self::F64(f) => Some(*f),
                Self::F32(f) => Some(f64::from(*f)),
                Self::Int(i) => Some(i.as_i128() as f64),
                _ => None,
            }
        }

        #[doc = concat!("The bool, if this is a [`", stringify!($Ty), "::Bool`].")]
        pub fn as_bool(&self) -> Option<bool> {
            match self {
                Self::Bool(b) => Some(*b),
                _ => None,
            }
        }

        #[doc = concat!("The items, if this is a [`", stringify!($Ty), "::Array`].")]
        pub fn as_array(&self) -> Option<$array> {
            match self {
                Self::Array(a) => Some(a),
                _ => None,
            }
        }

        #[doc = concat!("The entries, if this is a [`", stringify!($Ty), "::Map`].")]
        pub fn as_map(&self) -> Option<$map> {
            match self {
                Self::Map(m) => Some(m),
                _ => None,
            }
        }

        #[doc = concat!("The object envelope, if this is a [`", stringify!($Ty), "::Object`].")]
        pub fn as_object(&self) -> Option<$object> {
            match self {
                Self::Object(o) => Some(o),
                _ => None,
            }
        }

        /// For a map: the value of the first entry whose key is the string `key`.
        pub fn get(&self, key: &str) -> Option<$item> {
            self.as_map()?
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v)
        }

        #[doc = $kind_name_doc]
        pub fn kind_name(&self) -> &'static str {
            match self {
                Self::Nil => "nil",
                Self::Bool(_) => "bool",
                Self::Int(_) => "int",
                Self::F32(_) => "float32",
                Self::F64(_) => "float64",
                Self::Str(_) => "str",
                Self::Bin(_) => "bin",
                Self::Array(_) => "array",
                Self::Map(_) => "map",
                Self::Object(_) => "object",
                Self::NdArray(_) => "ndarray",
                Self::DeltaSnapshot(_) => "delta snapshot",
                Self::Ext(_) => "ext",
                $($more => $more_name,)*
            }
        }
    };
}

/// Implements `PartialEq` and `Eq` for `$Ty`: equal when the variants are and their
/// contents are, floats by their bits (so `NaN == NaN` and `0.0 != -0.0`, as the
/// bytes on the wire differ); containers compare under the stack guard. `$more`: the
/// variants beyond the shared ones, compared with `==`.
macro_rules! eq_by_variant {
    ($Ty:ty $(, $more:ident)* $(,)?) => {
        impl PartialEq for $Ty {
            fn eq(&self, other: &Self) -> bool {
                match (self, other) {
                    (Self::Nil, Self::Nil) => true,
                    (Self::Bool(a), Self::Bool(b)) => a == b,
                    (Self::Int(a), Self::Int(b)) => a == b,
                    (Self::F32(a), Self::F32(b)) => a.to_bits() == b.to_bits(),
                    (Self::F64(a), Self::F64(b)) => a.to_bits() == b.to_bits(),
                    (Self::Str(a), Self::Str(b)) => a == b,
                    (Self::Bin(a), Self::Bin(b)) => a == b,
                    (Self::Array(a), Self::Array(b)) => crate::stack::guard(|| a == b),
                    (Self::Map(a), Self::Map(b)) => crate::stack::guard(|| a == b),
                    (Self::Object(a), Self::Object(b)) => crate::stack::guard(|| a == b),
                    (Self::NdArray(a), Self::NdArray(b)) => a == b,
                    (Self::DeltaSnapshot(a), Self::DeltaSnapshot(b)) => {
                        crate::stack::guard(|| a == b)
                    }
                    (Self::Ext(a), Self::Ext(b)) => a == b,
                    $((Self::$more(a), Self::$more(b)) => a == b,)*
                    _ => false,
                }
            }
        }

        impl Eq for $Ty {}
    };
}

/// Implements `Debug` for `$Ty` as `derive` would print it (`Array([Int(1), Nil])`),
/// containers under the stack guard. `$more`: the variants beyond the shared ones.
macro_rules! debug_by_variant {
    ($Ty:ty $(, $more:ident)* $(,)?) => {
        impl std::fmt::Debug for $Ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self {
                    Self::Nil => f.write_str("Nil"),
                    Self::Bool(b) => f.debug_tuple("Bool").field(b).finish(),
                    Self::Int(i) => f.debug_tuple("Int").field(i).finish(),
                    Self::F32(x) => f.debug_tuple("F32").field(x).finish(),
                    Self::F64(x) => f.debug_tuple("F64").field(x).finish(),
                    Self::Str(s) => f.debug_tuple("Str").field(s).finish(),
                    Self::Bin(b) => f.debug_tuple("Bin").field(b).finish(),
                    Self::NdArray(a) => f.debug_tuple("NdArray").field(a).finish(),
                    Self::Ext(e) => f.debug_tuple("Ext").field(e).finish(),
                    $(Self::$more(x) => f.debug_tuple(stringify!($more)).field(x).finish(),)*
                    Self::Array(items) => {
                        crate::stack::guard(|| f.debug_tuple("Array").field(items).finish())
                    }
                    Self::Map(entries) => {
                        crate::stack::guard(|| f.debug_tuple("Map").field(entries).finish())
                    }
                    Self::Object(o) => {
                        crate::stack::guard(|| f.debug_tuple("Object").field(o).finish())
                    }
                    Self::DeltaSnapshot(v) => crate::stack::guard(|| {
                        f.debug_tuple("DeltaSnapshot").field(v).finish()
                    }),
                }
            }
        }
    };
}

pub(crate) use {accessors, debug_by_variant, eq_by_variant};
