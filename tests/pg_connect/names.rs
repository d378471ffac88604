//! The names the saver's and `lgcodec`'s sessions show in `pg_stat_activity`, read
//! there while the session waits on a lock the test holds: `application_name` (the
//! string's, then `PGAPPNAME`), then `fallback_application_name`, as psycopg's libpq
//! resolves them with the same string and environment; then the process's own name
//! (`lgcodec store COMMAND`, the library's `langgraph-codec`), where a Python session
//! has none.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use langgraph_codec::saver::postgres::PostgresSaver;
use langgraph_codec::saver::{CheckpointConfig, CheckpointSaver};

use super::run::{saver_setup, server};
use super::server::Server;

/// The database of these cases (no other test locks or reads it).
const DB: &str = "namesdb";

async fn client(url: &str) -> tokio_postgres::Client {
    let (c, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect as the superuser");
    tokio::spawn(conn);
    c
}

/// What `start` names its session, seen in `pg_stat_activity` while that session
/// waits for the lock the test holds on `checkpoints`; then `finish` once the lock is
/// let go.
async fn name_while_waiting<T>(
    url: &str,
    start: impl FnOnce() -> T,
    finish: impl AsyncFnOnce(T),
) -> String {
    let mut holder = client(url).await;
    // Not in the holder's transaction: pg_stat_activity is read once per transaction.
    let watcher = client(url).await;
    let tx = holder.transaction().await.expect("begin");
    tx.batch_execute("LOCK TABLE checkpoints IN ACCESS EXCLUSIVE MODE")
        .await
        .expect("lock");
    let running = start();
    let deadline = Instant::now() + Duration::from_secs(20);
    let name = loop {
        let rows = watcher
            .query(
                "SELECT application_name FROM pg_stat_activity \
                 WHERE datname = $1 AND wait_event_type = 'Lock'",
                &[&DB],
            )
            .await
            .expect("pg_stat_activity");
        if let Some(row) = rows.first() {
            assert_eq!(rows.len(), 1, "one session waits");
            break row.get::<_, String>(0);
        }
        assert!(
            Instant::now() < deadline,
            "no session waited on the lock within 20 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    tx.rollback().await.expect("let go of the lock");
    finish(running).await;
    name
}

/// The application name psycopg's libpq gives a session of `conninfo` with exactly
/// `env`, or `None` (a line printed) without psycopg.
fn psycopg_name(env: &[(&str, &str)], conninfo: &str) -> Option<String> {
    let python = std::env::var("LGCODEC_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(&python)
        .env_clear()
        .envs(env.iter().copied())
        .args([
            "-c",
            "import sys, psycopg\n\
             with psycopg.connect(sys.argv[1]) as c:\n\
             \x20   print(c.execute('SHOW application_name').fetchone()[0])",
            conninfo,
        ])
        .output()
        .ok()?;
    if !out.status.success() {
        println!(
            "psycopg ({python}) could not be run: the comparison with libpq is skipped: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim_end().to_owned())
}

/// The name `lgcodec store stats CONNINFO` with exactly `env` shows.
async fn lgcodec_name(url: &str, env: &[(&str, &str)], conninfo: &str) -> String {
    name_while_waiting(
        url,
        || {
            Command::new(env!("CARGO_BIN_EXE_lgcodec"))
                .env_clear()
                .envs(env.iter().copied())
                .args(["store", "stats", conninfo])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("run lgcodec")
        },
        async |child| {
            let out = child.wait_with_output().expect("lgcodec ends");
            assert!(
                out.status.success(),
                "lgcodec store stats {conninfo} with {env:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        },
    )
    .await
}

async fn names_db(s: &Server) -> String {
    let admin = client(&s.url("postgres", "127.0.0.1", "postgres", "sslmode=disable")).await;
    let exists = admin
        .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&DB])
        .await
        .expect("pg_database")
        .is_some();
    if !exists {
        admin
            .batch_execute(&format!("CREATE DATABASE {DB}"))
            .await
            .expect("create the database");
    }
    let url = s.url("postgres", "127.0.0.1", DB, "sslmode=disable");
    saver_setup(&url, "the superuser").await;
    url
}

#[tokio::test]
async fn sessions_are_named_as_libpq_names_them_then_by_the_program() {
    let Some(s) = server() else { return };
    let url = names_db(s).await;
    let with = |query: &str| format!("{url}&{query}");
    let keywords = format!(
        "host=127.0.0.1 port={} user=postgres dbname={DB} sslmode=disable \
         fallback_application_name=fb",
        s.port
    );
    // (conninfo, environment, the name libpq gives).
    type Case<'a> = (String, Vec<(&'a str, &'a str)>, &'a str);
    let cases: Vec<Case> = vec![
        (
            with("application_name=nightly-prune"),
            vec![],
            "nightly-prune",
        ),
        (url.clone(), vec![("PGAPPNAME", "from-env")], "from-env"),
        (with("fallback_application_name=fb"), vec![], "fb"),
        (
            with("fallback_application_name=fb"),
            vec![("PGAPPNAME", "from-env")],
            "from-env",
        ),
        // Given empty, the name is empty: no fallback (libpq 15 and 18).
        (
            with("application_name=&fallback_application_name=fb"),
            vec![],
            "",
        ),
        (url.clone(), vec![("PGAPPNAME", "")], ""),
        (with("fallback_application_name="), vec![], ""),
        (keywords, vec![], "fb"),
        (
            with("application_name=nightly-prune"),
            vec![("PGAPPNAME", "from-env")],
            "nightly-prune",
        ),
    ];
    for (conninfo, env, want) in &cases {
        if let Some(libpq) = psycopg_name(env, conninfo) {
            assert_eq!(libpq, *want, "psycopg with {conninfo} and {env:?}");
        }
        let seen = lgcodec_name(&url, env, conninfo).await;
        assert_eq!(seen, *want, "lgcodec with {conninfo} and {env:?}");
    }
    // Nothing named: psycopg's session has no name, lgcodec's names the command.
    if let Some(libpq) = psycopg_name(&[], &url) {
        assert_eq!(libpq, "", "psycopg with {url}");
    }
    assert_eq!(lgcodec_name(&url, &[], &url).await, "lgcodec store stats");

    // The library's saver: `langgraph-codec` (this test binary never sets a name).
    let saver = PostgresSaver::builder_from_url(&url)
        .expect("url")
        .build()
        .expect("build");
    let config: CheckpointConfig =
        serde_json::from_str(r#"{"configurable": {"thread_id": "t"}}"#).expect("config");
    let seen = name_while_waiting(
        &url,
        || {
            let saver = saver.clone();
            let config = config.clone();
            tokio::spawn(async move { saver.get_tuple(&config).await })
        },
        async |task| {
            task.await.expect("the task").expect("get_tuple");
        },
    )
    .await;
    assert_eq!(seen, "langgraph-codec");
}
