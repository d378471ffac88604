//! How a store command shows its work: a progress bar on a terminal while it runs,
//! then its report (one JSON object with `--json`, else text) on standard output and
//! its summary on standard error. The store commands end through [`finish`] (but
//! `retain`, which prints a JSON line per sweep, and `inspect --checkpoint`, which
//! prints a state), and those with a bar run through [`with_progress`].

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use langgraph_codec::store::Progress;

use crate::cli::{fatal, Fatal};
use crate::human;

/// `println!` that does not panic on a closed pipe (`| head`): the line is dropped, and
/// the command ends with [`crate::cli::CLOSED_OUTPUT`] once it is done.
macro_rules! say {
    ($($t:tt)*) => {{
        if let Err(e) = std::io::Write::write_fmt(
            &mut std::io::stdout().lock(),
            format_args!("{}\n", format_args!($($t)*)),
        ) {
            crate::cli::unwritten(&e);
        }
    }};
}
pub(crate) use say;

/// A progress bar on standard error when it is a terminal; `None` otherwise.
pub(crate) fn bar() -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(0);
    let style = indicatif::ProgressStyle::with_template(
        "{prefix:>24} [{bar:30}] {human_pos}/{human_len} {msg}, {rate}, {eta} left",
    )
    .map(|s| {
        // Whole units a second with commas (indicatif's `per_sec` prints three decimals).
        s.progress_chars("=> ").with_key(
            "rate",
            |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{}", human::rate(state.per_sec(), unit()));
            },
        )
    })
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    bar.enable_steady_tick(Duration::from_millis(200));
    Some(bar)
}

/// How far the running operation got, as its progress reports it: what an
/// interruption says.
pub(crate) static ROWS_DONE: AtomicU64 = AtomicU64::new(0);

/// Set by the first SIGINT or SIGTERM: the running operation (one that takes a stop
/// flag: encrypt, rekey, import, copy, prune, retain) ends after the batch in flight.
pub(crate) fn stop_flag() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    static STOP: std::sync::OnceLock<std::sync::Arc<std::sync::atomic::AtomicBool>> =
        std::sync::OnceLock::new();
    STOP.get_or_init(Default::default).clone()
}

/// What [`ROWS_DONE`] counts ([`Progress::unit`]; `rows` before the first report).
static UNIT: std::sync::Mutex<&str> = std::sync::Mutex::new("rows");

/// What the running operation counts: `values`, `rows`, `checkpoints` or `threads`.
pub(crate) fn unit() -> &'static str {
    *UNIT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The progress callback: moves the bar when there is one (a terminal), and always
/// keeps [`ROWS_DONE`].
pub(crate) fn on_progress(
    bar: Option<&indicatif::ProgressBar>,
) -> impl Fn(&Progress) + Send + Sync + 'static {
    let bar = bar.cloned();
    move |p: &Progress| {
        ROWS_DONE.store(p.rows_done, Ordering::Relaxed);
        *UNIT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = p.unit;
        if let Some(bar) = &bar {
            bar.set_length(p.total_estimate);
            bar.set_position(p.rows_done);
            bar.set_prefix(p.column);
            bar.set_message(p.unit);
        }
    }
}

/// The progress callback [`with_progress`] hands its operation.
pub(crate) type OnProgress = Box<dyn Fn(&Progress) + Send + Sync>;

/// Runs `operation` with a progress bar on a terminal: `operation` gets the progress
/// callback to put in its options; the bar is cleared once it returns, before anything
/// is printed.
pub(crate) async fn with_progress<T, F, Fut>(operation: F) -> T
where
    F: FnOnce(OnProgress) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let bar = bar();
    let out = operation(Box::new(on_progress(bar.as_ref()))).await;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    out
}

/// `value` as one JSON line on standard output.
pub(crate) fn emit_json(value: &impl serde::Serialize) -> Result<(), Fatal> {
    // Written as it is serialized: a report as large as a thread's history (100,000
    // checkpoints) is not held as text first.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    serde_json::to_writer(&mut out, value)
        .map_err(|e| match e.io_error_kind() {
            Some(kind) => Fatal::unwritable(&std::io::Error::new(kind, e)),
            None => e.to_string().into(),
        })
        .and_then(|()| writeln!(out).map_err(|e| Fatal::unwritable(&e)))?;
    out.flush().map_err(|e| Fatal::unwritable(&e))
}

/// How a command that ran ends: the report on standard output (one JSON line with
/// `--json`, else what `text` prints; nothing for a command without a text report),
/// then the `notes` (the summary line among them) on standard error, then `status`.
/// A report that cannot be written is fatal.
pub(crate) fn finish<R: serde::Serialize>(
    json: bool,
    report: &R,
    text: impl FnOnce(&R),
    notes: impl IntoIterator<Item = String>,
    status: ExitCode,
) -> ExitCode {
    if json {
        if let Err(e) = emit_json(report) {
            return fatal(e);
        }
    } else {
        text(report);
    }
    for note in notes {
        note!("{note}");
    }
    status
}

/// Standard output written as a command's data comes in (a listing, a JSON document
/// filled as it is counted), buffered, shared with the library's callbacks; the first
/// error writing to it is kept, and nothing more is written after it.
pub(crate) struct Streamed {
    out: std::io::BufWriter<std::io::Stdout>,
    failed: Option<std::io::Error>,
}

impl Streamed {
    pub(crate) fn new() -> Self {
        Streamed {
            out: std::io::BufWriter::new(std::io::stdout()),
            failed: None,
        }
    }

    /// `f` on the output, unless an earlier write failed.
    pub(crate) fn write(&mut self, f: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) {
        if self.failed.is_none() {
            if let Err(e) = f(&mut self.out) {
                self.failed = Some(e);
            }
        }
    }

    /// Before a fatal error: what was written goes out, a JSON document begun
    /// (`json_begun`) ending its line, so that the error's object is a line of its
    /// own, the last.
    pub(crate) fn cut(&mut self, json_begun: bool) {
        if json_begun {
            self.write(|out| out.write_all(b"\n"));
        }
        let _ = self.out.flush();
    }

    /// Flushed: the first error writing, as a fatal one's text.
    pub(crate) fn end(&mut self) -> Result<(), Fatal> {
        self.write(|out| out.flush());
        match self.failed.take() {
            Some(e) => Err(Fatal::unwritable(&e)),
            None => Ok(()),
        }
    }
}

/// A listing shared with the library's callbacks, as a panic while writing left it
/// (it poisons nothing written).
pub(crate) fn lock<T>(s: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    s.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The fields of `report`'s JSON object but `skip`, each as `,"name":value`: the rest
/// of a document whose first fields were written as they were counted.
pub(crate) fn json_fields_but(
    out: &mut dyn Write,
    report: &impl serde::Serialize,
    skip: &[&str],
) -> std::io::Result<()> {
    let serde_json::Value::Object(fields) = serde_json::to_value(report)? else {
        return Ok(());
    };
    for (name, value) in fields
        .iter()
        .filter(|(name, _)| !skip.contains(&name.as_str()))
    {
        out.write_all(b",")?;
        serde_json::to_writer(&mut *out, name)?;
        out.write_all(b":")?;
        serde_json::to_writer(&mut *out, value)?;
    }
    Ok(())
}
