//! One public path per item: no public item of the crate is reachable under two paths
//! (the rule in `src/lib.rs`'s docs: everyday types at the crate root, whose defining
//! module is then private; everything else at its module, re-exported nowhere else).
//!
//! The check reads `src/` as text. From `src/lib.rs` it follows the `mod` declarations
//! (a module is public when it and every module above it are `pub mod`), collects the
//! items each file defines at its top level (`pub struct`, `pub fn`, `pub mod`, …,
//! `#[macro_export]` macros at the root) and every top-level `pub use` (groups, `self`,
//! `super`, `crate`, renames and re-exported crates included), resolves each re-export
//! to the item it names (through other re-exports), and counts the public paths of
//! every item: its definition's path when its module is public, each re-export in a
//! public module, and each path through a re-exported module or crate
//! (`pub use indexmap;` makes `indexmap::IndexMap` one path of `IndexMap`).
//! `pub(crate)` and `pub(super)` re-exports are not public paths.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module: its path from the crate root, whether it is public, its file.
struct Module {
    path: Vec<String>,
    public: bool,
    file: Option<PathBuf>,
}

/// One top-level `pub use` leaf: the name it makes and the path it names, as written.
struct Reexport {
    module: Vec<String>,
    name: String,
    source: Vec<String>,
}

/// The crate's text, read into modules, definitions and re-exports.
struct Crate {
    modules: Vec<Module>,
    /// Items defined at each module's top level (including `pub mod`s).
    defined: BTreeSet<Vec<String>>,
    reexports: Vec<Reexport>,
}

/// Top-level lines of a file (column 0), with `pub use` statements joined up to `;`.
fn top_level_statements(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending: Option<String> = None;
    for line in text.lines() {
        if let Some(p) = pending.as_mut() {
            p.push(' ');
            p.push_str(line.trim());
            if line.contains(';') {
                out.extend(pending.take());
            }
            continue;
        }
        if line.starts_with(' ') || line.starts_with('\t') || line.starts_with("//") {
            continue;
        }
        if line.starts_with("pub use ") && !line.contains(';') {
            pending = Some(line.to_owned());
        } else {
            out.push(line.to_owned());
        }
    }
    out
}

/// The leaves of a use tree (`a::{b, c::d as e, self}`): `(name, path)`.
fn use_leaves(tree: &str) -> Vec<(String, Vec<String>)> {
    fn walk(tree: &str, prefix: &[String], out: &mut Vec<(String, Vec<String>)>) {
        let tree = tree.trim();
        if tree.is_empty() {
            return;
        }
        if let Some(open) = tree.find('{') {
            let head: Vec<String> = tree[..open]
                .split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            let mut base = prefix.to_vec();
            base.extend(head);
            let inner = &tree[open + 1..tree.rfind('}').expect("balanced braces")];
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        walk(&inner[start..i], &base, out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            walk(&inner[start..], &base, out);
            return;
        }
        let (path, rename) = match tree.split_once(" as ") {
            Some((p, r)) => (p.trim(), Some(r.trim().to_owned())),
            None => (tree, None),
        };
        let mut full = prefix.to_vec();
        for seg in path.split("::").map(str::trim).filter(|s| !s.is_empty()) {
            if seg == "self" && !full.is_empty() {
                continue;
            }
            full.push(seg.to_owned());
        }
        let name = rename.unwrap_or_else(|| full.last().cloned().unwrap_or_default());
        if name != "_" {
            out.push((name, full));
        }
    }
    let mut out = Vec::new();
    walk(tree, &[], &mut out);
    out
}

/// The name after a `pub KEYWORD` at the start of a top-level line.
fn defined_name(line: &str) -> Option<String> {
    let rest = line.strip_prefix("pub ")?;
    let mut words = rest.split_whitespace();
    let mut word = words.next()?;
    while matches!(word, "async" | "unsafe" | "const" | "extern") {
        // `pub const fn`, `pub async fn`; a `pub const NAME` is handled below.
        if word == "const" {
            let next = words.next()?;
            if next != "fn" {
                return Some(ident(next));
            }
            return words.next().map(ident);
        }
        word = words.next()?;
    }
    match word {
        "struct" | "enum" | "trait" | "fn" | "static" | "type" | "mod" | "union" => {
            words.next().map(ident)
        }
        _ => None,
    }
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

fn module_file(dir: &Path, name: &str) -> Option<PathBuf> {
    [
        dir.join(format!("{name}.rs")),
        dir.join(name).join("mod.rs"),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let mut krate = Crate {
            modules: Vec::new(),
            defined: BTreeSet::new(),
            reexports: Vec::new(),
        };
        krate.read_module(Vec::new(), true, &src.join("lib.rs"), src);
        krate
    }

    /// Reads one module file; `dir` is where its child modules' files are.
    fn read_module(&mut self, path: Vec<String>, public: bool, file: &Path, dir: &Path) {
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        self.modules.push(Module {
            path: path.clone(),
            public,
            file: Some(file.to_owned()),
        });
        let mut macro_export = false;
        for stmt in top_level_statements(&text) {
            if stmt.starts_with("#[macro_export]") {
                macro_export = true;
                continue;
            }
            if macro_export {
                if let Some(rest) = stmt.strip_prefix("macro_rules! ") {
                    self.defined.insert(vec![ident(rest)]);
                    macro_export = false;
                }
                if !stmt.starts_with('#') {
                    macro_export = false;
                }
            }
            if let Some(tree) = stmt.strip_prefix("pub use ") {
                let tree = tree.trim_end().trim_end_matches(';');
                for (name, source) in use_leaves(tree) {
                    self.reexports.push(Reexport {
                        module: path.clone(),
                        name,
                        source,
                    });
                }
                continue;
            }
            let is_pub_mod = stmt.starts_with("pub mod ");
            let is_mod = is_pub_mod
                || stmt.starts_with("mod ")
                || stmt.starts_with("pub(crate) mod ")
                || stmt.starts_with("pub(super) mod ");
            if is_mod {
                let name = ident(stmt.split("mod ").nth(1).unwrap_or(""));
                let mut child = path.clone();
                child.push(name.clone());
                if is_pub_mod {
                    self.defined.insert(child.clone());
                }
                if stmt.trim_end().ends_with(';') {
                    // A file module: `x.rs` beside a `lib.rs`/`mod.rs`, else in the
                    // directory named for the parent.
                    let child_dir = dir.join(&name);
                    if let Some(f) = module_file(dir, &name) {
                        self.read_module(child, public && is_pub_mod, &f, &child_dir);
                    }
                } else {
                    // An inline module: its items are indented and not read; it only
                    // makes its path known.
                    self.modules.push(Module {
                        path: child,
                        public: public && is_pub_mod,
                        file: None,
                    });
                }
                continue;
            }
            if let Some(name) = defined_name(&stmt) {
                if !name.is_empty() && !stmt.starts_with("pub mod ") {
                    let mut item = path.clone();
                    item.push(name);
                    self.defined.insert(item);
                }
            }
        }
    }

    fn module(&self, path: &[String]) -> Option<&Module> {
        self.modules.iter().find(|m| m.path == path)
    }

    /// The absolute form of a re-export's source: `crate::`, `self::`, `super::` and
    /// child-module paths become crate paths; anything else is an external crate's,
    /// marked with a leading `::`.
    fn absolute(&self, module: &[String], source: &[String]) -> Vec<String> {
        let mut segs = source.iter();
        let first = segs.next().map(String::as_str).unwrap_or("");
        let mut base: Vec<String> = match first {
            "crate" => Vec::new(),
            "self" => module.to_vec(),
            "super" => {
                let mut b = module.to_vec();
                b.pop();
                b
            }
            name => {
                let mut child = module.to_vec();
                child.push(name.to_owned());
                if self.module(&child).is_some() || self.defined.contains(&child) {
                    child
                } else {
                    vec!["::".to_owned(), name.to_owned()]
                }
            }
        };
        for seg in segs {
            if seg == "super" {
                base.pop();
            } else {
                base.push(seg.clone());
            }
        }
        base
    }

    /// Follows re-exports to the item a path names (a definition or an external path).
    fn resolve(&self, mut path: Vec<String>) -> Vec<String> {
        for _ in 0..32 {
            let Some((name, module)) = path.split_last() else {
                return path;
            };
            if self.defined.contains(&path) {
                return path;
            }
            match self
                .reexports
                .iter()
                .find(|r| r.module == module && &r.name == name)
            {
                Some(r) => path = self.absolute(&r.module, &r.source),
                None => return path,
            }
        }
        path
    }

    fn is_public_module(&self, path: &[String]) -> bool {
        path.is_empty() || self.module(path).is_some_and(|m| m.public)
    }

    /// Every item with the public paths that reach it.
    fn public_paths(&self) -> BTreeMap<Vec<String>, BTreeSet<String>> {
        let mut paths: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
        for item in &self.defined {
            let (_, module) = item.split_last().expect("an item has a name");
            if self.is_public_module(module) {
                paths
                    .entry(item.clone())
                    .or_default()
                    .insert(item.join("::"));
            }
        }
        for r in &self.reexports {
            if !self.is_public_module(&r.module) {
                continue;
            }
            let target = self.resolve(self.absolute(&r.module, &r.source));
            let mut at = r.module.clone();
            at.push(r.name.clone());
            paths.entry(target).or_default().insert(at.join("::"));
        }
        // Paths through a re-exported module or crate: `pub use indexmap;` at the root
        // reaches `indexmap::IndexMap` as `indexmap::IndexMap` of this crate too.
        let snapshot: Vec<(Vec<String>, BTreeSet<String>)> =
            paths.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        for (target, _) in &snapshot {
            for (prefix, prefix_paths) in &snapshot {
                if prefix.len() >= target.len() || !target.starts_with(prefix) {
                    continue;
                }
                // Inside this crate, the way down from the re-exported module must be
                // through `pub mod`s.
                let external = prefix.first().is_some_and(|s| s == "::");
                let open = external
                    || (prefix.len() + 1..target.len())
                        .all(|end| self.defined.contains(&target[..end]));
                if !open {
                    continue;
                }
                let rest = target[prefix.len()..].join("::");
                let canonical = prefix.join("::");
                let entry = paths.entry(target.clone()).or_default();
                // The definition's own path already counts the way down from it.
                for p in prefix_paths.iter().filter(|p| **p != canonical) {
                    entry.insert(format!("{p}::{rest}"));
                }
            }
        }
        paths
    }
}

/// Items reachable under more than one public path, with those paths.
fn duplicates(src: &Path) -> Vec<String> {
    let krate = Crate::read(src);
    assert!(
        krate
            .modules
            .iter()
            .any(|m| m.file.is_some() && !m.path.is_empty()),
        "no module read from {}",
        src.display()
    );
    krate
        .public_paths()
        .into_iter()
        .filter(|(_, p)| p.len() > 1)
        .map(|(item, p)| {
            let shown: Vec<String> = p.into_iter().collect();
            format!("{} at {}", item.join("::"), shown.join(", "))
        })
        .collect()
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn every_public_item_has_one_public_path() {
    let found = duplicates(&src_dir());
    assert!(
        found.is_empty(),
        "items reachable under two or more public paths (keep one: see the rule in \
         src/lib.rs's docs):\n  {}",
        found.join("\n  ")
    );
}

/// The check finds what it must: a copy of `src/` with one planted duplicate (an item
/// of a public module re-exported at the root, and a crate re-exported twice) fails it.
#[test]
fn a_planted_duplicate_re_export_is_found() {
    let tmp = tempfile::Builder::new()
        .prefix("lgcodec_public_paths-")
        .tempdir()
        .expect("temp dir");
    let copy = tmp.path().to_path_buf();
    copy_dir(&src_dir(), &copy);
    let lib = copy.join("lib.rs");
    let mut text = fs::read_to_string(&lib).expect("lib.rs");
    text.push_str("\npub use msgpack::DecodeOptions;\n");
    fs::write(&lib, text).expect("write lib.rs");
    let found = duplicates(&copy);
    let _ = fs::remove_dir_all(&copy);
    assert_eq!(
        found,
        ["msgpack::read::DecodeOptions at DecodeOptions, msgpack::DecodeOptions"],
        "the planted `pub use msgpack::DecodeOptions;` at the root, and only it"
    );
}

#[test]
fn use_trees_and_paths_resolve() {
    let leaves = use_leaves("crate::a::{self as x, b::{C, D as E}, F}");
    let names: Vec<(&str, String)> = leaves
        .iter()
        .map(|(n, p)| (n.as_str(), p.join("::")))
        .collect();
    assert_eq!(
        names,
        [
            ("x", "crate::a".to_owned()),
            ("C", "crate::a::b::C".to_owned()),
            ("E", "crate::a::b::D".to_owned()),
            ("F", "crate::a::F".to_owned()),
        ]
    );
    assert_eq!(defined_name("pub const fn f() {}"), Some("f".to_owned()));
    assert_eq!(
        defined_name("pub const N: usize = 1;"),
        Some("N".to_owned())
    );
    assert_eq!(defined_name("pub struct S<'a> {"), Some("S".to_owned()));
    assert_eq!(defined_name("pub(crate) struct S;"), None);
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("mkdir");
    for entry in fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).expect("copy");
        }
    }
}
