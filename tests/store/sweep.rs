//! `store` (audit, encrypt, rekey) on real SQLite files and a real Postgres server
//! (`LGCODEC_TEST_PG_URL`; without it the Postgres tests print a skip line and pass),
//! through the library and through the `lgcodec store` binary: classification, the
//! Python format of rewritten rows, dry runs, read-only stores, unreadable rows, a live
//! writer between read and write, kill -9 at random points then resume, and a Postgres
//! connection terminated mid-sweep.
//!
//! Expected values come from how the fixture was written (which rows are in clear,
//! under which key) and from the crate's `EncryptedSerializer`, which other tests check
//! against Python byte for byte; `.ci/checks.d/store.sh` has Python read the results.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::lgcodec;
use crate::support::pg::{connect, url as pg_base};
use crate::support::rt;
use crate::support::store_fixture::{fill, serializer, Shape};
use langgraph_codec::compression::CompressedSerializer;
use langgraph_codec::crypto::{AesKey, AesMode, Cipher, EncryptedSerializer, KeyRing};
use langgraph_codec::saver::postgres::PostgresSaver;
use langgraph_codec::saver::sqlite::SqliteSaver;
use langgraph_codec::store::{
    self, AuditOptions, ClassCounts, Stage, Store, StoreKeys, SweepOptions, Verdict,
};
use langgraph_codec::{ErrorKind, JsonPlusSerializer, Serializer, Value};

const BIN: &str = env!("CARGO_BIN_EXE_lgcodec");
const OLD: &str = "old-key-16-bytes";
const NEW: &str = "new-key-16-bytes";

fn temp_dir(tag: &str) -> PathBuf {
    crate::support::scratch(tag)
}

fn key(k: &str) -> AesKey {
    AesKey::new(k.as_bytes()).expect("key")
}

/// Keys as the environment would give them: primary NEW, previous OLD.
fn new_with_old() -> StoreKeys {
    StoreKeys::new(key(NEW))
        .with_previous(key(OLD), "old")
        .expect("keys")
}

/// A SQLite store: `clear` threads in clear, `old` threads under OLD (EAX).
fn sqlite_store(dir: &Path, clear: usize, old: usize, steps: usize) -> PathBuf {
    let path = dir.join("store.db");
    rt().block_on(async {
        for (threads, key, prefix) in [(clear, None, "clear-"), (old, Some(OLD.to_owned()), "old-")]
        {
            let shape = Shape {
                threads,
                steps,
                key,
                ..Shape::default()
            };
            let saver = SqliteSaver::builder(&path)
                .serializer(serializer(&shape))
                .create(true)
                .open()
                .expect("saver");
            fill(&saver, &shape, prefix).await;
        }
    });
    path
}

/// Every serialized value of a SQLite store: (table, key, type, bytes), by key.
fn sqlite_rows(path: &Path) -> Vec<(String, String, String, Vec<u8>)> {
    let conn = rusqlite::Connection::open(path).expect("open");
    let mut out = Vec::new();
    for (table, key, value) in [
        (
            "checkpoints",
            "thread_id || '/' || checkpoint_id",
            "checkpoint",
        ),
        (
            "writes",
            "thread_id || '/' || checkpoint_id || '/' || task_id || '/' || idx",
            "value",
        ),
    ] {
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {key}, type, {value} FROM {table} ORDER BY 1"
            ))
            .expect("prepare");
        let rows = stmt
            .query_map([], |r| {
                Ok((table.to_owned(), r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .expect("query")
            .collect::<Result<Vec<_>, _>>()
            .expect("rows");
        out.extend(rows);
    }
    out
}

/// What a row holds: its inner tag and plaintext (opened with any of `keys`), and the
/// index of the key that opened it (None: in clear).
fn plain(keys: &KeyRing, tag: &str, data: &[u8]) -> (String, Vec<u8>, Option<usize>) {
    match tag.strip_suffix("+aes") {
        Some(inner) => {
            let (pt, i) = keys.decrypt_with_index(data, b"").expect("opens");
            (inner.to_owned(), pt.to_vec(), Some(i))
        }
        None => (tag.to_owned(), data.to_vec(), None),
    }
}

fn ring() -> KeyRing {
    KeyRing::new(key(NEW))
        .with_previous(key(OLD))
        .expect("ring")
}

/// The plaintexts of every row, by key (what must survive any sweep unchanged).
fn plaintexts(
    rows: &[(String, String, String, Vec<u8>)],
) -> Vec<(String, String, String, Vec<u8>)> {
    let ring = ring();
    rows.iter()
        .map(|(t, k, tag, data)| {
            let (inner, pt, _) = plain(&ring, tag, data);
            (t.clone(), k.clone(), inner, pt)
        })
        .collect()
}

/// `lgcodec store audit STORE --json EXTRA…` under NEW alone: the exit status and the
/// report.
fn audit_json(store: &str, extra: &[&str]) -> (i32, serde_json::Value) {
    let mut args = vec!["store", "audit", store, "--json"];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = lgcodec(&args, &[("LANGGRAPH_AES_KEY", NEW)]);
    let json = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"));
    (code, json)
}

const ENV_ROTATE: [(&str, &str); 2] = [
    ("LANGGRAPH_AES_KEY", NEW),
    ("LANGGRAPH_AES_FALLBACK_KEYS", OLD),
];

// ---------------------------------------------------------------------------------
// opening

#[test]
fn a_missing_file_is_not_created() {
    let dir = temp_dir("missing");
    let path = dir.join("nothing.db");
    let err = rt()
        .block_on(Store::open(&format!("sqlite:{}", path.display())))
        .expect_err("no store");
    assert_eq!(err.kind(), ErrorKind::StoreNotFound, "{err}");
    assert_eq!(err.subject(), path.to_str(), "{err:?}");
    let err = rt()
        .block_on(Store::open_for_writing(path.to_str().expect("utf-8")))
        .expect_err("no store");
    assert_eq!(err.kind(), ErrorKind::StoreNotFound, "{err}");
    assert!(!path.exists());
    let (code, _, stderr) = lgcodec(&["store", "audit", path.to_str().expect("utf-8")], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no SQLite store"), "{stderr}");
    assert!(!path.exists());
}

#[test]
fn a_database_without_pythons_tables_is_refused_and_left_as_it_was() {
    let dir = temp_dir("other");
    let path = dir.join("other.db");
    {
        let conn = rusqlite::Connection::open(&path).expect("create");
        conn.execute_batch("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
            .expect("table");
    }
    let before = std::fs::read(&path).expect("read");
    for writable in [false, true] {
        let opened = rt().block_on(async {
            if writable {
                Store::open_for_writing(path.to_str().expect("utf-8")).await
            } else {
                Store::open(path.to_str().expect("utf-8")).await
            }
        });
        let err = opened.expect_err("not a store");
        match err.found() {
            Some(found) if err.kind() == ErrorKind::NotAStore => assert!(
                found.contains("users") && found.contains("no checkpoints table"),
                "{found}"
            ),
            _ => panic!("{err}"),
        }
    }
    assert_eq!(
        std::fs::read(&path).expect("read"),
        before,
        "the file changed"
    );
    let names: Vec<String> = std::fs::read_dir(&dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["other.db"], "files appeared: {names:?}");
    // A file that is not a database at all.
    let junk = dir.join("junk.db");
    std::fs::write(
        &junk,
        b"this is not sqlite, just text that is long enough to look like a header",
    )
    .expect("write");
    let err = rt()
        .block_on(Store::open(junk.to_str().expect("utf-8")))
        .expect_err("junk");
    assert!(err.to_string().contains("not an SQLite database"), "{err}");
}

#[cfg(unix)]
#[test]
fn a_read_only_file_is_audited_and_refused_for_writing() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("readonly");
    let path = sqlite_store(&dir, 1, 1, 2);
    // A checkpointed file without its -wal and -shm, as a backup copy would be.
    {
        let conn = rusqlite::Connection::open(&path).expect("open");
        conn.pragma_update(None, "journal_mode", "DELETE")
            .expect("journal");
    }
    let before = std::fs::read(&path).expect("read");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let p = path.to_str().expect("utf-8");
    let report = rt()
        .block_on(async {
            store::audit(
                &Store::open(p).await?,
                &new_with_old(),
                &AuditOptions::new(),
            )
            .await
        })
        .expect("audit reads a read-only file");
    assert_eq!(report.totals.total.rows, 12);
    // Root writes any file whatever its mode: then the binary runs as `nobody`.
    let privileged = std::fs::OpenOptions::new().write(true).open(&path).is_ok();
    if !privileged {
        let err = rt()
            .block_on(Store::open_for_writing(p))
            .expect_err("read-only");
        assert_eq!(err.kind(), ErrorKind::ReadOnly, "{err}");
    }
    // `nobody` runs a copy of the binary in the store's directory (world-readable), so
    // the test does not depend on who may enter the checkout the binary was built in.
    let bin = dir.join("lgcodec");
    std::fs::copy(BIN, &bin).expect("copy the binary");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod dir");
    let as_user = |args: &[&str]| -> (i32, String, String) {
        if !privileged {
            return lgcodec(args, &ENV_ROTATE);
        }
        let joined: Vec<String> = ENV_ROTATE.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "nobody", "--", "env"])
            .args(&joined)
            .arg(&bin)
            .args(args);
        let out = cmd.output().expect("runuser runs");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, _, stderr) = as_user(&["store", "rekey", p]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("cannot be written") && stderr.contains("read-only"),
        "{stderr}"
    );
    // A dry run only reads.
    let (code, stdout, stderr) = lgcodec(&["store", "rekey", p, "--dry-run"], &ENV_ROTATE);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stderr.contains("would rewrite 6"), "{stderr}");
    assert_eq!(std::fs::read(&path).expect("read"), before);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------
// audit

/// A store holding one value of every class, in `writes` of thread `mix`.
fn mixed_sqlite(dir: &Path) -> PathBuf {
    let path = sqlite_store(dir, 1, 1, 1);
    let conn = rusqlite::Connection::open(&path).expect("open");
    let value = Value::from("secret");
    let eax_new = EncryptedSerializer::from_aes_key(NEW.as_bytes(), AesMode::Eax)
        .expect("k")
        .dumps_typed(&value)
        .expect("s");
    let gcm_old = EncryptedSerializer::from_aes_key(OLD.as_bytes(), AesMode::Gcm)
        .expect("k")
        .dumps_typed(&value)
        .expect("s");
    let third = EncryptedSerializer::from_aes_key(b"third-key-16byte", AesMode::Eax)
        .expect("k")
        .dumps_typed(&value)
        .expect("s");
    let zlib = CompressedSerializer::new(JsonPlusSerializer::new())
        .dumps_typed(&value)
        .expect("z");
    let mut tampered = eax_new.data.to_vec();
    if let Some(b) = tampered.last_mut() {
        *b ^= 1;
    }
    let rows: Vec<(&str, Vec<u8>)> = vec![
        ("msgpack", b"\xa6secret".to_vec()),        // clear
        ("json", b"\"secret\"".to_vec()),           // legacy json
        (&eax_new.type_tag, eax_new.data.to_vec()), // primary
        ("msgpack+aes", gcm_old.data.to_vec()),     // previous (GCM)
        ("msgpack+aes", third.data.to_vec()),       // unknown key: unreadable
        ("msgpack+aes", tampered),                  // altered: unreadable
        ("msgpack", b"\x92\x01".to_vec()),          // truncated: unreadable
        ("msgpack+zlib", zlib.data.to_vec()),       // clear, compressed
    ];
    for (i, (tag, data)) in rows.iter().enumerate() {
        conn.execute(
            "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value) VALUES ('mix', '', 'c1', 't', '', ?1, 'ch', ?2, ?3)",
            rusqlite::params![i as i64, tag, data],
        )
        .expect("insert");
    }
    path
}

#[test]
fn audit_classifies_every_value_and_counts_per_table_and_thread() {
    let dir = temp_dir("classes");
    let path = mixed_sqlite(&dir);
    let p = path.to_str().expect("utf-8");
    let report = rt()
        .block_on(async {
            store::audit(
                &Store::open(p).await?,
                &new_with_old(),
                &AuditOptions::new().per_thread(true),
            )
            .await
        })
        .expect("audit");
    let mix = report.threads.get("mix").expect("thread mix");
    assert_eq!(mix.total.rows, 8);
    assert_eq!(mix.clear.rows, 2, "msgpack and msgpack+zlib");
    assert_eq!(mix.legacy_json.rows, 1);
    assert_eq!(mix.primary.rows, 1);
    assert_eq!(mix.previous.get("old").map(|t| t.rows), Some(1));
    assert_eq!(mix.unreadable.rows, 3);
    // The fixture threads: 1 step each = 1 checkpoint + 2 writes.
    let clear = report.threads.get("clear-0").expect("clear-0");
    assert_eq!((clear.total.rows, clear.clear.rows), (3, 3));
    let old = report.threads.get("old-0").expect("old-0");
    assert_eq!(old.previous.get("old").map(|t| t.rows), Some(3));
    let writes = &report.tables[1];
    assert_eq!(writes.column, "writes.value");
    assert_eq!(writes.counts.total.rows, 8 + 4);
    assert_eq!(
        report.totals.total.bytes,
        sqlite_rows(&path)
            .iter()
            .map(|r| r.3.len() as u64)
            .sum::<u64>()
    );
    let reasons: Vec<&str> = report
        .unreadable_samples
        .iter()
        .map(|s| s.reason.as_str())
        .collect();
    assert_eq!(reasons.len(), 3);
    assert!(
        reasons
            .iter()
            .filter(|r| r.contains("no key opens it"))
            .count()
            == 2,
        "{reasons:?}"
    );
    assert!(
        reasons.iter().any(|r| r.contains("does not decode")),
        "{reasons:?}"
    );
    assert_eq!(report.verdict, Verdict::Findings);
    assert_eq!(report.findings.len(), 3, "{:?}", report.findings);
    assert!(report
        .never_encrypted
        .iter()
        .any(|c| c.contains("metadata")));
    // JSON, as the CLI prints it.
    let json = serde_json::to_value(&report).expect("serializes");
    assert_eq!(json["verdict"], "findings");
    assert_eq!(json["threads"]["mix"]["previous"]["old"]["rows"], 1);
    // Handed over one thread at a time (`on_thread`, held in a scratch file meanwhile):
    // the same threads, counts and order as the report's map, which stays empty.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&seen);
    let streamed = rt()
        .block_on(async {
            store::audit(
                &Store::open(p).await?,
                &new_with_old(),
                &AuditOptions::new().on_thread(move |thread, counts| {
                    sink.lock()
                        .expect("lock")
                        .push((thread.to_owned(), counts.clone()));
                }),
            )
            .await
        })
        .expect("audit");
    assert!(streamed.threads.is_empty());
    assert_eq!(streamed.totals, report.totals);
    let held: Vec<(String, ClassCounts)> = report
        .threads
        .iter()
        .map(|(t, c)| (t.clone(), c.clone()))
        .collect();
    assert_eq!(*seen.lock().expect("lock"), held);
    // The CLI counts per thread only when asked, and then writes each thread as it is
    // handed over: every thread, with its counts, and the rest of the document as
    // without (the CLI names the keys by their variables, the library call above by
    // its own labels).
    let mut docs = Vec::new();
    for (extra, mix_rows) in [(None, None), (Some("--per-thread"), Some(8))] {
        let mut args = vec!["store", "audit", p, "--json"];
        args.extend(extra);
        let (code, stdout, stderr) = lgcodec(&args, &ENV_ROTATE);
        assert_eq!(code, 1, "{stderr}");
        let cli: serde_json::Value = serde_json::from_str(&stdout).expect("json");
        assert_eq!(cli["threads"]["mix"]["total"]["rows"].as_u64(), mix_rows);
        assert_eq!(cli["totals"]["total"], json["totals"]["total"], "{cli}");
        docs.push(cli);
    }
    let threads = docs[1]["threads"].as_object().expect("threads").clone();
    assert_eq!(
        threads.keys().collect::<Vec<_>>(),
        report.threads.keys().collect::<Vec<_>>()
    );
    for (t, c) in &report.threads {
        assert_eq!(
            threads[t]["total"],
            serde_json::to_value(c.total).expect("json"),
            "{t}"
        );
        assert_eq!(
            threads[t]["clear"],
            serde_json::to_value(c.clear).expect("json"),
            "{t}"
        );
    }
    for doc in &mut docs {
        let fields = doc.as_object_mut().expect("object");
        fields.remove("elapsed_s");
        fields.remove("threads");
    }
    assert_eq!(docs[0], docs[1]);
    // In text, a line per thread before the report.
    let (code, stdout, stderr) = lgcodec(&["store", "audit", p, "--per-thread"], &ENV_ROTATE);
    assert_eq!(code, 1, "{stderr}");
    let listed: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("per thread"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.trim_start().split(": ").next())
        .collect();
    assert_eq!(
        listed,
        report
            .threads
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        "{stdout}"
    );
    assert!(stdout.contains("  mix: 8 value(s)"), "{stdout}");
}

#[test]
fn audit_verdicts_follow_the_options_and_the_exit_status() {
    let dir = temp_dir("verdict");
    let path = sqlite_store(&dir, 1, 1, 2);
    let p = path.to_str().expect("utf-8");
    let run = |o: AuditOptions| {
        rt().block_on(async { store::audit(&Store::open(p).await?, &new_with_old(), &o).await })
            .expect("audit")
            .verdict
    };
    assert_eq!(run(AuditOptions::new()), Verdict::Findings);
    assert_eq!(
        run(AuditOptions::new().allow_clear(true)),
        Verdict::Findings
    );
    assert_eq!(
        run(AuditOptions::new().allow_previous(true)),
        Verdict::Findings
    );
    assert_eq!(
        run(AuditOptions::new().allow_clear(true).allow_previous(true)),
        Verdict::Clean
    );
    assert_eq!(lgcodec(&["store", "audit", p], &ENV_ROTATE).0, 1);
    assert_eq!(
        lgcodec(
            &["store", "audit", p, "--allow-clear", "--allow-previous"],
            &ENV_ROTATE
        )
        .0,
        0
    );
    let (code, stdout, stderr) = lgcodec(&["store", "audit", p, "--json"], &ENV_ROTATE);
    assert_eq!(code, 1);
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(json["totals"]["clear"]["rows"], 6);
    assert_eq!(
        json["totals"]["previous"]["LANGGRAPH_AES_FALLBACK_KEYS #1"]["rows"],
        6
    );
    assert!(stderr.contains("FINDINGS"), "{stderr}");
    assert_eq!(lgcodec(&["store", "audit", "ftp://x"], &[]).0, 2);
}

// ---------------------------------------------------------------------------------
// sweeps

#[test]
fn encrypt_then_rekey_leaves_every_row_in_pythons_format_under_the_primary_key() {
    let dir = temp_dir("sweep");
    let path = sqlite_store(&dir, 2, 2, 3);
    // Upstream's compressed rows too.
    rt().block_on(async {
        let shape = Shape {
            threads: 1,
            steps: 2,
            zlib: true,
            ..Shape::default()
        };
        let saver = SqliteSaver::builder(&path)
            .serializer(serializer(&shape))
            .create(true)
            .open()
            .expect("saver");
        fill(&saver, &shape, "zlib-").await;
    });
    let before = sqlite_rows(&path);
    let want = plaintexts(&before);
    let p = path.to_str().expect("utf-8");
    let (code, stdout, stderr) = lgcodec(
        &["store", "encrypt", p, "--json", "--batch-size", "7"],
        &ENV_ROTATE,
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(json["rewritten"]["rows"], 18 + 6, "{json}");
    assert_eq!(json["complete"], true);
    let (code, stdout, stderr) = lgcodec(&["store", "rekey", p, "--json"], &ENV_ROTATE);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(json["rewritten"]["rows"], 18, "{json}");
    let after = sqlite_rows(&path);
    assert_eq!(plaintexts(&after), want, "a plaintext changed");
    // Python's format: tag + "+aes", EAX under the primary key alone, as the
    // crate's Python-checked serializer reads it.
    let python = EncryptedSerializer::new(
        KeyRing::new(key(NEW)),
        CompressedSerializer::new(JsonPlusSerializer::new()),
    );
    let eax_only = |data: &[u8]| {
        // EAX: nonce | tag | ciphertext; GCM would fail an EAX-only open.
        langgraph_codec::crypto::KeyRing::from_key_bytes(NEW.as_bytes(), AesMode::Eax)
            .expect("k")
            .decrypt("aes", data, b"")
            .is_ok()
    };
    for ((_, k, old_tag, _), (_, _, tag, data)) in before.iter().zip(&after) {
        let base = old_tag.strip_suffix("+aes").unwrap_or(old_tag);
        assert_eq!(tag, &format!("{base}+aes"), "{k}");
        assert!(python.loads_typed(tag, data).is_ok(), "{k}");
        assert!(eax_only(data), "{k}");
    }
    assert!(after.iter().any(|r| r.2 == "msgpack+zlib+aes"));
    // Nothing left: a second run rewrites nothing.
    let (code, _, stderr) = lgcodec(&["store", "rekey", p], &ENV_ROTATE);
    assert_eq!(code, 0);
    assert!(stderr.contains("rewrote 0 "), "{stderr}");
    assert_eq!(
        lgcodec(&["store", "audit", p], &[("LANGGRAPH_AES_KEY", NEW)]).0,
        0
    );
}

#[test]
fn a_dry_run_counts_and_writes_nothing() {
    let dir = temp_dir("dry");
    let path = sqlite_store(&dir, 1, 2, 2);
    let before = sqlite_rows(&path);
    let p = path.to_str().expect("utf-8");
    for op in ["encrypt", "rekey"] {
        let (code, stdout, _) = lgcodec(&["store", op, p, "--dry-run", "--json"], &ENV_ROTATE);
        assert_eq!(code, 0);
        let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
        assert_eq!(json["dry_run"], true);
        let want = if op == "encrypt" { 6 } else { 12 };
        assert_eq!(json["rewritten"]["rows"], want, "{op}");
    }
    assert_eq!(sqlite_rows(&path), before);
}

#[test]
fn unreadable_rows_are_counted_the_sweep_goes_on_and_exits_1() {
    let dir = temp_dir("unreadable");
    let path = mixed_sqlite(&dir);
    let p = path.to_str().expect("utf-8");
    let (code, stdout, stderr) = lgcodec(
        &["store", "rekey", p, "--json", "--batch-size", "2"],
        &ENV_ROTATE,
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(json["failed"], 3, "{json}");
    assert_eq!(json["complete"], false);
    // Every readable previous-key row was still done: the GCM row and old-0's 3.
    assert_eq!(json["rewritten"]["rows"], 4, "{json}");
    let report = rt()
        .block_on(async {
            store::audit(
                &Store::open(p).await?,
                &new_with_old(),
                &AuditOptions::new(),
            )
            .await
        })
        .expect("audit");
    assert!(
        report.totals.previous.is_empty(),
        "{:?}",
        report.totals.previous
    );
    assert_eq!(report.totals.unreadable.rows, 3);
}

#[test]
fn a_row_a_live_writer_changes_between_read_and_write_is_left_to_the_writer() {
    let dir = temp_dir("cas");
    let path = sqlite_store(&dir, 0, 1, 3);
    let p = path.to_str().expect("utf-8").to_owned();
    // The writer: when the sweep has read the checkpoints page, a Python process
    // rewrites one checkpoint (under the old key, as a replica not yet switched would).
    let writer_bytes = EncryptedSerializer::from_aes_key(OLD.as_bytes(), AesMode::Eax)
        .expect("k")
        .dumps_typed(&Value::from("the writer's value"))
        .expect("s");
    let fired = Arc::new(AtomicBool::new(false));
    let target = Arc::new(std::sync::Mutex::new(String::new()));
    let options = {
        let (fired, target, path, data) = (
            fired.clone(),
            target.clone(),
            path.clone(),
            writer_bytes.data.to_vec(),
        );
        SweepOptions::new().on_progress(move |p| {
            if p.stage == Stage::Read && p.column == "checkpoints.checkpoint" && !fired.swap(true, Ordering::SeqCst) {
                let conn = rusqlite::Connection::open(&path).expect("writer connects");
                let id: String = conn
                    .query_row("SELECT checkpoint_id FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id LIMIT 1", [], |r| r.get(0))
                    .expect("a checkpoint");
                conn.execute("UPDATE checkpoints SET checkpoint = ?1 WHERE checkpoint_id = ?2", rusqlite::params![data, id])
                    .expect("writer writes");
                *target.lock().expect("lock") = id;
            }
        })
    };
    let report = rt()
        .block_on(async {
            store::rekey(
                &Store::open_for_writing(&p).await?,
                &new_with_old(),
                &options,
            )
            .await
        })
        .expect("rekey");
    assert!(fired.load(Ordering::SeqCst));
    assert_eq!(report.changed_by_writer, 1, "{report:?}");
    assert_eq!(
        report.changed_still_pending, 1,
        "the writer wrote under the old key"
    );
    assert!(!report.complete);
    assert_eq!(report.rewritten.rows, 8);
    let id = target.lock().expect("lock").clone();
    let conn = rusqlite::Connection::open(&path).expect("open");
    let stored: Vec<u8> = conn
        .query_row(
            "SELECT checkpoint FROM checkpoints WHERE checkpoint_id = ?1",
            [id],
            |r| r.get(0),
        )
        .expect("row");
    assert_eq!(
        stored,
        writer_bytes.data.to_vec(),
        "the writer's bytes were overwritten"
    );
    // Run again: now it is done.
    let again = rt()
        .block_on(async {
            store::rekey(
                &Store::open_for_writing(&p).await?,
                &new_with_old(),
                &SweepOptions::new(),
            )
            .await
        })
        .expect("rekey");
    assert_eq!((again.rewritten.rows, again.changed_by_writer), (1, 0));
    assert!(again.complete);
}

/// Kills `lgcodec store <op>` with SIGKILL mid-sweep, several rounds; the caller then
/// lets it finish and checks the end state equals an uninterrupted run's. A round's
/// kill is timed by what the test sees, not by a sleep: `rows` (every stored value) is
/// polled until a batch has been written, then the process is killed after a random
/// 0-40 ms more, if it is still running. Returns how many rounds were killed while
/// running; a round whose sweep ended first (nothing left to do) is not counted.
fn kill_rounds(
    store_arg: &str,
    op: &str,
    env: &[(&str, &str)],
    rounds: usize,
    rows: &dyn Fn() -> Vec<(String, String, String, Vec<u8>)>,
) -> usize {
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(7)
        ^ u64::from(std::process::id());
    let mut killed = 0;
    for _ in 0..rounds {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let extra_ms = (seed >> 33) % 40;
        let before = rows();
        let mut cmd = Command::new(BIN);
        cmd.args([
            "store",
            op,
            store_arg,
            "--batch-size",
            "25",
            "--max-rows-per-sec",
            "3000",
        ])
        .env_remove("LANGGRAPH_AES_KEY_PREVIOUS")
        .env_remove("LANGGRAPH_AES_FALLBACK_KEYS")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn");
        let started = std::time::Instant::now();
        let wrote = loop {
            if child.try_wait().expect("wait").is_some() {
                break false;
            }
            if rows() != before {
                break true;
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "lgcodec store {op} neither wrote nor ended in 120 s"
            );
            std::thread::sleep(Duration::from_millis(2));
        };
        if wrote {
            std::thread::sleep(Duration::from_millis(extra_ms));
            if child.try_wait().expect("wait").is_none() {
                child.kill().expect("SIGKILL");
                killed += 1;
            }
        }
        let _ = child.wait();
    }
    killed
}

#[test]
fn kill_9_at_random_points_then_resume_equals_an_uninterrupted_run() {
    let dir = temp_dir("kill");
    let path = sqlite_store(&dir, 20, 20, 20); // 1,200 rows
    let reference = dir.join("reference.db");
    std::fs::copy(&path, &reference).expect("copy");
    let want = plaintexts(&sqlite_rows(&path));
    let p = path.to_str().expect("utf-8");
    let r = reference.to_str().expect("utf-8");
    for op in ["encrypt", "rekey"] {
        assert_eq!(
            lgcodec(&["store", op, r], &ENV_ROTATE).0,
            0,
            "reference {op}"
        );
        let killed = kill_rounds(p, op, &ENV_ROTATE, 5, &|| sqlite_rows(&path));
        assert!(killed >= 1, "no round was killed mid-sweep");
        let (code, stdout, stderr) = lgcodec(&["store", op, p], &ENV_ROTATE);
        assert_eq!(code, 0, "{stdout}{stderr}");
    }
    let got = sqlite_rows(&path);
    assert_eq!(got.len(), want.len(), "rows lost or added");
    assert_eq!(plaintexts(&got), want, "a plaintext changed");
    let ring = ring();
    for (t, k, tag, data) in &got {
        assert_eq!(
            plain(&ring, tag, data).2,
            Some(0),
            "{t} {k} not under the primary key"
        );
    }
    let reference_rows = sqlite_rows(&reference);
    let same_tags = |rows: &[(String, String, String, Vec<u8>)]| {
        rows.iter()
            .map(|r| (r.1.clone(), r.2.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(same_tags(&got), same_tags(&reference_rows));
    assert_eq!(plaintexts(&reference_rows), want);
}

#[test]
fn fallback_keys_are_read_from_the_environment() {
    let env = |name: &str| match name {
        "LANGGRAPH_AES_KEY" => Some(NEW.into()),
        "LANGGRAPH_AES_KEY_PREVIOUS" => Some(OLD.into()),
        "LANGGRAPH_AES_FALLBACK_KEYS" => {
            Some("third-key-16byte,,base64:Zm91cnRoLWtleS0xNmJ5dA==".into())
        }
        _ => None,
    };
    let keys = StoreKeys::from_env_vars_os(env).expect("keys");
    assert_eq!(
        keys.labels(),
        [
            "LANGGRAPH_AES_KEY",
            "LANGGRAPH_AES_KEY_PREVIOUS #1",
            "LANGGRAPH_AES_FALLBACK_KEYS #1",
            "LANGGRAPH_AES_FALLBACK_KEYS #2"
        ]
    );
    let bad = |name: &str| match name {
        "LANGGRAPH_AES_KEY" => Some(NEW.into()),
        "LANGGRAPH_AES_FALLBACK_KEYS" => Some("short".into()),
        _ => None,
    };
    let err = StoreKeys::from_env_vars_os(bad).expect_err("bad fallback");
    assert!(
        err.to_string()
            .contains("LANGGRAPH_AES_FALLBACK_KEYS entry 1"),
        "{err}"
    );
    let orphan = |name: &str| (name == "LANGGRAPH_AES_FALLBACK_KEYS").then(|| OLD.into());
    assert!(StoreKeys::from_env_vars_os(orphan).is_err());
    assert!(!StoreKeys::from_env_vars_os(|_| None)
        .expect("none")
        .has_primary());
}

#[test]
fn store_help_examples_work_when_pasted() {
    let (code, help, _) = lgcodec(&["store", "--help"], &[]);
    assert_eq!(code, 0);
    let examples: Vec<&str> = help
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("$ "))
        .collect();
    assert!(examples.len() >= 5, "{help}");
    // Every command the help lists has an example.
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 3, "{help}");
    for command in &commands {
        assert!(
            examples
                .iter()
                .any(|e| e.contains(&format!("lgcodec store {command} "))),
            "no example of `lgcodec store {command}` in:\n{help}"
        );
    }
    let dir = temp_dir("help");
    let made = sqlite_store(&dir, 2, 0, 3);
    std::fs::rename(made, dir.join("checkpoints.db")).expect("rename");
    let bin_dir = Path::new(BIN).parent().expect("bin dir");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for example in examples {
        let out = Command::new("sh")
            .args(["-ec", example])
            .current_dir(&dir)
            .env("PATH", &path)
            .env_remove("LANGGRAPH_AES_KEY")
            .env_remove("LANGGRAPH_AES_KEY_PREVIOUS")
            .env_remove("LANGGRAPH_AES_FALLBACK_KEYS")
            .output()
            .expect("sh runs");
        assert!(
            out.status.success(),
            "{example}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

// ---------------------------------------------------------------------------------
// Postgres

/// A fresh schema on the test server and a URL whose search_path is it.
fn pg_schema(tag: &str) -> Option<(String, String)> {
    static N: AtomicU32 = AtomicU32::new(0);
    let base = pg_base()?;
    let schema = format!(
        "st_{tag}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    rt().block_on(async {
        let c = connect(&base).await;
        c.batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
        ))
        .await
        .expect("schema");
    });
    let sep = if base.contains('?') { '&' } else { '?' };
    Some((
        format!("{base}{sep}options=-csearch_path%3D{schema}"),
        schema,
    ))
}

/// `--vacuum` by a role that may not vacuum the tables (it is not their owner): the
/// server skips `VACUUM (FULL)` with a warning and no error, so the old row versions,
/// plaintext after an encrypt, stay in the table files (whose file is the same one:
/// every rewrite makes a new one). The sweep says it was not done, who may run it, and
/// exits 1, where it reported `vacuumed` and that they were gone; the owner's run does
/// it (new files).
#[test]
fn a_vacuum_the_role_may_not_run_is_said_not_done() {
    let Some((url, schema)) = pg_schema("novac") else {
        return;
    };
    pg_store(&url, 3, 0, 2);
    let role = format!("novac_{}", std::process::id());
    let files = || {
        rt().block_on(async {
            let c = connect(&url).await;
            let row = c
                .query_one(
                    &format!(
                        "SELECT pg_relation_filenode('{schema}.checkpoint_blobs')::int8, \
                         pg_relation_filenode('{schema}.checkpoint_writes')::int8"
                    ),
                    &[],
                )
                .await
                .expect("filenodes");
            (row.get::<_, i64>(0), row.get::<_, i64>(1))
        })
    };
    rt().block_on(async {
        connect(&url)
            .await
            .batch_execute(&format!(
                "DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN; \
                 GRANT USAGE ON SCHEMA {schema} TO {role}; \
                 GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role}"
            ))
            .await
            .expect("role");
    });
    let (scheme, rest) = url.split_once("://").expect("a URL");
    let rest = rest.split_once('@').map_or(rest, |(_, r)| r);
    let as_role = format!("{scheme}://{role}@{rest}");
    let before = files();
    let (code, stdout, stderr) = lgcodec(
        &["store", "encrypt", &as_role, "--vacuum", "--json"],
        &ENV_ROTATE,
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(
        json["rewritten"]["rows"].as_u64().map(|n| n > 0),
        Some(true),
        "{json}"
    );
    assert_eq!(json["vacuumed"], false, "{json}");
    let left = json["left_behind"].as_str().unwrap_or_default();
    for words in [
        "skipped VACUUM (FULL) of checkpoint_blobs, checkpoint_writes",
        &format!("role \"{role}\" may not vacuum them"),
    ] {
        assert!(left.contains(words), "{words:?} not in {left}");
    }
    assert!(stderr.contains("--vacuum was not done"), "{stderr}");
    assert_eq!(files(), before, "the server rewrote a table");
    // The owner (the server's superuser here): done, new files.
    let (code, stdout, stderr) = lgcodec(
        &["store", "encrypt", &url, "--vacuum", "--json"],
        &ENV_ROTATE,
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(json["vacuumed"], true, "{json}");
    let after = files();
    assert!(
        after.0 != before.0 && after.1 != before.1,
        "{before:?} {after:?}"
    );
    rt().block_on(async {
        let _ = connect(&url)
            .await
            .batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE IF EXISTS {role}"))
            .await;
    });
}

fn pg_store(url: &str, clear: usize, old: usize, steps: usize) {
    rt().block_on(async {
        for (threads, key, prefix) in [(clear, None, "clear-"), (old, Some(OLD.to_owned()), "old-")]
        {
            let shape = Shape {
                threads,
                steps,
                key,
                ..Shape::default()
            };
            let saver = PostgresSaver::builder_from_url(url)
                .expect("url")
                .serializer(serializer(&shape))
                .build()
                .expect("saver");
            saver.setup().await.expect("setup");
            fill(&saver, &shape, prefix).await;
        }
    });
}

/// Every blob and write: (table, key, type, bytes), by key.
fn pg_rows(url: &str) -> Vec<(String, String, String, Vec<u8>)> {
    rt().block_on(async {
        let c = connect(url).await;
        let mut out = Vec::new();
        for (table, key) in [
            (
                "checkpoint_blobs",
                "thread_id || '/' || channel || '/' || version",
            ),
            (
                "checkpoint_writes",
                "thread_id || '/' || checkpoint_id || '/' || task_id || '/' || idx",
            ),
        ] {
            for r in c
                .query(
                    &format!("SELECT {key}, type, blob FROM {table} ORDER BY 1"),
                    &[],
                )
                .await
                .expect("query")
            {
                out.push((table.to_owned(), r.get(0), r.get(1), r.get(2)));
            }
        }
        out
    })
}

#[test]
fn postgres_audit_encrypt_rekey_and_the_inline_values() {
    let Some((url, _)) = pg_schema("sweep") else {
        return;
    };
    pg_store(&url, 2, 2, 3);
    let want = plaintexts(&pg_rows(&url));
    let report = rt()
        .block_on(async {
            store::audit(
                &Store::open(&url).await?,
                &new_with_old(),
                &AuditOptions::new(),
            )
            .await
        })
        .expect("audit");
    // Per step: a messages blob and two writes; step and notes inline.
    assert_eq!(report.totals.clear.rows, 18);
    assert_eq!(report.totals.previous_total().rows, 18);
    let inline = report.inline.as_ref().expect("inline counts");
    assert_eq!((inline.checkpoints, inline.values.rows), (12, 24));
    assert!(!inline.counted_as_findings);
    let strict = rt()
        .block_on(async {
            store::audit(
                &Store::open(&url).await?,
                &new_with_old(),
                &AuditOptions::new()
                    .allow_clear(true)
                    .allow_previous(true)
                    .deny_inline(true),
            )
            .await
        })
        .expect("audit");
    assert_eq!(strict.findings.len(), 1, "{:?}", strict.findings);
    for op in ["encrypt", "rekey"] {
        let (code, stdout, stderr) = lgcodec(
            &["store", op, &url, "--json", "--batch-size", "5"],
            &ENV_ROTATE,
        );
        assert_eq!(code, 0, "{stdout}{stderr}");
        let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
        assert_eq!(json["rewritten"]["rows"], 18, "{op} {json}");
    }
    let got = pg_rows(&url);
    assert_eq!(plaintexts(&got), want);
    let ring = ring();
    assert!(got
        .iter()
        .all(|(_, _, tag, data)| plain(&ring, tag, data).2 == Some(0)));
    // The rewritten rows' old versions are dead rows until VACUUM: a finding, which
    // --allow-free-space acknowledges and `--vacuum` (VACUUM FULL) removes.
    let audit = |extra: &[&str]| audit_json(&url, extra);
    let (code, json) = audit(&[]);
    assert_eq!(code, 1, "{json}");
    assert!(json["free_space"]["dead_rows"].as_u64() > Some(0), "{json}");
    assert_eq!(json["findings"].as_array().map(Vec::len), Some(1), "{json}");
    assert_eq!(audit(&["--allow-free-space"]).0, 0);
    let (code, stdout, stderr) =
        lgcodec(&["store", "rekey", &url, "--vacuum", "--json"], &ENV_ROTATE);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(json["vacuumed"], true, "{json}");
    let (code, json) = audit(&[]);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["free_space"]["dead_rows"], 0, "{json}");
    assert_eq!(plaintexts(&pg_rows(&url)), want);
    // A database without Python's tables: refused, nothing created.
    let (bare, schema) = pg_schema("bare").expect("server");
    let err = rt()
        .block_on(Store::open_for_writing(&bare))
        .expect_err("no tables");
    assert_eq!(err.kind(), ErrorKind::NotAStore, "{err}");
    let tables: i64 = rt().block_on(async {
        let (c, conn) = tokio_postgres::connect(&bare, tokio_postgres::NoTls)
            .await
            .expect("connect");
        tokio::spawn(conn);
        c.query_one(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1",
            &[&schema],
        )
        .await
        .expect("count")
        .get(0)
    });
    assert_eq!(tables, 0);
}

#[test]
fn postgres_a_row_a_live_writer_changes_is_left_to_the_writer() {
    let Some((url, _)) = pg_schema("cas") else {
        return;
    };
    pg_store(&url, 0, 1, 3);
    let writer_bytes = EncryptedSerializer::from_aes_key(NEW.as_bytes(), AesMode::Eax)
        .expect("k")
        .dumps_typed(&Value::from("the writer's value"))
        .expect("s")
        .data
        .to_vec();
    let fired = Arc::new(AtomicBool::new(false));
    let options = {
        let (fired, url, data) = (fired.clone(), url.clone(), writer_bytes.clone());
        SweepOptions::new().on_progress(move |p| {
            if p.stage == Stage::Read && p.column == "checkpoint_writes.blob" && !fired.swap(true, Ordering::SeqCst) {
                // Another connection, from another thread (the callback is synchronous).
                let (url, data) = (url.clone(), data.clone());
                std::thread::spawn(move || {
                    rt().block_on(async {
                        let (c, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.expect("connect");
                        tokio::spawn(conn);
                        c.execute(
                            "UPDATE checkpoint_writes SET blob = $1 WHERE (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) = \
                             (SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx FROM checkpoint_writes ORDER BY 1, 2, 3, 4, 5 LIMIT 1)",
                            &[&data],
                        )
                        .await
                        .expect("writer writes");
                    })
                })
                .join()
                .expect("writer thread");
            }
        })
    };
    let report = rt()
        .block_on(async {
            store::rekey(
                &Store::open_for_writing(&url).await?,
                &new_with_old(),
                &options,
            )
            .await
        })
        .expect("rekey");
    assert_eq!(report.changed_by_writer, 1, "{report:?}");
    assert_eq!(
        report.changed_still_pending, 0,
        "the writer wrote under the primary key"
    );
    assert!(report.complete);
    let rows = pg_rows(&url);
    assert!(
        rows.iter().any(|r| r.3 == writer_bytes),
        "the writer's bytes were overwritten"
    );
}

#[test]
fn postgres_kill_9_and_terminated_connections_then_resume_equals_an_uninterrupted_run() {
    let Some((url, schema)) = pg_schema("kill") else {
        return;
    };
    pg_store(&url, 15, 15, 20); // 900 values
    let want = plaintexts(&pg_rows(&url));
    // The server terminates the sweep's connection (found by its application_name)
    // every 100 ms: the sweep reconnects and goes on; each batch is one statement, so a
    // terminated batch is rolled back whole, never half-written.
    let app = format!("lgcodec_store_test_{schema}");
    let sweep_url = format!("{url}&application_name={app}");
    let runtime = rt();
    let store = runtime
        .block_on(Store::open_for_writing(&sweep_url))
        .expect("open");
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let killer = {
        let base = pg_base().expect("server");
        let app = app.clone();
        std::thread::spawn(move || {
            rt().block_on(async {
                let (c, conn) = tokio_postgres::connect(&base, tokio_postgres::NoTls).await.expect("connect");
                tokio::spawn(conn);
                let mut terminated = 0u64;
                while stop_rx.try_recv().is_err() {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    terminated += c
                        .query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", &[&app])
                        .await
                        .map(|r| r.len() as u64)
                        .unwrap_or(0);
                }
                terminated
            })
        })
    };
    let report = runtime.block_on(store::encrypt(
        &store,
        &new_with_old(),
        &SweepOptions::new()
            .batch_size(10)
            .max_rows_per_sec(Some(1000))
            .max_reconnects(1000),
    ));
    // The audit, paced to last over a second, reads through the same terminations.
    let audit = runtime.block_on(store::audit(
        &store,
        &new_with_old(),
        &AuditOptions::new()
            .allow_clear(true)
            .allow_free_space(true)
            .page_size(10)
            .max_rows_per_sec(Some(600))
            .max_reconnects(1000),
    ));
    let _ = stop_tx.send(());
    let terminated = killer.join().expect("killer");
    let report = report.expect("the sweep survives terminated connections");
    let audit = audit.expect("the audit survives terminated connections");
    assert!(audit.reconnects >= 1, "{audit:?}");
    assert_eq!(audit.totals.total.rows, want.len() as u64, "{audit:?}");
    println!(
        "terminated {terminated} backend(s), {} reconnect(s)",
        report.reconnects
    );
    assert!(
        report.reconnects >= 1,
        "no connection was terminated mid-sweep"
    );
    assert!(report.complete);
    // SIGKILL rounds of the binary, then resume.
    let killed = kill_rounds(&url, "rekey", &ENV_ROTATE, 4, &|| pg_rows(&url));
    assert!(killed >= 1, "no round was killed mid-sweep");
    for op in ["encrypt", "rekey"] {
        let (code, stdout, stderr) = lgcodec(&["store", op, &url], &ENV_ROTATE);
        assert_eq!(code, 0, "{stdout}{stderr}");
    }
    let got = pg_rows(&url);
    assert_eq!(got.len(), want.len());
    assert_eq!(plaintexts(&got), want);
    let ring = ring();
    assert!(got
        .iter()
        .all(|(_, _, tag, data)| plain(&ring, tag, data).2 == Some(0)));
}

#[test]
fn encrypt_turns_legacy_json_and_zlib_rows_into_rows_python_reads() {
    let dir = temp_dir("json");
    let path = mixed_sqlite(&dir);
    let p = path.to_str().expect("utf-8");
    let (code, stdout, stderr) = lgcodec(&["store", "encrypt", p, "--json"], &ENV_ROTATE);
    // The three unreadable rows are left (exit 1); the rest is done.
    assert_eq!(code, 1, "{stdout}{stderr}");
    let conn = rusqlite::Connection::open(&path).expect("open");
    let rows: Vec<(i64, String, Vec<u8>)> = conn
        .prepare("SELECT idx, type, value FROM writes WHERE thread_id = 'mix' ORDER BY idx")
        .and_then(|mut s| {
            s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect()
        })
        .expect("rows");
    let tags: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(
        tags,
        [
            "msgpack+aes",
            "json+aes",
            "msgpack+aes",
            "msgpack+aes",
            "msgpack+aes",
            "msgpack+aes",
            "msgpack",
            "msgpack+zlib+aes"
        ],
        "clear rows (0, 1, 7) encrypted; the unreadable clear row (6) left"
    );
    let python = EncryptedSerializer::new(
        KeyRing::new(key(NEW)),
        CompressedSerializer::new(JsonPlusSerializer::new()),
    );
    for i in [0usize, 1, 7] {
        let (_, tag, data) = &rows[i];
        assert_eq!(
            python.loads_typed(tag, data).ok(),
            Some(Value::from("secret")),
            "row {i}"
        );
    }
}

#[test]
fn postgres_inline_entries_a_blob_supersedes_are_counted_as_markers() {
    let Some((url, _)) = pg_schema("markers") else {
        return;
    };
    pg_store(&url, 1, 0, 2);
    // A blob at the same channel version as one checkpoint's inline `step` (what
    // Python's put leaves for a _DeltaSnapshot: the inline entry is a marker).
    rt().block_on(async {
        let (c, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.expect("connect");
        tokio::spawn(conn);
        c.batch_execute(
            "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
             SELECT thread_id, checkpoint_ns, 'step', checkpoint -> 'channel_versions' ->> 'step', 'msgpack', '\\x01' \
             FROM checkpoints ORDER BY checkpoint_id LIMIT 1",
        )
        .await
        .expect("insert");
    });
    let report = rt()
        .block_on(async {
            store::audit(
                &Store::open(&url).await?,
                &new_with_old(),
                &AuditOptions::new(),
            )
            .await
        })
        .expect("audit");
    let inline = report.inline.expect("inline");
    // 2 checkpoints x (step, notes) inline; one step superseded by its blob.
    assert_eq!(
        (
            inline.checkpoints,
            inline.values.rows,
            inline.markers,
            inline.nulls
        ),
        (2, 3, 1, 0)
    );
}

/// Key cells Python never writes but a SQLite file can hold — a BLOB `thread_id`, a TEXT
/// `thread_id` whose bytes are not UTF-8 — neither stop the audit nor the encryption:
/// each such row is counted, rewritten by compare-and-swap like any other (bound back as
/// it was stored), and paging goes on past it to the rows after it.
#[test]
fn rows_whose_thread_id_is_a_blob_or_not_utf8_are_swept_like_the_others() {
    let dir = temp_dir("odd-keys");
    let path = sqlite_store(&dir, 2, 0, 2);
    let conn = rusqlite::Connection::open(&path).expect("open");
    for thread in ["x'ff00'", "CAST(x'ff61' AS TEXT)"] {
        conn.execute(
            &format!(
                "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value) \
                 VALUES ({thread}, '', 'c1', 't', '', 0, 'ch', 'msgpack', x'a6736563726574')"
            ),
            [],
        )
        .expect("insert");
    }
    let total: i64 = conn
        .query_row(
            "SELECT (SELECT count(*) FROM checkpoints) + (SELECT count(*) FROM writes)",
            [],
            |r| r.get(0),
        )
        .expect("count");
    drop(conn);
    let p = path.to_str().expect("utf-8");
    let audit = |keys: StoreKeys| {
        rt().block_on(async {
            store::audit(&Store::open(p).await?, &keys, &AuditOptions::new()).await
        })
        .expect("audit reads every row")
    };
    let before = audit(new_with_old());
    assert_eq!(before.totals.total.rows, total as u64);
    assert_eq!(
        before.totals.clear.rows, total as u64,
        "{:?}",
        before.totals
    );
    let report = rt()
        .block_on(async {
            store::encrypt(
                &Store::open_for_writing(p).await?,
                &new_with_old(),
                &SweepOptions::new().batch_size(3),
            )
            .await
        })
        .expect("encrypt goes past the odd keys");
    assert!(report.complete, "{report:?}");
    assert_eq!(report.rewritten.rows, total as u64);
    let after = audit(new_with_old());
    assert_eq!(
        after.totals.primary.rows, total as u64,
        "{:?}",
        after.totals
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_null_row_holding_bytes_is_a_finding_and_stays_in_clear() {
    let dir = temp_dir("null-bytes");
    let path = sqlite_store(&dir, 1, 0, 1);
    let conn = rusqlite::Connection::open(&path).expect("open");
    // Python writes None as ("null", b""); a `null` row with bytes was written by
    // something else. The empty one is an ordinary value.
    for (idx, data) in [(0, &b"stray"[..]), (1, &b""[..])] {
        conn.execute(
            "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value) VALUES ('n', '', 'c1', 't', '', ?1, 'ch', 'null', ?2)",
            rusqlite::params![idx, data],
        )
        .expect("insert");
    }
    drop(conn);
    let p = path.to_str().expect("utf-8");
    let audit = || {
        rt().block_on(async {
            store::audit(
                &Store::open(p).await?,
                &new_with_old(),
                &AuditOptions::new().per_thread(true),
            )
            .await
        })
        .expect("audit")
    };
    let before = audit();
    let n = before.threads.get("n").expect("thread n");
    assert_eq!((n.clear.rows, n.unreadable.rows), (1, 1), "{n:?}");
    assert!(
        before.unreadable_samples[0]
            .reason
            .contains("\"null\" value holding 5 byte(s)"),
        "{:?}",
        before.unreadable_samples
    );
    assert_eq!(before.verdict, Verdict::Findings);
    let (code, stdout, stderr) = lgcodec(&["store", "encrypt", p, "--json"], &ENV_ROTATE);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(json["failed"], 1, "{json}");
    // The stray bytes are where they were, still `null`, and never became a
    // `null+aes` row that the decryptor refuses; the empty one is encrypted.
    let rows = sqlite_rows(&path);
    let of = |idx: &str| {
        rows.iter()
            .find(|r| r.0 == "writes" && r.1.starts_with("n/") && r.1.ends_with(idx))
            .map(|r| (r.2.clone(), r.3.clone()))
            .expect("row")
    };
    assert_eq!(of("/0"), ("null".to_owned(), b"stray".to_vec()));
    let (tag, data) = of("/1");
    assert_eq!(tag, "null+aes");
    assert_eq!(
        plain(&ring(), &tag, &data),
        ("null".to_owned(), Vec::new(), Some(0))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// How many times `needle` occurs in the file at `path` (none when it is absent).
fn occurrences(path: &Path, needle: &[u8]) -> usize {
    let bytes = std::fs::read(path).unwrap_or_default();
    bytes.windows(needle.len()).filter(|w| *w == needle).count()
}

/// After `encrypt`, the report says what may still hold old bytes; what other writers
/// freed before stays on free pages, which `audit` reports as a finding until
/// `--vacuum` rewrites the file, after which no plaintext is left in the database or
/// its WAL.
#[test]
fn encrypt_says_what_it_leaves_and_vacuum_removes_every_old_byte() {
    let dir = temp_dir("residue");
    let path = dir.join("residue.db");
    let conn = crate::support::empty_sqlite_store(&path);
    let value = |marker: &str, i: usize| {
        // A msgpack str of 48 bytes: the marker, the row's number, padding.
        let text = format!("{marker}-{i:05}-{}", "x".repeat(48 - marker.len() - 7));
        let mut v = vec![0xd9, 48];
        v.extend_from_slice(text.as_bytes());
        v
    };
    for (thread, marker, rows) in [
        ("live", "LIVE-PLAINTEXT", 300),
        ("gone", "GONE-PLAINTEXT", 300),
    ] {
        for i in 0..rows {
            conn.execute(
                "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value) VALUES (?1, '', 'c1', 't', '', ?2, 'ch', 'msgpack', ?3)",
                rusqlite::params![thread, i as i64, value(marker, i)],
            )
            .expect("insert");
        }
    }
    // Another writer deletes a thread (as the savers' delete_thread does): its pages go
    // to the free list as they were.
    conn.execute("DELETE FROM writes WHERE thread_id = 'gone'", [])
        .expect("delete");
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .expect("checkpoint");
    drop(conn);
    let p = path.to_str().expect("utf-8");
    let wal = dir.join("residue.db-wal");
    let settle = || {
        let c = rusqlite::Connection::open(&path).expect("open");
        c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .expect("checkpoint");
    };
    assert!(occurrences(&path, b"LIVE-PLAINTEXT") >= 300);
    assert!(occurrences(&path, b"GONE-PLAINTEXT") > 0);
    let (code, stdout, stderr) = lgcodec(&["store", "encrypt", p, "--json"], &ENV_ROTATE);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert!(
        json["left_behind"]
            .as_str()
            .is_some_and(|l| l.contains("--vacuum")),
        "{json}"
    );
    settle();
    assert!(occurrences(&path, b"GONE-PLAINTEXT") > 0);
    let audit = |extra: &[&str]| audit_json(p, extra);
    let (code, json) = audit(&[]);
    assert_eq!(code, 1, "{json}");
    assert!(
        json["free_space"]["free_pages"].as_u64() > Some(0),
        "{json}"
    );
    assert!(
        json["findings"][0]
            .as_str()
            .is_some_and(|f| f.contains("free page") && f.contains("--vacuum")),
        "{json}"
    );
    assert_eq!(audit(&["--allow-free-space"]).0, 0);
    let (code, stdout, stderr) =
        lgcodec(&["store", "encrypt", p, "--vacuum", "--json"], &ENV_ROTATE);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(json["vacuumed"], true, "{json}");
    for file in [&path, &wal] {
        assert_eq!(
            occurrences(file, b"GONE-PLAINTEXT"),
            0,
            "{}",
            file.display()
        );
        assert_eq!(
            occurrences(file, b"LIVE-PLAINTEXT"),
            0,
            "{}",
            file.display()
        );
    }
    let (code, json) = audit(&[]);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["free_space"]["free_pages"], 0, "{json}");
    let _ = std::fs::remove_dir_all(&dir);
}
// ---------------------------------------------------------------------------------
// the key probe

/// Adds `threads` threads under `key` (EAX), named `prefix0`, `prefix1`, …
fn add_sqlite_threads(path: &Path, threads: usize, key: &str, prefix: &str) {
    rt().block_on(async {
        let shape = Shape {
            threads,
            steps: 5,
            key: Some(key.to_owned()),
            ..Shape::default()
        };
        let saver = SqliteSaver::builder(path)
            .serializer(serializer(&shape))
            .open()
            .expect("saver");
        fill(&saver, &shape, prefix).await;
    });
}

/// A key that opens none of the fixture's rows.
const STRANGER: &str = "stranger-key-16b";

#[test]
fn a_wrong_key_stops_audit_encrypt_and_rekey_after_the_first_page_writing_nothing() {
    let dir = temp_dir("probe");
    // 2 threads in clear, 40 under OLD: 5 checkpoints and 10 writes each, in that key
    // order (clear-… before old-…).
    let path = sqlite_store(&dir, 2, 40, 5);
    let p = path.to_str().expect("utf-8");
    let before = sqlite_rows(&path);
    assert_eq!(before.len(), 42 * 15);
    // Batches of 50: the checkpoints' first page holds 10 values in clear and 40 under
    // OLD, the writes' 20 and 30: the 50th encrypted value read is the writes' 10th.
    let wrong = [("LANGGRAPH_AES_KEY", NEW)];
    for op in ["encrypt", "rekey", "audit"] {
        let mut args = vec!["store", op, p];
        if op != "audit" {
            args.extend(["--batch-size", "50"]);
        }
        let (code, stdout, stderr) = lgcodec(&args, &wrong);
        assert_eq!(code, 2, "{op}: {stdout}{stderr}");
        assert_eq!(stdout, "", "{op}");
        for part in [
            &format!("lgcodec: {op}: none of the first 50 encrypted value(s) read opens under any key given (LANGGRAPH_AES_KEY)"),
            "nothing written",
            "Check LANGGRAPH_AES_KEY",
            "LANGGRAPH_AES_KEY_PREVIOUS",
            "--no-key-probe",
        ] {
            assert!(stderr.contains(part), "{op}: {part:?} not in {stderr}");
        }
        assert!(!stderr.contains(NEW), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    // Nothing written: the values in clear were not encrypted under the wrong key.
    assert_eq!(sqlite_rows(&path), before);
    // Every key tried is named by its label, never by its bytes.
    let (code, _, stderr) = lgcodec(
        &["store", "rekey", p],
        &[
            ("LANGGRAPH_AES_KEY", NEW),
            ("LANGGRAPH_AES_KEY_PREVIOUS", STRANGER),
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("any key given (LANGGRAPH_AES_KEY, LANGGRAPH_AES_KEY_PREVIOUS #1)"),
        "{stderr}"
    );
    assert!(
        !stderr.contains(STRANGER) && !stderr.contains(NEW),
        "{stderr}"
    );
    // Through the library: the kind, the count, and no page swept (no progress).
    let pages = Arc::new(AtomicU32::new(0));
    let seen = Arc::clone(&pages);
    let err = rt()
        .block_on(async {
            store::rekey(
                &Store::open_for_writing(p).await?,
                &StoreKeys::new(key(NEW)),
                &SweepOptions::new().batch_size(50).on_progress(move |_| {
                    seen.fetch_add(1, Ordering::Relaxed);
                }),
            )
            .await
        })
        .expect_err("no key opens");
    assert_eq!(err.kind(), ErrorKind::NoKeyOpens, "{err}");
    assert_eq!(err.kind().as_str(), "no_key_opens");
    assert_eq!((err.count(), err.operation()), (Some(50), Some("rekey")));
    assert_eq!(pages.load(Ordering::Relaxed), 0);
    // The audit's pages of 1,000: the checkpoints' first page alone holds the 50.
    let err = rt()
        .block_on(async {
            store::audit(
                &Store::open(p).await?,
                &StoreKeys::new(key(NEW)),
                &AuditOptions::new(),
            )
            .await
        })
        .expect_err("no key opens");
    assert_eq!((err.kind(), err.count()), (ErrorKind::NoKeyOpens, Some(50)));
    // Without the probe: the old behaviour, every value read, exit 1.
    let (code, stdout, stderr) =
        lgcodec(&["store", "rekey", p, "--json", "--no-key-probe"], &wrong);
    assert_eq!(code, 1, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(json["failed"], 40 * 15, "{json}");
    assert_eq!(sqlite_rows(&path), before);
    // No key at all: an audit has nothing to probe with, and reports.
    let (code, stdout, _) = lgcodec(&["store", "audit", p, "--json"], &[]);
    assert_eq!(code, 1);
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(json["totals"]["unreadable"]["rows"], 40 * 15, "{json}");
    // The right key: the probe lets the operations run.
    let (code, stdout, stderr) = lgcodec(&["store", "rekey", p, "--json"], &ENV_ROTATE);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_store_whose_values_partly_open_is_not_stopped() {
    let dir = temp_dir("probe-partly");
    // Values under OLD, whose key is lost, come first (old-…); then one thread under
    // NEW (p-new-…), the key given.
    let path = sqlite_store(&dir, 0, 3, 5);
    add_sqlite_threads(&path, 1, NEW, "p-new-");
    let p = path.to_str().expect("utf-8");
    let before = sqlite_rows(&path);
    let only_new = [("LANGGRAPH_AES_KEY", NEW)];
    let (code, stdout, stderr) = lgcodec(&["store", "audit", p, "--json"], &only_new);
    assert_eq!(code, 1, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(json["totals"]["unreadable"]["rows"], 45, "{json}");
    assert_eq!(json["totals"]["primary"]["rows"], 15, "{json}");
    for op in ["encrypt", "rekey"] {
        let (code, stdout, stderr) = lgcodec(&["store", op, p, "--json"], &only_new);
        assert_eq!(code, 1, "{op}: {stderr}");
        let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
        assert_eq!(json["failed"], 45, "{op}: {json}");
        assert_eq!(json["seen"]["primary"]["rows"], 15, "{op}: {json}");
    }
    assert_eq!(sqlite_rows(&path), before);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn postgres_a_wrong_key_stops_the_sweep_writing_nothing() {
    let Some((url, _)) = pg_schema("probe") else {
        return;
    };
    pg_store(&url, 1, 2, 3);
    let before = pg_rows(&url);
    for op in ["encrypt", "rekey", "audit"] {
        let (code, stdout, stderr) = lgcodec(&["store", op, &url], &[("LANGGRAPH_AES_KEY", NEW)]);
        assert_eq!(code, 2, "{op}: {stdout}{stderr}");
        assert!(
            stderr.contains(&format!("{op}: none of the first ")),
            "{stderr}"
        );
    }
    assert_eq!(pg_rows(&url), before);
    let (code, stdout, stderr) = lgcodec(&["store", "rekey", &url], &ENV_ROTATE);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

#[test]
fn postgres_a_clean_audit_says_on_its_line_how_many_inline_values_are_in_clear() {
    let Some((url, _)) = pg_schema("inline_line") else {
        return;
    };
    // 2 threads under OLD, 3 steps: 6 checkpoints, each with `step` and `notes` inline.
    pg_store(&url, 0, 2, 3);
    // --vacuum: no dead row versions left to be findings of their own.
    let (code, stdout, stderr) = lgcodec(&["store", "rekey", &url, "--vacuum"], &ENV_ROTATE);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let new = [("LANGGRAPH_AES_KEY", NEW)];
    let (code, stdout, stderr) = lgcodec(&["store", "audit", &url], &new);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // The report on standard output, its one-line summary on standard error.
    assert!(!stdout.contains("lgcodec store audit:"), "{stdout}");
    let last = stderr.lines().last().expect("a summary line");
    assert!(
        last.starts_with("lgcodec store audit: clean (encrypted values), 12 inline value(s) in clear on Postgres: see --deny-inline: "),
        "{last}"
    );
    // --json: the machine field, and the same summary on standard error.
    let (code, stdout, stderr) = lgcodec(&["store", "audit", &url, "--json"], &new);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(json["verdict"], "clean");
    assert_eq!(json["inline_values_in_clear"], 12, "{json}");
    assert_eq!(json["inline"]["values"]["rows"], 12, "{json}");
    assert!(
        stderr.contains("clean (encrypted values), 12 inline value(s) in clear"),
        "{stderr}"
    );
    // --deny-inline: findings, exit 1.
    let (code, stdout, stderr) = lgcodec(&["store", "audit", &url, "--deny-inline"], &new);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stderr
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("lgcodec store audit: FINDINGS: ")),
        "{stderr}"
    );
}

#[test]
fn a_clean_sqlite_audit_says_clean_alone() {
    let dir = temp_dir("clean-line");
    let path = sqlite_store(&dir, 0, 1, 2);
    let p = path.to_str().expect("utf-8");
    let (code, stdout, stderr) = lgcodec(
        &["store", "audit", p, "--json"],
        &[("LANGGRAPH_AES_KEY", OLD)],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.starts_with("lgcodec store audit: clean: "),
        "{stderr}"
    );
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(json["inline_values_in_clear"], 0, "{json}");
    let _ = std::fs::remove_dir_all(&dir);
}
