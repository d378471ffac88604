//! The crate's shape: the layers depend one way with no cycle (read from `src/`), and
//! each layer's errors convert upward keeping their kind and source.

mod layer_errors;
mod layers;
