//! Inside `src/store/`, the modules name each other one way: the graph of which module
//! names which sibling has no cycle, so they stack in layers (the backends and the
//! engine below the operations), each naming only siblings below it.
//!
//! Read from the text (comments and string literals left out): in `src/store/X.rs`,
//! `super::Y…` names sibling `Y`; in `src/store/copy/*.rs` (the module `copy`),
//! `super::super::Y…` does; anywhere, `crate::store::Y…` does; a `{…}` group names
//! each of its paths' first segments. Items of `src/store/mod.rs` itself (`Store`,
//! `Location`) are the parent's, not a sibling's.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The first path segment after each `prefix` in `code` that is not itself preceded by
/// `super::` (so `super::` does not match inside `super::super::`), groups expanded.
fn names_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut from = 0;
    while let Some(i) = code[from..].find(prefix) {
        let at = from + i;
        from = at + prefix.len();
        let before = &code[..at];
        if before.ends_with("super::")
            || before.ends_with(|c: char| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = &code[from..];
        if rest.starts_with("super::") {
            continue; // a longer chain: it climbs past what `prefix` names
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut end = group.len();
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        end = j;
                        break;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            let inner = &group[..end];
            let mut depth = 0usize;
            let mut start = 0;
            let mut parts = Vec::new();
            for (j, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth = depth.saturating_sub(1),
                    ',' if depth == 0 => {
                        parts.push(&inner[start..j]);
                        start = j + 1;
                    }
                    _ => {}
                }
            }
            parts.push(&inner[start..]);
            for part in parts {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out: Vec<_> = fs::read_dir(dir)
        .expect("src/store")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    out.sort();
    out
}

/// Which store module names which siblings, read from `src/store/`.
fn store_graph() -> BTreeMap<String, BTreeSet<String>> {
    let store = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store");
    let stem = |p: &Path| p.file_stem().and_then(|s| s.to_str()).map(str::to_owned);
    let siblings: BTreeSet<String> = rust_files(&store)
        .iter()
        .filter_map(|p| stem(p))
        .filter(|s| s != "mod")
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut read = |module: &str, file: &Path, prefix: &str| {
        let text = fs::read_to_string(file).expect("a store module");
        let code = super::layers::strip(&text);
        let mut named = names_after(&code, prefix);
        named.extend(names_after(&code, "crate::store::"));
        named.retain(|n| siblings.contains(n) && n != module);
        graph.entry(module.to_owned()).or_default().extend(named);
    };
    for file in rust_files(&store) {
        let Some(module) = stem(&file).filter(|s| s != "mod") else {
            continue;
        };
        read(&module, &file, "super::");
        let dir = store.join(&module);
        if dir.is_dir() {
            for inner in rust_files(&dir) {
                read(&module, &inner, "super::super::");
            }
        }
    }
    graph
}

/// A cycle of `graph`, if it has one.
fn a_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_owned(), 1);
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next.as_str()) {
                Some(1) => {
                    let from = path.iter().position(|n| n == next).unwrap_or(0);
                    let mut cycle = path[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(next, graph, state, path) {
                        return Some(c);
                    }
                }
            }
        }
        path.pop();
        state.insert(node.to_owned(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if !state.contains_key(node.as_str()) {
            if let Some(c) = visit(node, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_store_modules_name_each_other_one_way() {
    let graph = store_graph();
    // The reading finds the edges the code has: the sweeps name the backend trait,
    // the backends implement it, the operations open targets.
    for (from, to) in [
        ("sweep", "backend"),
        ("sqlite", "backend"),
        ("postgres", "backend"),
        ("prune", "pages"),
        ("copy", "target"),
    ] {
        assert!(
            graph.get(from).is_some_and(|n| n.contains(to)),
            "{from} names {to}, but the reading did not find it: {graph:?}"
        );
    }
    if let Some(cycle) = a_cycle(&graph) {
        panic!(
            "store modules name each other in a cycle: {} (move what both need into a module below them)",
            cycle.join(" -> ")
        );
    }
}

#[test]
fn groups_and_chains_are_read() {
    let code = "use super::{ops::{Progress, Stage}, raw::Result};\nlet x = super::super::error::E;\nfoo_super::x; crate::store::keys::K";
    let named = names_after(code, "super::");
    assert_eq!(
        named,
        BTreeSet::from(["ops".to_owned(), "raw".to_owned()]),
        "super::super:: and foo_super:: are not super::"
    );
    assert_eq!(
        names_after(code, "super::super::"),
        BTreeSet::from(["error".to_owned()])
    );
    assert_eq!(
        names_after(code, "crate::store::"),
        BTreeSet::from(["keys".to_owned()])
    );
}
