//! `lgcodec store export`: a store's rows, exactly as stored, to a backup file.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use langgraph_codec::store::{self, AnyStore, ExportOptions};
use langgraph_codec::{Error, ErrorKind};

use super::batching::Pace;
use crate::cli::fatal;
use crate::human;
use crate::output::{finish, with_progress};

#[derive(Args)]
pub struct ExportArgs {
    /// sqlite:PATH, a file path, or a postgres:// URL (any layout a saver wrote).
    pub store: String,
    /// The backup file to write (- for standard output). An existing FILE is replaced
    /// only if it is empty or an earlier backup: never the store itself. A link stays
    /// one (the backup goes where it points); a pipe or device is written through.
    #[arg(value_parser = super::a_path)]
    pub file: String,
    /// Only this thread (repeat for more).
    #[arg(long = "thread", value_name = "ID")]
    pub threads: Vec<String>,
    /// Leave this thread out (repeat for more): the backup's header lists it, and
    /// verify and import refuse a row of it.
    #[arg(long = "exclude-thread", value_name = "ID")]
    pub exclude_threads: Vec<String>,
    #[command(flatten)]
    pub pace: Pace,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// The buffer between the export and its file: 1 MiB, where std's default is 8 KiB.
/// Exporting a million checkpoints (a 3.26 GB file; the store of `benches/store_scale.sh`,
/// release build, three runs alternating with the 8 KiB build, 2026-12-04 18:00 UTC) took
/// 8.4–9.8 s against 10.2–16.9 s, its system time 2.1–2.9 s against 4.3–8.7 s. A file
/// that large passes the kernel's dirty-page threshold (`vm.dirty_background_ratio`,
/// 10% of memory, 2.4 GB on that 24 GB VM), so write-back runs while the export writes.
/// At 100,000 checkpoints (324 MB) the two took 0.75–1.35 s and 1.12–1.34 s.
const BACKUP_BUFFER: usize = 1 << 20;

pub async fn run(args: ExportArgs) -> ExitCode {
    let ExportArgs {
        store: location,
        file,
        threads,
        exclude_threads,
        pace: Pace { max_rows_per_sec },
        json,
    } = args;
    let destination = match destination(&file) {
        Ok(d) => d,
        Err(e) => return fatal(e),
    };
    let store = match AnyStore::open(&location).await {
        Ok(s) => s,
        Err(e) => return fatal(e),
    };
    // A file is written as a temporary file in its directory and renamed over FILE
    // only once complete and on disk: a killed or failed export leaves the previous
    // FILE as it was (and at most a `.FILE.*.partial` beside it, never a torn FILE).
    let mut partial = None;
    let to_stdout = matches!(destination, Destination::Stdout);
    let out: Box<dyn std::io::Write> = match destination {
        Destination::Stdout => Box::new(std::io::BufWriter::with_capacity(
            BACKUP_BUFFER,
            std::io::stdout().lock(),
        )),
        Destination::Stream(f) => Box::new(std::io::BufWriter::with_capacity(BACKUP_BUFFER, f)),
        Destination::File(path) => match partial_file(&path) {
            Ok(f) => match f.reopen() {
                Ok(w) => {
                    partial = Some((f, path));
                    Box::new(std::io::BufWriter::with_capacity(
                        BACKUP_BUFFER,
                        crate::drop_behind::DropBehind::new(w),
                    ))
                }
                Err(e) => return fatal(cannot_create(&file, &path, &e)),
            },
            Err(e) => return fatal(cannot_create(&file, &path, &e)),
        },
    };
    // Written beside FILE and renamed: a failure leaves nothing behind to say so.
    let beside = partial.is_some();
    let mut out = Noted { out, failed: None };
    let (report, flushed, failed) = with_progress(|progress| async {
        let options = ExportOptions::new()
            .threads(threads)
            .exclude_threads(exclude_threads)
            .max_rows_per_sec(max_rows_per_sec)
            .on_progress(progress);
        let report = store::export(&store, &mut out, &options).await;
        // A write error the buffer still holds (a full disk) fails the export.
        let flushed = out.flush();
        let failed = out.failed;
        drop(out);
        (report, flushed, failed)
    })
    .await;
    let report = match (report, flushed) {
        (Ok(r), Ok(())) => match partial.map(|(f, path)| finish_partial(f, &path)) {
            Some(Err(e)) => {
                return fatal(cannot_write(
                    &file,
                    &e,
                    store::is_disk_full(e.kind()),
                    beside,
                ))
            }
            _ => Ok(r),
        },
        (Ok(_), Err(e)) => {
            return fatal(cannot_write(
                &file,
                &e,
                store::is_disk_full(e.kind()),
                beside,
            ))
        }
        // The export stopped on a write of its file: said as the file's.
        (Err(e), _) if failed.is_some() => {
            let why = e.reason().map_or_else(|| e.to_string(), str::to_owned);
            return fatal(cannot_write(
                &file,
                why,
                failed.is_some_and(store::is_disk_full),
                beside,
            ));
        }
        (Err(e), _) => Err(e),
    };
    match report {
        Ok(r) => {
            let summary = format!(
                "lgcodec store export: {} checkpoint(s), {} blob(s), {} write(s) from {} ({}) to {} ({}{}, {:.1} s)",
                human::count(r.checkpoints),
                human::count(r.blobs),
                human::count(r.writes),
                r.store,
                r.layout,
                file,
                human::bytes(r.bytes),
                human::left_out(&r.excluded_threads),
                r.elapsed_s
            );
            // Written to standard output, the backup is the data: no JSON report there.
            finish(json && !to_stdout, &r, |_| {}, [summary], ExitCode::SUCCESS)
        }
        Err(e) => fatal(e),
    }
}

/// The backup's writer, noting the kind of the last error a write or flush met: what
/// tells an export that failed to write its file from one that failed to read the
/// store.
struct Noted<W> {
    out: W,
    failed: Option<std::io::ErrorKind>,
}

impl<W: std::io::Write> std::io::Write for Noted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.out
            .write(buf)
            .inspect_err(|e| self.failed = Some(e.kind()))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out
            .flush()
            .inspect_err(|e| self.failed = Some(e.kind()))
    }
}

/// The backup `file` could not be written (`why`): kind `disk_full` with what to do
/// when there was no room (`full`), else `backup`; `beside`: it was being written beside
/// FILE (not to standard output, a pipe or a device), and nothing of it is left.
fn cannot_write(file: &str, why: impl std::fmt::Display, full: bool, beside: bool) -> Error {
    let file = if file == "-" { "standard output" } else { file };
    let left = if beside {
        " (no partial file is left behind)"
    } else {
        ""
    };
    if full {
        Error::new(
            ErrorKind::DiskFull,
            format!("cannot write {file}: {why}; the disk is full: free space (or write the backup to another disk), then run the same export again{left}"),
        )
    } else {
        Error::new(ErrorKind::Backup, format!("cannot write {file}: {why}"))
    }
}

/// Where the backup goes.
enum Destination {
    /// `-`, or a path naming this process's standard output (`/dev/stdout`).
    Stdout,
    /// An existing pipe or device (a named pipe, `/dev/null`): written as it comes, as
    /// standard output is (there is no file to put in its place).
    Stream(std::fs::File),
    /// A file: written beside this path (where a symbolic link FILE points, so that the
    /// link stays one) and renamed onto it once complete.
    File(PathBuf),
}

/// What `file` names: standard output, a pipe or device, or a file [`may_replace`]
/// lets the backup take the place of. Only a regular file is read.
fn destination(file: &str) -> Result<Destination, Error> {
    if file == "-" {
        return Ok(Destination::Stdout);
    }
    super::not_a_store(file, true)?;
    let path = Path::new(file);
    // Following links: what the path names in the end.
    let Ok(meta) = std::fs::metadata(path) else {
        // Not there (or not to be looked at): created (where a link to nothing
        // points), or the write says why.
        return Ok(Destination::File(link_target(path)));
    };
    if is_stdout(&meta) {
        return Ok(Destination::Stdout);
    }
    if meta.is_dir() {
        return Err(Error::new(
            ErrorKind::Backup,
            format!(
                "{file} is a directory: give the backup file's path (e.g. {}/backup.jsonl); nothing was written",
                file.trim_end_matches('/')
            ),
        ));
    }
    if !meta.is_file() {
        // A named pipe opens once a reader is there, as the shell's `> FIFO` does.
        return std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map(Destination::Stream)
            .map_err(|e| Error::new(ErrorKind::Backup, format!("cannot open {file}: {e}")));
    }
    may_replace(file)?;
    Ok(Destination::File(link_target(path)))
}

/// The path a chain of symbolic links at `path` ends at (`path` itself if it is none),
/// whether or not anything is there: the file is put there, and the links stay.
fn link_target(path: &Path) -> PathBuf {
    let mut at = path.to_path_buf();
    // As many links as Linux follows in one path (ELOOP past them).
    for _ in 0..40 {
        let Ok(next) = std::fs::read_link(&at) else {
            break;
        };
        at = match at.parent() {
            Some(dir) if next.is_relative() => dir.join(next),
            _ => next,
        };
    }
    at
}

/// Whether `meta` is that of this process's standard output (the file, pipe or
/// terminal `/dev/stdout` names).
fn is_stdout(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        std::fs::metadata("/dev/stdout")
            .is_ok_and(|out| (out.dev(), out.ino()) == (meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// A temporary file beside `path` (same directory, so the rename is atomic), named
/// after it: `.NAME.XXXXXX.partial`. It is made readable by its owner only (a backup
/// holds the store's rows); when it replaces a file already at `path`, it takes that
/// file's permissions instead, so a backup file an operator opened to a group stays
/// open to it (it became 0600 at the next export).
fn partial_file(path: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let dir = directory_of(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let partial = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".partial")
        .tempfile_in(dir)?;
    if let Ok(existing) = std::fs::metadata(path) {
        if existing.is_file() {
            partial.as_file().set_permissions(existing.permissions())?;
        }
    }
    Ok(partial)
}

/// The directory `path` is in (`.` for a bare name).
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// The backup `file` (at `path`) could not be begun: `e`, from making the partial file
/// beside it, said of FILE's directory and what to do, not of the partial file's name
/// (it was "No such file or directory (os error 2) at path \"dir/.b.jsonl.heiRk8.partial\"").
fn cannot_create(file: &str, path: &Path, e: &std::io::Error) -> Error {
    use std::io::ErrorKind as Io;
    let at = directory_of(path);
    let dir = at.display();
    let why = match e.kind() {
        Io::NotFound if !at.exists() => {
            format!("there is no directory {dir}: create it, or give a path in one that exists")
        }
        Io::PermissionDenied => {
            format!("this user cannot write in {dir}: give a path in a directory you can write to")
        }
        Io::ReadOnlyFilesystem => {
            format!("{dir} is on a read-only file system: give a path on another")
        }
        Io::NotADirectory => format!("{dir} is not a directory: give a path in one"),
        // The system's own words, without the partial file's name (the `tempfile`
        // crate adds it as ` at path "…"`, in an error type it does not export).
        _ => {
            let text = e.to_string();
            text.split_once(" at path ")
                .map_or(text.as_str(), |(words, _)| words)
                .to_owned()
        }
    };
    Error::new(ErrorKind::Backup, format!("cannot create {file}: {why}"))
}

/// Refuses to put the backup in place of a regular file that is not one: `file` may be
/// empty, or an earlier backup (its first line a backup header), never the store itself
/// or another database a slip of the keyboard named (`export checkpoints.db
/// checkpoints.db` replaced the store with its backup, and a Python process still
/// writing to the old file lost what it wrote). A file that cannot be read is left to
/// the write to report.
fn may_replace(file: &str) -> Result<(), Error> {
    use std::io::Read as _;
    // A header is well under this.
    const HEAD: u64 = 4096;
    let mut head = Vec::new();
    let read = std::fs::File::open(file).and_then(|f| f.take(HEAD).read_to_end(&mut head));
    if read.is_err() || head.is_empty() || store::begins_a_backup(&head) {
        return Ok(());
    }
    let what = if head.starts_with(langgraph_codec::saver::layout::SQLITE_HEADER) {
        "a SQLite database (the store itself?)"
    } else {
        "not a backup file"
    };
    Err(Error::new(
        ErrorKind::Backup,
        format!(
            "{file} is {what}: an export replaces only an earlier backup; give the backup another path, or remove {file} first if it is yours to lose (nothing was written)"
        ),
    ))
}

/// Puts a complete temporary file in place of `file`: its bytes on disk first, then the
/// rename, then the directory entry on disk. The file's pages are dropped from the page
/// cache once on disk: a backup is read again only to verify or restore it.
fn finish_partial(partial: tempfile::NamedTempFile, file: &Path) -> std::io::Result<()> {
    partial.as_file().sync_all()?;
    crate::drop_behind::drop_cached(partial.as_file());
    partial.persist(file).map_err(|e| e.error)?;
    if let Some(dir) = file.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}
