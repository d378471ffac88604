//! What the store commands refuse or report instead of doing silently less than asked
//! (or reporting what is not so: a checkpoint marked as not decoding because a
//! connection to read it was refused):
//! a prune that cannot read checkpoints (no key) exits 1 and says why, a `--metadata`
//! rule without a value is refused before anything is read; a prune of a database
//! without the saver's tables is refused and creates none.

use std::path::{Path, PathBuf};

use crate::support::scratch;
use crate::support::store_fixture::{sqlite_store, Shape};

const KEY: &str = "refusals-key-16b";

/// A SQLite store of 3 threads of 4 checkpoints, encrypted under `KEY`.
fn encrypted_store(dir: &Path) -> PathBuf {
    let path = dir.join("enc.db");
    let shape = Shape {
        threads: 3,
        steps: 4,
        key: Some(KEY.to_owned()),
        ..Shape::default()
    };
    sqlite_store(&path, &shape, "t-");
    path
}

fn checkpoints(path: &Path) -> i64 {
    rusqlite::Connection::open(path)
        .expect("open")
        .query_row("SELECT count(*) FROM checkpoints", [], |r| r.get(0))
        .expect("count")
}

/// The namespaces of `path`'s threads (a subgraph's is one of its thread's).
fn namespaces(path: &Path) -> i64 {
    rusqlite::Connection::open(path)
        .expect("open")
        .query_row(
            "SELECT count(*) FROM (SELECT DISTINCT thread_id, checkpoint_ns FROM checkpoints)",
            [],
            |r| r.get(0),
        )
        .expect("namespaces")
}

fn lgcodec(args: &[&str], key: Option<&str>) -> (i32, String) {
    let env: Vec<(&str, &str)> = key.map(|k| ("LANGGRAPH_AES_KEY", k)).into_iter().collect();
    let (code, _, err) = crate::lgcodec(args, &env);
    (code, err)
}

/// A prune reads a checkpoint's values only where a DeltaChannel may need them: the
/// metadata (clear text in Python's SQLite saver, encrypted store or not) says which
/// namespaces have one. Without the key, an encrypted store without DeltaChannels
/// prunes as with it; once its metadata names a DeltaChannel, no checkpoint there can
/// be read, so the prune keeps every chain whole and exits 1 saying what to do, rather
/// than 0 with nothing deleted (a nightly job that lost its key would never prune and
/// never complain). With the key the same command prunes and exits 0.
#[test]
fn a_prune_that_cannot_read_the_checkpoints_exits_1_and_says_why() {
    let dir = scratch("prune-no-key");
    let store = encrypted_store(&dir);
    let s = store.to_str().expect("utf-8");
    assert_eq!(checkpoints(&store), 12);
    let kept = namespaces(&store);
    let (code, stderr) = lgcodec(&["store", "prune", s, "--keep-latest", "1"], None);
    assert_eq!(code, 0, "no DeltaChannel, no value to read: {stderr}");
    assert_eq!(checkpoints(&store), kept, "one checkpoint a namespace kept");

    let store = dir.join("delta.db");
    let _ = std::fs::remove_file(&store);
    sqlite_store(
        &store,
        &Shape {
            threads: 3,
            steps: 4,
            key: Some(KEY.to_owned()),
            ..Shape::default()
        },
        "t-",
    );
    // Each checkpoint's metadata names `messages` as a DeltaChannel (as LangGraph writes
    // it for one): whether an older checkpoint must stay depends on the values.
    rusqlite::Connection::open(&store)
        .expect("open")
        .execute(
            "UPDATE checkpoints SET metadata = CAST(json_set(CAST(metadata AS TEXT), \
             '$.counters_since_delta_snapshot', json('{\"messages\": [1, 1]}')) AS BLOB)",
            [],
        )
        .expect("mark");
    let s = store.to_str().expect("utf-8");
    let before = checkpoints(&store);
    assert_eq!(before, 12);
    let (code, stderr) = lgcodec(&["store", "prune", s, "--keep-latest", "1"], None);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("12 checkpoint(s) could not be read")
            && stderr.contains("LANGGRAPH_AES_KEY"),
        "{stderr}"
    );
    assert_eq!(checkpoints(&store), before, "nothing was deleted");
    let (code, stderr) = lgcodec(&["store", "prune", s, "--keep-latest", "1"], Some(KEY));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        checkpoints(&store),
        namespaces(&store),
        "each latest checkpoint stores messages: no ancestor is needed"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--metadata KEY=` (or `=VALUE`) would match nothing, silently: refused, exit 2.
#[test]
fn a_metadata_rule_without_a_value_is_refused() {
    let dir = scratch("prune-metadata");
    let store = encrypted_store(&dir);
    let s = store.to_str().expect("utf-8");
    for rule in ["source=", "=loop", "source"] {
        let (code, stderr) = lgcodec(
            &[
                "store",
                "prune",
                s,
                "--keep-latest",
                "1",
                "--metadata",
                rule,
            ],
            Some(KEY),
        );
        assert_eq!(code, 2, "{rule}: {stderr}");
        assert!(stderr.contains("KEY=VALUE"), "{rule}: {stderr}");
    }
    assert_eq!(checkpoints(&store), 12);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A path that is not a regular file is named for what it is, for every command that
/// opens a store, and nothing is created there.
#[test]
fn a_path_that_is_not_a_file_is_named_for_what_it_is() {
    let dir = scratch("not-a-file");
    let d = dir.to_str().expect("utf-8");
    for (path, what) in [("/dev/zero", "a character device"), (d, "a directory")] {
        for command in ["audit", "stats", "inspect", "export", "prune", "upgrade"] {
            let mut args = vec!["store", command, path];
            match command {
                "export" => args.push("-"),
                "prune" => args.extend(["--keep-latest", "1", "--dry-run"]),
                "upgrade" => args.push("--dry-run"),
                _ => {}
            }
            let (code, stderr) = lgcodec(&args, None);
            assert_eq!(code, 2, "{args:?}: {stderr}");
            assert!(stderr.contains(what), "{args:?}: {stderr}");
        }
    }
    assert_eq!(std::fs::read_dir(&dir).expect("list").count(), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Prune of a database without the saver's tables (an empty SQLite file, a fresh
/// Postgres database) is refused as not a store, and leaves no table behind.
#[test]
fn a_prune_of_an_empty_database_is_refused_and_creates_nothing() {
    let dir = scratch("prune-empty");
    let empty = dir.join("empty.db");
    std::fs::write(&empty, b"").expect("empty file");
    let (code, stderr) = lgcodec(
        &[
            "store",
            "prune",
            empty.to_str().expect("utf-8"),
            "--keep-latest",
            "1",
        ],
        None,
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("not a Python LangGraph checkpoint store"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::metadata(&empty).expect("file").len(),
        0,
        "prune wrote"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let Some(base) = crate::support::pg::url() else {
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let url = rt.block_on(crate::support::pg::fresh(&base, "prune_empty"));
    let (code, stderr) = lgcodec(&["store", "prune", &url, "--keep-latest", "1"], None);
    assert_eq!(code, 2, "{stderr}");
    let tables = rt.block_on(async {
        crate::support::pg::tables_in(&crate::support::pg::connect(&url).await, "public").await
    });
    assert!(tables.is_empty(), "prune created {tables:?}");
}

/// A store with none of the savers' tables, given to every command that reads or
/// maintains one, is refused (exit 2) with where to look: a SQLite file of 0 bytes is
/// said to be one (most often a mistyped path that Python's `sqlite3.connect()`
/// created), one without tables is said to be that, with what makes the tables; a
/// Postgres database without them in its schema names the schemas of that database
/// that hold them and the URL's `search_path` option, which then works as given
/// (`stats` exit 0), or, with none, says to check the database's name. Nothing is
/// written.
#[test]
fn a_store_without_tables_is_refused_saying_where_to_look() {
    let dir = scratch("no-tables");
    let empty = dir.join("empty.db");
    std::fs::write(&empty, b"").expect("empty file");
    let bare = dir.join("bare.db");
    rusqlite::Connection::open(&bare)
        .expect("open")
        .execute_batch("CREATE TABLE x (a); DROP TABLE x;")
        .expect("bare");
    let bare_len = std::fs::metadata(&bare).expect("file").len();
    let backup = dir.join("b.jsonl");
    let refused = |store: &str, wants: &[&str]| {
        for args in [
            vec!["store", "stats", store],
            vec!["store", "inspect", store],
            vec!["store", "audit", store],
            vec!["store", "prune", store, "--keep-latest", "1"],
            vec!["store", "upgrade", store],
            vec!["store", "export", store, backup.to_str().expect("utf-8")],
        ] {
            let (code, stderr) = lgcodec(&args, None);
            assert_eq!(code, 2, "{args:?}: {stderr}");
            assert!(
                stderr.contains("is not a Python LangGraph checkpoint store")
                    && wants.iter().all(|w| stderr.contains(w)),
                "{args:?}: {stderr}"
            );
        }
    };
    refused(
        empty.to_str().expect("utf-8"),
        &["an empty file (0 bytes", "check the path"],
    );
    refused(
        bare.to_str().expect("utf-8"),
        &["without tables", "setup()", "copy or import"],
    );
    assert_eq!(std::fs::metadata(&empty).expect("file").len(), 0);
    assert_eq!(std::fs::metadata(&bare).expect("file").len(), bare_len);
    assert!(!backup.exists(), "export wrote");
    let Some(base) = crate::support::pg::url() else {
        let _ = std::fs::remove_dir_all(&dir);
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let url = rt.block_on(crate::support::pg::fresh(&base, "no_tables"));
    refused(
        &url,
        &["nor in any other schema", "check the database's name"],
    );
    // A store in schema `agents` of the same database, read through the default
    // `search_path` (`public`).
    rt.block_on(async {
        crate::support::pg::connect(&url)
            .await
            .batch_execute("CREATE SCHEMA agents")
            .await
            .expect("schema");
    });
    let source = dir.join("source.db");
    sqlite_store(
        &source,
        &Shape {
            threads: 2,
            steps: 2,
            ..Shape::default()
        },
        "t-",
    );
    let in_agents = format!("{url}?options=-csearch_path%3Dagents");
    let (code, stderr) = lgcodec(
        &["store", "copy", source.to_str().expect("utf-8"), &in_agents],
        None,
    );
    assert_eq!(code, 0, "{stderr}");
    refused(
        &url,
        &[
            "schema agents of it holds",
            "options=-csearch_path%3Dagents",
        ],
    );
    let public = rt.block_on(async {
        crate::support::pg::tables_in(&crate::support::pg::connect(&url).await, "public").await
    });
    assert!(public.is_empty(), "a refused command created {public:?}");
    let (code, stderr) = lgcodec(&["store", "stats", &in_agents], None);
    assert_eq!(code, 0, "{stderr}");
    // Named by libpq's `key=value` form, the schema is said as that form writes it,
    // and what it says to add works as pasted.
    let keywords = keyword_form(&url);
    refused(
        &keywords,
        &["in the connection string (options='-csearch_path=agents')"],
    );
    let pasted = format!("{keywords} options='-csearch_path=agents'");
    let (code, stderr) = lgcodec(&["store", "stats", &pasted], None);
    assert_eq!(code, 0, "{stderr}");
    // A schema per tenant: the first ten by name are named, then how many more.
    rt.block_on(async {
        let admin = crate::support::pg::connect(&url).await;
        for i in 1..=11 {
            admin
                .batch_execute(&format!(
                    "CREATE SCHEMA s{i:02}; CREATE TABLE s{i:02}.checkpoints (x int)"
                ))
                .await
                .expect("schema");
        }
    });
    refused(
        &url,
        &["schemas agents, s01, s02", "s09, and 2 more of it hold"],
    );
    let (_, stderr) = lgcodec(&["store", "stats", &url], None);
    assert!(!stderr.contains("s10"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `url` as libpq's `key=value` connection string.
fn keyword_form(url: &str) -> String {
    let config: tokio_postgres::Config = url.parse().expect("a Postgres URL");
    let host = match config.get_hosts().first().expect("a host") {
        tokio_postgres::config::Host::Tcp(h) => h.clone(),
        tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
    };
    let mut text = format!(
        "host={host} port={} dbname={}",
        config.get_ports().first().copied().unwrap_or(5432),
        config.get_dbname().expect("a database")
    );
    if let Some(user) = config.get_user() {
        text.push_str(&format!(" user={user}"));
    }
    if let Some(password) = config.get_password() {
        let password = String::from_utf8_lossy(password);
        let quoted = password.replace('\\', "\\\\").replace('\'', "\\'");
        text.push_str(&format!(" password='{quoted}'"));
    }
    text
}

/// A thread named that the store does not hold (`t-mian` for `t-main`): `copy` and
/// `export`, and `prune` leaving it out, refuse before doing anything (exit 2,
/// `thread_not_found`, the id named); the prune would otherwise have deleted `t-main`.
/// A prune selecting a thread it deleted before, run again, is done, and says the
/// thread is not there (`threads_not_found`).
/// `import` says it of its file once read (exit 1, `threads_not_found`). On Python's
/// SQLite store, and the prune on Python's Postgres store.
#[test]
fn a_thread_named_that_the_store_does_not_hold_is_refused() {
    let dir = scratch("thread-not-found");
    let store = dir.join("s.db");
    std::fs::copy(
        crate::support::stores()
            .join("sqlite-py-3.1.2")
            .join("store.sqlite"),
        &store,
    )
    .expect("copy");
    let store = store.to_str().expect("utf-8").to_owned();
    let rows = |path: &str| -> Vec<String> {
        let conn = rusqlite::Connection::open(path).expect("open");
        let mut stmt = conn
            .prepare("SELECT thread_id || checkpoint_ns || checkpoint_id FROM checkpoints UNION ALL SELECT thread_id || task_id || idx FROM writes ORDER BY 1")
            .expect("prepare");
        stmt.query_map([], |r| r.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    };
    let before = rows(&store);
    assert!(before.iter().any(|r| r.starts_with("t-main")));
    let (copy_to, export_to) = (dir.join("c.db"), dir.join("b.jsonl"));
    let refused = |args: &[&str]| {
        let (code, out, err) = crate::lgcodec(args, &[]);
        assert_eq!(code, 2, "{args:?}: {err}");
        let json: serde_json::Value = serde_json::from_str(&out).expect("the error as JSON");
        assert_eq!(json["kind"], "thread_not_found", "{out}");
        assert!(
            err.contains("no thread \"t-mian\"") && err.contains("nothing was done"),
            "{err}"
        );
    };
    let (c, e) = (
        copy_to.to_str().expect("utf-8"),
        export_to.to_str().expect("utf-8"),
    );
    refused(&["store", "copy", &store, c, "--thread", "t-mian", "--json"]);
    refused(&[
        "store",
        "copy",
        &store,
        c,
        "--exclude-thread",
        "t-mian",
        "--json",
    ]);
    refused(&[
        "store", "export", &store, e, "--thread", "t-main", "--thread", "t-mian", "--json",
    ]);
    refused(&[
        "store",
        "prune",
        &store,
        "--idle-since",
        "2027-01-01",
        "--exclude-thread",
        "t-mian",
        "--allow-all",
        "--json",
    ]);
    assert!(
        !copy_to.exists() && !export_to.exists(),
        "a refused command left a file"
    );
    assert_eq!(rows(&store), before, "a refused command changed the store");
    // The ids right: done (the prune leaves t-main, deletes t-short).
    let (code, _, err) = crate::lgcodec(&["store", "export", &store, e, "--thread", "t-main"], &[]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = crate::lgcodec(
        &[
            "store",
            "prune",
            &store,
            "--idle-since",
            "2027-01-01",
            "--exclude-thread",
            "t-main",
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    // The same prune selecting the thread it deleted, run again: nothing to do, done,
    // and the thread said to be gone.
    let (code, out, err) = crate::lgcodec(
        &[
            "store",
            "prune",
            &store,
            "--idle-since",
            "2027-01-01",
            "--thread",
            "t-short",
            "--json",
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("no thread \"t-short\""), "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("the report");
    assert_eq!(json["threads_not_found"], serde_json::json!(["t-short"]));
    let after = rows(&store);
    assert!(
        after.iter().all(|r| r.starts_with("t-main")) && !after.is_empty(),
        "{after:?}"
    );
    // An import of that backup asked for a thread it does not hold.
    let (code, out, err) = crate::lgcodec(
        &[
            "store",
            "import",
            e,
            dir.join("i.db").to_str().expect("utf-8"),
            "--thread",
            "t-mian",
            "--json",
        ],
        &[],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no row of thread \"t-mian\""), "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("the report");
    assert_eq!(json["threads_not_found"], serde_json::json!(["t-mian"]));
    assert_eq!(json["inserted"], 0);
    let _ = std::fs::remove_dir_all(&dir);
    let Some(base) = crate::support::pg::url() else {
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let url = rt.block_on(crate::support::pg::restored(
        &base,
        "postgres-py-3.2.0",
        "not_found",
    ));
    let digest = || rt.block_on(crate::support::pg::digest(&url));
    let was = digest();
    refused(&[
        "store",
        "prune",
        &url,
        "--keep-latest",
        "1",
        "--exclude-thread",
        "t-mian",
        "--json",
    ]);
    assert_eq!(digest(), was, "the refused prune changed the database");
    let (code, _, err) = crate::lgcodec(
        &[
            "store",
            "prune",
            &url,
            "--keep-latest",
            "1",
            "--thread",
            "t-main",
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert_ne!(digest(), was, "the prune of t-main deleted nothing");
}

/// A copy whose target is its source (the same path, the same file by another path or
/// a link, the same Postgres URL) would find every checkpoint there and change nothing,
/// a new key or not: refused before anything is opened (exit 2,
/// `invalid_store_location`), naming `encrypt` and `rekey`, the file as it was. It
/// exited 0 ("12 already in s.db").
#[test]
fn a_copy_into_its_own_source_is_refused() {
    let dir = scratch("copy-itself");
    let store = encrypted_store(&dir);
    let s = store.to_str().expect("utf-8");
    std::fs::create_dir(dir.join("sub")).expect("sub");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&store, dir.join("link.db")).expect("link");
    let before = std::fs::read(&store).expect("read");
    let same_file = format!("{}/sub/../enc.db", dir.display());
    let link = format!("{}/link.db", dir.display());
    let mut targets = vec![s, same_file.as_str()];
    if cfg!(unix) {
        targets.push(&link);
    }
    for target in targets {
        let out = crate::lgcodec(
            &["store", "copy", s, target, "--json"],
            &[("LANGGRAPH_AES_KEY", KEY)],
        );
        assert_eq!(out.0, 2, "{target}: {}", out.2);
        let json: serde_json::Value = serde_json::from_str(&out.1).expect("a JSON error");
        assert_eq!(json["kind"], "invalid_store_location", "{target}");
        assert!(
            out.2.contains("the target is the copy's source itself")
                && out.2.contains("lgcodec store rekey"),
            "{target}: {}",
            out.2
        );
    }
    assert_eq!(std::fs::read(&store).expect("read"), before);
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(url) = crate::support::pg::url() {
        let (code, stderr) = lgcodec(&["store", "copy", &url, &url], None);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("the copy's source itself"), "{stderr}");
    }
}

/// `inspect --check`, `--checkpoint` and `--diff` on Postgres read checkpoints through
/// connections of their own beside the store's (four at once for `--check`). A role the
/// server lets open one or two connections (`CONNECTION LIMIT`) is refused those
/// (SQLSTATE 53300); the reads go on on the store's own connection, and each command
/// prints what it prints for a role without a limit, exit status 0. `--check` used to
/// mark every checkpoint whose connection was refused as one that does not decode
/// (exit 1, a finding that was not so), and `--checkpoint` stopped with exit 2. A copy
/// out of the store reads the same way, to copies Python reads as the store; a copy
/// into a database of a role allowed one connection, which needs two, says which limit
/// refused it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_allowed_few_connections_inspects_and_copies_as_any_other() {
    use crate::support::pg;
    let Some(url) = pg::url() else {
        return;
    };
    let db = pg::restored(&url, "postgres-py-3.2.0", "few_conns").await;
    let inspect = |store: &str, args: &[&str]| {
        let mut all = vec!["store", "inspect", store, "--thread", "t-main"];
        all.extend_from_slice(args);
        let (code, out, err) = crate::lgcodec(&all, &[]);
        (code, out, err)
    };
    let (code, out, err) = inspect(&db, &["--json"]);
    assert_eq!(code, 0, "{err}");
    let history: serde_json::Value = serde_json::from_str(&out).expect("json");
    let ids: Vec<&str> = history["nodes"]
        .as_array()
        .unwrap_or_else(|| panic!("{history}"))
        .iter()
        .filter_map(|n| n["checkpoint_id"].as_str())
        .collect();
    assert!(ids.len() > 2, "{history}");
    let (first, last) = (ids[0], ids[ids.len() - 1]);
    let commands: [&[&str]; 4] = [
        &["--check"],
        &["--check", "--json"],
        &["--checkpoint", last],
        &["--checkpoint", first, "--diff", last],
    ];
    let admin = pg::connect(&db).await;
    let dir = scratch("few-conns");
    let mut copies = Vec::new();
    for limit in [1, 2] {
        let (role, as_role) =
            pg::limited_role(&db, &format!("lgcodec_few_conns_{limit}"), limit).await;
        for args in commands {
            let (code, out, err) = inspect(&db, args);
            assert_eq!(code, 0, "{args:?}: {err}");
            pg::sessions_gone(&admin, &role).await;
            let limited = inspect(&as_role, args);
            assert_eq!(
                (limited.0, &limited.1),
                (code, &out),
                "{args:?} as a role allowed {limit}: {}",
                limited.2
            );
        }
        // A copy out of the store reads its checkpoints the same way (it stopped
        // after 17 refusals taken for lost connections, about a minute of waits).
        let copy = dir.join(format!("copy-{limit}.sqlite"));
        let copy = copy.to_str().expect("utf-8").to_owned();
        pg::sessions_gone(&admin, &role).await;
        let (code, _, err) = crate::lgcodec(&["store", "copy", &as_role, &copy], &[]);
        assert_eq!(code, 0, "copy as a role allowed {limit}: {err}");
        copies.push(copy);
        pg::drop_role(&db, &role).await;
    }
    if let Some(py) = crate::support::python() {
        let copies: Vec<&str> = copies.iter().map(String::as_str).collect();
        crate::support::python_reads_equal(&py, false, &db, &copies);
    }
    // A copy into a database of a role allowed one connection needs two (the target's
    // and the saver's that makes its tables): refused, it says which limit, not that
    // the target is no store.
    let target = pg::fresh(&url, "few_conns_target").await;
    let (role, as_role) = pg::limited_role(&target, "lgcodec_few_conns_target", 1).await;
    pg::connect(&target)
        .await
        .batch_execute(&format!("GRANT CREATE ON SCHEMA public TO {role}"))
        .await
        .expect("grant");
    let (code, _, err) = crate::lgcodec(&["store", "copy", &copies[0], &as_role], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("CONNECTION LIMIT") && !err.contains("not a Python LangGraph"),
        "{err}"
    );
    pg::drop_role(&target, &role).await;
}
