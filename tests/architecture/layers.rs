//! The crate's layers depend one way: no module names a module of a higher layer, and
//! the top-level modules form no cycle.
//!
//! The check reads `src/` as text. Ignoring comments (doc comments included) and string
//! literals, it resolves every `crate::…` path (`use crate::{a, b::c}` groups
//! included), every `super::…` chain that climbs out of a top-level module, and every
//! use of a crate-root re-export (`crate::Error` is `error`'s, as `src/lib.rs` says),
//! then compares the layer of the file with the layer of the module it names.
//!
//! `src/lib.rs` (the crate root, whose re-exports make the public paths) is not a layer.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Layer ranks, lowest first. A module may name modules of its own rank or lower.
/// Modules of one rank must not name each other both ways (the cycle check).
const RANKS: &[(&str, u32)] = &[
    ("stack", 0),
    ("kind", 0),
    ("jsonl", 0),
    // The serializer protocol's vocabulary (TypedBytes, tags, TagError), public at the
    // crate root, defined below `typed`, which speaks it.
    ("protocol", 0),
    ("value", 0),
    ("msgpack", 1),
    ("json", 2),
    ("view", 2),
    ("typed", 3),
    // The crate's one `Error`, just above the leaf codec errors (msgpack, json, view,
    // protocol, typed): every layer above returns it, and it names none of them.
    ("error", 4),
    ("serializer", 5),
    // Compression wraps serializers and names nothing of crypto; crypto composes it.
    ("compression", 6),
    ("crypto", 7),
    ("saver", 8),
    ("store", 9),
    ("records", 10),
    ("bin", 11),
];

fn rank(module: &str) -> Option<u32> {
    RANKS.iter().find(|(m, _)| *m == module).map(|(_, r)| *r)
}

/// One reference from a file to a top-level module.
#[derive(Debug)]
pub(super) struct Reference {
    pub(super) file: String,
    pub(super) line: usize,
    pub(super) from: String,
    pub(super) to: String,
    pub(super) text: String,
}

/// Source text with comments and the contents of string and char literals blanked
/// (newlines kept, so line numbers stay right).
pub(super) fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let blank = |out: &mut String, s: &[u8]| {
        for &c in s {
            out.push(if c == b'\n' { '\n' } else { ' ' });
        }
    };
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with(b"/*") {
            // Nested block comments.
            let mut depth = 0;
            let mut j = 0;
            while j < rest.len() {
                if rest[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, &rest[..j]);
            i += j;
        } else if rest.starts_with(b"r#") || rest.starts_with(b"r\"") || rest.starts_with(b"br") {
            // Raw string: r#*" … "#*  (only when `r` starts a token).
            let prev_ident = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
            let start = if rest[0] == b'b' { 1 } else { 0 };
            let hashes = rest[start + 1..].iter().take_while(|&&c| c == b'#').count();
            let q = start + 1 + hashes;
            if prev_ident || rest.get(q) != Some(&b'"') {
                out.push(rest[0] as char);
                i += 1;
                continue;
            }
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let body = &rest[q + 1..];
            let end = (0..body.len())
                .find(|&k| body[k..].starts_with(&close))
                .map_or(body.len(), |k| k + close.len());
            out.push('"');
            blank(&mut out, &rest[1..q + 1 + end]);
            i += q + 1 + end;
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            let j = (j + 1).min(rest.len());
            out.push('"');
            blank(&mut out, &rest[1..j]);
            i += j;
        } else if rest[0] == b'\'' {
            // A char literal ('x', '\n', '\u{..}', '"'), not a lifetime.
            let len = if rest.get(1) == Some(&b'\\') {
                rest.iter().skip(2).position(|&c| c == b'\'').map(|p| p + 3)
            } else {
                let ch = std::str::from_utf8(&rest[1..rest.len().min(5)])
                    .ok()
                    .or_else(|| std::str::from_utf8(&rest[1..rest.len().min(2)]).ok())
                    .and_then(|s| s.chars().next());
                ch.and_then(|c| {
                    let n = c.len_utf8();
                    (rest.get(1 + n) == Some(&b'\'')).then_some(n + 2)
                })
            };
            match len {
                Some(n) => {
                    blank(&mut out, &rest[..n]);
                    i += n;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let ch = src[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The paths of a `use`/path tree starting at `s`: the path itself, or each item of a
/// `{…}` group.
pub(super) fn tree_items(s: &str) -> Vec<String> {
    let s = s.trim_start();
    let Some(group) = s.strip_prefix('{') else {
        return vec![s.to_string()];
    };
    let mut items = Vec::new();
    let mut depth = 0;
    let mut item = String::new();
    for c in group.chars() {
        match c {
            '{' => {
                depth += 1;
                item.push(c);
            }
            '}' if depth == 0 => {
                items.push(std::mem::take(&mut item));
                break;
            }
            '}' => {
                depth -= 1;
                item.push(c);
            }
            ',' if depth == 0 => items.push(std::mem::take(&mut item)),
            _ => item.push(c),
        }
    }
    items
}

/// The top-level modules named by the `use`/path tree starting after `crate::` at
/// `s`: one for a plain path, each first segment for a `{…}` group.
fn heads_after_crate(s: &str, root_items: &BTreeMap<String, String>) -> Vec<String> {
    tree_items(s)
        .iter()
        .filter_map(|item| first_segment(item, root_items))
        .collect()
}

/// The top-level module a path (relative to the crate root) starts in.
fn first_segment(path: &str, root_items: &BTreeMap<String, String>) -> Option<String> {
    let seg: String = path
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if seg.is_empty() || seg == "self" {
        return None;
    }
    if rank(&seg).is_some() {
        return Some(seg);
    }
    // A crate-root re-export (`crate::Error`) belongs to the module it comes from.
    root_items.get(&seg).cloned()
}

/// Crate-root names re-exported by `src/lib.rs` (`pub use error::{Error, …}`), each
/// mapped to its module.
fn root_items(lib: &str) -> BTreeMap<String, String> {
    let lib = strip(lib);
    let mut map = BTreeMap::new();
    let mut rest = lib.as_str();
    while let Some(p) = rest.find("pub use ") {
        rest = &rest[p + "pub use ".len()..];
        let stmt = &rest[..rest.find(';').unwrap_or(rest.len())];
        let module: String = stmt
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if rank(&module).is_none() {
            continue; // `pub use bytes;` and other crates
        }
        let names = stmt
            .split_once("::")
            .map(|(_, n)| n.trim().trim_start_matches('{').trim_end_matches('}'))
            .unwrap_or("");
        for name in names.split(',') {
            let name = name.trim();
            let leaf = name.rsplit("::").next().unwrap_or(name);
            let leaf = leaf.rsplit(" as ").next().unwrap_or(leaf).trim();
            if !leaf.is_empty() {
                map.insert(leaf.to_string(), module.clone());
            }
        }
    }
    map
}

pub(super) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file below `src/`: `typed/pytypes/ip.rs` is
/// `["typed", "pytypes", "ip"]`, `typed/mod.rs` is `["typed"]`.
pub(super) fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// Where `marker` (`crate::`, `crate::saver::`) starts a path in `code`: its position
/// and the offset just after it. `$crate::` counts; `foo_crate::` or `mycrate::` do not.
pub(super) fn path_starts(code: &str, marker: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(p) = code[at..].find(marker) {
        let pos = at + p;
        at = pos + marker.len();
        let prev = code[..pos].chars().next_back();
        if !prev.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            found.push((pos, at));
        }
    }
    found
}

/// Every `super::super::…` chain in `code`: its position, how many levels it climbs,
/// and the offset of the path after it.
pub(super) fn super_chains(code: &str) -> Vec<(usize, usize, usize)> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(p) = code[at..].find("super::") {
        let pos = at + p;
        let prev = code[..pos].chars().next_back();
        if prev.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
            at = pos + 7;
            continue;
        }
        let mut ups = 0;
        let mut rest = &code[pos..];
        while let Some(r) = rest.strip_prefix("super::") {
            ups += 1;
            rest = r;
        }
        at = code.len() - rest.len();
        found.push((pos, ups, at));
    }
    found
}

/// Every reference from a file of `src/` to a top-level module other than its own.
fn references(src: &Path) -> Vec<Reference> {
    let root = root_items(&fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut refs = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap().to_path_buf();
        let modpath = module_path(&rel);
        let Some(from) = modpath.first().cloned() else {
            continue;
        };
        if from == "lib" {
            continue;
        }
        let text = fs::read_to_string(&file).unwrap();
        let code = strip(&text);
        let line_of = |pos: usize| code[..pos].matches('\n').count() + 1;
        let original_line = |line: usize| text.lines().nth(line - 1).unwrap_or("").trim();
        let mut push = |pos: usize, to: String| {
            if to != from {
                let line = line_of(pos);
                refs.push(Reference {
                    file: rel.display().to_string(),
                    line,
                    from: from.clone(),
                    to,
                    text: original_line(line).to_string(),
                });
            }
        };
        for marker in ["crate::", "langgraph_codec::"] {
            for (pos, after) in path_starts(&code, marker) {
                for to in heads_after_crate(&code[after..], &root) {
                    push(pos, to);
                }
            }
        }
        // `super::super::x` climbs out of the file's module; past the top-level module
        // it names the crate root (then `x` is a module or a root re-export). The module
        // a file's `super` names is its parent: a file `a/b.rs` (module a::b) has
        // super = a; `super::super` = the crate root.
        for (pos, ups, after) in super_chains(&code) {
            if ups >= modpath.len() {
                for to in heads_after_crate(&code[after..], &root) {
                    push(pos, to);
                }
            }
        }
    }
    refs
}

/// Upward references (to a higher rank) and unranked modules.
fn violations(refs: &[Reference]) -> Vec<String> {
    let mut bad = Vec::new();
    for r in refs {
        match (rank(&r.from), rank(&r.to)) {
            (Some(f), Some(t)) if t > f => bad.push(format!(
                "{}:{}: {} (rank {f}) names {} (rank {t}): {}",
                r.file, r.line, r.from, r.to, r.text
            )),
            (None, _) => bad.push(format!("{}: module {} has no rank", r.file, r.from)),
            (_, None) => bad.push(format!("{}: module {} has no rank", r.file, r.to)),
            _ => {}
        }
    }
    bad
}

/// The cycles among top-level modules (as sets of modules), found by DFS.
pub(super) fn cycles(refs: &[Reference]) -> Vec<String> {
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for r in refs {
        graph.entry(&r.from).or_default().insert(&r.to);
    }
    let mut found = BTreeSet::new();
    fn dfs<'a>(
        node: &'a str,
        graph: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        stack: &mut Vec<&'a str>,
        found: &mut BTreeSet<String>,
    ) {
        if let Some(i) = stack.iter().position(|&n| n == node) {
            let mut cycle: Vec<&str> = stack[i..].to_vec();
            let min = cycle.iter().enumerate().min_by_key(|(_, n)| **n).unwrap().0;
            cycle.rotate_left(min);
            found.insert(cycle.join(" -> "));
            return;
        }
        stack.push(node);
        for next in graph.get(node).into_iter().flatten() {
            dfs(next, graph, stack, found);
        }
        stack.pop();
    }
    for start in graph.keys() {
        dfs(start, &graph, &mut Vec::new(), &mut found);
    }
    found.into_iter().collect()
}

/// Checks `src` (or the directory in `LGCODEC_LAYERS_SRC`, to try the check on another
/// tree) and panics with the list of upward references and cycles.
#[test]
fn modules_name_only_lower_layers_and_form_no_cycle() {
    let src = std::env::var_os("LGCODEC_LAYERS_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let refs = references(&src);
    let bad = violations(&refs);
    let cyc = cycles(&refs);
    assert!(
        bad.is_empty() && cyc.is_empty(),
        "{} upward references:\n{}\n{} module cycles:\n{}",
        bad.len(),
        bad.join("\n"),
        cyc.len(),
        cyc.join("\n")
    );
}

/// The check itself: it sees each kind of reference it claims to see, and skips
/// comments and strings.
#[test]
fn the_check_sees_every_kind_of_reference() {
    let tmp = tempfile::Builder::new()
        .prefix("lgcodec-layers-")
        .tempdir()
        .expect("temp dir");
    let dir = tmp.path().to_path_buf();
    fs::create_dir_all(dir.join("typed/pytypes")).unwrap();
    fs::write(
        dir.join("lib.rs"),
        "pub use error::{Error, Result};\npub use serializer::{tags, Serializer as Ser};\n",
    )
    .unwrap();
    fs::write(
        dir.join("typed/pytypes/ip.rs"),
        concat!(
            "//! crate::saver in a doc line\n",
            "/* crate::crypto in a block */\n",
            "const S: &str = \"crate::records\";\n",
            "const C: char = '\"'; fn f<'a>(x: &'a str) {}\n",
            "use super::super::super::serializer::Thing;\n", // line 5
            "use crate::{msgpack, saver::X};\n",             // line 6
            "fn g() -> crate::Result<()> { Ok(()) }\n",      // line 7
            "use super::super::de::Inner;\n",
        ),
    )
    .unwrap();
    let refs = references(&dir);
    let mut seen: Vec<(usize, &str)> = refs.iter().map(|r| (r.line, r.to.as_str())).collect();
    seen.sort();
    assert_eq!(
        seen,
        vec![
            (5, "serializer"),
            (6, "msgpack"),
            (6, "saver"),
            (7, "error")
        ],
        "{refs:#?}"
    );
    assert_eq!(violations(&refs).len(), 3);
    fs::write(dir.join("msgpack.rs"), "use crate::typed::X;\n").unwrap();
    assert_eq!(
        cycles(&references(&dir)),
        vec!["msgpack -> typed".to_string()]
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// The one `Error` sits just above the leaf codec errors and below everything that
/// returns it: a copy of `src/` with the old wrong-direction imports planted in
/// `error.rs` (a saver's row kind, the serializer's trait) fails the check, and the
/// unplanted copy passes.
#[test]
fn a_planted_upward_import_in_the_error_module_is_caught() {
    assert!(rank("typed") < rank("error") && rank("error") < rank("serializer"));
    fn copy(from: &Path, to: &Path) {
        fs::create_dir_all(to).unwrap();
        for entry in fs::read_dir(from).unwrap() {
            let path = entry.unwrap().path();
            let target = to.join(path.file_name().unwrap());
            if path.is_dir() {
                copy(&path, &target);
            } else if path.extension().is_some_and(|e| e == "rs") {
                fs::copy(&path, &target).unwrap();
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let tmp = tempfile::Builder::new()
        .prefix("lgcodec-layers-err-")
        .tempdir()
        .expect("temp dir");
    let dir = tmp.path().to_path_buf();
    copy(&src, &dir);
    assert!(
        violations(&references(&dir)).is_empty(),
        "the copy is clean"
    );
    let error_rs = dir.join("error.rs");
    let mut text = fs::read_to_string(&error_rs).unwrap();
    text.push_str(
        "\nuse crate::saver::RowKind as OldRowKind;\nuse crate::serializer::Serializer;\n",
    );
    fs::write(&error_rs, text).unwrap();
    let bad = violations(&references(&dir));
    assert_eq!(bad.len(), 2, "{bad:#?}");
    assert!(
        bad.iter().any(
            |v| v.starts_with("error.rs:") && v.contains("error (rank 4) names saver (rank 8)")
        ),
        "{bad:#?}"
    );
    assert!(
        bad.iter()
            .any(|v| v.contains("error (rank 4) names serializer (rank 5)")),
        "{bad:#?}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// A module's direct children: the files and folders beside its root file (`saver/`
/// holds `saver::sqlite`, `saver::pyjson`, …).
fn children(dir: &Path) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            names.insert(name);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            if stem != "mod" {
                names.insert(stem.to_string());
            }
        }
    }
    names
}

/// The names a top-level module's root file imports from its children (`pub use
/// error::SaverError;` makes `super::SaverError` in a child name `saver::error`).
fn root_imports(root: &str, kids: &BTreeSet<String>) -> BTreeMap<String, String> {
    let code = strip(root);
    let mut map = BTreeMap::new();
    let mut rest = code.as_str();
    while let Some(p) = rest.find("use ") {
        let before = rest[..p].chars().next_back();
        rest = &rest[p + 4..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let stmt = &rest[..rest.find(';').unwrap_or(rest.len())];
        let stmt = stmt.trim().trim_start_matches("self::");
        let module: String = stmt
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !kids.contains(&module) {
            continue;
        }
        let names = stmt
            .split_once("::")
            .map(|(_, n)| n.trim().trim_start_matches('{').trim_end_matches('}'))
            .unwrap_or("");
        for name in names.split(',') {
            let leaf = name.trim().rsplit("::").next().unwrap_or("");
            let leaf = leaf.rsplit(" as ").next().unwrap_or(leaf).trim();
            if !leaf.is_empty() && leaf != "self" && !leaf.contains('{') {
                map.insert(leaf.to_string(), module.clone());
            }
        }
    }
    map
}

/// Every reference from a file inside a top-level module to another child of the same
/// module (`saver::sqlite` naming `saver::types`), through `crate::saver::…`, through
/// `super::…` chains that reach the module's root, or through a name the root imports
/// from a child. The root file itself (which declares and re-exports its children) is
/// left out.
fn inner_references(src: &Path) -> Vec<Reference> {
    let mut refs = Vec::new();
    for (top, _) in RANKS {
        let dir = src.join(top);
        if !dir.is_dir() {
            continue;
        }
        let kids = children(&dir);
        let root_file = [src.join(format!("{top}.rs")), dir.join("mod.rs")]
            .into_iter()
            .find(|p| p.is_file());
        let root_text = root_file
            .map(|p| fs::read_to_string(p).unwrap())
            .unwrap_or_default();
        let imports = root_imports(&root_text, &kids);
        let resolve = |segment: &str| -> Option<String> {
            if kids.contains(segment) {
                Some(segment.to_string())
            } else {
                imports.get(segment).cloned()
            }
        };
        // The children named by a path (or `{…}` group) starting at `s`, relative to
        // the module's root.
        let heads = |s: &str| -> Vec<String> {
            tree_items(s)
                .iter()
                .filter_map(|item| {
                    let seg: String = item
                        .trim_start()
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    resolve(&seg)
                })
                .collect()
        };
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        files.sort();
        for file in files {
            let rel = file.strip_prefix(src).unwrap().to_path_buf();
            let modpath = module_path(&rel);
            let Some(from_child) = modpath.get(1).cloned() else {
                continue; // the root file
            };
            let text = fs::read_to_string(&file).unwrap();
            let code = strip(&text);
            let line_of = |pos: usize| code[..pos].matches('\n').count() + 1;
            let mut push = |pos: usize, to: String| {
                if to != from_child {
                    let line = line_of(pos);
                    refs.push(Reference {
                        file: rel.display().to_string(),
                        line,
                        from: format!("{top}::{from_child}"),
                        to: format!("{top}::{to}"),
                        text: text.lines().nth(line - 1).unwrap_or("").trim().to_string(),
                    });
                }
            };
            for (pos, after) in path_starts(&code, &format!("crate::{top}::")) {
                for to in heads(&code[after..]) {
                    push(pos, to);
                }
            }
            // Exactly back at the top-level module's root.
            for (pos, ups, after) in super_chains(&code) {
                if ups + 1 == modpath.len() {
                    for to in heads(&code[after..]) {
                        push(pos, to);
                    }
                }
            }
        }
    }
    refs
}

/// The groups of modules that reach each other (strongly connected components of more
/// than one module), each sorted, as `a, b, c`.
fn tangles(refs: &[Reference]) -> BTreeSet<String> {
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for r in refs {
        graph.entry(&r.from).or_default().insert(&r.to);
    }
    let reach = |start: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start.to_string()];
        while let Some(n) = todo.pop() {
            for next in graph.get(n.as_str()).into_iter().flatten() {
                if seen.insert(next.to_string()) {
                    todo.push(next.to_string());
                }
            }
        }
        seen
    };
    let nodes: BTreeSet<&str> = graph
        .iter()
        .flat_map(|(k, v)| std::iter::once(*k).chain(v.iter().copied()))
        .collect();
    let reached: BTreeMap<&str, BTreeSet<String>> = nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut groups = BTreeSet::new();
    for n in &nodes {
        let group: Vec<&str> = nodes
            .iter()
            .copied()
            .filter(|m| m == n || (reached[n].contains(*m) && reached[m].contains(*n)))
            .collect();
        if group.len() > 1 {
            groups.insert(group.join(", "));
        }
    }
    groups
}

/// Groups of children of one module that import each other around a loop, known and
/// not yet undone (each to untangle). The check fails on any other
/// loop, and on a known group that grows; a group that shrinks or splits passes (then
/// shrink its entry here).
const KNOWN_TANGLES: &[&str] = &[];

/// No children of one module import each other around a loop, but the known groups.
#[test]
fn modules_inside_a_layer_form_no_new_cycle() {
    let src = std::env::var_os("LGCODEC_LAYERS_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let refs = inner_references(&src);
    let known: Vec<BTreeSet<&str>> = KNOWN_TANGLES
        .iter()
        .map(|g| g.split(", ").collect())
        .collect();
    let new: Vec<String> = tangles(&refs)
        .into_iter()
        .filter(|g| {
            let members: BTreeSet<&str> = g.split(", ").collect();
            !known.iter().any(|k| members.is_subset(k))
        })
        .collect();
    let loops = cycles(&refs);
    assert!(
        new.is_empty(),
        "{} new groups of modules importing each other around a loop:\n{}\n\
         their cycles:\n{}",
        new.len(),
        new.join("\n"),
        loops.join("\n")
    );
}
