//! The typed layer: Rust values of Python's types (LangChain messages, LangGraph's own
//! types, dates, UUIDs, decimals, user classes) written and read exactly as Python
//! writes them, borrowed reads, class checks and errors, the optional `chrono` / `uuid`
//! conversions.

mod borrowed;
mod common;
mod errors;
mod features;
mod properties;
mod python;
mod wild_types;
