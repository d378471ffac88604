//! `lgcodec store stats`: rows and bytes per thread and per channel. Read-only.

use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use clap::Args;
use langgraph_codec::store::{
    AnyStore, StatsOptions, StoreKeys, StoreStats, ThreadOrder, ThreadSize,
};

use crate::cli::fatal;
use crate::human;
use crate::output::{finish, json_fields_but, lock, Streamed};

#[derive(Args)]
pub struct StatsArgs {
    /// sqlite:PATH, a file path, or a postgres:// URL (any layout a saver wrote).
    /// SQLite checkpoints are decoded (with the keys in LANGGRAPH_AES_KEY / _PREVIOUS /
    /// _FALLBACK_KEYS) to size each channel's value.
    pub store: String,
    /// Only the first N threads (in --sort order; 0: all). The totals count every
    /// thread; the report (and memory) holds N. Every thread by id (the default) is
    /// written as it is counted, held by nothing; with --sort and no --top, every
    /// thread is sorted in a scratch file (in SQLITE_TMPDIR or TMPDIR, else /var/tmp),
    /// held by nothing either.
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
    /// As the text report names the order.
    fn name(self) -> &'static str {
        match self {
            SortBy::Id => "id",
            SortBy::Size => "size",
            SortBy::Checkpoints => "checkpoints",
            SortBy::Writes => "writes",
        }
    }

    fn order(self) -> ThreadOrder {
        match self {
            SortBy::Id => ThreadOrder::Id,
            SortBy::Size => ThreadOrder::Size,
            SortBy::Checkpoints => ThreadOrder::Checkpoints,
            SortBy::Writes => ThreadOrder::Writes,
        }
    }
}

/// Where the threads go as they are counted (every thread, by id) and then, with
/// `--sort`, in order.
struct Listing {
    out: Streamed,
    json: bool,
    /// No entry written yet in the JSON object or list open.
    first: bool,
    /// The JSON `top_threads` list is open (`per_thread` closed).
    in_order: bool,
}

impl Listing {
    fn write(&mut self, f: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) {
        self.out.write(f);
    }

    fn thread(&mut self, thread: &str, size: &ThreadSize) {
        let (json, first) = (self.json, std::mem::replace(&mut self.first, false));
        self.write(|out| {
            if json {
                // The entries of one object, as `serde_json` writes a map.
                if !first {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, thread)?;
                out.write_all(b":")?;
                Ok(serde_json::to_writer(out, size)?)
            } else {
                thread_line(out, thread, size)
            }
        });
    }

    /// Ends the JSON `per_thread` object and opens `top_threads`, once.
    fn open_in_order(&mut self) {
        if self.json && !std::mem::replace(&mut self.in_order, true) {
            self.first = true;
            self.write(|out| out.write_all(b"},\"top_threads\":["));
        }
    }

    /// A thread in `--sort` order, after every thread was counted.
    fn in_order(&mut self, thread: &str, size: &ThreadSize) {
        self.open_in_order();
        let (json, first) = (self.json, std::mem::replace(&mut self.first, false));
        self.write(|out| {
            if json {
                if !first {
                    out.write_all(b",")?;
                }
                Ok(serde_json::to_writer(out, &Entry { thread, size })?)
            } else {
                thread_line(out, thread, size)
            }
        });
    }
}

/// The report with `--top` or `--sort`: the stats, then the threads chosen, in order.
#[derive(serde::Serialize)]
struct Chosen<'a> {
    #[serde(flatten)]
    stats: &'a StoreStats,
    top_threads: Vec<Entry<'a>>,
}

#[derive(serde::Serialize)]
struct Entry<'a> {
    thread: &'a str,
    size: &'a ThreadSize,
}

fn thread_line(out: &mut dyn Write, thread: &str, s: &ThreadSize) -> std::io::Result<()> {
    writeln!(
        out,
        "  {thread:<36} {:>10} = {} + {} + {} ({} checkpoint(s))",
        s.total_bytes, s.checkpoints.bytes, s.blobs.bytes, s.writes.bytes, s.checkpoints.rows
    )
}

fn store_line(
    out: &mut dyn Write,
    store: &str,
    backend: &str,
    layout: &str,
) -> std::io::Result<()> {
    writeln!(out, "store: {store} ({backend}; {layout})")
}

/// The totals and the channels, as the text report ends.
fn rest(out: &mut dyn Write, stats: &StoreStats) -> std::io::Result<()> {
    writeln!(
        out,
        "{} thread(s), {}: checkpoints {} rows / {}, blobs {} / {}, writes {} / {}",
        human::count(stats.threads),
        human::bytes(stats.total.total_bytes),
        human::count(stats.total.checkpoints.rows),
        human::bytes(stats.total.checkpoints.bytes),
        human::count(stats.total.blobs.rows),
        human::bytes(stats.total.blobs.bytes),
        human::count(stats.total.writes.rows),
        human::bytes(stats.total.writes.bytes)
    )?;
    writeln!(out, "per channel (writes and values):")?;
    for (channel, s) in &stats.per_channel {
        writeln!(
            out,
            "  {channel:<36} {:>10} bytes in {} row(s)",
            s.bytes, s.rows
        )?;
    }
    writeln!(
        out,
        "per channel, values only ({}):",
        if stats.backend == "sqlite" {
            "encoded size of each value in the checkpoint rows"
        } else {
            "blob rows"
        }
    )?;
    for (channel, s) in &stats.per_channel_values {
        writeln!(
            out,
            "  {channel:<36} {:>10} bytes in {} row(s)",
            s.bytes, s.rows
        )?;
    }
    if stats.unreadable_checkpoints > 0 {
        writeln!(
            out,
            "{} checkpoint row(s) could not be decoded (no key for them?): their channels are not counted",
            stats.unreadable_checkpoints
        )?;
    }
    Ok(())
}

fn summary(stats: &StoreStats) -> String {
    let f = &stats.files;
    format!(
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
    )
}

pub async fn run(args: StatsArgs, keys: &StoreKeys) -> ExitCode {
    let store = match AnyStore::open(&args.store).await {
        Ok(s) => s,
        Err(e) => return fatal(e),
    };
    if args.top == 0 {
        return every_thread(&store, keys, args.json, args.sort).await;
    }
    let options = StatsOptions::new().top(args.top, args.sort.order());
    let stats = match store.stats(keys, &options).await {
        Ok(s) => s,
        Err(e) => return fatal(e),
    };
    let top = stats.top_threads(args.top, args.sort.order());
    let summary = summary(&stats);
    // The threads chosen, in order, as `top_threads`.
    // Serialized as written, not through a JSON value first (a value of 200,000
    // threads took 1.5 KB a thread, twice over with the list).
    let report = Chosen {
        stats: &stats,
        top_threads: top
            .iter()
            .map(|&(thread, size)| Entry { thread, size })
            .collect(),
    };
    let text = |_: &Chosen<'_>| {
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        let _ = (|| {
            store_line(&mut out, &stats.store, stats.backend, &stats.layout)?;
            writeln!(
                out,
                "per thread (bytes: checkpoints + blobs + writes), the first {} by {}:",
                args.top,
                args.sort.name()
            )?;
            for (thread, s) in &top {
                thread_line(&mut out, thread, s)?;
            }
            rest(&mut out, &stats)?;
            out.flush()
        })();
    };
    finish(args.json, &report, text, [summary], ExitCode::SUCCESS)
}

/// Every thread, by id (the default) or in `--sort` order: each written as it is
/// counted, or as it comes back sorted from the library's scratch file, held by
/// neither the report nor this command. Held in a map, 200,000 threads took 51 MiB
/// and their JSON 373 MiB, sorted by size 56 MiB (2026-12-05, SQLite, release build);
/// now as much as `--top 10`.
async fn every_thread(store: &AnyStore, keys: &StoreKeys, json: bool, sort: SortBy) -> ExitCode {
    let listing = Arc::new(Mutex::new(Listing {
        out: Streamed::new(),
        json,
        first: true,
        in_order: false,
    }));
    let (shown, backend, layout) = (
        store.location().display(),
        store.backend_name(),
        store.layout().to_string(),
    );
    lock(&listing).write(|out| {
        if json {
            // The report's fields in its order, `per_thread` filled as it is counted,
            // `top_threads` (with --sort) as the threads come back in order, and the
            // rest after.
            write!(out, "{{\"store\":")?;
            serde_json::to_writer(&mut *out, &shown)?;
            write!(out, ",\"backend\":\"{backend}\",\"layout\":")?;
            serde_json::to_writer(&mut *out, &layout)?;
            write!(out, ",\"per_thread\":{{")
        } else {
            store_line(out, &shown, backend, &layout)?;
            match sort {
                SortBy::Id => writeln!(out, "per thread (bytes: checkpoints + blobs + writes):"),
                _ => writeln!(
                    out,
                    "per thread (bytes: checkpoints + blobs + writes), by {}:",
                    sort.name()
                ),
            }
        }
    });
    let mut options = StatsOptions::new();
    if json || sort == SortBy::Id {
        let sink = Arc::clone(&listing);
        options = options.on_thread(move |thread, size| lock(&sink).thread(thread, size));
    }
    if sort != SortBy::Id {
        let sink = Arc::clone(&listing);
        options = options.sorted(sort.order(), move |thread, size| {
            lock(&sink).in_order(thread, size);
        });
    }
    let stats = store.stats(keys, &options).await;
    let mut listing = lock(&listing);
    let stats = match stats {
        Ok(s) => s,
        Err(e) => {
            // What was listed goes out before the error, as an unbuffered listing's
            // would (`inspect`'s).
            listing.out.cut(json);
            return fatal(e);
        }
    };
    if sort != SortBy::Id {
        // No thread: the list opens here.
        listing.open_in_order();
    }
    listing.write(|out| {
        if json {
            out.write_all(if sort == SortBy::Id { b"}" } else { b"]" })?;
            json_fields_but(out, &stats, &["store", "backend", "layout", "per_thread"])?;
            out.write_all(b"}\n")
        } else {
            rest(out, &stats)
        }
    });
    if let Err(e) = listing.out.end() {
        return fatal(e);
    }
    note!("{}", summary(&stats));
    ExitCode::SUCCESS
}
