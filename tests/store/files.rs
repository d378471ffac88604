//! The files `lgcodec store` writes: an export is written beside its target and renamed
//! into place, so a killed or failed export leaves the previous backup as it was.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::page_cache::{cached_bytes, memory_file_system};
use crate::support::scratch;
use crate::support::store_fixture::{sqlite_store, Shape};

const BIN: &str = env!("CARGO_BIN_EXE_lgcodec");

/// A SQLite store of `threads` threads of 20 steps (about 40 kB a thread exported).
fn store(dir: &Path, threads: usize) -> PathBuf {
    let path = dir.join("store.db");
    let shape = Shape {
        threads,
        steps: 20,
        ..Shape::default()
    };
    sqlite_store(&path, &shape, "t-");
    path
}

/// The `.NAME.*.partial` files beside `file`.
fn partials(file: &Path) -> Vec<PathBuf> {
    let name = file
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    std::fs::read_dir(file.parent().expect("dir"))
        .expect("list")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().map(|n| n.to_string_lossy().into_owned());
            n.is_some_and(|n| n.starts_with(&format!(".{name}.")) && n.ends_with(".partial"))
        })
        .collect()
}

/// `lgcodec store export SOURCE BACKUP`, its output.
fn export(source: &Path, backup: &Path) -> std::process::Output {
    Command::new(BIN)
        .args(["store", "export"])
        .arg(source)
        .arg(backup)
        .output()
        .expect("run lgcodec store export")
}

/// `lgcodec store ARGS…` run in `dir`: its exit status and standard error.
fn store_in<S: AsRef<std::ffi::OsStr>>(dir: &Path, args: &[S]) -> (Option<i32>, String) {
    let out = Command::new(BIN)
        .arg("store")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run lgcodec store");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `lgcodec store COMMAND SOURCE ARGS…` started in `dir`, its stderr piped and its
/// stdout as given.
fn spawn_store(
    dir: &Path,
    command: &str,
    source: &Path,
    args: &[&Path],
    stdout: Stdio,
) -> std::process::Child {
    Command::new(BIN)
        .args(["store", command])
        .arg(source)
        .args(args)
        .current_dir(dir)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .expect("run lgcodec store")
}

/// A named pipe `name` made in `dir`.
#[cfg(unix)]
fn named_pipe(dir: &Path, name: &str) -> PathBuf {
    let fifo = dir.join(name);
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo")
        .success());
    fifo
}

/// Whether `bytes` are a whole export: they end with its `end` line.
fn complete(bytes: &[u8]) -> bool {
    String::from_utf8_lossy(bytes)
        .lines()
        .last()
        .is_some_and(|l| l.starts_with("{\"t\":\"end\""))
}

/// SIGKILL lands while the export is writing (a partial file has bytes, or the backup
/// has changed): afterwards the backup is the previous one or a whole export, never a
/// torn one. The kill is timed by what the test sees on disk, not by a sleep; a run
/// that finishes before it is seen writing is retried (bounded), the backup put back.
#[test]
fn a_killed_export_leaves_the_previous_backup_whole() {
    let dir = scratch("export-kill");
    let source = store(&dir, 60);
    let backup = dir.join("backup.jsonl");
    // An earlier backup (an export replaces nothing else): its header, then a mark.
    let previous =
        b"{\"format\":\"lgcodec-store-backup\",\"version\":1,\"the\":\"previous backup\"}\n"
            .to_vec();
    let mut caught = false;
    for _ in 0..20 {
        std::fs::write(&backup, &previous).expect("previous backup");
        for p in partials(&backup) {
            std::fs::remove_file(p).expect("remove partial");
        }
        let mut child = spawn_store(&dir, "export", &source, &[&backup], Stdio::null());
        let started = Instant::now();
        let writing = loop {
            let partial = partials(&backup)
                .iter()
                .any(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 0));
            if partial || std::fs::read(&backup).is_ok_and(|b| b != previous) {
                break true;
            }
            if child.try_wait().expect("wait").is_some()
                || started.elapsed() > Duration::from_secs(60)
            {
                break false;
            }
            std::thread::sleep(Duration::from_micros(200));
        };
        // Still running? (It may have finished in between: that round does not count.)
        let killed = writing && child.try_wait().expect("wait").is_none() && child.kill().is_ok();
        let _ = child.wait();
        if killed {
            let now = std::fs::read(&backup).expect("backup");
            assert!(
                now == previous || complete(&now),
                "the killed export left a torn backup ({} bytes)",
                now.len()
            );
            if now == previous {
                caught = true;
                break;
            }
        }
    }
    assert!(caught, "no export was killed while writing in 20 tries");
    // A rerun replaces the backup with a complete one and leaves no partial file.
    let out = export(&source, &backup);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for p in partials(&backup) {
        std::fs::remove_file(p).expect("remove the killed run's partial");
    }
    let text = std::fs::read_to_string(&backup).expect("backup");
    assert!(text.lines().count() > 60, "a whole export");
    assert!(
        text.lines().last().is_some_and(|l| l.contains("\"end\"")),
        "ends with its end line"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// An export that fails (its directory does not exist) creates nothing.
#[test]
fn a_failed_export_creates_no_file() {
    let dir = scratch("export-fail");
    let source = store(&dir, 1);
    let target = dir.join("missing-dir").join("backup.jsonl");
    let out = export(&source, &target);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!target.exists());
    let names: Vec<_> = std::fs::read_dir(&dir)
        .expect("list")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    assert_eq!(names, ["store.db"], "files left: {names:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An export replaces only an earlier backup: named the store itself (or a link to
/// it, or any file that is not a backup) it refuses, exit 2, and leaves that file byte
/// for byte as it was; named a directory, it says so; an empty file and an earlier
/// backup are replaced. Before, an
/// export named its own store put the backup in the store's place.
#[test]
fn an_export_replaces_only_an_earlier_backup() {
    let dir = scratch("export-replace");
    let source = store(&dir, 2);
    let link = dir.join("link.db");
    std::os::unix::fs::symlink(&source, &link).expect("symlink");
    let text = dir.join("notes.txt");
    std::fs::write(&text, b"not a backup\n").expect("text");
    for file in [&source, &link, &text] {
        let before = std::fs::read(file).expect("read");
        let out = export(&source, file);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {err}", file.display());
        assert!(
            err.contains("an export replaces only an earlier backup"),
            "{err}"
        );
        assert_eq!(
            std::fs::read(file).expect("read"),
            before,
            "{}",
            file.display()
        );
        assert!(partials(file).is_empty());
    }
    assert!(std::fs::symlink_metadata(&link)
        .expect("link")
        .file_type()
        .is_symlink());
    // A directory, with its slash or without: refused, as what it is.
    let sub = dir.join("sub");
    std::fs::create_dir(&sub).expect("dir");
    for given in [sub.clone().into_os_string(), {
        let mut s = sub.clone().into_os_string();
        s.push("/");
        s
    }] {
        let out = export(&source, Path::new(&given));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("is a directory: give the backup file's path"),
            "{err}"
        );
    }
    assert_eq!(std::fs::read_dir(&sub).expect("list").count(), 0);
    let backup = dir.join("b.jsonl");
    std::fs::write(&backup, b"").expect("empty");
    for _ in 0..2 {
        let out = export(&source, &backup);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(complete(&std::fs::read(&backup).expect("backup")));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A new backup file is readable by its owner only (it holds the store's rows); one an
/// export replaces keeps the permissions it had, also through a link to it. Before,
/// every export left the file 0600: a backup an operator had opened to a group (for
/// the job that restores it) was closed to it again at the next night's export.
#[cfg(unix)]
#[test]
fn a_replaced_backup_keeps_its_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
    let dir = scratch("export-mode");
    let source = store(&dir, 1);
    let backup = dir.join("b.jsonl");
    let link = dir.join("latest.jsonl");
    std::os::unix::fs::symlink(&backup, &link).expect("symlink");
    let run = |file: &Path| {
        let out = export(&source, file);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(complete(&std::fs::read(&backup).expect("backup")));
    };
    run(&backup);
    assert_eq!(mode(&backup), 0o600);
    for (file, chosen) in [(&backup, 0o640), (&link, 0o644)] {
        std::fs::set_permissions(&backup, std::fs::Permissions::from_mode(chosen)).expect("chmod");
        run(file);
        assert_eq!(mode(&backup), chosen, "{}", file.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `lgcodec store export STORE ARGS…` with stdout piped, stopped after 60 s (an export
/// reading `/dev/stdout` as a file to replace used to wait for ever).
fn export_within_a_minute(dir: &Path, source: &Path, args: &[&str]) -> std::process::Output {
    let args: Vec<&Path> = args.iter().map(Path::new).collect();
    let mut child = spawn_store(dir, "export", source, &args, Stdio::piped());
    // Read as it comes: a pipe left unread would stop the export once full.
    let stdout = child.stdout.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = std::io::Read::read_to_end(&mut pipe, &mut bytes);
            bytes
        })
    });
    let what = format!("`lgcodec store export {args:?}`");
    let (status, stderr) = crate::support::ended_within(&mut child, Duration::from_secs(60), &what);
    std::process::Output {
        status,
        stdout: stdout
            .map(|t| t.join().expect("stdout"))
            .unwrap_or_default(),
        stderr: stderr.into_bytes(),
    }
}

/// A FILE that is no regular file to replace is written through as standard output
/// is: `/dev/stdout` (the backup, and no JSON report after it), `/dev/null`, a named
/// pipe; a symbolic link FILE stays a link, the backup put where it points (a link to
/// nothing too, as the shell's `>` does). `/dev/stdout` stays what it was.
#[cfg(unix)]
#[test]
fn an_export_to_a_pipe_a_device_or_a_link_writes_through_it() {
    let dir = scratch("export-through");
    let source = store(&dir, 2);
    let out = export_within_a_minute(&dir, &source, &["-"]);
    assert!(out.status.success());
    let expected = out.stdout;
    assert!(complete(&expected));
    let out = export_within_a_minute(&dir, &source, &["/dev/stdout", "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(out.stdout == expected, "/dev/stdout: {err}");
    assert!(
        std::fs::symlink_metadata("/dev/stdout").is_ok_and(|m| !m.is_file()),
        "/dev/stdout is no longer what it was"
    );
    let out = export_within_a_minute(&dir, &source, &["/dev/null"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A named pipe, read as the export writes it.
    let fifo = named_pipe(&dir, "pipe");
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).expect("read the pipe"))
    };
    let out = export_within_a_minute(&dir, &source, &["pipe"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(reader.join().expect("reader") == expected, "the pipe");
    // Links: to an earlier backup, and to nothing.
    std::fs::write(dir.join("old.jsonl"), &expected).expect("an earlier backup");
    std::os::unix::fs::symlink("old.jsonl", dir.join("latest.jsonl")).expect("link");
    std::os::unix::fs::symlink("new.jsonl", dir.join("next.jsonl")).expect("link");
    for (link, target) in [("latest.jsonl", "old.jsonl"), ("next.jsonl", "new.jsonl")] {
        let out = export_within_a_minute(&dir, &source, &[link]);
        assert!(
            out.status.success(),
            "{link}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            std::fs::symlink_metadata(dir.join(link)).is_ok_and(|m| m.file_type().is_symlink()),
            "{link} is still a link"
        );
        assert!(
            std::fs::read(dir.join(target)).expect("the link's target") == expected,
            "{target}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An export blocked writing to a pipe no one reads is not polled, so its task does not
/// see a SIGTERM: the process exits anyway, 2 s after the signal, with the signal's
/// status (143) and a line saying why. It went on until SIGKILL.
#[cfg(unix)]
#[test]
fn an_export_blocked_on_a_pipe_ends_at_a_signal() {
    let dir = scratch("export-blocked");
    let source = store(&dir, 2);
    let fifo = named_pipe(&dir, "pipe");
    // The reader opens the pipe and reads nothing until the export has ended.
    let (opened, ended) = (
        std::sync::mpsc::channel::<()>(),
        std::sync::mpsc::channel::<()>(),
    );
    let reader = {
        let fifo = fifo.clone();
        let (opened, ended) = (opened.0, ended.1);
        std::thread::spawn(move || {
            let pipe = std::fs::File::open(fifo).expect("open the pipe");
            let _ = opened.send(());
            let _ = ended.recv();
            drop(pipe);
        })
    };
    let mut child = spawn_store(&dir, "export", &source, &[&fifo], Stdio::null());
    opened.1.recv().expect("the pipe is open");
    // The store's 150 KiB do not fit in the pipe: the export is blocked by then.
    std::thread::sleep(Duration::from_secs(1));
    assert!(child.try_wait().expect("wait").is_none(), "still writing");
    crate::support::signal(&child, "-TERM");
    // Failing, the test drops the sender: the reader lets go of the pipe then too.
    let (status, err) = crate::support::ended_within(
        &mut child,
        Duration::from_secs(30),
        "the export after SIGTERM",
    );
    let _ = ended.0.send(());
    reader.join().expect("reader");
    assert_eq!(status.code(), Some(143), "{err}");
    assert!(
        err.contains("still running 2 s after the signal") && err.contains("stopping now"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A copy whose SQLite target another process holds locked waits on the lock (up to
/// 30 s) where it cannot see a signal: one SIGINT ends it 2 s later, exit 130, with a
/// line saying why; the target as the lock's holder left it. It went on until the
/// wait ran out, then exited 2, the signal lost.
#[cfg(unix)]
#[test]
fn a_copy_waiting_on_a_locked_target_ends_at_one_signal() {
    let dir = scratch("copy-locked");
    let source = store(&dir, 2);
    let target = dir.join("target.db");
    sqlite_store(&target, &Shape::default(), "other-");
    let before = std::fs::read(&target).expect("target");
    let holder = rusqlite::Connection::open(&target).expect("open");
    holder
        .execute_batch("BEGIN EXCLUSIVE")
        .expect("an exclusive lock");
    let mut child = spawn_store(&dir, "copy", &source, &[&target], Stdio::null());
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        child.try_wait().expect("wait").is_none(),
        "waiting on the lock"
    );
    crate::support::signal(&child, "-INT");
    let (status, err) =
        crate::support::ended_within(&mut child, Duration::from_secs(20), "the copy after SIGINT");
    holder.execute_batch("ROLLBACK").expect("rollback");
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("waiting on a lock): stopping now"), "{err}");
    assert_eq!(std::fs::read(&target).expect("target"), before);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An encrypt whose store another process holds locked waits on the lock in a blocking
/// call (SQLite's 30 s busy wait); the first SIGINT asks it to finish its batch, the
/// second stops it at once: exit 130 within a second or so, the store as the lock's
/// holder left it. The command had returned at the second signal, but the process then
/// waited for the blocking call to give up on the lock (28 s measured) before exiting.
#[cfg(unix)]
#[test]
fn an_encrypt_waiting_on_a_lock_ends_at_the_second_signal() {
    let dir = scratch("encrypt-locked");
    let source = store(&dir, 20);
    let before = std::fs::read(&source).expect("store");
    let holder = rusqlite::Connection::open(&source).expect("open");
    holder
        .execute_batch("BEGIN EXCLUSIVE")
        .expect("an exclusive lock");
    let mut child = Command::new(BIN)
        .args(["store", "encrypt"])
        .arg(&source)
        .env("LANGGRAPH_AES_KEY", "0123456789abcdef0123456789abcdef")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run lgcodec store encrypt");
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child.try_wait().expect("wait").is_none(),
        "waiting on the lock"
    );
    crate::support::signal(&child, "-INT");
    std::thread::sleep(Duration::from_millis(500));
    crate::support::signal(&child, "-INT");
    let (status, err) = crate::support::ended_within(
        &mut child,
        Duration::from_secs(5),
        "the encrypt after a second SIGINT",
    );
    holder.execute_batch("ROLLBACK").expect("rollback");
    drop(holder);
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("the one in flight was rolled back"), "{err}");
    assert_eq!(std::fs::read(&source).expect("store"), before);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A backup that cannot be begun is said of FILE's directory, with what to do, not of
/// the partial file's name (it was "No such file or directory (os error 2) at path
/// \"…/.b.jsonl.heiRk8.partial\""); an empty path, where any command takes a file, is
/// refused as one (it was "cannot open : No such file or directory").
#[test]
fn a_file_that_cannot_be_made_or_is_empty_is_named_for_what_is_wrong() {
    let dir = scratch("export-no-dir");
    let source = store(&dir, 1);
    let run = |args: &[&std::ffi::OsStr]| store_in(&dir, args);
    let export = std::ffi::OsStr::new("export");
    let missing = dir.join("missing");
    for (file, said) in [
        (
            missing.join("b.jsonl"),
            format!(
                "there is no directory {}: create it, or give a path in one that exists",
                missing.display()
            ),
        ),
        (
            source.join("b.jsonl"),
            format!("{} is not a directory", source.display()),
        ),
    ] {
        let (code, err) = run(&[export, source.as_os_str(), file.as_os_str()]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains(&said) && !err.contains(".partial"), "{err}");
    }
    let file = source.to_str().expect("utf-8");
    for args in [
        &["export", file, ""][..],
        &["import", "", file],
        &["verify", ""],
        &["retain", file, "--policy", "", "--once"],
        &["retain", file, "--config", "", "--once"],
    ] {
        let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
        let (code, err) = run(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains("an empty path names no file: give the file's path"),
            "{args:?}: {err}"
        );
    }
    assert!(!missing.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The arguments of an import swapped (`import STORE BACKUP`): the store is said to
/// be a SQLite database, not a backup (it used to be "not UTF-8 at byte 102"), and
/// neither file changes; `verify STORE` says the same. The other way round, a backup
/// named where a store goes, by any command (as the store, a copy's source or target,
/// an import's target), is said to be a backup with the commands that read one (it
/// used to be "detect layout: the database failed: file is not a database").
#[test]
fn a_store_given_where_the_backup_goes_is_named_for_what_it_is() {
    let dir = scratch("import-swapped");
    let source = store(&dir, 2);
    let backup = dir.join("b.jsonl");
    assert!(export(&source, &backup).status.success());
    let (store_was, backup_was) = (
        std::fs::read(&source).expect("store"),
        std::fs::read(&backup).expect("backup"),
    );
    // `lgcodec store ARGS…` in `dir`, STORE and BACKUP standing for the two files:
    // the exit status and the standard error.
    let run = |args: &[&str]| -> (Option<i32>, String) {
        let out = Command::new(BIN)
            .arg("store")
            .args(args.iter().map(|a| match *a {
                "STORE" => source.as_os_str(),
                "BACKUP" => backup.as_os_str(),
                a => std::ffi::OsStr::new(a),
            }))
            .current_dir(&dir)
            .env("LANGGRAPH_AES_KEY", "0123456789abcdef0123456789abcdef")
            .output()
            .expect("run");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for args in [&["import", "STORE", "BACKUP"][..], &["verify", "STORE"]] {
        let (code, err) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains("is a SQLite database, not a backup file: `lgcodec store export STORE FILE` writes a backup; an import takes the backup first"),
            "{args:?}: {err}"
        );
    }
    let file = backup.to_str().expect("utf-8");
    for args in [
        &["stats", "BACKUP"][..],
        &["audit", "BACKUP"],
        &["inspect", "BACKUP"],
        &["encrypt", "BACKUP"],
        &["prune", "BACKUP", "--keep-latest", "1"],
        &["upgrade", "BACKUP"],
        &["export", "BACKUP", "other.jsonl"],
        &["copy", "BACKUP", "new.db"],
        &["copy", "STORE", "BACKUP"],
        &["import", "BACKUP", "BACKUP"],
    ] {
        let (code, err) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!(
                "{file} is not a Python LangGraph checkpoint store: it is a backup file"
            )) && err.contains(&format!("`lgcodec store verify {file}` checks it")),
            "{args:?}: {err}"
        );
    }
    assert!(!dir.join("other.jsonl").exists() && !dir.join("new.db").exists());
    // Any other file that is not a database, named where a store goes: said to be
    // none, and what to give instead.
    let text = dir.join("notes.txt");
    std::fs::write(&text, b"a note, not a store\n").expect("text");
    let notes = text.to_str().expect("utf-8");
    for args in [
        &["stats", notes][..],
        &["encrypt", notes],
        &["upgrade", notes],
        &["copy", "STORE", notes],
        &["import", "BACKUP", notes],
    ] {
        let (code, err) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!(
                "{notes} is not a Python LangGraph checkpoint store: the file is not an SQLite database (it does not begin with SQLite's header"
            )) && err.contains("give the path of the store's database file"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(
        std::fs::read(&text).expect("text"),
        b"a note, not a store\n"
    );
    assert_eq!(std::fs::read(&source).expect("store"), store_was);
    assert_eq!(std::fs::read(&backup).expect("backup"), backup_was);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A store's URL where a backup file goes (`import URL STORE`, `verify URL`, `export
/// STORE URL`) is said to name a store, with the command that copies between stores,
/// and its password is not shown. It was opened as a path: "cannot open
/// postgresql://app:s3cret@db/app: No such file or directory", password and all.
#[test]
fn a_store_url_where_the_backup_goes_is_named_without_its_password() {
    let dir = scratch("backup-url");
    let source = store(&dir, 1);
    let url = "postgresql://app:s3cret@db.invalid/app?password=p4ss";
    let shown = "postgresql://app:***@db.invalid/app?password=***";
    let source_arg = source.to_str().expect("utf-8");
    // The arguments, how the location is shown, and what to do.
    let give = "give a file `lgcodec store export` wrote";
    for (args, named, what) in [
        (&["import", url, "restored.db"][..], shown, give),
        (&["verify", url], shown, give),
        (
            &["export", source_arg, url],
            shown,
            "an export writes a backup file",
        ),
        (
            &["import", "sqlite:missing.db", "restored.db"],
            "sqlite:missing.db",
            give,
        ),
    ] {
        let (code, err) = store_in(&dir, args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("{named} names a store, not a backup file: {what}"))
                && err.contains("`lgcodec store copy")
                && !err.contains("s3cret")
                && !err.contains("p4ss"),
            "{args:?}: {err}"
        );
    }
    // Mistyped, the URL is no store and no file: refused as the store parser refuses
    // it, without the password, before anything opens it as a path.
    let miscased = "PostgreSQL://app:s3cret@db.invalid/app?password=p4ss";
    let unknown = "postgresq://app:s3cret@db.invalid/app";
    for (args, shown, reason, what) in [
        (
            &["import", miscased, "restored.db"][..],
            "PostgreSQL://app:***@db.invalid/app?password=***",
            "did you mean postgresql://app:***@db.invalid/app?password=***?",
            give,
        ),
        (
            &["verify", unknown],
            "postgresq://app:***@db.invalid/app",
            "unknown scheme \"postgresq\"",
            give,
        ),
        (
            &["export", source_arg, miscased],
            "PostgreSQL://app:***@db.invalid/app?password=***",
            "did you mean postgresql://",
            "an export writes a backup file",
        ),
    ] {
        let (code, err) = store_in(&dir, args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("no file {shown:?}, and as a store: "))
                && err.contains(reason)
                && err.contains(what)
                && !err.contains("s3cret")
                && !err.contains("p4ss"),
            "{args:?}: {err}"
        );
    }
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["store.db"], "nothing made beside the store");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every read-only command on a WAL-mode store at rest (Python's saver leaves its files
/// in WAL mode) leaves the file byte for byte as it was and nothing beside it: while
/// they read, SQLite's `-wal`/`-shm` exist; the last close removes them.
#[test]
fn read_only_commands_leave_a_wal_store_as_it_was_and_nothing_beside_it() {
    let dir = scratch("read-only-wal");
    let store = dir.join("py.sqlite");
    std::fs::copy(
        crate::support::stores().join("sqlite-py-3.1.2/store.sqlite"),
        &store,
    )
    .expect("copy");
    let bytes = std::fs::read(&store).expect("read");
    assert_eq!(bytes.get(18..20), Some(&[2u8, 2][..]), "a WAL-mode file");
    let s = store.to_str().expect("utf-8");
    let out = dir.join("out");
    std::fs::create_dir(&out).expect("out dir");
    let backup = out.join("b.jsonl");
    let copy_to = out.join("c.db");
    for args in [
        vec!["store", "audit", s],
        vec!["store", "stats", s],
        vec!["store", "inspect", s],
        vec!["store", "inspect", s, "--thread", "t-main"],
        vec!["store", "export", s, backup.to_str().expect("utf-8")],
        vec![
            "store",
            "copy",
            s,
            copy_to.to_str().expect("utf-8"),
            "--dry-run",
        ],
        vec!["store", "prune", s, "--keep-latest", "1", "--dry-run"],
        vec!["store", "upgrade", s, "--dry-run"],
    ] {
        let run = Command::new(BIN)
            .args(&args)
            .env_remove("LANGGRAPH_AES_KEY")
            .output()
            .expect("run");
        assert!(
            run.status.code().is_some_and(|c| c <= 1),
            "{args:?}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert_eq!(
            std::fs::read(&store).expect("read"),
            bytes,
            "{args:?} changed the file"
        );
        let names: Vec<String> = std::fs::read_dir(&dir)
            .expect("list")
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .filter(|n| n != "out")
            .collect();
        assert_eq!(names, ["py.sqlite"], "{args:?} left files beside the store");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A WAL-mode store (the file writable) in a directory this process may not write:
/// SQLite cannot make its `-wal`/`-shm` there, so the reader falls back to an immutable
/// open and reads it, and the directory stays as it was. As root (who writes anywhere)
/// the command runs as `nobody`, from a copy of the binary beside the store.
#[cfg(unix)]
#[test]
fn a_wal_store_in_a_directory_that_cannot_be_written_is_read() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("ro-dir");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let sub = dir.join("ro");
    std::fs::create_dir(&sub).expect("dir");
    let store = sub.join("s.db");
    std::fs::copy(
        crate::support::stores().join("sqlite-py-3.1.2/store.sqlite"),
        &store,
    )
    .expect("copy");
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    let bin = dir.join("lgcodec");
    std::fs::copy(BIN, &bin).expect("copy the binary");
    std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    let root = std::fs::write(sub.join("probe"), b"").is_ok();
    let _ = std::fs::remove_file(sub.join("probe"));
    let s = store.to_str().expect("utf-8");
    let out = if root {
        Command::new("runuser")
            .args(["-u", "nobody", "--"])
            .arg(&bin)
            .args(["store", "stats", s])
            .output()
    } else {
        Command::new(&bin).args(["store", "stats", s]).output()
    }
    .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("2 thread(s)"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names: Vec<String> = std::fs::read_dir(&sub)
        .expect("list")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    assert_eq!(names, ["s.db"]);
    std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A backup is not left in the page cache: written once and read by no one while it is,
/// its pages would push out the cache of the database it was taken from. The control, the
/// same bytes copied into a file and flushed by the test, stays cached, so the measure
/// can see a cached file on this file system.
#[test]
fn an_export_leaves_its_backup_out_of_the_page_cache() {
    let dir = scratch("export-cache");
    if let Some(kind) = memory_file_system(&dir) {
        eprintln!("skipped: the scratch directory is on {kind}, whose pages are never dropped");
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let source = store(&dir, 200);
    // Two exports: the first is read back below (which brings it into the cache again)
    // for the control; the second is read by no one.
    let (backup, second) = (dir.join("backup.jsonl"), dir.join("second.jsonl"));
    for target in [&backup, &second] {
        let out = export(&source, target);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let bytes = std::fs::read(&backup).expect("backup");
    assert!(complete(&bytes), "a whole export");
    let control = dir.join("control.jsonl");
    {
        let mut f = std::fs::File::create(&control).expect("control");
        std::io::Write::write_all(&mut f, &bytes).expect("write control");
        f.sync_all().expect("sync control");
    }
    drop(bytes);
    let size = std::fs::metadata(&second).expect("second").len();
    assert!(size > 4 << 20, "{size} bytes: a backup of megabytes");
    let (Some(exported), Some(copied)) = (cached_bytes(&second), cached_bytes(&control)) else {
        eprintln!("skipped: no fincore (util-linux) to read the page cache with");
        let _ = std::fs::remove_dir_all(&dir);
        return;
    };
    assert!(
        copied > size / 2,
        "the control is cached ({copied} of {size} bytes): the measure sees cached pages"
    );
    assert!(
        exported < size / 16,
        "the export left {exported} of its {size} bytes in the page cache"
    );
    let control_bytes = std::fs::read(&control).expect("control");
    assert!(
        std::fs::read(&second).expect("second") == control_bytes,
        "the second export wrote the bytes of the first"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `inspect` lists an encrypted SQLite store's threads without their times (the time is
/// read from the checkpoint) and says why, and what to do: without a key, set
/// `LANGGRAPH_AES_KEY`; under another key, `audit` tells which. With the key, every
/// time is there and nothing is said. Before, the times were `?` with no word why.
#[test]
fn inspect_says_why_an_encrypted_stores_times_are_missing() {
    let dir = scratch("inspect-untimed");
    let path = dir.join("store.sqlite");
    std::fs::copy(
        crate::support::stores().join("sqlite-py-3.1.2/store.sqlite"),
        &path,
    )
    .expect("copy");
    let run = |key: Option<&str>, args: &[&str]| {
        let mut c = Command::new(BIN);
        c.arg("store").args(args).arg(&path);
        for var in [
            "LANGGRAPH_AES_KEY",
            "LANGGRAPH_AES_KEY_PREVIOUS",
            "LANGGRAPH_AES_FALLBACK_KEYS",
        ] {
            c.env_remove(var);
        }
        if let Some(key) = key {
            c.env("LANGGRAPH_AES_KEY", key);
        }
        let out = c.output().expect("run lgcodec store");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let key = "0123456789abcdef";
    run(Some(key), &["encrypt"]);
    // The Python store's two threads, t-main and t-short.
    for (given, said) in [
        (None, Some("encrypted? set LANGGRAPH_AES_KEY")),
        (
            Some("fedcba9876543210"),
            Some("`lgcodec store audit` tells which key"),
        ),
        (Some(key), None),
    ] {
        let (out, err) = run(given, &["inspect"]);
        let untimed = out.lines().skip(1).filter(|l| l.contains(" ? ")).count();
        match said {
            Some(said) => {
                assert_eq!(untimed, 2, "{out}");
                assert!(
                    err.contains("no time for 2 thread(s): their latest checkpoint did not decode")
                        && err.contains(said),
                    "{given:?}: {err}"
                );
            }
            None => {
                assert_eq!(untimed, 0, "{out}");
                assert!(!err.contains("no time"), "{err}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
