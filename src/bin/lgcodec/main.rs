//! `lgcodec`: decode and encode LangGraph checkpoint rows from the command line, and
//! operate whole stores (`lgcodec store …`).
//!
//! A thin shell over [`langgraph_codec::records`] and [`langgraph_codec::store`], laid
//! out as cargo lays out its own commands: [`cli`] parses the command line (and states
//! the exit-status contract), `commands/` holds one module per command (`store/` one
//! per store command), [`rows`] the row input and output `decode`, `encode` and
//! `rekey` share, `output` the progress bar and report printing every store command
//! shares. The formats are described in `docs/interop.md` ("The `lgcodec` command").

use std::process::ExitCode;

/// mimalloc: a store copy's many small allocations cost a quarter of its time with
/// glibc's allocator (Cargo.toml says what was measured).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;

/// `eprintln!` that cannot panic: a line for standard error that cannot be written (its
/// reader gone, as in `lgcodec … 2>&1 | head`) is dropped, where `eprintln!` panicked
/// and the command exited 101 instead of with its status. Every module of the binary
/// writes to standard error through it.
macro_rules! note {
    ($($t:tt)*) => {{
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr().lock(),
            format_args!("{}\n", format_args!($($t)*)),
        );
    }};
}

mod cli;
mod commands;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod drop_behind;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod human;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod metrics;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod output;
/// The page-cache reading the integration tests use too.
#[cfg(all(test, feature = "sqlite", feature = "postgres"))]
#[path = "../../../tests/support/page_cache.rs"]
mod page_cache;
mod rows;

use cli::{Cli, Command};

fn main() -> ExitCode {
    cli::ended(match Cli::parse().command {
        Command::Decode(args) => rows::status(commands::decode::run(args)),
        Command::Encode(args) => rows::status(commands::encode::run(args)),
        Command::Rekey(args) => rows::status(commands::rekey::run(args)),
        Command::Key { command } => commands::key::run(command),
        #[cfg(any(feature = "sqlite", feature = "postgres"))]
        Command::Store { command } => commands::store::run(command),
    })
}
