//! Rows other implementations wrote, read and written back as they wrote them: the
//! golden vectors of the real Python package, `json` rows, rows of older releases and
//! of LangGraphJS, Python's encrypted rows and `InMemorySaver` rows, the vectors Rust
//! writes for Python, and the quickstart on a store Python wrote.

mod crypto_vectors;
mod golden_vectors;
mod json_golden_values;
mod quickstart_example;
mod saver_python_rows;
mod typed_rust_vectors;
mod wild_rows;
