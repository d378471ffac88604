//! A thread of more checkpoints than a page holds is pruned a window at a time (read
//! newest first, each window deleted in its own transaction), to the same end as the
//! planner reading it whole: the same rows stay, the same counts are reported, on a
//! SQLite file and on a Postgres server.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use langgraph_codec::saver::sqlite::SqliteSaver;
use langgraph_codec::saver::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver,
};
use langgraph_codec::store::{
    self, CopyOptions, PruneOptions, RetainOptions, RetentionPolicy, StoreKeys,
};
use langgraph_codec::Value;

use crate::support;

/// Checkpoints of the long thread's root namespace, and of its subgraph's.
const ROOT: usize = 10_200;
const INNER: usize = 120;

/// A SQLite store at `path`: thread `long` (`ROOT` + `INNER` checkpoints, more than a
/// window) and thread `short` (30). Each checkpoint's metadata names `messages` as a
/// DeltaChannel; every seventh checkpoint stores it (a snapshot), the others only
/// `step` and two channels at versions shared with others (`config` with every
/// checkpoint of the namespace, `topic` with the four next to it, across a window's
/// edge at every thousand). Every 97th forks from the checkpoint three back, every 89th is labelled
/// `keep`, every tenth has a pending write. Labelled too, the checkpoint that is the
/// second oldest of each window of 1,000 (read newest first, step 201 of each
/// thousand): the ancestors it needs are in the next window (unless it is a snapshot).
async fn long_store(path: &Path) {
    let saver = SqliteSaver::builder(path)
        .create(true)
        .open()
        .expect("saver");
    for (thread, counts) in [("long", [ROOT, INNER]), ("short", [30, 0])] {
        for (ns, n) in ["", "inner:1"].into_iter().zip(counts) {
            let mut history: Vec<CheckpointConfig> = Vec::new();
            let mut at = CheckpointConfig::new(thread).with_ns(ns);
            for step in 0..n {
                let mut cp = Checkpoint::now(step as i64);
                let snapshot = step % 7 == 0;
                if snapshot {
                    cp.channel_values.insert(
                        "messages".into(),
                        Value::Array(vec![Value::from(format!("m{step}"))]),
                    );
                }
                cp.channel_values
                    .insert("step".into(), Value::from(step as i64));
                // Values kept in blobs on Postgres (not primitives), at versions many
                // checkpoints share: one written at the first step, one every fifth.
                let topic = step / 5 * 5;
                cp.channel_values
                    .insert("config".into(), Value::Array(vec![Value::from("c")]));
                cp.channel_values.insert(
                    "topic".into(),
                    Value::Array(vec![Value::from(topic as i64)]),
                );
                let mut versions = ChannelVersions::new();
                versions.insert("step".into(), ChannelVersion::from(format!("{step:032}.0")));
                versions.insert(
                    "config".into(),
                    ChannelVersion::from(format!("{:032}.0", 0)),
                );
                versions.insert(
                    "topic".into(),
                    ChannelVersion::from(format!("{topic:032}.0")),
                );
                if snapshot {
                    versions.insert(
                        "messages".into(),
                        ChannelVersion::from(format!("{step:032}.0")),
                    );
                }
                cp.channel_versions = versions.clone();
                let mut metadata = CheckpointMetadata::new("loop", step as i64).with(
                    "counters_since_delta_snapshot",
                    Value::map([(
                        "messages",
                        Value::Array(vec![Value::from((step % 7) as i64), Value::from(0i64)]),
                    )]),
                );
                if step % 89 == 44 || step % 1_000 == 201 {
                    metadata = metadata.with("keep", true);
                }
                let from = match history.len() {
                    len if step % 97 == 96 && len >= 3 => history[len - 3].clone(),
                    _ => at.clone(),
                };
                at = saver
                    .put(&from, &cp, &metadata, &versions)
                    .await
                    .expect("put");
                if step % 10 == 3 {
                    let writes = vec![("step".to_owned(), Value::from(step as i64 + 1))];
                    saver
                        .put_writes(&at, &writes, &format!("task-{step}"), "")
                        .await
                        .expect("put_writes");
                }
                history.push(at.clone());
            }
        }
    }
}

/// The policy kept: the latest 3 and the labelled, with what their DeltaChannels need;
/// and rules read from each thread's latest metadata (a pin no checkpoint holds, an
/// override under `retention`), which the windows decide from that checkpoint first.
fn policy() -> RetentionPolicy {
    RetentionPolicy::new()
        .keep_latest(3)
        .label("keep")
        .pin_metadata("no-checkpoint-holds-this")
        .override_key("retention")
}

/// Has the planner read the long thread whole, on the copy the window's results are
/// compared with: its oldest root checkpoint names a parent above itself (and not
/// stored), so not every parent is below its child. That checkpoint goes in every
/// prune here (it is not among the latest, labelled, or a snapshot a kept checkpoint
/// needs), so both copies end alike.
const READ_WHOLE: &str = "UPDATE checkpoints SET parent_checkpoint_id = 'ffffffff' \
    WHERE thread_id = 'long' AND checkpoint_ns = '' AND checkpoint_id = \
    (SELECT min(checkpoint_id) FROM checkpoints WHERE thread_id = 'long' AND checkpoint_ns = '');";

/// Runs the policy on `store`; returns its report as JSON (times left out) and how
/// many parts each thread's listing came in (`dry_run`).
async fn retain(store: &str, dry_run: bool) -> (serde_json::Value, BTreeMap<String, usize>) {
    retain_by(store, policy(), dry_run).await
}

/// [`retain`] by `policy`.
async fn retain_by(
    store: &str,
    policy: RetentionPolicy,
    dry_run: bool,
) -> (serde_json::Value, BTreeMap<String, usize>) {
    let parts: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
    let mut options = RetainOptions::new(policy).dry_run(dry_run);
    if dry_run {
        let seen = parts.clone();
        options = options.on_plan(move |p| {
            *seen
                .lock()
                .expect("lock")
                .entry(p.thread_id.clone())
                .or_default() += 1;
        });
    }
    let report = store::retain(store, &StoreKeys::none(), &options)
        .await
        .expect("retain");
    let mut json = serde_json::to_value(&report).expect("json");
    for k in [
        "duration_s",
        "started_at",
        "lock_held_ms",
        "elapsed_s",
        "store",
    ] {
        json.as_object_mut().expect("an object").remove(k);
    }
    let parts = parts.lock().expect("lock").clone();
    (json, parts)
}

/// [`long_store`] at `dir/a.db` with `sql` run on it, and a copy at `dir/b.db`.
fn sqlite_pair(dir: &Path, sql: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let (a, b) = (dir.join("a.db"), dir.join("b.db"));
    tokio::runtime::Runtime::new()
        .expect("runtime")
        .block_on(long_store(&a));
    let conn = rusqlite::Connection::open(&a).expect("open");
    conn.execute_batch(&format!("{sql} PRAGMA wal_checkpoint(TRUNCATE)"))
        .expect("set up");
    drop(conn);
    std::fs::copy(&a, &b).expect("copy");
    (a, b)
}

/// Runs [`READ_WHOLE`] on the SQLite store at `path`.
fn read_whole(path: &Path) {
    rusqlite::Connection::open(path)
        .and_then(|c| c.execute_batch(READ_WHOLE))
        .expect("read whole");
}

/// [`long_store`] copied into two fresh databases `<tag>_a` and `<tag>_b` of the
/// server at `url` (the SQLite file written in `dir`), `sql` run on both, then `b` read
/// whole ([`READ_WHOLE`]); their URLs.
async fn pg_pair(url: &str, dir: &Path, tag: &str, sql: &str) -> (String, String) {
    let source = dir.join("source.db");
    long_store(&source).await;
    let source = source.to_str().expect("utf-8");
    let a = support::pg::fresh(url, &format!("{tag}_a")).await;
    let b = support::pg::fresh(url, &format!("{tag}_b")).await;
    for target in [&a, &b] {
        store::copy(source, target, &StoreKeys::none(), &CopyOptions::new())
            .await
            .expect("copy");
    }
    for target in [&a, &b] {
        support::pg::connect(target)
            .await
            .batch_execute(sql)
            .await
            .expect("set up");
    }
    support::pg::connect(&b)
        .await
        .batch_execute(READ_WHOLE)
        .await
        .expect("read whole");
    (a, b)
}

/// Every row of a Postgres database ([`support::pg::digest`]), read on a thread of its
/// own (the tests' runtime is busy with the run that calls it).
fn pg_rows(url: &str) -> Vec<String> {
    let url = url.to_owned();
    std::thread::spawn(move || {
        tokio::runtime::Runtime::new()
            .expect("runtime")
            .block_on(support::pg::digest(&url))
    })
    .join()
    .expect("digest")
    .lines()
    .map(str::to_owned)
    .collect()
}

/// Every row of a SQLite store: checkpoints with their parents, writes.
fn sqlite_rows(path: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).expect("open");
    let mut out = Vec::new();
    for sql in [
        "SELECT thread_id || '/' || checkpoint_ns || '/' || checkpoint_id || ' <- ' || \
         coalesce(parent_checkpoint_id, '-') FROM checkpoints ORDER BY 1",
        "SELECT thread_id || '/' || checkpoint_ns || '/' || checkpoint_id || ' ' || task_id || \
         ' ' || idx FROM writes ORDER BY 1",
    ] {
        let mut stmt = conn.prepare(sql).expect("prepare");
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .expect("query");
        out.extend(rows.map(|r| r.expect("row")));
    }
    out
}

/// The counts a run reports that tell what it did.
fn counts(report: &serde_json::Value) -> Vec<u64> {
    [
        "threads",
        "checkpoints_deleted",
        "checkpoints_kept",
        "writes_deleted",
        "blobs_deleted",
    ]
    .iter()
    .map(|k| {
        report[k]
            .as_u64()
            .unwrap_or_else(|| panic!("{k} in {report}"))
    })
    .collect()
}

/// Runs `policy` on `a`, dry and then for real, and on `b`, a copy read whole
/// ([`READ_WHOLE`]): the same reports and the same rows, the long thread listed a
/// window at a time on `a`. Returns the report of the run on `a`.
async fn same_as_whole(
    a: &str,
    b: &str,
    rows: impl Fn(&str) -> Vec<String>,
    policy: RetentionPolicy,
) -> serde_json::Value {
    let (dry, parts) = retain_by(a, policy.clone(), true).await;
    let (dry_whole, parts_whole) = retain_by(b, policy.clone(), true).await;
    // The long thread's listing comes a window at a time; planned whole, in one.
    assert!(parts["long"] > ROOT / 1_000, "{parts:?}");
    assert_eq!(parts_whole["long"], 1, "{parts_whole:?}");
    assert_eq!(dry, dry_whole);
    let (done, _) = retain_by(a, policy.clone(), false).await;
    let (done_whole, _) = retain_by(b, policy.clone(), false).await;
    assert_eq!(done, done_whole);
    assert_eq!(counts(&done), counts(&dry));
    assert_eq!(rows(a), rows(b));
    // A second run finds nothing more to do, as planned whole.
    let (again, _) = retain_by(a, policy, false).await;
    assert_eq!(again["checkpoints_deleted"], 0, "{again}");
    done
}

/// Expected values are the whole planner's, run on a copy of the same store.
async fn check(a: &str, b: &str, rows: impl Fn(&str) -> Vec<String>) {
    let done = same_as_whole(a, b, rows, policy()).await;
    let kept = &done["kept_by_rule"];
    // The latest 3 of each namespace need the snapshot up to four back; labels stay.
    assert!(kept["delta_ancestors"].as_u64() > Some(0), "{done}");
    assert!(kept["labeled"].as_u64() > Some(100), "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_sqlite_thread_is_pruned_a_window_at_a_time_as_planned_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = tokio::task::block_in_place(|| sqlite_pair(dir.path(), ""));
    read_whole(&b);
    let (a, b) = (a.to_str().expect("utf-8"), b.to_str().expect("utf-8"));
    check(a, b, |p| sqlite_rows(Path::new(p))).await;
}

/// An override in a long thread's latest metadata (keep the latest 1 where the policy
/// keeps 3) is read from that checkpoint first, and the thread pruned a window at a
/// time by it, to the planner's end reading it whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_override_in_a_long_threads_latest_metadata_is_followed_a_window_at_a_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = tokio::task::block_in_place(|| {
        sqlite_pair(
            dir.path(),
            "UPDATE checkpoints SET metadata = CAST(json_set(CAST(metadata AS TEXT), \
             '$.retention', json('{\"keep_latest\": 1}')) AS BLOB) \
             WHERE thread_id = 'long' AND checkpoint_ns = '' AND checkpoint_id = \
             (SELECT max(checkpoint_id) FROM checkpoints \
             WHERE thread_id = 'long' AND checkpoint_ns = '');",
        )
    });
    read_whole(&b);
    // The root namespace's latest three: the newest a DeltaChannel snapshot (step
    // 10,199), the two before it neither labelled nor needed by it.
    let newest = |path: &Path| -> Vec<String> {
        let conn = rusqlite::Connection::open(path).expect("open");
        let mut stmt = conn
            .prepare(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = 'long' \
                 AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 3",
            )
            .expect("prepare");
        let ids = stmt.query_map([], |r| r.get(0)).expect("query");
        ids.map(|r| r.expect("id")).collect()
    };
    let before = newest(&a);
    let (a_arg, b_arg) = (a.to_str().expect("utf-8"), b.to_str().expect("utf-8"));
    check(a_arg, b_arg, |p| sqlite_rows(Path::new(p))).await;
    let after = newest(&a);
    assert_eq!(after.first(), before.first());
    assert!(
        !after.contains(&before[1]) && !after.contains(&before[2]),
        "{after:?}"
    );
    let (done, _) = retain(a_arg, true).await;
    assert_eq!(done["kept_by_rule"]["overridden_threads"], 1, "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_postgres_thread_is_pruned_a_window_at_a_time_as_planned_whole() {
    let Some(url) = support::pg::url() else {
        eprintln!("skipped: LGCODEC_TEST_PG_URL is not set");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = pg_pair(&url, dir.path(), "long", "").await;
    check(&a, &b, pg_rows).await;
}

/// A long thread a time rule expires (idle) is pruned a window at a time to the
/// planner's end reading it whole, each way the planner decides such a thread: the
/// labelled stay (with what they need) and the rest goes; `idle_action = keep_latest`
/// keeps the latest; with none labelled it goes whole (its writes stored against no
/// checkpoint too); waiting at an interrupt, it keeps to the policy's rules.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_thread_a_time_rule_expires_is_pruned_a_window_at_a_time() {
    use std::time::Duration;
    let interrupt = |thread: &str| {
        format!(
            "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, \
             channel, type, value) VALUES ('{thread}', '', (SELECT max(checkpoint_id) \
             FROM checkpoints WHERE thread_id = '{thread}' AND checkpoint_ns = ''), \
             'task-i', 0, '__interrupt__', 'msgpack', x'90');"
        )
    };
    let orphan = "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, \
                  channel, type, value) VALUES ('long', '', '00000000-0000-6000-8000-000000000000', \
                  'task', 0, 'step', 'msgpack', x'01');";
    let idle = |keep_latest_instead| {
        RetentionPolicy::new()
            .keep_latest(3)
            .idle_ttl(Duration::from_secs(1), keep_latest_instead)
    };
    let cases = [
        (
            "labelled",
            String::new(),
            idle(false).label("keep").keep_interrupted(false),
        ),
        ("latest", String::new(), idle(true).keep_interrupted(false)),
        (
            "whole",
            format!("{}{orphan}", interrupt("short")),
            idle(false).keep_interrupted(true),
        ),
        (
            "waiting",
            interrupt("long"),
            idle(false).keep_interrupted(true),
        ),
    ];
    for (case, sql, policy) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let (a, b) = tokio::task::block_in_place(|| sqlite_pair(dir.path(), &sql));
        read_whole(&b);
        // Every checkpoint older than the idle TTL (a second) when the runs begin.
        tokio::time::sleep(Duration::from_millis(2_100)).await;
        let (a_arg, b_arg) = (a.to_str().expect("utf-8"), b.to_str().expect("utf-8"));
        let done = same_as_whole(a_arg, b_arg, |p| sqlite_rows(Path::new(p)), policy).await;
        let kept = &done["kept_by_rule"];
        let long_left = sqlite_rows(&a)
            .iter()
            .filter(|r| r.starts_with("long/"))
            .count();
        match case {
            "labelled" => assert!(kept["labeled"].as_u64() > Some(100), "{done}"),
            "latest" => assert_eq!(kept["labeled"], 0, "{done}"),
            "whole" => {
                assert_eq!(done["threads_deleted"], 1, "{done}");
                assert_eq!(long_left, 0, "{done}");
            }
            _ => assert_eq!(kept["interrupted_threads"], 1, "{done}"),
        }
        assert!(long_left < 600, "{case}: {long_left} left\n{done}");
    }
}

/// The same on Postgres, the thread going whole (the other waits at an interrupt):
/// its blobs go with its windows, its write stored against no checkpoint after them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_postgres_thread_a_time_rule_expires_goes_whole_a_window_at_a_time() {
    let Some(url) = support::pg::url() else {
        eprintln!("skipped: LGCODEC_TEST_PG_URL is not set");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = pg_pair(
        &url,
        dir.path(),
        "long_idle",
        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, \
                 task_path, idx, channel, type, blob) VALUES ('short', '', (SELECT \
                 max(checkpoint_id) FROM checkpoints WHERE thread_id = 'short' AND \
                 checkpoint_ns = ''), 'task-i', '', 0, '__interrupt__', 'msgpack', '\\x90'), \
                 ('long', '', '00000000-0000-6000-8000-000000000000', 'task', '', 0, 'step', \
                 'msgpack', '\\x01');",
    )
    .await;
    let policy = RetentionPolicy::new()
        .keep_latest(3)
        .idle_ttl(std::time::Duration::from_secs(1), false)
        .keep_interrupted(true);
    tokio::time::sleep(std::time::Duration::from_millis(2_100)).await;
    let done = same_as_whole(&a, &b, pg_rows, policy).await;
    assert_eq!(done["threads_deleted"], 1, "{done}");
    assert_eq!(done["kept_by_rule"]["interrupted_threads"], 1, "{done}");
    let left: i64 = support::pg::connect(&a)
        .await
        .query_one(
            "SELECT (SELECT count(*) FROM checkpoints WHERE thread_id = 'long') \
             + (SELECT count(*) FROM checkpoint_writes WHERE thread_id = 'long') \
             + (SELECT count(*) FROM checkpoint_blobs WHERE thread_id = 'long')",
            &[],
        )
        .await
        .expect("count")
        .get(0);
    assert_eq!(left, 0);
}

/// A long Postgres thread of checkpoints before v4 (which read their pending sends
/// from their parent's `__pregel_tasks` writes, every thirteenth parent holding some)
/// is pruned a window at a time, each kept checkpoint's parent with sends kept, to the
/// planner's end reading it whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_postgres_thread_before_v4_keeps_the_parents_it_reads_sends_from() {
    let Some(url) = support::pg::url() else {
        eprintln!("skipped: LGCODEC_TEST_PG_URL is not set");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = pg_pair(
        &url,
        dir.path(),
        "long_v3",
        "UPDATE checkpoints SET checkpoint = jsonb_set(checkpoint, '{v}', '3') \
                 WHERE thread_id = 'long' AND checkpoint_ns = '';
                 INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, \
                 task_id, task_path, idx, channel, type, blob) \
                 SELECT thread_id, checkpoint_ns, checkpoint_id, 'send', '', 0, \
                 '__pregel_tasks', 'msgpack', '\\x90' FROM (SELECT thread_id, checkpoint_ns, \
                 checkpoint_id, row_number() OVER (ORDER BY checkpoint_id) AS n \
                 FROM checkpoints WHERE thread_id = 'long' AND checkpoint_ns = '') AS x \
                 WHERE n % 13 = 0;",
    )
    .await;
    check(&a, &b, pg_rows).await;
}

/// A retain sweep stopped between a long thread's windows (asked to stop as its first
/// window is listed) says to go on before that thread: the sweep begun where it says
/// finishes it, and the two end where one sweep ends on a copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_stopped_inside_a_long_thread_goes_on_with_that_thread() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = tokio::task::block_in_place(|| sqlite_pair(dir.path(), ""));
    let (a_arg, b_arg) = (a.to_str().expect("utf-8"), b.to_str().expect("utf-8"));
    let keys = StoreKeys::none();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let options = RetainOptions::new(policy())
        .stop_flag(stop)
        .on_plan(move |p| {
            if p.thread_id == "long" {
                flag.store(true, Ordering::SeqCst);
            }
        });
    let first = store::retain(a_arg, &keys, &options).await.expect("first");
    assert!(first.stopped, "{first:?}");
    let rest = RetainOptions::new(policy()).start_after(first.next_after.clone());
    let second = store::retain(a_arg, &keys, &rest).await.expect("second");
    let whole = store::retain(b_arg, &keys, &RetainOptions::new(policy()))
        .await
        .expect("whole");
    assert!(
        first.checkpoints_deleted < whole.checkpoints_deleted,
        "{first:?}"
    );
    assert_eq!(
        first.checkpoints_deleted + second.checkpoints_deleted,
        whole.checkpoints_deleted
    );
    assert_eq!(sqlite_rows(&a), sqlite_rows(&b));
}

/// `lgcodec store prune STORE --keep-latest 3` stopped, `rounds.len()` times, once a
/// window has been deleted (`count`, the store's checkpoints, fell) and a few
/// milliseconds more: `true` kills it (SIGKILL); `false` ends the server's sessions
/// (`terminate`), after which the run re-opens its connection and ends by itself.
/// Then the same command runs to its end. Returns how many rounds stopped a run
/// still going.
fn prune_interrupted(
    store: &str,
    count: &dyn Fn() -> u64,
    rounds: &[bool],
    terminate: &dyn Fn(),
) -> usize {
    let args = ["store", "prune", store, "--keep-latest", "3"];
    let mut stopped = 0;
    for (round, kill) in rounds.iter().enumerate() {
        let before = count();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_lgcodec"))
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        let started = std::time::Instant::now();
        while child.try_wait().expect("wait").is_none() && count() == before {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(120),
                "the prune neither deleted nor ended in 120 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        std::thread::sleep(std::time::Duration::from_millis(5 * round as u64));
        if child.try_wait().expect("wait").is_none() {
            stopped += 1;
            if *kill {
                child.kill().expect("SIGKILL");
            } else {
                terminate();
                let status = child.wait().expect("wait");
                assert!(status.success(), "after its sessions ended: {status}");
            }
        }
        let _ = child.wait();
    }
    let (code, _, stderr) = crate::lgcodec(&args, &[]);
    assert_eq!(code, 0, "{stderr}");
    stopped
}

/// The same prune on a copy of the store read whole ([`READ_WHOLE`]).
fn prune_whole(store: &str) {
    let (code, _, stderr) = crate::lgcodec(&["store", "prune", store, "--keep-latest", "3"], &[]);
    assert_eq!(code, 0, "{stderr}");
}

/// Killed between windows (and on Postgres also cut off from the server) and run
/// again, a long thread's prune ends where the prune planned whole on a copy ends:
/// each window deleted is consistent on its own.
#[test]
fn a_long_sqlite_thread_killed_between_windows_and_pruned_again_ends_as_planned_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = sqlite_pair(dir.path(), "");
    read_whole(&b);
    let count = || -> u64 {
        rusqlite::Connection::open(&a)
            .and_then(|c| c.query_row("SELECT count(*) FROM checkpoints", [], |r| r.get(0)))
            .expect("count")
    };
    let (a_arg, b_arg) = (a.to_str().expect("utf-8"), b.to_str().expect("utf-8"));
    let stopped = prune_interrupted(a_arg, &count, &[true, true, true], &|| {});
    assert!(stopped >= 1, "no round stopped a prune still going");
    prune_whole(b_arg);
    assert_eq!(sqlite_rows(&a), sqlite_rows(&b));
}

#[test]
fn a_long_postgres_thread_killed_and_cut_off_between_windows_ends_as_planned_whole() {
    let Some(url) = support::pg::url() else {
        eprintln!("skipped: LGCODEC_TEST_PG_URL is not set");
        return;
    };
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = rt.block_on(pg_pair(&url, dir.path(), "long_kill", ""));
    let client = rt.block_on(support::pg::connect(&url));
    let db = a.rsplit('/').next().expect("a database").to_owned();
    let a_client = rt.block_on(support::pg::connect(&a));
    let count = || -> u64 {
        let row = rt
            .block_on(a_client.query_one("SELECT count(*) FROM checkpoints", &[]))
            .expect("count");
        u64::try_from(row.get::<_, i64>(0)).expect("a count")
    };
    // Every session of the database but the one counting.
    let counter: i32 = rt
        .block_on(a_client.query_one("SELECT pg_backend_pid()", &[]))
        .expect("pid")
        .get(0);
    let terminate = || {
        rt.block_on(client.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = $1 AND pid <> $2",
            &[&db, &counter],
        ))
        .expect("terminate");
    };
    let stopped = prune_interrupted(&a, &count, &[true, false, true], &terminate);
    assert!(stopped >= 1, "no round stopped a prune still going");
    prune_whole(&b);
    let digest = |url: &str| rt.block_on(support::pg::digest(url));
    assert_eq!(digest(&a), digest(&b));
}

/// A checkpoint that comes out of order while a long thread is read a window at a time
/// (here put in by a trigger as the first window is deleted: an id just below the
/// window's oldest, read first in the next window, naming a parent above itself) stops
/// the prune before that window is deleted, naming it; run again, the thread is read
/// whole (its parents are not all below their children) and the prune finishes.
#[test]
fn a_checkpoint_out_of_order_mid_read_stops_the_prune_and_a_rerun_finishes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("a.db");
    tokio::runtime::Runtime::new()
        .expect("runtime")
        .block_on(long_store(&path));
    let conn = rusqlite::Connection::open(&path).expect("open");
    // A window's ids are deleted oldest first: the first row deleted is its oldest.
    conn.execute_batch(
        "CREATE TRIGGER odd AFTER DELETE ON checkpoints \
         WHEN OLD.thread_id = 'long' AND OLD.checkpoint_ns = '' AND NOT EXISTS \
         (SELECT 1 FROM checkpoints WHERE parent_checkpoint_id = 'ffffffff') BEGIN \
         INSERT INTO checkpoints VALUES (OLD.thread_id, OLD.checkpoint_ns, \
         substr(OLD.checkpoint_id, 1, 34) || '/0', 'ffffffff', OLD.type, OLD.checkpoint, \
         OLD.metadata); END",
    )
    .expect("trigger");
    let count = |conn: &rusqlite::Connection| -> i64 {
        conn.query_row(
            "SELECT count(*) FROM checkpoints WHERE thread_id = 'long'",
            [],
            |r| r.get(0),
        )
        .expect("count")
    };
    let before = count(&conn);
    let store = path.to_str().expect("utf-8");
    let args = ["store", "prune", store, "--keep-latest", "3", "--json"];
    let (code, stdout, stderr) = crate::lgcodec(&args, &[]);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    let odd: String = conn
        .query_row(
            "SELECT checkpoint_id FROM checkpoints WHERE parent_checkpoint_id = 'ffffffff'",
            [],
            |r| r.get(0),
        )
        .expect("the checkpoint put in");
    assert!(
        stderr.contains(&format!("checkpoint {odd}")) && stderr.contains("read out of order"),
        "{stderr}"
    );
    assert!(stdout.contains("\"kind\":\"unreadable_row\""), "{stdout}");
    // The first window went (but the latest 3 and their DeltaChannels' ancestors),
    // nothing of the next; one checkpoint came in.
    let after = count(&conn);
    assert!(
        after > before - 1_000 && after < before - 900,
        "{before} -> {after}"
    );
    conn.execute_batch("DROP TRIGGER odd").expect("drop");
    let (code, _, stderr) = crate::lgcodec(&args, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(count(&conn) < 400, "{}", count(&conn));
}

/// A long thread that goes whole (idle) is deleted a window at a time on SQLite,
/// newest first: killed once its count fell, the thread is left in part (a thread
/// deleted by one statement is there whole or not at all), its older part; run again,
/// it goes, with the write stored against no checkpoint. A dry run and an
/// uninterrupted run on a copy report the same counts, and leave the copy empty too.
#[test]
fn a_long_idle_sqlite_thread_goes_a_window_at_a_time_newest_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = sqlite_pair(
        dir.path(),
        "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, \
         type, value) VALUES ('long', '', '00000000-0000-6000-8000-000000000000', 'task', 0, \
         'step', 'msgpack', x'01');",
    );
    let rows = |path: &Path, sql: &str| -> (i64, Option<String>) {
        rusqlite::Connection::open(path)
            .and_then(|c| c.query_row(sql, [], |r| Ok((r.get(0)?, r.get(1)?))))
            .expect("count")
    };
    // Its root namespace (its subgraph's may be read first or last).
    let long = "SELECT count(*), max(checkpoint_id) FROM checkpoints \
                WHERE thread_id = 'long' AND checkpoint_ns = ''";
    let (before, newest) = rows(&a, long);
    let (a_arg, b_arg) = (a.to_str().expect("utf-8"), b.to_str().expect("utf-8"));
    let args = |store: &str, dry: bool| -> Vec<String> {
        let mut v = [
            "store",
            "prune",
            store,
            "--idle-since",
            "2100-01-01",
            "--allow-all",
        ]
        .map(str::to_owned)
        .to_vec();
        v.extend(["--json".to_owned()]);
        if dry {
            v.push("--dry-run".to_owned());
        }
        v
    };
    let lgcodec = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        crate::lgcodec(&args, &[])
    };
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_lgcodec"))
        .args(args(a_arg, false))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let started = std::time::Instant::now();
    while rows(&a, long).0 == before {
        assert!(
            child.try_wait().expect("wait").is_none(),
            "ended before a window went"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(120));
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let (left, left_newest) = rows(&a, long);
    assert!(left > 0 && left < before, "{before} -> {left}");
    assert!(left_newest < newest, "the newest went first");
    let (code, _, stderr) = lgcodec(args(a_arg, false));
    assert_eq!(code, 0, "{stderr}");
    let everything =
        "SELECT (SELECT count(*) FROM checkpoints) + (SELECT count(*) FROM writes), NULL";
    assert_eq!(rows(&a, everything).0, 0);
    // Uninterrupted on the copy, and counted dry first: the same counts.
    let report = |dry: bool| {
        let (code, stdout, stderr) = lgcodec(args(b_arg, dry));
        assert_eq!(code, 0, "{stderr}");
        let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("json");
        ["threads_deleted", "checkpoints_deleted", "writes_deleted"]
            .map(|k| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}")))
    };
    let dry = report(true);
    assert_eq!(report(false), dry);
    assert_eq!(dry[0], 2);
    assert_eq!(rows(&b, everything).0, 0);
}

/// A live writer's checkpoint that comes in while a long Postgres thread is pruned a
/// window at a time (here put in by a trigger as the newest window is deleted: a copy
/// of the namespace's oldest checkpoint, under an id above every other, as a fork from
/// it would reference its versions) keeps the blobs it references, though every
/// checkpoint the prune read that referenced them went.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_writers_checkpoint_keeps_the_blobs_it_references_through_a_long_prune() {
    let Some(url) = support::pg::url() else {
        eprintln!("skipped: LGCODEC_TEST_PG_URL is not set");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, _) = pg_pair(&url, dir.path(), "long_live", "").await;
    let client = support::pg::connect(&a).await;
    client
        .batch_execute(
            "CREATE TABLE live_once (done bool);
             CREATE FUNCTION live_write() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN
               IF NOT EXISTS (SELECT 1 FROM live_once) THEN
                 INSERT INTO live_once VALUES (true);
                 INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id,
                     parent_checkpoint_id, type, checkpoint, metadata)
                   SELECT thread_id, checkpoint_ns, 'ffffffff-ffff-6fff-bfff-ffffffffffff',
                     NULL, type, checkpoint, metadata
                   FROM checkpoints WHERE thread_id = 'long' AND checkpoint_ns = ''
                   ORDER BY checkpoint_id LIMIT 1;
               END IF;
               RETURN NULL;
             END $$;
             CREATE TRIGGER live AFTER DELETE ON checkpoints FOR EACH ROW
               WHEN (OLD.thread_id = 'long' AND OLD.checkpoint_ns = '')
               EXECUTE FUNCTION live_write();",
        )
        .await
        .expect("trigger");
    // The blobs of the namespace's oldest checkpoint, by channel.
    let blobs_of = "SELECT e.key FROM checkpoints c \
        CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') e \
        WHERE c.thread_id = 'long' AND c.checkpoint_ns = '' AND c.checkpoint_id = $1 \
        AND EXISTS (SELECT 1 FROM checkpoint_blobs b WHERE b.thread_id = c.thread_id \
        AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = e.key AND b.version = e.value) \
        ORDER BY 1";
    let channels =
        |rows: Vec<tokio_postgres::Row>| -> Vec<String> { rows.iter().map(|r| r.get(0)).collect() };
    let oldest: String = client
        .query_one(
            "SELECT min(checkpoint_id) FROM checkpoints WHERE thread_id = 'long' AND checkpoint_ns = ''",
            &[],
        )
        .await
        .expect("oldest")
        .get(0);
    let before = channels(client.query(blobs_of, &[&oldest]).await.expect("blobs"));
    // `topic` (shared with the next four, which go too) and `messages` (a snapshot).
    assert!(
        before.contains(&"topic".to_owned()) && before.contains(&"messages".to_owned()),
        "{before:?}"
    );
    let (done, _) = retain(&a, false).await;
    assert!(done["checkpoints_deleted"].as_u64() > Some(9_000), "{done}");
    let gone: i64 = client
        .query_one(
            "SELECT count(*) FROM checkpoints WHERE checkpoint_id = $1",
            &[&oldest],
        )
        .await
        .expect("count")
        .get(0);
    assert_eq!(gone, 0, "the oldest checkpoint went");
    let live = "ffffffff-ffff-6fff-bfff-ffffffffffff";
    let after = channels(client.query(blobs_of, &[&live]).await.expect("blobs"));
    assert_eq!(after, before);
}

/// Writes of other threads, as a store has: 100,000 rows the plans are made against.
const OTHER_WRITES: &str = "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, \
    checkpoint_id, task_id, task_path, idx, channel, type, blob) SELECT 'other-' || (i % 1000), \
    '', lpad(i::text, 36, '0'), 'task', '', 0, 'step', 'msgpack', '\\x01'::bytea \
    FROM generate_series(1, 100000) AS i;";

/// A long Postgres thread's reads look up each checkpoint's `__pregel_tasks` writes and
/// the blobs of its versions (which channels it stores, for the DeltaChannel walks) by
/// key: the server does not scan the thread's writes or blobs (or the table's) again
/// for each window, or for each checkpoint, which made a long thread's prune grow with
/// the square of its length. Both ways: a window at a time, and read whole by the
/// planner ([`READ_WHOLE`]).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_postgres_threads_reads_probe_its_writes_and_blobs_by_key() {
    let Some(url) = support::pg::url() else {
        eprintln!("skipped: LGCODEC_TEST_PG_URL is not set");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let set_up = format!("{OTHER_WRITES} ANALYZE;");
    let (a, b) = pg_pair(&url, dir.path(), "long_scan", &set_up).await;
    for (db, read) in [(&a, "a window at a time"), (&b, "whole")] {
        let client = support::pg::connect(db).await;
        let scans = || async {
            let mut n = Vec::new();
            for table in ["checkpoint_writes", "checkpoint_blobs"] {
                n.push(support::pg::scans_not_by_key(&client, table).await);
            }
            n
        };
        let before = scans().await;
        let (done, _) = retain(db, false).await;
        assert!(done["checkpoints_deleted"].as_u64() > Some(9_000), "{done}");
        let after = scans().await;
        let scanned: Vec<i64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
        // The writes: none. The blobs: a few a window at most (the references' read
        // hashes a namespace's blobs once; a window's delete may hash the blobs of a
        // thread this small), where a look-up a checkpoint made thousands.
        assert!(
            scanned[0] < 3 && scanned[1] < 50,
            "read {read}: {scanned:?} scans of the writes and blob tables not by key"
        );
    }
}

/// A role the server lets open one connection (`CONNECTION LIMIT 1`), where a sweep
/// asks for three: its first, a second to work two pages at once, and a third reading
/// the long thread's next window while the first deletes the window before. Both
/// refused, the sweep does their work on its one connection, to the same end as the
/// planner reading the thread whole on a copy, and counts the two refusals. It used
/// to stop at the first with the server's refusal (53300), exit status 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_allowed_one_connection_sweeps_on_it_what_more_would_share() {
    let Some(url) = support::pg::url() else {
        eprintln!("skipped: LGCODEC_TEST_PG_URL is not set");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = pg_pair(&url, dir.path(), "one_conn", "").await;
    let (role, as_role) = support::pg::limited_role(&a, "lgcodec_one_conn", 1).await;
    let (mut done, _) = retain(&as_role, false).await;
    let (mut whole, _) = retain(&b, false).await;
    let refused = done
        .as_object_mut()
        .and_then(|o| o.remove("connections_refused"));
    assert_eq!(refused, Some(2.into()), "{done}");
    assert_eq!(
        whole
            .as_object_mut()
            .and_then(|o| o.remove("connections_refused")),
        Some(0.into())
    );
    assert!(done["checkpoints_deleted"].as_u64() > Some(9_000), "{done}");
    assert_eq!(done, whole);
    assert_eq!(pg_rows(&a), pg_rows(&b));
    // Threads named or left out are looked up on that one connection too: one not
    // there is said (named) or refused (left out), as on any store.
    // Each run begins once the server has let the run before's sessions go.
    let admin = support::pg::connect(&url).await;
    let prune = |options: PruneOptions| {
        let (store, role, admin) = (as_role.clone(), role.clone(), &admin);
        async move {
            support::pg::sessions_gone(admin, &role).await;
            store::prune(&store, &StoreKeys::none(), &options.dry_run(true)).await
        }
    };
    let named = prune(PruneOptions::new().keep_latest(1).threads(["long", "gone"]))
        .await
        .expect("prune of threads named");
    assert_eq!(named.threads_not_found, vec!["gone".to_owned()]);
    assert_eq!(named.connections_refused, 1, "{named:?}");
    let left_out = prune(
        PruneOptions::new()
            .keep_latest(1)
            .exclude_threads(["short"]),
    )
    .await
    .expect("prune leaving a thread out");
    assert_eq!(left_out.excluded_threads, vec!["short".to_owned()]);
    let refused = prune(PruneOptions::new().keep_latest(1).exclude_threads(["gone"]))
        .await
        .expect_err("a thread left out that is not there");
    assert_eq!(
        refused.kind(),
        langgraph_codec::ErrorKind::ThreadNotFound,
        "{refused}"
    );
    // Its rights are in `a` alone.
    support::pg::drop_role(&a, &role).await;
}
