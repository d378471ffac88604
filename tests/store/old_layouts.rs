//! Audit, encrypt and rekey on the stores older releases wrote: every layout with the
//! swept key, type and value columns is audited as it is; LangGraphJS stores are never
//! rewritten; Python's shallow Postgres stores are encrypted where Python reads them.

use std::fs;

use rusqlite::{Connection, OpenFlags};

use crate::support::{scratch, stores};

/// `lgcodec store ARGS` with `key` as `LANGGRAPH_AES_KEY` (or none): exit status,
/// standard output and standard error.
fn store_cli(args: &[&str], key: Option<&str>) -> (i32, String, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_lgcodec"));
    cmd.arg("store").args(args).env_remove("LANGGRAPH_AES_KEY");
    if let Some(k) = key {
        cmd.env("LANGGRAPH_AES_KEY", k);
    }
    let out = cmd.output().expect("run lgcodec");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `store audit` reads the stores of every release that has the key and value columns
/// (Python's SQLite saver before `task_path`, json-era and LangGraphJS stores, every
/// Python and LangGraphJS Postgres layout): every stored value is counted (here all in
/// clear, so exit 1 with findings) and the store is left byte for byte as it was.
/// LangGraphJS stores are audited but never rewritten (its readers cannot open
/// encrypted rows): `encrypt`, even as a dry run, is refused (exit 2). LangGraph 0.1's
/// `thread_ts` files are refused with the copy to run first.
#[tokio::test]
async fn audit_reads_every_layout_and_leaves_it_as_it_was() {
    let dir = scratch("audit-layouts");
    for fixture in [
        "sqlite-py-1.0.0",
        "sqlite-py-1.0.3-json",
        "sqlite-py-2.0.2",
        "sqlite-js-1.0.4",
        "sqlite-js-0.2.2",
        "sqlite-py-3.1.2",
    ] {
        let path = dir.join(format!("{fixture}.sqlite"));
        fs::copy(stores().join(fixture).join("store.sqlite"), &path).expect("copy");
        let before = fs::read(&path).expect("read");
        let values: i64 = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open")
            .query_row(
                "SELECT (SELECT count(*) FROM checkpoints) + (SELECT count(*) FROM writes)",
                [],
                |r| r.get(0),
            )
            .expect("count");
        let p = path.to_str().expect("utf-8");
        let (code, out, err) = store_cli(&["audit", p, "--json"], None);
        assert_eq!(code, 1, "{fixture}: {err}");
        let report: serde_json::Value = serde_json::from_str(&out).expect("json");
        assert_eq!(report["totals"]["total"]["rows"], values, "{fixture}");
        let in_clear = report["totals"]["clear"]["rows"].as_i64().unwrap_or(0)
            + report["totals"]["legacy_json"]["rows"]
                .as_i64()
                .unwrap_or(0);
        assert_eq!(in_clear, values, "{fixture}: every value is in clear");
        let js = fixture.contains("-js-");
        for args in [vec!["encrypt", p, "--dry-run"], vec!["encrypt", p]] {
            let (code, _, err) = store_cli(&args, Some("0123456789abcdef"));
            if js {
                assert_eq!(code, 2, "{fixture} {args:?}: {err}");
                assert!(err.contains("LangGraphJS"), "{err}");
            } else if args.len() == 3 {
                assert_eq!(code, 0, "{fixture} {args:?}: {err}");
            }
        }
        if js {
            assert_eq!(fs::read(&path).expect("read"), before, "{fixture} changed");
        }
    }
    let old = dir.join("lg.sqlite");
    fs::copy(stores().join("sqlite-lg-0.1.19").join("store.sqlite"), &old).expect("copy");
    let (code, _, err) = store_cli(&["audit", old.to_str().expect("utf-8")], None);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("lgcodec store copy"), "{err}");
    let _ = fs::remove_dir_all(&dir);
    let Some(url) = crate::support::pg::url() else {
        return;
    };
    for fixture in [
        "postgres-py-1.0.0",
        "postgres-py-1.0.1-json",
        "postgres-py-1.0.7-json",
        "postgres-py-2.0.0",
        "postgres-py-2.0.10",
        "postgres-py-2.0.12",
        "postgres-py-2.0.21",
        "postgres-js-1.0.5",
        "postgres-js-0.1.3",
    ] {
        let db = crate::support::pg::restored(&url, fixture, "audit_layouts").await;
        let before = crate::support::pg::digest(&db).await;
        let values: i64 = crate::support::pg::connect(&db)
            .await
            .query_one(
                "SELECT (SELECT count(*) FROM checkpoint_blobs) + (SELECT count(*) FROM checkpoint_writes)",
                &[],
            )
            .await
            .expect("count")
            .get(0);
        let (code, out, err) = store_cli(&["audit", &db, "--json"], None);
        assert_eq!(code, 1, "{fixture}: {err}");
        let report: serde_json::Value = serde_json::from_str(&out).expect("json");
        assert_eq!(report["totals"]["total"]["rows"], values, "{fixture}");
        if fixture.contains("-js-") {
            let (code, _, err) = store_cli(&["encrypt", &db], Some("0123456789abcdef"));
            assert_eq!(code, 2, "{fixture}: {err}");
            assert!(err.contains("LangGraphJS"), "{err}");
        }
        assert_eq!(
            crate::support::pg::digest(&db).await,
            before,
            "{fixture}: the audit changed the store"
        );
    }
}

/// Python's `ShallowPostgresSaver` store (one checkpoint per thread and namespace,
/// blobs keyed by channel): `audit` counts its values, `encrypt` rewrites them under
/// the key, and Python's own `ShallowPostgresSaver` with `EncryptedSerializer` then
/// reads every thread exactly as it read the store in clear.
#[tokio::test]
async fn a_shallow_store_is_audited_and_encrypted_where_python_reads_it() {
    let Some(url) = crate::support::pg::url() else {
        return;
    };
    let Some(python) = crate::support::python() else {
        return;
    };
    let db = crate::support::pg::restored(&url, "postgres-py-shallow-3.2.0", "shallow_enc").await;
    let key = "0123456789abcdef";
    let read = |with_key: bool| {
        let script = "import sys\n\
            import psycopg\n\
            from psycopg.rows import dict_row\n\
            from langgraph.checkpoint.postgres.shallow import ShallowPostgresSaver\n\
            from langgraph.checkpoint.serde.encrypted import EncryptedSerializer\n\
            url, with_key = sys.argv[1], sys.argv[2] == '1'\n\
            with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:\n    \
                serde = EncryptedSerializer.from_pycryptodome_aes() if with_key else None\n    \
                s = ShallowPostgresSaver(conn, serde=serde)\n    \
                threads = sorted(r['thread_id'] for r in conn.execute('SELECT DISTINCT thread_id FROM checkpoints'))\n    \
                for t in threads:\n        \
                    tup = s.get_tuple({'configurable': {'thread_id': t}})\n        \
                    print(t, repr(tup.checkpoint['channel_values']), repr(tup.pending_writes))\n";
        let mut cmd = std::process::Command::new(&python);
        cmd.arg("-c")
            .arg(script)
            .arg(&db)
            .arg(if with_key { "1" } else { "0" });
        if with_key {
            cmd.env("LANGGRAPH_AES_KEY", key);
        } else {
            cmd.env_remove("LANGGRAPH_AES_KEY");
        }
        let out = cmd.output().expect("run python");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let before = read(false);
    assert!(!before.trim().is_empty(), "Python read no thread");
    let (code, out, err) = store_cli(&["audit", &db, "--json"], None);
    assert_eq!(code, 1, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("json");
    let clear = report["totals"]["clear"]["rows"].as_u64().unwrap_or(0);
    assert!(clear > 0, "{report}");
    let (code, _, err) = store_cli(&["encrypt", &db], Some(key));
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = store_cli(&["audit", &db, "--allow-free-space"], Some(key));
    assert_eq!(code, 0, "after encrypt: {err}");
    assert_eq!(
        read(true),
        before,
        "Python reads the encrypted store as before"
    );
}

/// The read-only commands on Python's `ShallowPostgresSaver` store, through the CLI:
/// `stats`, `inspect` (threads, a thread's history, a checkpoint's state), `export`
/// and `copy` into a fresh SQLite file and a fresh Postgres database exit 0 and leave
/// the source's rows as they were; today's Python savers read both copies equal to what
/// the shallow saver reads from the source. `upgrade` still refuses it, naming the copy.
#[tokio::test]
async fn a_shallow_store_is_read_exported_and_copied_by_the_cli() {
    let Some(url) = crate::support::pg::url() else {
        return;
    };
    let fixture = "postgres-py-shallow-3.2.0";
    let db = crate::support::pg::restored(&url, fixture, "shallow_cli").await;
    let before = crate::support::pg::digest(&db).await;
    let dir = scratch("shallow-cli");
    let (code, out, err) = store_cli(&["stats", &db, "--json"], None);
    assert_eq!(code, 0, "stats: {err}");
    let stats: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(stats["threads"], 2, "{stats}");
    let (code, out, err) = store_cli(&["inspect", &db, "--json"], None);
    assert_eq!(code, 0, "inspect: {err}");
    let threads: serde_json::Value = serde_json::from_str(&out).expect("json");
    let latest = threads
        .as_array()
        .and_then(|t| t.first())
        .and_then(|t| t["latest_checkpoint_id"].as_str())
        .unwrap_or_else(|| panic!("{threads}"))
        .to_owned();
    let (code, _, err) = store_cli(&["inspect", &db, "--thread", "t-main"], None);
    assert_eq!(code, 0, "history: {err}");
    let (code, out, err) = store_cli(
        &[
            "inspect",
            &db,
            "--thread",
            "t-main",
            "--checkpoint",
            &latest,
        ],
        None,
    );
    assert_eq!(code, 0, "state: {err}");
    assert!(out.contains("\"messages\""), "{out}");
    let backup = dir.join("shallow.jsonl");
    let (code, _, err) = store_cli(&["export", &db, backup.to_str().expect("utf-8")], None);
    assert_eq!(code, 0, "export: {err}");
    let sqlite_target = dir.join("copy.sqlite");
    let sqlite_target = sqlite_target.to_str().expect("utf-8");
    let pg_target = crate::support::pg::fresh(&url, "shallow_cli_copy").await;
    for target in [sqlite_target, pg_target.as_str()] {
        let (code, out, err) = store_cli(&["copy", &db, target], None);
        assert_eq!(code, 0, "copy into {target}: {out}{err}");
    }
    let (code, _, err) = store_cli(&["upgrade", &db], None);
    assert_eq!(code, 1, "upgrade: {err}");
    assert!(err.contains("lgcodec store copy"), "{err}");
    assert_eq!(
        crate::support::pg::digest(&db).await,
        before,
        "a read-only command changed the shallow store"
    );
    if let Some(python) = crate::support::python() {
        let out = crate::support::python_script(
            &python,
            "python_reads_equal.py",
            &["--shallow", &db, sqlite_target, &pg_target],
        );
        println!("{}", out.trim());
    }
    let _ = fs::remove_dir_all(&dir);
}

/// A LangGraph 0.4 SQLite store written through `EncryptedSerializer`
/// (`sqlite-py-aes-0.4.8`: langgraph-checkpoint 2.0.26, -sqlite 2.0.10, the key in
/// `LANGGRAPH_AES_KEY`): with the key, `audit` finds every value under it (exit 0),
/// `stats`, `inspect` and `export` read it without changing a byte or leaving a side
/// file, `copy` writes fresh SQLite and Postgres stores that today's Python savers with
/// the key read equal to the source, and `upgrade` adds `writes.task_path` after which
/// they read the same; without the key the audit does not pass.
#[tokio::test]
async fn an_encrypted_0_4_store_is_audited_read_copied_and_upgraded_with_its_key() {
    let key = "0123456789abcdef";
    let dir = scratch("aes-0-4");
    let src = dir.join("src").join("store.sqlite");
    fs::create_dir_all(src.parent().expect("dir")).expect("mkdir");
    fs::copy(stores().join("sqlite-py-aes-0.4.8/store.sqlite"), &src).expect("copy");
    let before = fs::read(&src).expect("read");
    let s = src.to_str().expect("utf-8");
    let (code, out, err) = store_cli(&["audit", s, "--json"], Some(key));
    assert_eq!(code, 0, "audit with the key: {out}{err}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        report["totals"]["total"]["rows"], report["totals"]["primary"]["rows"],
        "{report}"
    );
    let (code, _, _) = store_cli(&["audit", s], None);
    assert_ne!(code, 0, "an audit without the key passed");
    let (code, _, err) = store_cli(&["stats", s], Some(key));
    assert_eq!(code, 0, "stats: {err}");
    let (code, out, err) = store_cli(&["inspect", s, "--json"], Some(key));
    assert_eq!(code, 0, "inspect: {err}");
    let threads: serde_json::Value = serde_json::from_str(&out).expect("json");
    let latest = threads[0]["latest_checkpoint_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{threads}"))
        .to_owned();
    let thread = threads[0]["thread_id"].as_str().expect("thread").to_owned();
    let (code, out, err) = store_cli(
        &["inspect", s, "--thread", &thread, "--checkpoint", &latest],
        Some(key),
    );
    assert_eq!(code, 0, "state: {err}");
    assert!(out.contains("\"messages\""), "{out}");
    let backup = dir.join("backup.jsonl");
    let (code, _, err) = store_cli(&["export", s, backup.to_str().expect("utf-8")], Some(key));
    assert_eq!(code, 0, "export: {err}");
    assert_eq!(
        fs::read(&src).expect("read"),
        before,
        "a read changed the file"
    );
    let side: Vec<_> = fs::read_dir(src.parent().expect("dir"))
        .expect("list")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .filter(|n| n != "store.sqlite")
        .collect();
    assert!(side.is_empty(), "side files: {side:?}");
    let sqlite_target = dir.join("copy.sqlite");
    let sqlite_target = sqlite_target.to_str().expect("utf-8");
    let mut targets = vec![sqlite_target.to_owned()];
    if let Some(url) = crate::support::pg::url() {
        targets.push(crate::support::pg::fresh(&url, "aes_0_4_copy").await);
    }
    for target in &targets {
        let (code, out, err) = store_cli(&["copy", s, target], Some(key));
        assert_eq!(code, 0, "copy into {target}: {out}{err}");
    }
    assert_eq!(
        fs::read(&src).expect("read"),
        before,
        "the copy changed the file"
    );
    let upgraded = dir.join("upgraded.sqlite");
    fs::copy(&src, &upgraded).expect("copy");
    let (code, _, err) = store_cli(&["upgrade", upgraded.to_str().expect("utf-8")], None);
    assert_eq!(code, 0, "upgrade: {err}");
    if let Some(python) = crate::support::python() {
        // Python's SqliteSaver migrates what it opens: it reads a copy of the source.
        let reference = dir.join("reference.sqlite");
        fs::copy(&src, &reference).expect("copy");
        let mut args = vec![
            "--aes",
            reference.to_str().expect("utf-8"),
            upgraded.to_str().expect("utf-8"),
        ];
        args.extend(targets.iter().map(String::as_str));
        let out = std::process::Command::new(&python)
            .arg(stores().join("../store_maint/python_reads_equal.py"))
            .args(&args)
            .env("LANGGRAPH_AES_KEY", key)
            .output()
            .expect("python");
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        println!("{}", String::from_utf8_lossy(&out.stdout).trim());
    }
    let _ = fs::remove_dir_all(&dir);
}

/// A Postgres store whose migrations table and columns disagree in a way no release
/// left (today's tables, `checkpoint_writes.task_path` included, but migrations only
/// up to 3: every release before 2.0.12 added `task_path` with its migration 9, 2.0.12
/// at 8): every command refuses it as an unknown layout naming both facts, writes
/// nothing to it and creates no target.
#[tokio::test]
async fn a_store_whose_migrations_and_columns_disagree_is_refused_untouched() {
    let Some(url) = crate::support::pg::url() else {
        return;
    };
    let db = crate::support::pg::restored(&url, "postgres-py-3.2.0", "layout_disagree").await;
    crate::support::pg::connect(&db)
        .await
        .batch_execute("DELETE FROM checkpoint_migrations WHERE v > 3")
        .await
        .expect("doctor");
    let before = crate::support::pg::digest(&db).await;
    let dir = scratch("layout-disagree");
    let out = dir.join("out.jsonl");
    let target = dir.join("copy.db");
    let (out_s, target_s) = (
        out.to_str().expect("utf-8"),
        target.to_str().expect("utf-8"),
    );
    for args in [
        vec!["audit", &db],
        vec!["stats", &db],
        vec!["inspect", &db, "--thread", "t-main"],
        vec!["export", &db, out_s],
        vec!["copy", &db, target_s],
        vec!["upgrade", &db],
        vec!["prune", &db, "--keep-latest", "1"],
        vec!["encrypt", &db],
    ] {
        let (code, _, err) = store_cli(&args, Some("0123456789abcdef"));
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("unknown layout")
                && err.contains("checkpoint_writes has task_path")
                && err.contains("checkpoint_migrations is at 3"),
            "{args:?}: {err}"
        );
        assert!(
            !out.exists() && !target.exists(),
            "{args:?} created a target"
        );
    }
    assert_eq!(
        crate::support::pg::digest(&db).await,
        before,
        "a refused command changed the store"
    );
    let _ = fs::remove_dir_all(&dir);
}
