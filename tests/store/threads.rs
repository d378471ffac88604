//! `AnyStore::threads` / `each_thread` and `lgcodec store inspect`'s thread list on
//! stores of more threads than one page (256): every thread once, in thread order,
//! its counts and bytes as SQL written here counts them, the list stopped when asked,
//! and the CLI's streamed JSON one array equal to the library's list; each thread's
//! time with and without the key of an encrypted store.

use std::ops::ControlFlow;
use std::path::Path;

use langgraph_codec::crypto::AesKey;
use langgraph_codec::saver::postgres::PostgresSaver;
use langgraph_codec::store::{self, AnyStore, StoreKeys, ThreadSummary};

use crate::support::pg::{connect, fresh_set_up, url as pg_base};
use crate::support::store_fixture::{fill, serializer, sqlite_store, Shape};
use crate::support::{rt, scratch};

/// More threads than two pages, two checkpoints each.
fn shape() -> Shape {
    Shape {
        threads: 600,
        steps: 2,
        message_len: 20,
        max_messages: 2,
        ..Shape::default()
    }
}

/// What SQL counts and reads for the list: (thread, checkpoints, namespaces, writes,
/// bytes), and each thread's latest checkpoint id and step.
struct Want {
    counts: Vec<(String, u64, u64, u64, u64)>,
    latest: Vec<(String, String, Option<i64>)>,
}

/// Each thread's latest checkpoint from every (thread, ns, id, step) row, by the rule
/// itself: one in the root namespace before any other, then the greatest id.
fn latest_by_rule(
    rows: Vec<(String, String, String, Option<i64>)>,
) -> Vec<(String, String, Option<i64>)> {
    let mut best: std::collections::BTreeMap<String, (bool, String, Option<i64>)> =
        std::collections::BTreeMap::new();
    for (thread, ns, id, step) in rows {
        let candidate = (ns.is_empty(), id, step);
        let held = best.entry(thread).or_insert_with(|| candidate.clone());
        if (candidate.0, &candidate.1) > (held.0, &held.1) {
            *held = candidate;
        }
    }
    best.into_iter()
        .map(|(thread, (_, id, step))| (thread, id, step))
        .collect()
}

/// (thread, latest time) as the summaries give them.
fn times(threads: Vec<ThreadSummary>) -> Vec<(String, Option<String>)> {
    threads
        .into_iter()
        .map(|t| (t.thread_id, t.latest_ts))
        .collect()
}

/// (thread, checkpoints, namespaces, writes, bytes) as the summaries give them.
fn counted(threads: &[ThreadSummary]) -> Vec<(String, u64, u64, u64, u64)> {
    threads
        .iter()
        .map(|t| {
            (
                t.thread_id.clone(),
                t.checkpoints,
                t.namespaces,
                t.writes,
                t.bytes,
            )
        })
        .collect()
}

/// The same, counted in SQL on the SQLite file: a thread's bytes are its checkpoint
/// and metadata columns and its writes' values, as stored.
fn sqlite_want(path: &Path) -> Want {
    let conn = rusqlite::Connection::open(path).expect("open");
    let mut stmt = conn
        .prepare(
            "SELECT c.thread_id, c.n, c.ns, coalesce(w.n, 0), c.bytes + coalesce(w.bytes, 0) FROM \
             (SELECT thread_id, count(*) AS n, count(DISTINCT checkpoint_ns) AS ns, \
              sum(length(CAST(checkpoint AS BLOB)) + length(CAST(metadata AS BLOB))) AS bytes \
              FROM checkpoints GROUP BY thread_id) c LEFT JOIN \
             (SELECT thread_id, count(*) AS n, sum(length(CAST(value AS BLOB))) AS bytes \
              FROM writes GROUP BY thread_id) w USING (thread_id) ORDER BY c.thread_id",
        )
        .expect("prepare");
    let counts = stmt
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let mut stmt = conn
        .prepare(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, \
             json_extract(CAST(metadata AS TEXT), '$.step') FROM checkpoints",
        )
        .expect("prepare");
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    Want {
        counts,
        latest: latest_by_rule(rows),
    }
}

/// The same on Postgres: checkpoint and metadata as their JSONB text, writes' and
/// blobs' bytes.
async fn pg_want(url: &str) -> Want {
    let client = connect(url).await;
    let rows = client
        .query(
            "SELECT c.thread_id, c.n, c.ns, coalesce(w.n, 0), \
             (c.bytes + coalesce(w.bytes, 0) + coalesce(b.bytes, 0))::int8 FROM \
             (SELECT thread_id, count(*) AS n, count(DISTINCT checkpoint_ns) AS ns, \
              sum(octet_length(checkpoint::text) + octet_length(metadata::text)) AS bytes \
              FROM checkpoints GROUP BY thread_id) c \
             LEFT JOIN (SELECT thread_id, count(*) AS n, sum(octet_length(blob)) AS bytes \
              FROM checkpoint_writes GROUP BY thread_id) w USING (thread_id) \
             LEFT JOIN (SELECT thread_id, sum(octet_length(blob)) AS bytes \
              FROM checkpoint_blobs GROUP BY thread_id) b USING (thread_id) \
             ORDER BY c.thread_id",
            &[],
        )
        .await
        .expect("count");
    let n = |v: i64| u64::try_from(v).expect("a count");
    let counts = rows
        .iter()
        .map(|r| {
            (
                r.get(0),
                n(r.get(1)),
                n(r.get(2)),
                n(r.get(3)),
                n(r.get::<_, i64>(4)),
            )
        })
        .collect();
    let rows = client
        .query(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, (metadata->>'step')::int8 \
             FROM checkpoints",
            &[],
        )
        .await
        .expect("latest");
    let rows = rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    Want {
        counts,
        latest: latest_by_rule(rows),
    }
}

/// Every thread once in thread order with what SQL counts and its latest checkpoint,
/// a stop after 300 threads honoured, and the CLI's `--json` the same list.
async fn lists_every_thread(location: &str, want: Want) {
    let Want {
        counts: want,
        latest,
    } = want;
    assert_eq!(want.len(), 600, "the fixture's threads");
    let store = AnyStore::open(location).await.expect("open");
    let threads = store.threads(&StoreKeys::none()).await.expect("threads");
    assert_eq!(counted(&threads), want);
    let got: Vec<(String, String, Option<i64>)> = threads
        .iter()
        .map(|t| {
            (
                t.thread_id.clone(),
                t.latest_checkpoint_id.clone(),
                t.latest_step,
            )
        })
        .collect();
    assert_eq!(got, latest);
    assert!(
        threads.iter().any(|t| t.namespaces > 1),
        "the fixture has threads of more than one namespace, so the rule is tested"
    );
    assert!(threads
        .iter()
        .all(|t| t.latest_ts.is_some() && t.latest_step.is_some()));

    let mut seen = Vec::new();
    let given = store
        .each_thread(&StoreKeys::none(), |t| {
            seen.push(t.thread_id);
            if seen.len() == 300 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .await
        .expect("each thread");
    assert_eq!(given, 300);
    let first: Vec<String> = want.iter().take(300).map(|w| w.0.clone()).collect();
    assert_eq!(seen, first);

    let (code, stdout, stderr) = crate::lgcodec(&["store", "inspect", location, "--json"], &[]);
    assert_eq!(code, 0, "{stderr}");
    let listed: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    assert_eq!(listed, serde_json::to_value(&threads).expect("json"));
    assert!(
        stderr.contains("600 thread(s)"),
        "the summary counts them: {stderr}"
    );
    let (code, stdout, _) = crate::lgcodec(&["store", "inspect", location], &[]);
    assert_eq!(code, 0);
    // A header, then one line per thread.
    assert_eq!(stdout.lines().count(), 601, "{stdout}");
}

#[test]
fn sqlite_threads_are_listed_page_by_page_as_sql_counts_them() {
    let dir = scratch("threads-pages");
    let path = dir.join("store.db");
    sqlite_store(&path, &shape(), "t");
    let want = sqlite_want(&path);
    let location = path.to_str().expect("utf-8");
    rt().block_on(async {
        lists_every_thread(location, want).await;
        // Encrypted, a SQLite checkpoint's time takes its key (the row is msgpack
        // under AES): the same times with it, none without, every thread listed.
        let store = AnyStore::open(location).await.expect("open");
        let clear = times(store.threads(&StoreKeys::none()).await.expect("threads"));
        assert!(clear.iter().all(|(_, ts)| ts.is_some()));
        drop(store);
        let keys = StoreKeys::new(AesKey::new(b"threads-key-16-b").expect("key"));
        let opened = store::Store::open_for_writing(location)
            .await
            .expect("open");
        let report = store::encrypt(&opened, &keys, &store::SweepOptions::new())
            .await
            .expect("encrypt");
        assert!(report.complete, "{report:?}");
        drop(opened);
        let store = AnyStore::open(location).await.expect("open");
        assert_eq!(times(store.threads(&keys).await.expect("threads")), clear);
        let unknown: Vec<(String, Option<String>)> =
            clear.iter().map(|(t, _)| (t.clone(), None)).collect();
        let without = times(store.threads(&StoreKeys::none()).await.expect("threads"));
        assert_eq!(without, unknown);
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn postgres_threads_are_listed_page_by_page_as_sql_counts_them() {
    let Some(base) = pg_base() else {
        return;
    };
    rt().block_on(async {
        let url = fresh_set_up(&base, "threads_pages").await;
        let saver = PostgresSaver::builder_from_url(&url)
            .expect("url")
            .serializer(serializer(&shape()))
            .build()
            .expect("saver");
        fill(&saver, &shape(), "t").await;
        let want = pg_want(&url).await;
        lists_every_thread(&url, want).await;
        // Each thread's time is its latest checkpoint's (the root namespace first), as
        // Python stored it in the checkpoint's JSONB.
        let want_ts: Vec<(String, Option<String>)> = connect(&url)
            .await
            .query(
                "SELECT DISTINCT ON (thread_id) thread_id, checkpoint->>'ts' FROM checkpoints \
                 ORDER BY thread_id, (checkpoint_ns <> ''), checkpoint_id DESC",
                &[],
            )
            .await
            .expect("times")
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let store = AnyStore::open(&url).await.expect("open");
        let threads = store.threads(&StoreKeys::none()).await.expect("threads");
        let got: Vec<(String, Option<String>)> = threads
            .into_iter()
            .map(|t| (t.thread_id, t.latest_ts))
            .collect();
        assert_eq!(got, want_ts);

        // Encrypted, the times are the same with the key and without it: each is in
        // clear in its row's JSONB, as Python's saver stores it.
        let keys = StoreKeys::new(AesKey::new(b"threads-key-16-b").expect("key"));
        let opened = store::Store::open_for_writing(&url).await.expect("open");
        let report = store::encrypt(&opened, &keys, &store::SweepOptions::new())
            .await
            .expect("encrypt");
        assert!(report.complete, "{report:?}");
        let store = AnyStore::open(&url).await.expect("open");
        let with_key = store.threads(&keys).await.expect("threads");
        assert_eq!(times(with_key), want_ts);
        let without = times(store.threads(&StoreKeys::none()).await.expect("threads"));
        assert_eq!(without, want_ts);
    });
}
