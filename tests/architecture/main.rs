//! The crate's shape: the layers depend one way with no cycle (read from `src/`), and
//! each layer's errors convert upward keeping their kind and source, and the one
//! `Error`'s contract (stable kind names, `source()` chains, messages naming the row);
//! and every test that needs Postgres or Python is run where CI has them.

mod backend_seam;
mod ci_runs;
mod cli_flags;
mod error_contract;
mod layer_errors;
mod layers;
mod one_engine;
mod options_shape;
mod public_paths;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod spawnable;
mod store_modules;
