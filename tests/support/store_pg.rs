//! Scratch Postgres databases for the store tests: `LGCODEC_TEST_PG_URL` (a skip line
//! without it), fresh databases `<that database>_<tag>`, the committed fixtures of
//! `vectors/stores/` restored into them, and a digest of every row (what must not
//! change). Included with `#[path]` by tests/store_maint.rs and tests/store_upgrade.rs.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

/// `vectors/stores/`: the stores of every release.
pub fn stores() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/stores")
}

/// A fresh scratch directory under the system's temporary directory.
pub fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "lgcodec-store-{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

pub fn url() -> Option<String> {
    match std::env::var("LGCODEC_TEST_PG_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            println!(
                "skipped: LGCODEC_TEST_PG_URL is not set (no PostgreSQL server to test against)"
            );
            None
        }
    }
}

pub async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    client
}

/// A fresh, empty database `<base>_<tag>`; its URL.
pub async fn fresh(url: &str, tag: &str) -> String {
    let cut = url.rfind('/').expect("URL has a database");
    let (server, base) = url.split_at(cut + 1);
    let base = base.split('?').next().unwrap_or(base);
    let db = format!("{base}_{tag}");
    let admin = connect(url).await;
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE)"))
        .await
        .expect("drop");
    admin
        .batch_execute(&format!("CREATE DATABASE \"{db}\""))
        .await
        .expect("create");
    format!("{server}{db}")
}

/// A fresh database holding `fixture/dump.sql`.
/// (Each test uses its own `tag`: tests run in parallel.)
pub async fn restored(url: &str, fixture: &str, tag: &str) -> String {
    let target = fresh(url, &format!("{tag}_{}", fixture.replace(['-', '.'], "_"))).await;
    let sql = fs::read_to_string(stores().join(fixture).join("dump.sql")).expect("dump");
    connect(&target)
        .await
        .batch_execute(&sql)
        .await
        .expect("restore");
    target
}

/// Every row of every table, ordered.
pub async fn digest(url: &str) -> String {
    let client = connect(url).await;
    let mut out = String::new();
    for t in [
        "checkpoints",
        "checkpoint_blobs",
        "checkpoint_writes",
        "checkpoint_migrations",
    ] {
        let rows = client
            .query(&format!("SELECT t::text FROM {t} t ORDER BY 1"), &[])
            .await
            .map(|rows| {
                rows.iter()
                    .map(|r| r.get::<_, String>(0))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        out.push_str(t);
        for r in rows {
            out.push('\n');
            out.push_str(&r);
        }
        out.push('\n');
    }
    // And the catalog: tables, columns and indexes (a migration adds some).
    let catalog = client
        .query(
            "SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable \
             FROM information_schema.columns WHERE table_schema = 'public' \
             UNION ALL SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1",
            &[],
        )
        .await
        .expect("catalog");
    for r in catalog {
        out.push_str(&r.get::<_, String>(0));
        out.push('\n');
    }
    out
}

/// Today's Python (the pinned langgraph-checkpoint-sqlite 3.1.2 / -postgres 3.2.0):
/// `LGCODEC_PYTHON` (CI sets it; the Python checks are then required), else a venv
/// with the pinned packages if one is found, else `None` (the caller skips with a
/// printed reason).
pub fn python() -> Option<String> {
    if let Ok(p) = std::env::var("LGCODEC_PYTHON") {
        return Some(p);
    }
    let found = [
        "/work/venv/bin/python",
        ".venv/bin/python",
        ".ci-venv/bin/python",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
    .map(str::to_owned);
    if found.is_none() {
        println!("skipped the Python reads: no venv found (set LGCODEC_PYTHON)");
    }
    found
}

/// `vectors/store_maint/python_reads_equal.py`: today's Python savers read every
/// target equal to `reference` (after Python's own `setup()` on it when `setup`).
/// Panics with Python's report otherwise; returns its JSON line.
pub fn python_reads_equal(python: &str, setup: bool, reference: &str, targets: &[&str]) -> String {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/store_maint/python_reads_equal.py");
    let mut cmd = std::process::Command::new(python);
    cmd.arg(script);
    if setup {
        cmd.arg("--setup");
    }
    let out = cmd
        .arg(reference)
        .args(targets)
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "Python reads differ:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}
