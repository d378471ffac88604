//! The Postgres part of the shared helpers (feature `postgres`): the server from
//! `LGCODEC_TEST_PG_URL` (a skip line without it), one client, fresh databases
//! `<that database>_<tag>`, the committed fixtures of `vectors/stores/` restored into
//! them, and a digest of every row (what must not change).

use std::fs;

use super::stores;

/// The test server's URL from `LGCODEC_TEST_PG_URL`; `None`, with a printed skip line,
/// without it.
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

/// One client; its connection runs on a spawned task.
pub async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    client
}

/// The tables of `schema`, by name.
#[allow(dead_code)] // not every test binary that includes the helpers uses it
pub async fn tables_in(c: &tokio_postgres::Client, schema: &str) -> Vec<String> {
    c.query(
        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1
         ORDER BY 1",
        &[&schema],
    )
    .await
    .expect("tables")
    .iter()
    .map(|r| r.get(0))
    .collect()
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

/// A fresh database `<base>_<tag>` with the tables Python's `setup()` makes (the
/// crate's `PostgresSaver::setup`); its URL.
#[allow(dead_code)] // not every test binary that includes the helpers uses it
pub async fn fresh_set_up(url: &str, tag: &str) -> String {
    let target = fresh(url, tag).await;
    langgraph_codec::saver::postgres::PostgresSaver::builder_from_url(&target)
        .expect("url")
        .build()
        .expect("saver")
        .setup()
        .await
        .expect("setup");
    target
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

/// The server's count of scans of `table` other than by its primary key (sequential,
/// or by another index: a hash or a range the planner chose over a probe by key), once
/// the other connections to the database (a run's, which report their counts as they
/// end) are gone.
#[allow(dead_code)] // not every test binary that includes the helpers uses it
pub async fn scans_not_by_key(client: &tokio_postgres::Client, table: &str) -> i64 {
    use std::time::{Duration, Instant};
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let others: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE datname = current_database() AND pid <> pg_backend_pid()",
                &[],
            )
            .await
            .expect("activity")
            .get(0);
        if others == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "{others} connection(s) left");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    client
        .batch_execute("SELECT pg_stat_clear_snapshot()")
        .await
        .expect("clear");
    client
        .query_one(
            "SELECT t.seq_scan + coalesce(sum(i.idx_scan) FILTER (WHERE i.indexrelname \
             <> t.relname || '_pkey'), 0)::int8 \
             FROM pg_stat_user_tables t JOIN pg_stat_user_indexes i USING (relid) \
             WHERE t.relname = $1 AND t.schemaname = current_schema() GROUP BY t.seq_scan",
            &[&table],
        )
        .await
        .expect("scans")
        .get(0)
}

/// A login role `<prefix>_<pid>` the server lets open `limit` connections at once
/// (`CONNECTION LIMIT`), reading and writing the tables of `db`'s `public` schema; its
/// name and `db`'s URL as that role. Drop it with [`drop_role`].
#[allow(dead_code)] // not every test binary that includes the helpers uses it
pub async fn limited_role(db: &str, prefix: &str, limit: u32) -> (String, String) {
    let role = format!("{prefix}_{}", std::process::id());
    connect(db)
        .await
        .batch_execute(&format!(
            "DROP ROLE IF EXISTS {role};
             CREATE ROLE {role} LOGIN CONNECTION LIMIT {limit};
             GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role};"
        ))
        .await
        .expect("role");
    let (server, name) = db.rsplit_once('/').expect("a database");
    let scheme_end = server.find("://").expect("a URL") + 3;
    let host = &server[scheme_end..];
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    let as_role = format!("{}{role}@{host}/{name}", &server[..scheme_end]);
    (role, as_role)
}

/// Waits (up to 5 s) until the server has let every session of `role` go: a closed
/// session's slot is given back after its client has moved on, and a run that follows
/// at once would find it taken.
#[allow(dead_code)] // not every test binary that includes the helpers uses it
pub async fn sessions_gone(admin: &tokio_postgres::Client, role: &str) {
    for _ in 0..500 {
        let open: i64 = admin
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = $1",
                &[&role],
            )
            .await
            .and_then(|r| r.try_get(0))
            .expect("sessions");
        if open == 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// Drops `role` of [`limited_role`], its rights in `db` first.
#[allow(dead_code)] // not every test binary that includes the helpers uses it
pub async fn drop_role(db: &str, role: &str) {
    connect(db)
        .await
        .batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE {role};"))
        .await
        .expect("drop the role");
}
