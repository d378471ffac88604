//! Inside `src/store/`, the modules name each other one way: the graph of which module
//! names which sibling has no cycle, so they stack in layers (the backends and the
//! engine below the operations), each naming only siblings below it.
//!
//! Read as `layers.rs` reads the crate (comments and string literals left out, `{…}`
//! groups expanded): a `super::…` chain that climbs to `store` names the sibling after
//! it (`super::` from `src/store/X.rs`, `super::super::` from `src/store/copy/*.rs`),
//! and so does `crate::store::…`. Items of `src/store/mod.rs` itself (`Store`,
//! `Location`) are the parent's, not a sibling's.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use super::layers::{
    cycles, module_path, path_starts, rust_files, strip, super_chains, tree_items, Reference,
};

/// The first identifier of a path.
fn head(path: &str) -> String {
    path.trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The store modules `code` names, from a file `depth` modules below `store`
/// (`src/store/X.rs`: 1; `src/store/copy/Y.rs`: 2), with where each is named.
fn store_names(code: &str, depth: usize) -> Vec<(usize, String)> {
    let mut named = Vec::new();
    for (pos, ups, after) in super_chains(code) {
        if ups == depth {
            named.extend(tree_items(&code[after..]).iter().map(|p| (pos, head(p))));
        }
    }
    for (pos, after) in path_starts(code, "crate::store::") {
        named.extend(tree_items(&code[after..]).iter().map(|p| (pos, head(p))));
    }
    named
}

/// Every reference from a store module to a sibling, read from `src/store/`.
fn store_references() -> Vec<Reference> {
    let store = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store");
    let mut files = Vec::new();
    rust_files(&store, &mut files);
    files.sort();
    let modules: Vec<Vec<String>> = files
        .iter()
        .map(|f| module_path(f.strip_prefix(&store).expect("below src/store")))
        .collect();
    let siblings: BTreeSet<&str> = modules
        .iter()
        .filter_map(|m| m.first().map(String::as_str))
        .collect();
    let mut refs = Vec::new();
    for (file, modpath) in files.iter().zip(&modules) {
        let Some(from) = modpath.first() else {
            continue; // mod.rs: the parent
        };
        let text = fs::read_to_string(file).expect("a store module");
        let code = strip(&text);
        for (pos, to) in store_names(&code, modpath.len()) {
            if to != *from && siblings.contains(to.as_str()) {
                let line = code[..pos].matches('\n').count() + 1;
                refs.push(Reference {
                    file: file.display().to_string(),
                    line,
                    from: from.clone(),
                    to,
                    text: text.lines().nth(line - 1).unwrap_or("").trim().to_owned(),
                });
            }
        }
    }
    refs
}

#[test]
fn the_store_modules_name_each_other_one_way() {
    let refs = store_references();
    // The reading finds the edges the code has: the sweeps and both backends name the
    // backend trait, prune the page engine, copy its target, and the Postgres
    // backend's checkpoints (`postgres/checkpoints.rs`) the planner's types.
    for (from, to) in [
        ("sweep", "backend"),
        ("sqlite", "backend"),
        ("postgres", "backend"),
        ("prune", "pages"),
        ("copy", "target"),
        ("postgres", "plan"),
    ] {
        assert!(
            refs.iter().any(|r| r.from == from && r.to == to),
            "{from} names {to}, but the reading did not find it"
        );
    }
    let cycles = cycles(&refs);
    assert!(
        cycles.is_empty(),
        "store modules name each other in a cycle (move what both need into a module below them):\n{}\nthe references:\n{}",
        cycles.join("\n"),
        refs.iter()
            .map(|r| format!("{}:{}: {} -> {}: {}", r.file, r.line, r.from, r.to, r.text))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn chains_that_climb_to_store_and_groups_are_read() {
    let code = "use super::{ops::{Progress, Stage}, raw::Result};\nuse super::super::error::E;\nfoo_super::x; crate::store::keys::K;";
    let names = |depth| {
        store_names(code, depth)
            .into_iter()
            .map(|(_, n)| n)
            .collect::<BTreeSet<_>>()
    };
    let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<BTreeSet<_>>();
    // From src/store/X.rs, `super::` is store; `super::super::` climbs past it.
    assert_eq!(names(1), set(&["ops", "raw", "keys"]));
    // From src/store/copy/Y.rs, `super::` is copy; `super::super::` is store.
    assert_eq!(names(2), set(&["error", "keys"]));
}

/// The longest a file of the store or of the CLI may be: past it, a file holds more
/// than one thing (split it the way `copy.rs` and `copy/` are split).
const MAX_LINES: usize = 900;

#[test]
fn no_file_of_the_store_or_the_cli_is_over_the_line_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src/store", "src/bin/lgcodec"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 40, "the reading found the files: {files:?}");
    let mut long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = fs::read_to_string(f)
                .expect("a source file")
                .lines()
                .count();
            (lines > MAX_LINES).then(|| format!("{}: {lines} lines", f.display()))
        })
        .collect();
    long.sort();
    assert!(
        long.is_empty(),
        "over {MAX_LINES} lines (split each into a module of its own parts):\n{}",
        long.join("\n")
    );
}
