//! Python `ipaddress` addresses, networks and interfaces.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use serde::de::{self, Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};

use super::invalid;
use crate::typed::object::{read_simple, write_object};
use crate::typed::TypedError;
use crate::value::ObjectKind;

/// Python's `str(IPv6Address)` (3.11): lowercase hextets without leading zeros, the
/// longest run (the first of equal runs) of two or more zero hextets replaced by `::`;
/// no dotted IPv4 tail.
fn format_v6(addr: &Ipv6Addr) -> String {
    let segs = addr.segments();
    let (mut best_start, mut best_len) = (0usize, 0usize);
    let (mut cur_start, mut cur_len) = (0usize, 0usize);
    for (i, s) in segs.iter().enumerate() {
        if *s == 0 {
            if cur_len == 0 {
                cur_start = i;
            }
            cur_len += 1;
            if cur_len > best_len {
                best_start = cur_start;
                best_len = cur_len;
            }
        } else {
            cur_len = 0;
        }
    }
    let hex = |s: &[u16]| {
        s.iter()
            .map(|h| format!("{h:x}"))
            .collect::<Vec<_>>()
            .join(":")
    };
    if best_len > 1 {
        let head = segs.get(..best_start).unwrap_or_default();
        let tail = segs.get(best_start + best_len..).unwrap_or_default();
        format!("{}::{}", hex(head), hex(tail))
    } else {
        hex(&segs)
    }
}

fn split_prefix(s: &str, max: u8) -> Result<(&str, u8), TypedError> {
    match s.split_once('/') {
        None => Ok((s, max)),
        Some((a, p)) => {
            let p: u8 = p
                .parse()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| invalid("a prefix length", s))?;
            Ok((a, p))
        }
    }
}

macro_rules! address_type {
    ($(#[$doc:meta])* $ty:ident, $inner:ty, $name:literal, $fmt:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $ty(pub $inner);

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let format: fn(&$inner) -> String = $fmt;
                f.write_str(&format(&self.0))
            }
        }

        impl FromStr for $ty {
            type Err = TypedError;
            fn from_str(s: &str) -> Result<Self, TypedError> {
                s.parse().map($ty).map_err(|_| invalid("an IP address", s))
            }
        }

        impl From<$inner> for $ty {
            fn from(a: $inner) -> Self {
                $ty(a)
            }
        }

        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                write_object(
                    s,
                    ObjectKind::ConstructorSingleArg,
                    "ipaddress",
                    $name,
                    &self.to_string(),
                    None,
                )
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let (_, s): (_, String) =
                    read_simple(d, ObjectKind::ConstructorSingleArg, "ipaddress", &[$name])?;
                s.parse().map_err(de::Error::custom)
            }
        }
    };
}

address_type!(
    /// Python `ipaddress.IPv4Address`: `ext 0 ("ipaddress", "IPv4Address", "192.168.1.1")`.
    Ipv4Address,
    Ipv4Addr,
    "IPv4Address",
    |a| a.to_string()
);
/// Python `ipaddress.IPv6Address`, formatted as Python 3.11's `str()`:
/// `ext 0 ("ipaddress", "IPv6Address", "2001:db8::1")`, with its scope id when it has
/// one (`"fe80::1%eth0"`).
///
/// ```
/// use langgraph_codec::typed::pytypes::Ipv6Address;
/// let a: Ipv6Address = "FE80:0::1%eth0".parse()?;
/// assert_eq!(a.scope_id.as_deref(), Some("eth0"));
/// assert_eq!(a.to_string(), "fe80::1%eth0");
/// assert!("fe80::1%".parse::<Ipv6Address>().is_err());
/// # Ok::<(), langgraph_codec::typed::TypedError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ipv6Address {
    /// The address.
    pub addr: Ipv6Addr,
    /// The scope (zone) id after `%`, e.g. an interface name; never empty, no `%` or `/`.
    pub scope_id: Option<String>,
}

impl fmt::Display for Ipv6Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_v6(&self.addr))?;
        if let Some(scope) = &self.scope_id {
            write!(f, "%{scope}")?;
        }
        Ok(())
    }
}

impl FromStr for Ipv6Address {
    type Err = TypedError;
    /// An IPv6 address with an optional `%scope` suffix, as Python accepts it.
    fn from_str(s: &str) -> Result<Self, TypedError> {
        let (a, scope_id) = match s.split_once('%') {
            Some((a, scope)) if !scope.is_empty() && !scope.contains(['%', '/']) => {
                (a, Some(scope.to_owned()))
            }
            Some(_) => return Err(invalid("an IPv6 address with a scope id", s)),
            None => (s, None),
        };
        let addr = a.parse().map_err(|_| invalid("an IP address", s))?;
        Ok(Ipv6Address { addr, scope_id })
    }
}

impl From<Ipv6Addr> for Ipv6Address {
    fn from(addr: Ipv6Addr) -> Self {
        Ipv6Address {
            addr,
            scope_id: None,
        }
    }
}

impl Serialize for Ipv6Address {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_object(
            s,
            ObjectKind::ConstructorSingleArg,
            "ipaddress",
            "IPv6Address",
            &self.to_string(),
            None,
        )
    }
}

impl<'de> Deserialize<'de> for Ipv6Address {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (_, s): (_, String) = read_simple(
            d,
            ObjectKind::ConstructorSingleArg,
            "ipaddress",
            &["IPv6Address"],
        )?;
        s.parse().map_err(de::Error::custom)
    }
}

macro_rules! prefixed_type {
    ($(#[$doc:meta])* $ty:ident, $inner:ty, $name:literal, $max:literal, $fmt:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $ty {
            /// The address.
            pub addr: $inner,
            /// The prefix length.
            pub prefix: u8,
        }

        impl $ty {
            /// A new value; `None` if the prefix is too long.
            pub fn new(addr: $inner, prefix: u8) -> Option<Self> {
                (prefix <= $max).then_some($ty { addr, prefix })
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let format: fn(&$inner) -> String = $fmt;
                write!(f, "{}/{}", format(&self.addr), self.prefix)
            }
        }

        impl FromStr for $ty {
            type Err = TypedError;
            /// `address/prefix` (the prefix defaults to the full length).
            fn from_str(s: &str) -> Result<Self, TypedError> {
                let (a, prefix) = split_prefix(s, $max)?;
                let addr = a.parse().map_err(|_| invalid("an IP address", s))?;
                Ok($ty { addr, prefix })
            }
        }

        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                write_object(
                    s,
                    ObjectKind::ConstructorSingleArg,
                    "ipaddress",
                    $name,
                    &self.to_string(),
                    None,
                )
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let (_, s): (_, String) =
                    read_simple(d, ObjectKind::ConstructorSingleArg, "ipaddress", &[$name])?;
                s.parse().map_err(de::Error::custom)
            }
        }
    };
}

prefixed_type!(
    /// Python `ipaddress.IPv4Network`: `"10.0.0.0/8"`.
    Ipv4Network,
    Ipv4Addr,
    "IPv4Network",
    32,
    |a| a.to_string()
);
prefixed_type!(
    /// Python `ipaddress.IPv4Interface`: `"10.0.0.5/24"`.
    Ipv4Interface,
    Ipv4Addr,
    "IPv4Interface",
    32,
    |a| a.to_string()
);
prefixed_type!(
    /// Python `ipaddress.IPv6Network`: `"2001:db8::/32"`.
    Ipv6Network,
    Ipv6Addr,
    "IPv6Network",
    128,
    format_v6
);
prefixed_type!(
    /// Python `ipaddress.IPv6Interface`: `"2001:db8::1/64"`.
    Ipv6Interface,
    Ipv6Addr,
    "IPv6Interface",
    128,
    format_v6
);
