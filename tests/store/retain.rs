//! `lgcodec store retain`: a policy's rules on stores Python's savers wrote
//! (`vectors/store_maint/retain_fixture.py`: checkpoint ids are Python's uuid6 made at
//! chosen days before now), what Python reads afterwards, refusals before anything is
//! deleted, two sweepers on one store, SIGTERM, a capped sweep that goes on.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value as Json;

use crate::support::{pg, python, python_script, scratch, stores};

const BIN: &str = env!("CARGO_BIN_EXE_lgcodec");

/// The policy every rule of the fixture is written for.
const POLICY: &str = r#"
[rules]
keep_latest = 3
max_age = "30d"
idle_ttl = "90d"
hard_ttl = "365d"

[keep]
labels = ["label"]
pinned_metadata = ["pinned"]
pinned_threads = ["vip-*"]

[overrides]
metadata_key = "retention"
"#;

/// Which checkpoints of each fixture thread stay under [`POLICY`] (indexes in the
/// order the fixture wrote them), worked out from the fixture's days:
/// - active (40, 39, 38, 37 days, 1 hour): the latest 3, of which only the last is
///   younger than 30 days;
/// - idle (100, 99, 98 days): idle over 90 days, goes whole;
/// - vip-7 (pattern) and meta-pin (`pinned` in its latest metadata): untouched;
/// - waiting: idle, but its latest checkpoint holds a `__interrupt__` write: not deleted
///   whole; all older than 30 days, so its latest stays alone;
/// - labeled: idle, goes but for its first checkpoint (metadata `label`);
/// - own-rules: its metadata's `idle_ttl = 365d` makes it not idle; max_age leaves its
///   latest;
/// - ancient (400 days, 10 days, 1 minute): its oldest is over 365 days: goes whole;
/// - subgraph: root (40 days, 1 hour) keeps the young one; child:1 (40.5, 39 days)
///   keeps its latest.
fn expected_kept() -> BTreeMap<&'static str, Vec<usize>> {
    BTreeMap::from([
        ("active", vec![4]),
        ("vip-7", vec![0, 1, 2]),
        ("meta-pin", vec![0, 1, 2]),
        ("waiting", vec![2]),
        ("labeled", vec![0]),
        ("own-rules", vec![2]),
        ("subgraph", vec![2, 3]),
    ])
}

pub(crate) type Ids = BTreeMap<String, Vec<(String, String)>>;

/// `{thread: [[ns, id], ...]}` as `retain_fixture.py` prints it.
pub(crate) fn parse_ids(text: &str) -> Ids {
    let v: Json = serde_json::from_str(text.trim()).expect("fixture JSON");
    v.as_object()
        .expect("object")
        .iter()
        .map(|(t, list)| {
            let cps = list
                .as_array()
                .expect("list")
                .iter()
                .map(|p| {
                    (
                        p[0].as_str().expect("ns").to_owned(),
                        p[1].as_str().expect("id").to_owned(),
                    )
                })
                .collect();
            (t.clone(), cps)
        })
        .collect()
}

fn set_of(ids: &Ids) -> BTreeSet<(String, String, String)> {
    ids.iter()
        .flat_map(|(t, cps)| {
            cps.iter()
                .map(move |(n, i)| (t.clone(), n.clone(), i.clone()))
        })
        .collect()
}

/// What should stay of `written` under [`POLICY`].
fn kept_of(written: &Ids) -> BTreeSet<(String, String, String)> {
    let mut out = BTreeSet::new();
    for (thread, idx) in expected_kept() {
        for i in idx {
            let (ns, id) = &written[thread][i];
            out.insert((thread.to_owned(), ns.clone(), id.clone()));
        }
    }
    out
}

pub(crate) fn lgcodec(args: &[&str]) -> (i32, String, String) {
    crate::lgcodec(args, &[])
}

/// The sweep lines (not the dry run's per-thread lines) of a run's stdout.
fn sweeps(stdout: &str) -> Vec<Json> {
    stdout
        .lines()
        .map(|l| serde_json::from_str::<Json>(l).expect("a JSON line"))
        .filter(|v| v.get("sweep").is_some())
        .collect()
}

/// `lgcodec store retain STORE ARGS... --once`, which must exit 0: its sweep line, and
/// its `(checkpoints_deleted, threads_deleted)`.
fn sweep_once(store: &str, args: &[&str]) -> (Json, (u64, u64)) {
    let mut all = vec!["store", "retain", store, "--once"];
    all.extend_from_slice(args);
    let (code, out, err) = lgcodec(&all);
    assert_eq!(code, 0, "{args:?}: {err}");
    let s = sweeps(&out).remove(0);
    // Its time under the name every store report gives it, and under the one the
    // sweep's log lines have always had.
    let elapsed = s["elapsed_s"].as_f64().expect("elapsed_s");
    assert!(
        elapsed > 0.0 && s["duration_s"].as_f64() == Some(elapsed),
        "{s}"
    );
    let n = |k: &str| s[k].as_u64().expect("a count");
    let counts = (n("checkpoints_deleted"), n("threads_deleted"));
    (s, counts)
}

fn write_file(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p.to_str().expect("utf-8").to_owned()
}

/// Every row of a SQLite store, as text.
fn sqlite_rows(path: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).expect("open");
    let mut stmt = conn
        .prepare(
            "SELECT 'c|' || thread_id || '|' || checkpoint_ns || '|' || checkpoint_id || '|' || \
             coalesce(parent_checkpoint_id, '') || '|' || hex(checkpoint) FROM checkpoints \
             UNION ALL SELECT 'w|' || thread_id || '|' || checkpoint_id || '|' || task_id || '|' \
             || idx || '|' || hex(value) FROM writes ORDER BY 1",
        )
        .expect("prepare");
    stmt.query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

fn fixture_sqlite(python: &str, dir: &Path) -> (PathBuf, Ids) {
    let path = dir.join("fx.db");
    let out = python_script(
        python,
        "retain_fixture.py",
        &["write", path.to_str().expect("utf-8")],
    );
    (path, parse_ids(&out))
}

/// A fresh Postgres database `<base>_<tag>` holding the fixture (Python wrote it), a
/// scratch directory with [`POLICY`] in it: `(python, database URL, ids written,
/// directory, policy file)`; `None` (the test skips) without a server or Python.
async fn pg_fixture(tag: &str) -> Option<(String, String, Ids, PathBuf, String)> {
    let (url, py) = (pg::url()?, python()?);
    let db = pg::fresh(&url, tag).await;
    let written = parse_ids(&python_script(&py, "retain_fixture.py", &["write", &db]));
    let dir = scratch(&tag.replace('_', "-"));
    let policy = write_file(&dir, "retention.toml", POLICY);
    Some((py, db, written, dir, policy))
}

fn check_sweep(sweep: &Json) {
    assert_eq!(sweep["skipped_locked"], false, "{sweep}");
    assert_eq!(sweep["threads"], 9, "{sweep}");
    assert_eq!(sweep["threads_deleted"], 2, "idle and ancient: {sweep}");
    // 30 written, 12 stay (expected_kept).
    assert_eq!(sweep["checkpoints_deleted"], 18, "{sweep}");
    assert_eq!(sweep["checkpoints_kept"], 12, "{sweep}");
    // One pending write per deleted checkpoint.
    assert_eq!(sweep["writes_deleted"], 18, "{sweep}");
    let k = &sweep["kept_by_rule"];
    assert_eq!(k["labeled"], 1, "{k}");
    assert_eq!(
        k["newest"], 3,
        "waiting, own-rules, subgraph's child:1: {k}"
    );
    assert_eq!(k["pinned_threads"], 2, "{k}");
    assert_eq!(k["interrupted_threads"], 1, "{k}");
    assert_eq!(k["overridden_threads"], 1, "{k}");
    assert_eq!(k["delta_ancestors"], 0, "{k}");
    assert!(sweep["bytes_freed"].as_u64().expect("bytes") > 0);
}

#[test]
fn each_rule_of_a_policy_keeps_what_it_says_and_python_reads_the_rest_sqlite() {
    let Some(py) = python() else { return };
    let dir = scratch("retain-rules");
    let (path, written) = fixture_sqlite(&py, &dir);
    let store = path.to_str().expect("utf-8");
    let policy = write_file(&dir, "retention.toml", POLICY);
    // The dry run lists exactly what goes, and deletes nothing.
    let before = sqlite_rows(&path);
    let (code, out, err) = lgcodec(&[
        "store",
        "retain",
        store,
        "--policy",
        &policy,
        "--once",
        "--dry-run",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(sqlite_rows(&path), before, "a dry run deletes nothing");
    let mut listed = BTreeSet::new();
    let mut whole = BTreeSet::new();
    for l in out.lines() {
        let v: Json = serde_json::from_str(l).expect("line");
        let Some(p) = v.get("would_delete") else {
            continue;
        };
        let t = p["thread_id"].as_str().expect("thread").to_owned();
        if p["whole"] == true {
            whole.insert(t.clone());
        }
        for c in p["checkpoints"].as_array().expect("checkpoints") {
            let (n, i) = (c[0].as_str().expect("ns"), c[1].as_str().expect("id"));
            listed.insert((t.clone(), n.to_owned(), i.to_owned()));
        }
    }
    let all = set_of(&written);
    let kept = kept_of(&written);
    let gone: BTreeSet<_> = all.difference(&kept).cloned().collect();
    assert_eq!(listed, gone, "the dry run lists what goes");
    assert_eq!(
        whole,
        BTreeSet::from(["ancient".to_owned(), "idle".to_owned()])
    );
    check_sweep(&sweeps(&out)[0]);
    assert_eq!(sweeps(&out)[0]["dry_run"], true);
    // For real: the same, and Python reads what stays (the latest of each thread loads,
    // the waiting thread's interrupt is still there).
    let (code, out, err) = lgcodec(&["store", "retain", store, "--policy", &policy, "--once"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("lgcodec store retain: sweep 1: 9 thread(s): deleted 18 checkpoint(s)"),
        "{err}"
    );
    let lines = sweeps(&out);
    assert_eq!(lines.len(), 1);
    check_sweep(&lines[0]);
    let read = parse_ids(&python_script(&py, "retain_fixture.py", &["read", store]));
    assert_eq!(set_of(&read), kept);
    // Run again: nothing more goes.
    let (code, out, _) = lgcodec(&["store", "retain", store, "--policy", &policy, "--once"]);
    assert_eq!(code, 0);
    assert_eq!(sweeps(&out)[0]["checkpoints_deleted"], 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn each_rule_of_a_policy_keeps_what_it_says_and_python_reads_the_rest_postgres() {
    let Some((py, db, written, dir, policy)) = pg_fixture("retain_rules").await else {
        return;
    };
    let (code, out, err) = lgcodec(&["store", "retain", &db, "--policy", &policy, "--once"]);
    assert_eq!(code, 0, "{err}");
    let sweep = &sweeps(&out)[0];
    check_sweep(sweep);
    // Each checkpoint's one blob (its own `messages` version) goes with it.
    assert_eq!(sweep["blobs_deleted"], 18, "{sweep}");
    let read = parse_ids(&python_script(&py, "retain_fixture.py", &["read", &db]));
    assert_eq!(set_of(&read), kept_of(&written));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A copy of Python's SQLite store of 2026-11-25 (t-main: 9 checkpoints in 2
/// namespaces; t-short: 3, its latest waiting at an interrupt; rows.json).
fn committed_store(dir: &Path) -> PathBuf {
    let path = dir.join("store.sqlite");
    std::fs::copy(stores().join("sqlite-py-3.1.2").join("store.sqlite"), &path).expect("copy");
    path
}

#[test]
fn bad_policies_are_refused_before_anything_is_deleted() {
    let dir = scratch("retain-bad");
    let path = committed_store(&dir);
    let store = path.to_str().expect("utf-8");
    let before = sqlite_rows(&path);
    let cases: &[(&str, &str, &str)] = &[
        (
            "unknown.toml",
            "[rules]\nkeep_latest = 2\nkeep_newest = 3\n",
            "unknown rule \"keep_newest\" in [rules]",
        ),
        (
            "section.toml",
            "[rulez]\nkeep_latest = 2\n",
            "unknown section [rulez]",
        ),
        (
            "headless.toml",
            "keep_latest = 2\n",
            "keep_latest is outside any section: put it under [rules]",
        ),
        (
            "headless_sweep.toml",
            "every = \"1h\"\n[rules]\nkeep_latest = 2\n",
            "every is outside any section: put it under [sweep]",
        ),
        (
            "negative.toml",
            "[rules]\nmax_age = \"-5d\"\n",
            "is negative",
        ),
        ("zero.toml", "[rules]\nidle_ttl = \"0h\"\n", "is zero"),
        (
            "unitless.toml",
            "[rules]\nhard_ttl = \"30\"\n",
            "has no unit",
        ),
        (
            "number.toml",
            "[rules]\nmax_age = 30\n",
            "expected a duration with its unit",
        ),
        (
            "keep0.toml",
            "[rules]\nkeep_latest = 0\n",
            "expected a whole number, 1 or more",
        ),
        ("norule.toml", "[keep]\nlabels = [\"label\"]\n", "no rule"),
        ("nottoml.toml", "[rules\n", "not TOML"),
        (
            "lg.json",
            "{\"graphs\": {}}",
            "has no checkpointer.ttl section",
        ),
        (
            "lg-nottl.json",
            "{\"checkpointer\": {\"ttl\": {\"strategy\": \"delete\"}}}",
            "has no default_ttl",
        ),
        (
            "lg-neg.json",
            "{\"checkpointer\": {\"ttl\": {\"default_ttl\": -5}}}",
            "above zero",
        ),
        (
            "lg-strategy.json",
            "{\"checkpointer\": {\"ttl\": {\"strategy\": \"archive\", \"default_ttl\": 5}}}",
            "expected \"delete\" or \"keep_latest\"",
        ),
    ];
    // A valid policy padded past 1 MiB: the file is refused before it is parsed.
    let huge = format!("[rules]\nkeep_latest = 1\n#{}\n", "x".repeat(1 << 20));
    let cases = [cases, &[("huge.toml", huge.as_str(), "larger than 1 MiB")]].concat();
    for (name, text, says) in &cases {
        let file = write_file(&dir, name, text);
        let flag = if name.ends_with(".json") {
            "--config"
        } else {
            "--policy"
        };
        let (code, out, err) = lgcodec(&["store", "retain", store, flag, &file, "--once"]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains(says), "{name}: {err}");
        assert!(err.contains(name), "{name} is named: {err}");
        // Standard output, JSON lines always, says it too.
        let refusal: Json = serde_json::from_str(out.trim()).expect("one JSON object");
        assert_eq!(refusal["kind"], "invalid_policy", "{name}: {out}");
    }
    let ok = write_file(&dir, "ok.toml", "[rules]\nkeep_latest = 1\n");
    for flag in [["--every", "-5m"], ["--pause", "0s"], ["--every", "10"]] {
        let (code, _, err) =
            lgcodec(&["store", "retain", store, "--policy", &ok, flag[0], flag[1]]);
        assert_eq!(code, 2, "{flag:?}: {err}");
    }
    // What each says to do: a zero pause is none (not "0s", refused in turn), and an
    // interval in milliseconds, under 100, most likely meant minutes (it swept back to
    // back, thousands of times a second, until stopped: hence the time limit).
    for (flag, said) in [
        (
            ["--pause", "0", "--once"],
            "--pause \"0\": \"0\" is zero: a duration is more than zero: leave --pause out for none",
        ),
        (
            ["--every", "1ms", "--dry-run"],
            "--every \"1ms\": under 100 ms, sweeps would run back to back: give 100ms or more, e.g. \"15m\" (did you mean \"1m\"?)",
        ),
    ] {
        let mut child = Command::new(BIN)
            .args(["store", "retain", store, "--policy", &ok])
            .args(flag)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let (status, err) =
            crate::support::ended_within(&mut child, Duration::from_secs(20), "retain");
        assert_eq!(status.code(), Some(2), "{flag:?}: {err}");
        assert!(err.contains(said), "{flag:?}: {err}");
    }
    assert_eq!(sqlite_rows(&path), before, "nothing was deleted");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_policy_that_would_delete_every_thread_needs_allow_all() {
    let dir = scratch("retain-all");
    let path = committed_store(&dir);
    let store = path.to_str().expect("utf-8");
    let before = sqlite_rows(&path);
    // Both threads are idle for more than a day. t-short waits at an interrupt, so by
    // default it stays and the sweep is allowed (dry run: t-main alone would go).
    let keeps = write_file(&dir, "keeps.toml", "[rules]\nidle_ttl = \"1d\"\n");
    let (s, counts) = sweep_once(store, &["--policy", &keeps, "--dry-run"]);
    assert_eq!(counts, (9, 1), "{s}");
    assert_eq!(s["kept_by_rule"]["interrupted_threads"], 1);
    // Interrupted threads not kept: every thread would go. Refused, nothing deleted.
    let all = write_file(
        &dir,
        "all.toml",
        "[rules]\nidle_ttl = \"1d\"\n[keep]\ninterrupted = \"delete\"\n",
    );
    let (code, out, err) = lgcodec(&["store", "retain", store, "--policy", &all, "--once"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("would delete all 2 thread(s)"), "{err}");
    assert!(err.contains("--allow-all"), "{err}");
    let refusal: Json = serde_json::from_str(out.trim()).expect("one JSON object");
    assert_eq!(refusal["kind"], "would_delete_all", "{out}");
    assert_eq!(sqlite_rows(&path), before);
    let (s, counts) = sweep_once(store, &["--policy", &all, "--allow-all"]);
    assert_eq!(counts, (12, 2), "{s}");
    assert!(sqlite_rows(&path).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `store prune --idle-since` takes the same guard: a date that makes every thread idle
/// (here one in the future, as a mistyped year would) is refused with exit 2 and
/// the reason on stderr (and as JSON with `--json`), nothing deleted, until
/// `--allow-all` is given.
#[test]
fn a_prune_that_would_delete_every_thread_needs_allow_all() {
    let dir = scratch("prune-all");
    let path = committed_store(&dir);
    let store = path.to_str().expect("utf-8");
    let before = sqlite_rows(&path);
    let prune = |extra: &[&str]| {
        let mut args = vec!["store", "prune", store, "--idle-since", "2062-01-01"];
        args.extend_from_slice(extra);
        lgcodec(&args)
    };
    for extra in [&[][..], &["--dry-run"], &["--json"]] {
        let (code, out, err) = prune(extra);
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert!(err.contains("would delete all 2 thread(s)"), "{err}");
        assert!(err.contains("--allow-all"), "{err}");
        if extra == ["--json"] {
            let refusal: Json = serde_json::from_str(out.trim()).expect("one JSON object");
            assert_eq!(refusal["kind"], "would_delete_all", "{out}");
        } else {
            assert!(out.is_empty(), "{out}");
        }
        assert_eq!(sqlite_rows(&path), before, "{extra:?} deleted");
    }
    // One thread named: the other stays, so it is not refused.
    let (code, _, err) = prune(&["--thread", "t-short", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = prune(&["--allow-all"]);
    assert_eq!(code, 0, "{err}");
    assert!(sqlite_rows(&path).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn langgraph_json_ttl_has_the_agent_servers_meaning() {
    let dir = scratch("retain-langgraph");
    let path = committed_store(&dir);
    let store = path.to_str().expect("utf-8");
    // 60 minutes: both threads expired 3 days ago. keep_latest keeps each thread and
    // the latest checkpoint of each of its namespaces (3 namespaces: 3 of 12 stay).
    let lg = write_file(
        &dir,
        "langgraph.json",
        r#"{"graphs": {"agent": "./agent.py:graph"},
            "checkpointer": {"ttl": {"strategy": "keep_latest", "default_ttl": 60, "sweep_interval_minutes": 10}}}"#,
    );
    // t-short waits at an interrupt: kept whole (3), t-main keeps 2 of 9.
    let (s, counts) = sweep_once(store, &["--config", &lg, "--dry-run"]);
    assert_eq!(counts, (7, 0), "{s}");
    // "delete" (the default strategy) on a TTL of 100,000 minutes (69 days): nothing
    // has expired.
    let lg = write_file(
        &dir,
        "langgraph2.json",
        r#"{"checkpointer": {"ttl": {"default_ttl": 100000}}}"#,
    );
    let (s, counts) = sweep_once(store, &["--config", &lg]);
    assert_eq!(counts, (0, 0), "{s}");
    // 60 minutes, "delete": t-main goes whole; t-short waits at its interrupt.
    let lg = write_file(
        &dir,
        "langgraph3.json",
        r#"{"checkpointer": {"ttl": {"strategy": "delete", "default_ttl": 60}}}"#,
    );
    let (s, counts) = sweep_once(store, &["--config", &lg]);
    assert_eq!(counts, (9, 1), "{s}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `[taken, released]` lock spans of the sweeps among `lines` that ran (not
/// skipped); each must have one, taken no later than released.
fn lock_spans(lines: &[Json]) -> Vec<(u64, u64)> {
    lines
        .iter()
        .filter(|l| l["skipped_locked"] == false)
        .map(|l| {
            let span = &l["lock_held_ms"];
            let (a, b) = (span[0].as_u64(), span[1].as_u64());
            let (Some(a), Some(b)) = (a, b) else {
                panic!("a sweep that ran has no lock span: {l}")
            };
            assert!(a <= b && a > 1_700_000_000_000, "{l}");
            (a, b)
        })
        .collect()
}

/// Two `--once` sweepers started together on one store: one sweeps, the other finds
/// the lock taken and says so; between them the store is swept once.
fn two_sweepers(store: &str, policy: &str) {
    let start = || {
        Command::new(BIN)
            .args([
                "store",
                "retain",
                store,
                "--policy",
                policy,
                "--once",
                "--batch-size",
                "1",
                "--pause",
                "300ms",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn")
    };
    let (a, b) = (start(), start());
    let mut lines = Vec::new();
    let mut errs = String::new();
    for child in [a, b] {
        let out = child.wait_with_output().expect("wait");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        lines.extend(sweeps(&String::from_utf8_lossy(&out.stdout)));
        errs.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    let skipped: Vec<&Json> = lines
        .iter()
        .filter(|l| l["skipped_locked"] == true)
        .collect();
    let swept: Vec<&Json> = lines
        .iter()
        .filter(|l| l["skipped_locked"] == false)
        .collect();
    assert_eq!((skipped.len(), swept.len()), (1, 1), "{lines:?}");
    assert_eq!(skipped[0]["checkpoints_deleted"], 0);
    assert!(skipped[0]["lock_held_ms"].is_null(), "{lines:?}");
    assert_eq!(lock_spans(&[swept[0].clone()]).len(), 1, "{lines:?}");
    check_sweep(swept[0]);
    assert!(
        errs.contains("skipped, another sweeper holds the store's lock"),
        "{errs}"
    );
}

#[test]
fn two_sweepers_on_sqlite_take_turns() {
    let Some(py) = python() else { return };
    let dir = scratch("retain-two");
    let (path, written) = fixture_sqlite(&py, &dir);
    let policy = write_file(&dir, "retention.toml", POLICY);
    let store = path.to_str().expect("utf-8");
    two_sweepers(store, &policy);
    let read = parse_ids(&python_script(&py, "retain_fixture.py", &["read", store]));
    assert_eq!(set_of(&read), kept_of(&written));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn two_sweepers_on_postgres_take_turns_by_advisory_lock() {
    let Some((py, db, written, dir, policy)) = pg_fixture("retain_two").await else {
        return;
    };
    // The lock is one key per store: held here, a sweeper skips its round.
    let holder = pg::connect(&db).await;
    let key = "hashtextextended('lgcodec store retain ' || current_database() || '.' || current_schema(), 0)";
    let got: bool = holder
        .query_one(&format!("SELECT pg_try_advisory_lock({key})"), &[])
        .await
        .expect("lock")
        .get(0);
    assert!(got);
    let (code, out, err) = lgcodec(&["store", "retain", &db, "--policy", &policy, "--once"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(sweeps(&out)[0]["skipped_locked"], true);
    assert_eq!(sweeps(&out)[0]["checkpoints_deleted"], 0);
    holder
        .execute(&format!("SELECT pg_advisory_unlock({key})"), &[])
        .await
        .expect("unlock");
    let db2 = db.clone();
    tokio::task::spawn_blocking(move || two_sweepers(&db2, &policy))
        .await
        .expect("sweepers");
    let read = parse_ids(&python_script(&py, "retain_fixture.py", &["read", &db]));
    assert_eq!(set_of(&read), kept_of(&written));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigterm_lets_the_batch_in_flight_finish_and_exits_0() {
    let Some(py) = python() else { return };
    let dir = scratch("retain-term");
    let (path, _) = fixture_sqlite(&py, &dir);
    let store = path.to_str().expect("utf-8");
    let policy = write_file(&dir, "retention.toml", POLICY);
    let child = Command::new(BIN)
        .args([
            "store",
            "retain",
            store,
            "--policy",
            &policy,
            "--every",
            "1h",
            "--batch-size",
            "1",
            "--pause",
            "700ms",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(Duration::from_millis(1_500));
    let started = std::time::Instant::now();
    crate::support::signal(&child, "-TERM");
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "it did not wait for the next sweep"
    );
    let lines = sweeps(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(lines.len(), 1, "{lines:?}");
    let s = &lines[0];
    assert_eq!(s["stopped"], true, "{s}");
    let next = s["next_after"]
        .as_str()
        .expect("where the next sweep goes on");
    // Stopped part way: some threads done, not all; the store holds what it says.
    let deleted = s["checkpoints_deleted"].as_u64().expect("count");
    assert!(deleted < 18, "{s}");
    let conn = rusqlite::Connection::open(&path).expect("open");
    let left: u64 = conn
        .query_row("SELECT count(*) FROM checkpoints", [], |r| r.get(0))
        .expect("count");
    assert_eq!(left, 30 - deleted);
    // The threads up to `next_after` are done (each batch committed whole): a --once
    // sweep of the rest finishes the work.
    let (code, out, _) = lgcodec(&["store", "retain", store, "--policy", &policy, "--once"]);
    assert_eq!(code, 0);
    let rest = &sweeps(&out)[0];
    assert_eq!(
        rest["checkpoints_deleted"].as_u64().expect("n") + deleted,
        18,
        "{next} {rest}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_capped_sweep_goes_on_where_it_stopped() {
    use langgraph_codec::store::{retain, RetainOptions, RetentionPolicy, StoreKeys};
    let Some(py) = python() else { return };
    let dir = scratch("retain-cap");
    let (path, written) = fixture_sqlite(&py, &dir);
    let store = path.to_str().expect("utf-8");
    let value: Json = toml::from_str(POLICY).expect("toml");
    let policy = RetentionPolicy::from_value(&value, "retention.toml").expect("policy");
    let keys = StoreKeys::none();
    // Threads that lose something, in id order: active, ancient, idle, labeled,
    // own-rules, subgraph, waiting (7). Two per sweep, one thread per batch.
    let mut after = None;
    let mut changed = Vec::new();
    for _ in 0..10 {
        let options = RetainOptions::new(policy.clone())
            .batch_size(1)
            .max_threads(Some(2))
            .start_after(after.clone());
        let r = retain(store, &keys, &options).await.expect("sweep");
        changed.push(r.checkpoints_deleted);
        after = r.next_after.clone();
        if !r.capped {
            break;
        }
    }
    // active 4 + ancient 3 | idle 3 + labeled 2 | own-rules 2 + subgraph 2 | waiting 2.
    assert_eq!(changed, [7, 5, 4, 2]);
    let read = parse_ids(&python_script(&py, "retain_fixture.py", &["read", store]));
    assert_eq!(set_of(&read), kept_of(&written));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `lgcodec store retain --help`: its examples run as pasted, in order, in a directory
/// holding copy.db (the last, `--every`, until SIGTERM, which ends it with exit 0).
#[test]
fn retain_help_examples_work_when_pasted() {
    let (code, help, _) = lgcodec(&["store", "retain", "--help"]);
    assert_eq!(code, 0);
    let examples: Vec<&str> = help
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("$ "))
        .collect();
    assert_eq!(examples.len(), 5, "{help}");
    let dir = scratch("retain-help");
    std::fs::copy(
        stores().join("sqlite-py-3.1.2").join("store.sqlite"),
        dir.join("copy.db"),
    )
    .expect("copy");
    let bin_dir = Path::new(BIN).parent().expect("bin dir");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for example in examples {
        let mut child = Command::new("sh")
            .args(["-ec", &format!("exec {example}")])
            .current_dir(&dir)
            .env("PATH", &path)
            .env_remove("LANGGRAPH_AES_KEY")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("sh");
        if example.contains("--every") {
            use std::io::BufRead as _;
            let stdout = child.stdout.take().expect("stdout");
            let mut first = String::new();
            std::io::BufReader::new(stdout)
                .read_line(&mut first)
                .expect("the first sweep's line");
            assert_eq!(sweeps(&first).len(), 1, "{first}");
            let kill = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            assert!(kill.expect("kill").success());
        }
        let out = child.wait_with_output().expect("wait");
        assert!(
            out.status.success(),
            "{example}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Waits for the writer to end, which it does reading its last checkpoint back whole;
/// its line (`last`, `written`, `slowest_ms`).
pub(crate) async fn writer_done(writer: Child) -> Json {
    let out = tokio::task::spawn_blocking(move || writer.wait_with_output().expect("python"))
        .await
        .expect("join");
    assert!(
        out.status.success(),
        "the Python writer: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("writer's line")
}

/// Two `--every` sweepers on one Postgres store beside Python writing a live thread:
/// they take turns (some rounds skipped, said so), SIGTERM ends both with exit 0, the
/// policy's outcome is what it is on its own, and the live thread's latest checkpoint
/// — the last one Python wrote — is there.
#[tokio::test]
async fn two_every_sweepers_beside_a_python_writer() {
    let Some((py, db, written, dir, policy)) = pg_fixture("retain_live").await else {
        return;
    };
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/store_maint/retain_fixture.py");
    let writer = Command::new(&py)
        .arg(&script)
        .args(["live", &db, "5"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python");
    let start = || {
        Command::new(BIN)
            .args([
                "store",
                "retain",
                &db,
                "--policy",
                &policy,
                "--every",
                "500ms",
                "--batch-size",
                "1",
                "--pause",
                "100ms",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn")
    };
    let sweepers = [start(), start()];
    let mut spans = Vec::new();
    let last = writer_done(writer).await;
    let last = last["last"].as_str().expect("last id").to_owned();
    // One more round after the writer stopped, then SIGTERM.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let mut lines = Vec::new();
    for child in sweepers {
        let kill = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        assert!(kill.expect("kill").success());
        let out = tokio::task::spawn_blocking(move || child.wait_with_output().expect("wait"))
            .await
            .expect("join");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mine = sweeps(&String::from_utf8_lossy(&out.stdout));
        spans.push(lock_spans(&mine));
        lines.extend(mine);
    }
    assert!(
        lines.iter().any(|l| l["skipped_locked"] == true),
        "{lines:?}"
    );
    // Never at once: no lock span of one sweeper overlaps one of the other's. Both
    // ends are read under the lock in whole milliseconds, so a span may begin in the
    // millisecond the other's ended.
    for a in &spans[0] {
        for b in &spans[1] {
            assert!(a.1 <= b.0 || b.1 <= a.0, "both swept at once: {a:?} {b:?}");
        }
    }
    let swept: Vec<&Json> = lines
        .iter()
        .filter(|l| l["skipped_locked"] == false)
        .collect();
    assert!(swept.len() >= 2, "{lines:?}");
    assert!(swept
        .iter()
        .all(|l| l["errors"].as_array().is_some_and(Vec::is_empty)));
    let read = parse_ids(&python_script(&py, "retain_fixture.py", &["read", &db]));
    let mut rest = set_of(&read);
    let live: Vec<String> = rest
        .iter()
        .filter(|(t, _, _)| t == "live")
        .map(|(_, _, i)| i.clone())
        .collect();
    rest.retain(|(t, _, _)| t != "live");
    assert_eq!(rest, kept_of(&written));
    assert_eq!(live.last(), Some(&last), "the live thread's latest stays");
    assert!(
        live.len() <= 3,
        "the live thread was trimmed to the latest 3: {live:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `GET /metrics` from `port` on this machine: the exposition text, or `None` while
/// nothing answers.
#[cfg(feature = "metrics")]
fn scrape(port: u16) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    text.split_once("\r\n\r\n").map(|(_, body)| body.to_owned())
}

/// The value of the sample `series` (name and labels as printed) in `text`.
#[cfg(feature = "metrics")]
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        l.strip_prefix(series)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

#[cfg(feature = "metrics")]
fn count_rows(path: &Path, sql: &str) -> f64 {
    let n: i64 = rusqlite::Connection::open(path)
        .expect("open")
        .query_row(sql, [], |r| r.get(0))
        .expect("count");
    n as f64
}

/// `--metrics-addr`: while a `--every` sweeper runs, `/metrics` serves what the sweeps
/// did, counted against the store itself (rows before and after), and a port that is
/// taken is refused before anything is deleted.
#[cfg(feature = "metrics")]
#[test]
fn metrics_count_what_the_sweeps_deleted_and_a_taken_port_is_refused() {
    let dir = scratch("retain-metrics");
    let path = committed_store(&dir);
    let store = path.to_str().expect("utf-8").to_owned();
    let policy = write_file(&dir, "p.toml", "[rules]\nkeep_latest = 1\n");
    let cps = "SELECT count(*) FROM checkpoints";
    let writes = "SELECT count(*) FROM writes";
    let (cps_before, writes_before) = (count_rows(&path, cps), count_rows(&path, writes));

    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port();
    let addr = format!("127.0.0.1:{port}");
    let (code, _, err) = lgcodec(&[
        "store",
        "retain",
        &store,
        "--policy",
        &policy,
        "--once",
        "--metrics-addr",
        &addr,
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--metrics-addr") && err.contains("free port"),
        "{err}"
    );
    assert_eq!(count_rows(&path, cps), cps_before, "nothing deleted");
    drop(taken);

    let mut child = Command::new(BIN)
        .args([
            "store",
            "retain",
            &store,
            "--policy",
            &policy,
            "--every",
            "1h",
            "--metrics-addr",
            &addr,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let text = loop {
        if let Some(t) = scrape(port).filter(|t| t.contains("result=\"done\"} 1")) {
            break t;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no sweep counted in 30 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(0));
    let (cps_after, writes_after) = (count_rows(&path, cps), count_rows(&path, writes));
    assert!(cps_after < cps_before, "the policy deletes something");
    let got =
        |series: &str| sample(&text, series).unwrap_or_else(|| panic!("no {series} in:\n{text}"));
    assert_eq!(
        got("lgcodec_retain_checkpoints_deleted_total{dry_run=\"false\"}"),
        cps_before - cps_after
    );
    assert_eq!(
        got("lgcodec_retain_writes_deleted_total{dry_run=\"false\"}"),
        writes_before - writes_after
    );
    assert_eq!(
        got("lgcodec_retain_sweeps_total{dry_run=\"false\",result=\"failed\"}"),
        0.0
    );
    assert!(got("lgcodec_retain_last_success_timestamp_seconds{dry_run=\"false\"}") > 1.7e9);
    // Prometheus rates a counter and reads a gauge as is: each declared as what it is.
    for (series, kind) in [
        ("lgcodec_retain_checkpoints_deleted_total", "counter"),
        ("lgcodec_retain_sweeps_total", "counter"),
        ("lgcodec_retain_last_sweep_duration_seconds", "gauge"),
        ("lgcodec_retain_last_success_timestamp_seconds", "gauge"),
    ] {
        assert!(
            text.contains(&format!("# TYPE {series} {kind}\n")),
            "{series} is not a {kind}:\n{text}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn pragma(path: &Path, name: &str) -> i64 {
    rusqlite::Connection::open(path)
        .expect("open")
        .query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))
        .expect("pragma")
}

/// `--vacuum` on SQLite: in `auto_vacuum = INCREMENTAL` mode the sweep gives back
/// exactly the pages the same sweep without it leaves on the free list, and the file
/// loses them; in the default mode (Python's files) nothing is given back and the
/// report says how to convert the file once.
#[test]
fn vacuum_gives_back_the_free_pages_of_an_incremental_file_and_says_how_to_convert() {
    use crate::support::store_fixture::{sqlite_store, Shape};
    let dir = scratch("retain-vacuum");
    let src = dir.join("src.db");
    let shape = Shape {
        threads: 60,
        steps: 6,
        age_days: Some(60),
        ..Shape::default()
    };
    sqlite_store(&src, &shape, "t-");
    let policy = write_file(&dir, "p.toml", "[rules]\nidle_ttl = \"30d\"\n");
    let copy = |name: &str, incremental: bool| {
        let path = dir.join(name);
        std::fs::copy(&src, &path).expect("copy");
        if incremental {
            rusqlite::Connection::open(&path)
                .expect("open")
                .execute_batch("PRAGMA auto_vacuum = INCREMENTAL; VACUUM;")
                .expect("convert");
        }
        path
    };
    let run = |path: &Path, vacuum: bool| {
        let p = path.to_str().expect("utf-8");
        let mut args = vec!["--policy", policy.as_str()];
        if vacuum {
            args.push("--vacuum");
        }
        sweep_once(p, &args).0
    };
    let (plain, vacuumed) = (copy("plain.db", true), copy("vacuumed.db", true));
    let sweep = run(&plain, false);
    assert!(sweep["threads_deleted"].as_u64() > Some(0), "{sweep}");
    assert_eq!(sweep["vacuum"], Json::Null);
    let free = pragma(&plain, "freelist_count");
    assert!(free > 0, "the sweep left free pages");
    let sweep = run(&vacuumed, true);
    let v = &sweep["vacuum"];
    assert_eq!(v["mode"], "incremental", "{sweep}");
    assert_eq!(v["pages_released"].as_i64(), Some(free), "{sweep}");
    assert_eq!(
        v["bytes_released"].as_i64(),
        Some(free * pragma(&vacuumed, "page_size"))
    );
    assert_eq!(pragma(&vacuumed, "freelist_count"), 0);
    assert_eq!(
        pragma(&vacuumed, "page_count"),
        pragma(&plain, "page_count") - free
    );

    let python_default = copy("none.db", false);
    let (code, out, err) = lgcodec(&[
        "store",
        "retain",
        python_default.to_str().expect("utf-8"),
        "--policy",
        &policy,
        "--once",
        "--vacuum",
    ]);
    assert_eq!(code, 0, "{err}");
    let sweep = sweeps(&out).remove(0);
    assert_eq!(sweep["vacuum"]["mode"], "none", "{sweep}");
    assert_eq!(sweep["vacuum"]["pages_released"], 0);
    assert!(
        err.contains("PRAGMA auto_vacuum = INCREMENTAL; VACUUM;"),
        "{err}"
    );
    assert_eq!(
        pragma(&python_default, "freelist_count"),
        sweep["vacuum"]["free_pages_left"].as_i64().expect("left")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The sweep line docs/retention.md shows under "Output" has the fields a sweep prints,
/// in the same order, and the field list of docs/store-cli.md names each of them.
#[test]
fn the_documented_sweep_line_is_the_one_a_sweep_prints() {
    let dir = scratch("retain-doc-line");
    let path = committed_store(&dir);
    let policy = write_file(&dir, "p.toml", "[rules]\nkeep_latest = 1\n");
    let (line, _) = sweep_once(path.to_str().expect("utf-8"), &["--policy", &policy]);
    let keys =
        |v: &Json| -> Vec<String> { v.as_object().expect("an object").keys().cloned().collect() };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let guide = std::fs::read_to_string(root.join("docs/retention.md")).expect("guide");
    let shown = guide
        .lines()
        .find(|l| l.starts_with("{\"operation\":\"retain\""))
        .expect("a sweep line in docs/retention.md");
    let shown: Json = serde_json::from_str(shown).expect("the documented line is JSON");
    assert_eq!(keys(&shown), keys(&line), "docs/retention.md's sweep line");
    let reference = std::fs::read_to_string(root.join("docs/store-cli.md")).expect("reference");
    let retain = &reference[reference.find("\"retain\"").expect("retain's fields")..];
    for key in keys(&line) {
        assert!(
            retain.contains(&format!("`{key}`")),
            "docs/store-cli.md does not name `{key}`"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A retain sweep blocked writing its JSON lines to a standard output no one reads (a
/// dry run's line per thread, more than a pipe holds) sees neither signal: the process
/// exits anyway, 2 s after the second SIGTERM, with status 143 and a line saying why.
/// It went on until SIGKILL.
#[cfg(unix)]
#[test]
fn a_sweep_blocked_on_its_output_ends_at_the_second_signal() {
    use crate::support::store_fixture::{sqlite_store, Shape};
    use crate::support::{ended_within, signal};
    let dir = scratch("retain-blocked");
    let path = dir.join("store.db");
    let shape = Shape {
        threads: 2_000,
        steps: 2,
        ..Shape::default()
    };
    sqlite_store(&path, &shape, "t-");
    let policy = write_file(&dir, "p.toml", "[rules]\nkeep_latest = 1\n");
    let mut child = Command::new(BIN)
        .args(["store", "retain"])
        .arg(&path)
        .args(["--policy", &policy, "--once", "--dry-run"])
        // Piped and not read until the end: full after 64 KiB.
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run lgcodec store retain");
    std::thread::sleep(Duration::from_secs(2));
    assert!(child.try_wait().expect("wait").is_none(), "still writing");
    signal(&child, "-TERM");
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, "-TERM");
    let (status, err) = ended_within(
        &mut child,
        Duration::from_secs(30),
        "retain after the second SIGTERM",
    );
    assert_eq!(status.code(), Some(143), "{err}");
    assert!(err.contains("still running 2 s after the signal"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
