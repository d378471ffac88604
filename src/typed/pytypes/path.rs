//! Python `pathlib` paths.

use std::fmt;

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};

use crate::typed::object::{read_simple, write_object};
use crate::value::ObjectKind;

const CLASSES: &[&str] = &[
    "PosixPath",
    "PurePosixPath",
    "WindowsPath",
    "PureWindowsPath",
    "Path",
    "PurePath",
];

/// A Python `pathlib` path: its class (`PosixPath` unless said otherwise) and its
/// `parts`. Written as `ext 1 ("pathlib", class, parts)`.
///
/// ```
/// use langgraph_codec::typed::pytypes::PurePath;
/// let p = PurePath::posix("/usr//local/./lib");
/// assert_eq!(p.parts(), ["/", "usr", "local", "lib"]);
/// assert_eq!(p.to_string(), "/usr/local/lib");
/// assert!(PurePath::posix(".").parts().is_empty());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PurePath {
    class: String,
    parts: Vec<String>,
}

impl PurePath {
    /// A `PosixPath` from a POSIX path string, split as Python does (repeated and
    /// trailing slashes and `.` components dropped; a leading `//` kept).
    pub fn posix(path: &str) -> Self {
        let mut parts = Vec::new();
        if path.starts_with("//") && !path.starts_with("///") {
            parts.push("//".to_owned());
        } else if path.starts_with('/') {
            parts.push("/".to_owned());
        }
        parts.extend(
            path.split('/')
                .filter(|p| !p.is_empty() && *p != ".")
                .map(str::to_owned),
        );
        PurePath {
            class: "PosixPath".to_owned(),
            parts,
        }
    }

    /// A path of the given `pathlib` class from its parts.
    pub fn from_parts(class: impl Into<String>, parts: Vec<String>) -> Self {
        PurePath {
            class: class.into(),
            parts,
        }
    }

    /// The `pathlib` class name, e.g. `"PosixPath"`.
    pub fn class(&self) -> &str {
        &self.class
    }

    /// `Path.parts`.
    pub fn parts(&self) -> &[String] {
        &self.parts
    }
}

impl fmt::Display for PurePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = self.parts.iter();
        match parts.next() {
            None => f.write_str("."),
            Some(first) => {
                f.write_str(first)?;
                let mut need_sep = !first.ends_with('/') && !first.ends_with('\\');
                for p in parts {
                    if need_sep {
                        f.write_str("/")?;
                    }
                    f.write_str(p)?;
                    need_sep = true;
                }
                Ok(())
            }
        }
    }
}

impl Serialize for PurePath {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_object(
            s,
            ObjectKind::ConstructorPosArgs,
            "pathlib",
            &self.class,
            &self.parts,
            None,
        )
    }
}

impl<'de> Deserialize<'de> for PurePath {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (class, parts) = read_simple(d, ObjectKind::ConstructorPosArgs, "pathlib", CLASSES)?;
        Ok(PurePath { class, parts })
    }
}
