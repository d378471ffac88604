//! The codec: msgpack in and out (every size boundary, strict and liberal reading, the
//! depth limits, hostile input), the `Value` model and its accessors, the JSON view,
//! and the readers agreeing with one another.

mod accessors;
mod boundaries;
mod deep_rows;
mod fuzz_regressions;
mod hostile;
mod one_reader;
mod properties;
mod small_stack;
