//! `vectors/rust_typed.jsonl` (checked against the real Python package by
//! `vectors/check_rust_typed.py`) is exactly what `examples/emit_typed_vectors.rs`
//! writes now.

#[path = "../../examples/emit_typed_vectors.rs"]
#[allow(dead_code)]
mod emit;

#[test]
fn committed_rust_vectors_are_current() {
    let lines = emit::lines().expect("every vector serializes");
    assert!(lines.len() >= 80, "only {} vectors", lines.len());
    let committed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/vectors/rust_typed.jsonl"
    ))
    .expect("vectors/rust_typed.jsonl");
    let committed: Vec<&str> = committed.lines().collect();
    assert_eq!(committed.len(), lines.len(), "vector count; regenerate with `cargo run --example emit_typed_vectors -- vectors/rust_typed.jsonl`");
    for (got, want) in lines.iter().zip(committed) {
        assert_eq!(
            got, want,
            "regenerate with `cargo run --example emit_typed_vectors -- vectors/rust_typed.jsonl`"
        );
    }
}
