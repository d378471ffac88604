//! `lgcodec store inspect`: a store's threads, a thread's history as a tree, a
//! checkpoint's state, what changed between two checkpoints. Read-only.

use std::io::Write as _;
use std::ops::ControlFlow;
use std::process::ExitCode;

use clap::Args;
use langgraph_codec::store::{AnyStore, CheckpointDiff, HistoryFormat, StoreKeys, ThreadSummary};

use crate::cli::{fatal, Fatal, FINDINGS};
use crate::output::{finish, say};

#[derive(Args)]
pub struct InspectArgs {
    /// sqlite:PATH, a file path, or a postgres:// URL (any layout a saver wrote).
    pub store: String,
    /// Show this thread's history as a tree (forks marked).
    #[arg(long)]
    pub thread: Option<String>,
    /// With --thread: print this checkpoint's state (JSON view, decrypted with the keys
    /// in LANGGRAPH_AES_KEY / _PREVIOUS / _FALLBACK_KEYS).
    #[arg(long, requires = "thread")]
    pub checkpoint: Option<String>,
    /// With --checkpoint: what changed from --checkpoint to this checkpoint.
    #[arg(long, requires = "checkpoint", value_name = "ID2")]
    pub diff: Option<String>,
    /// With --thread: decode every checkpoint of the history (with the keys) and mark
    /// those that do not decode, saying why (exit 1 if any).
    #[arg(long, requires = "thread", conflicts_with = "checkpoint")]
    pub check: bool,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// Every thread, one line (or, with `json`, one element of the array) as each is read:
/// memory holds a page of threads, not the store. A fatal error after the first
/// thread leaves what was printed cut short, with exit status 2.
async fn list_threads(store: &AnyStore, json: bool, keys: &StoreKeys) -> ExitCode {
    // Without its password (the argument as given showed it).
    let shown = store.location().display();
    // The header and every row in the same columns.
    let line = |[thread, checkpoints, writes, latest, step, time, bytes]: [&str; 7]| {
        format!(
            "{thread:<36} {checkpoints:>11} {writes:>7} {latest:<36} {step:>5} {time:<32} {bytes:>10}\n"
        )
    };
    let row = |t: &ThreadSummary| {
        line([
            &t.thread_id,
            &t.checkpoints.to_string(),
            &t.writes.to_string(),
            &t.latest_checkpoint_id,
            &t.latest_step.map_or("?".to_owned(), |s| s.to_string()),
            t.latest_ts.as_deref().unwrap_or("?"),
            &t.bytes.to_string(),
        ])
    };
    let write = |text: &str| std::io::stdout().lock().write_all(text.as_bytes());
    let opening = if json {
        "[".to_owned()
    } else {
        line([
            "thread",
            "checkpoints",
            "writes",
            "latest checkpoint",
            "step",
            "time",
            "bytes",
        ])
    };
    if let Err(e) = write(&opening) {
        return fatal(Fatal::unwritable(&e));
    }
    let mut failed: Option<Fatal> = None;
    let mut after_first = false;
    // Threads whose latest checkpoint gave no time (shown `?`, `null` in JSON).
    let mut untimed = 0u64;
    let listed = store
        .each_thread(keys, |t| {
            untimed += u64::from(t.latest_ts.is_none());
            let text = if json {
                match serde_json::to_string(&t) {
                    // The elements of one array, as `serde_json` writes a list.
                    Ok(item) if after_first => format!(",{item}"),
                    Ok(item) => item,
                    Err(e) => {
                        failed = Some(e.to_string().into());
                        return ControlFlow::Break(());
                    }
                }
            } else {
                row(&t)
            };
            after_first = true;
            match write(&text) {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    failed = Some(Fatal::unwritable(&e));
                    ControlFlow::Break(())
                }
            }
        })
        .await;
    let listed = match (listed, failed) {
        (Err(e), _) => return fatal(e),
        (Ok(_), Some(e)) => return fatal(e),
        (Ok(n), None) => n,
    };
    if json {
        if let Err(e) = write("]\n") {
            return fatal(Fatal::unwritable(&e));
        }
    }
    note!(
        "lgcodec store inspect: {listed} thread(s) in {shown} ({})",
        store.layout()
    );
    if untimed > 0 {
        // On SQLite the time is read from the checkpoint itself: an encrypted one needs
        // its key (on Postgres the row keeps it in clear).
        note!(
            "lgcodec store inspect: no time for {untimed} thread(s): their latest checkpoint did not decode ({})",
            if keys.has_primary() {
                "under another key, or damaged? `lgcodec store audit` tells which key each value is under"
            } else {
                "encrypted? set LANGGRAPH_AES_KEY to the key it was written with"
            }
        );
    }
    ExitCode::SUCCESS
}

/// An output that notes whether anything was written to it, and whether its reader
/// went away (the library's error then says only that writing failed).
struct Begun<W> {
    out: W,
    begun: bool,
    closed: bool,
}

impl<W> Begun<W> {
    fn new(out: W) -> Self {
        Begun {
            out,
            begun: false,
            closed: false,
        }
    }

    fn noted<T>(&mut self, result: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &result {
            self.closed |= e.kind() == std::io::ErrorKind::BrokenPipe;
        }
        result
    }
}

impl<W: std::io::Write> std::io::Write for Begun<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.begun |= !bytes.is_empty();
        let written = self.out.write(bytes);
        self.noted(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let flushed = self.out.flush();
        self.noted(flushed)
    }
}

pub async fn run(args: InspectArgs, keys: &StoreKeys) -> ExitCode {
    let store = match AnyStore::open(&args.store).await {
        Ok(s) => s,
        Err(e) => return fatal(e),
    };
    let Some(thread) = args.thread else {
        return list_threads(&store, args.json, keys).await;
    };
    match (args.checkpoint, args.diff) {
        (None, _) => {
            // Written as the tree is walked from a scratch file: neither the tree nor
            // its text is held, however long the thread.
            let mut out = Begun::new(std::io::BufWriter::new(std::io::stdout()));
            let format = if args.json {
                HistoryFormat::Json
            } else {
                HistoryFormat::Tree
            };
            let check = args.check.then_some(keys);
            let h = match store.write_history(&thread, check, format, &mut out).await {
                Err(_) if out.closed => {
                    return fatal(Fatal::unwritable(&std::io::ErrorKind::BrokenPipe.into()))
                }
                Err(e) => {
                    // A JSON document begun ends its line: the error's object is a
                    // line of its own.
                    if out.begun && format == HistoryFormat::Json {
                        let _ = out.write_all(b"\n");
                    }
                    let _ = out.flush();
                    return fatal(e);
                }
                Ok(h) if h.checkpoints == 0 => {
                    return fatal(format!("no thread {thread:?} in the store"))
                }
                Ok(h) => h,
            };
            let ended = match format {
                HistoryFormat::Json => out.write_all(b"\n"),
                _ => Ok(()),
            }
            .and_then(|()| out.flush());
            match ended {
                Err(e) => fatal(Fatal::unwritable(&e)),
                Ok(()) => {
                    note!(
                        "lgcodec store inspect: thread {thread:?}: {} checkpoint(s), {} fork(s){}",
                        h.checkpoints,
                        h.forks,
                        h.unreadable
                            .map_or(String::new(), |n| format!(", {n} that do not decode"))
                    );
                    match h.unreadable {
                        Some(n) if n > 0 => ExitCode::from(FINDINGS),
                        _ => ExitCode::SUCCESS,
                    }
                }
            }
        }
        (Some(id), None) => match store.state(keys, &thread, &id).await {
            Ok(Some(state)) => {
                let text = if args.json {
                    serde_json::to_string(&state)
                } else {
                    serde_json::to_string_pretty(&state)
                };
                match text {
                    Ok(t) => {
                        say!("{t}");
                        note!("lgcodec store inspect: checkpoint {id:?} of thread {thread:?}");
                        ExitCode::SUCCESS
                    }
                    Err(e) => fatal(e.to_string()),
                }
            }
            Ok(None) => fatal(format!("no checkpoint {id:?} in thread {thread:?}")),
            Err(e) => fatal(e),
        },
        (Some(from), Some(to)) => match store.diff(keys, &thread, &from, &to).await {
            Ok(d) => {
                let summary = format!(
                    "lgcodec store inspect: {} -> {}: {} channel(s) changed, {} added, {} removed",
                    d.from,
                    d.to,
                    d.changed.len(),
                    d.added.len(),
                    d.removed.len()
                );
                let text = |d: &CheckpointDiff| {
                    say!("{} -> {}", d.from, d.to);
                    say!("changed: {}", d.changed.join(", "));
                    say!("added:   {}", d.added.join(", "));
                    say!("removed: {}", d.removed.join(", "));
                    for (channel, items) in &d.appended {
                        say!("{channel}: {} item(s) appended", items.len());
                        for item in items {
                            say!("  + {item}");
                        }
                    }
                };
                finish(args.json, &d, text, [summary], ExitCode::SUCCESS)
            }
            Err(e) => fatal(e),
        },
    }
}
