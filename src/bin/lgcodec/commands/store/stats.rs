//! `lgcodec store stats`: rows and bytes per thread and per channel. Read-only.

use std::process::ExitCode;

use clap::Args;
use langgraph_codec::store::{AnyStore, StatsOptions, StoreKeys, ThreadOrder};

use crate::cli::fatal;
use crate::human;
use crate::output::{finish, say};

#[derive(Args)]
pub struct StatsArgs {
    /// sqlite:PATH, a file path, or a postgres:// URL (any layout a saver wrote).
    /// SQLite checkpoints are decoded (with the keys in LANGGRAPH_AES_KEY / _PREVIOUS /
    /// _FALLBACK_KEYS) to size each channel's value.
    pub store: String,
    /// Only the first N threads (in --sort order; 0: all). The totals count every
    /// thread; the report (and memory) holds N.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub top: usize,
    /// The order of the threads: id, size (largest first), checkpoints or writes
    /// (most first).
    #[arg(long, value_enum, default_value_t = SortBy::Id)]
    pub sort: SortBy,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// `stats --sort`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SortBy {
    Id,
    Size,
    Checkpoints,
    Writes,
}

impl SortBy {
    fn order(self) -> ThreadOrder {
        match self {
            SortBy::Id => ThreadOrder::Id,
            SortBy::Size => ThreadOrder::Size,
            SortBy::Checkpoints => ThreadOrder::Checkpoints,
            SortBy::Writes => ThreadOrder::Writes,
        }
    }
}

pub async fn run(args: StatsArgs, keys: &StoreKeys) -> ExitCode {
    let store = match AnyStore::open(&args.store).await {
        Ok(s) => s,
        Err(e) => return fatal(e),
    };
    let options = StatsOptions::new().top(args.top, args.sort.order());
    let stats = match store.stats(keys, &options).await {
        Ok(s) => s,
        Err(e) => return fatal(e),
    };
    let top = stats.top_threads(args.top, args.sort.order());
    let f = &stats.files;
    let summary = format!(
        "lgcodec store stats: {} thread(s), {} checkpoint(s), {} in rows; {} on disk{}",
        human::count(stats.threads),
        human::count(stats.total.checkpoints.rows),
        human::bytes(stats.total.total_bytes),
        human::bytes(f.database_bytes),
        match (f.wal_bytes, f.free_bytes, f.tables_bytes) {
            (Some(w), Some(free), _) => format!(
                " (+ {} WAL, {} free pages)",
                human::bytes(w),
                human::bytes(free)
            ),
            (_, _, Some(t)) => format!(" (the database; the saver's tables {})", human::bytes(t)),
            _ => String::new(),
        }
    );
    // With --top or --sort: the threads chosen, in order, as `top_threads`.
    let value = if args.json {
        let mut value = match serde_json::to_value(&stats) {
            Ok(v) => v,
            Err(e) => return fatal(e.to_string()),
        };
        if args.top > 0 || args.sort != SortBy::Id {
            let list: Vec<serde_json::Value> = top
                .iter()
                .map(|(t, s)| serde_json::json!({"thread": t, "size": s}))
                .collect();
            if let Some(map) = value.as_object_mut() {
                map.insert("top_threads".to_owned(), serde_json::Value::Array(list));
            }
        }
        value
    } else {
        serde_json::Value::Null
    };
    let text = |_: &serde_json::Value| {
        say!(
            "store: {} ({}; {})",
            stats.store,
            stats.backend,
            stats.layout
        );
        say!(
            "{} thread(s), {}: checkpoints {} rows / {}, blobs {} / {}, writes {} / {}",
            human::count(stats.threads),
            human::bytes(stats.total.total_bytes),
            human::count(stats.total.checkpoints.rows),
            human::bytes(stats.total.checkpoints.bytes),
            human::count(stats.total.blobs.rows),
            human::bytes(stats.total.blobs.bytes),
            human::count(stats.total.writes.rows),
            human::bytes(stats.total.writes.bytes)
        );
        say!(
            "per thread (bytes: checkpoints + blobs + writes){}:",
            match (args.top, args.sort) {
                (0, SortBy::Id) => String::new(),
                (0, by) => format!(", by {by:?}").to_lowercase(),
                (n, by) => format!(", the first {n} by {by:?}").to_lowercase(),
            }
        );
        for (thread, s) in top {
            say!(
                "  {thread:<36} {:>10} = {} + {} + {} ({} checkpoint(s))",
                s.total_bytes,
                s.checkpoints.bytes,
                s.blobs.bytes,
                s.writes.bytes,
                s.checkpoints.rows
            );
        }
        say!("per channel (writes and values):");
        for (channel, s) in &stats.per_channel {
            say!("  {channel:<36} {:>10} bytes in {} row(s)", s.bytes, s.rows);
        }
        say!(
            "per channel, values only ({}):",
            if stats.backend == "sqlite" {
                "encoded size of each value in the checkpoint rows"
            } else {
                "blob rows"
            }
        );
        for (channel, s) in &stats.per_channel_values {
            say!("  {channel:<36} {:>10} bytes in {} row(s)", s.bytes, s.rows);
        }
        if stats.unreadable_checkpoints > 0 {
            say!(
                "{} checkpoint row(s) could not be decoded (no key for them?): their channels are not counted",
                stats.unreadable_checkpoints
            );
        }
    };
    finish(args.json, &value, text, [summary], ExitCode::SUCCESS)
}
