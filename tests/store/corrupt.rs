//! Stores whose rows were damaged after Python wrote them: a cell set to another type
//! or to random bytes, JSON of the wrong shape, an id that is not one, a blob of an
//! unknown type. Every store command, reading or writing, answers with exit 0, 1 or 2,
//! says why on exit 2, and never panics; the reading ones leave the file as it was.
//! The damage is drawn from a fixed seed, so a failing case replays.

use std::path::Path;

use serde_json::Value as Json;

use crate::support::{pg, scratch, stores};

/// xorshift64*: a fixed sequence, no dependency.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).expect("small")
    }

    fn text(&mut self, max: usize) -> String {
        let len = self.below(max + 1);
        (0..len)
            .filter_map(|_| char::from_u32(1 + (self.next() % 0x3000) as u32))
            .collect()
    }

    /// A value for an SQLite cell of any column.
    fn cell(&mut self) -> rusqlite::types::Value {
        use rusqlite::types::Value;
        match self.below(8) {
            0 => Value::Null,
            1 => Value::Integer(self.next() as i64),
            2 => Value::Real(f64::from_bits(self.next())),
            3 => Value::Text(self.text(40)),
            4 => Value::Blob((0..self.below(64)).map(|_| self.next() as u8).collect()),
            5 => Value::Blob("{\"a\":".repeat(self.below(3000)).into_bytes()),
            // One character off a uuid6 checkpoint id.
            6 => Value::Text(format!(
                "1f1e8e14-15a5-6c9a-8001-73c70dd9ebf{}",
                ['0', 'f', 'X', '-', 'é'][self.below(5)]
            )),
            _ => Value::Text(
                ["", "msgpack", "json", "bytes", "msgpack+aes", "null", "\0"][self.below(7)]
                    .to_owned(),
            ),
        }
    }

    /// JSON of any shape, with the keys a checkpoint or its metadata has.
    fn json(&mut self, depth: usize) -> Json {
        const KEYS: [&str; 10] = [
            "v",
            "ts",
            "id",
            "channel_versions",
            "versions_seen",
            "channel_values",
            "pending_sends",
            "source",
            "step",
            "parents",
        ];
        match self.below(if depth < 4 { 8 } else { 5 }) {
            0 => Json::Null,
            1 => Json::from(self.next() as i64),
            2 => Json::from(f64::from_bits(self.next() >> 2)),
            3 => Json::from(self.text(20)),
            4 => Json::from(
                [
                    "",
                    "00000000000000000000000000000002.0.1",
                    "2024-07-01T12:30:45+00:00",
                ][self.below(3)],
            ),
            5 => Json::Array((0..self.below(4)).map(|_| self.json(depth + 1)).collect()),
            _ => Json::Object(
                (0..self.below(5))
                    .map(|_| {
                        (
                            KEYS[self.below(KEYS.len())].to_owned(),
                            self.json(depth + 1),
                        )
                    })
                    .collect(),
            ),
        }
    }

    /// `value` with one part replaced, dropped or changed in type.
    fn damage(&mut self, value: Json) -> Json {
        match value {
            Json::Object(mut map) if !map.is_empty() && self.below(10) < 7 => {
                let key = map
                    .keys()
                    .nth(self.below(map.len()))
                    .expect("a key")
                    .clone();
                match self.below(3) {
                    0 => {
                        map.remove(&key);
                    }
                    1 => {
                        let inner = map.remove(&key).expect("there");
                        map.insert(key, self.damage(inner));
                    }
                    _ => {
                        map.insert(key, self.json(0));
                    }
                }
                Json::Object(map)
            }
            _ => self.json(0),
        }
    }
}

/// Exit 0, 1 or 2, no panic, and a reason given on exit 2.
fn answered(case: usize, args: &[&str], (code, _, err): &(i32, String, String)) {
    assert!(
        (0..=2).contains(code) && !err.contains("panicked"),
        "case {case}: lgcodec {args:?} exited {code}: {err}"
    );
    if *code == 2 {
        assert!(
            err.contains("lgcodec"),
            "case {case}: {args:?} said nothing: {err}"
        );
    }
}

fn sqlite_damaged(path: &Path, draw: &mut Draw) {
    let conn = rusqlite::Connection::open(path).expect("open");
    fn first_column<T: rusqlite::types::FromSql>(conn: &rusqlite::Connection, sql: &str) -> Vec<T> {
        let mut stmt = conn.prepare(sql).expect(sql);
        let rows = stmt.query_map([], |r| r.get(0)).expect(sql);
        rows.collect::<Result<_, _>>().expect(sql)
    }
    for table in ["checkpoints", "writes"] {
        let columns: Vec<String> = first_column(
            &conn,
            &format!("SELECT name FROM pragma_table_info('{table}')"),
        );
        let rows: Vec<i64> = first_column(&conn, &format!("SELECT rowid FROM {table}"));
        for _ in 0..1 + draw.below(3) {
            let column = &columns[draw.below(columns.len())];
            let row = rows[draw.below(rows.len())];
            // A value the column's constraints refuse (NOT NULL, a duplicate key)
            // leaves the row as it was.
            let _ = conn.execute(
                &format!("UPDATE {table} SET \"{column}\" = ?1 WHERE rowid = ?2"),
                rusqlite::params![draw.cell(), row],
            );
        }
    }
}

#[test]
fn damaged_sqlite_stores_get_an_answer_from_every_command() {
    let dir = scratch("corrupt-sqlite");
    let mut draw = Draw(0x5EED_0001);
    for case in 0..24 {
        let store = dir.join(format!("s{case}.sqlite"));
        std::fs::copy(
            stores().join("sqlite-py-3.1.2").join("store.sqlite"),
            &store,
        )
        .expect("copy");
        sqlite_damaged(&store, &mut draw);
        let s = store.to_str().expect("utf-8");
        let backup = dir.join(format!("b{case}.jsonl"));
        let b = backup.to_str().expect("utf-8");
        let copied = dir.join(format!("c{case}.sqlite"));
        let restored = dir.join(format!("r{case}.sqlite"));
        let damaged = std::fs::read(&store).expect("read");
        let reading: [&[&str]; 8] = [
            &["store", "audit", s],
            &["store", "stats", s, "--json"],
            &["store", "inspect", s, "--json"],
            &["store", "inspect", s, "--thread", "t-main"],
            &["store", "export", s, b],
            &["store", "prune", s, "--keep-latest", "1", "--dry-run"],
            &["store", "prune", s, "--before", "2030-01-01", "--dry-run"],
            &["store", "upgrade", s, "--dry-run"],
        ];
        for args in reading {
            answered(case, args, &crate::lgcodec(args, &[]));
            assert_eq!(
                std::fs::read(&store).expect("read"),
                damaged,
                "case {case}: {args:?} changed the store"
            );
        }
        let c = copied.to_str().expect("utf-8");
        let r = restored.to_str().expect("utf-8");
        let writing: [&[&str]; 4] = [
            &["store", "copy", s, c],
            &["store", "import", b, r],
            &["store", "prune", s, "--keep-latest", "1"],
            &[
                "store",
                "prune",
                s,
                "--idle-since",
                "2030-01-01",
                "--allow-all",
            ],
        ];
        for args in writing {
            if args[1] == "import" && !backup.exists() {
                continue;
            }
            answered(case, args, &crate::lgcodec(args, &[]));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn damaged_postgres_stores_get_an_answer_from_every_command() {
    let Some(url) = pg::url() else { return };
    let dir = scratch("corrupt-pg");
    let mut draw = Draw(0x5EED_0002);
    for case in 0..12 {
        let db = pg::restored(&url, "postgres-py-3.2.0", &format!("corrupt{case}")).await;
        let client = pg::connect(&db).await;
        let rows = client
            .query(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, checkpoint::text, \
                 metadata::text FROM checkpoints",
                &[],
            )
            .await
            .expect("rows");
        for _ in 0..1 + draw.below(3) {
            let row = &rows[draw.below(rows.len())];
            let (thread, ns, id): (String, String, String) = (row.get(0), row.get(1), row.get(2));
            let stored = |i: usize| -> Json {
                serde_json::from_str(row.get::<_, &str>(i)).expect("JSONB as text")
            };
            let (column, value) = match draw.below(4) {
                0 => ("checkpoint", draw.damage(stored(3))),
                1 => ("metadata", draw.damage(stored(4))),
                2 => ("checkpoint_id", Json::from(draw.text(40))),
                _ => ("parent_checkpoint_id", Json::from(draw.text(40))),
            };
            let set = if matches!(column, "checkpoint" | "metadata") {
                format!("{column} = $1::text::jsonb")
            } else {
                format!("{column} = $1")
            };
            let text = match (column, &value) {
                ("checkpoint" | "metadata", v) => v.to_string(),
                (_, v) => v.as_str().unwrap_or_default().replace('\0', ""),
            };
            // A duplicate key or a value Postgres refuses leaves the row as it was.
            let _ = client
                .execute(
                    &format!(
                        "UPDATE checkpoints SET {set} WHERE thread_id = $2 AND \
                         checkpoint_ns = $3 AND checkpoint_id = $4"
                    ),
                    &[&text, &thread, &ns, &id],
                )
                .await;
        }
        if draw.below(2) == 0 {
            let ty = ["empty", "msgpack", "null", "json", "zzz"][draw.below(5)];
            client
                .execute(
                    "UPDATE checkpoint_blobs SET type = $1 WHERE ctid = \
                     (SELECT ctid FROM checkpoint_blobs LIMIT 1)",
                    &[&ty],
                )
                .await
                .expect("blob type");
        }
        drop(client);
        let copied = dir.join(format!("c{case}.sqlite"));
        let c = copied.to_str().expect("utf-8");
        let backup = dir.join(format!("b{case}.jsonl"));
        let b = backup.to_str().expect("utf-8");
        let commands: [&[&str]; 10] = [
            &["store", "audit", &db],
            &["store", "stats", &db, "--json"],
            &["store", "inspect", &db, "--json"],
            &["store", "inspect", &db, "--thread", "t-main"],
            &["store", "export", &db, b],
            &["store", "prune", &db, "--keep-latest", "1", "--dry-run"],
            &["store", "prune", &db, "--before", "2030-01-01", "--dry-run"],
            &["store", "upgrade", &db, "--dry-run"],
            &["store", "copy", &db, c],
            &["store", "prune", &db, "--keep-latest", "1"],
        ];
        for args in commands {
            answered(case, args, &crate::lgcodec(args, &[]));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The commands a message suggests (between backticks, starting `lgcodec store`), as
/// the arguments after `lgcodec`.
fn suggested(message: &str) -> Vec<Vec<String>> {
    message
        .split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|quoted| quoted.strip_prefix("lgcodec "))
        .filter(|args| args.starts_with("store "))
        .map(|args| args.split(' ').map(str::to_owned).collect())
        .collect()
}

/// The message of a copy stopped by an unreadable row of `thread` (`id` in it): it
/// names the row, the thread to leave out, and two commands that run as pasted; the
/// audit lists the row when its damage is a value's (`a_value`), not the shape of a
/// checkpoint's JSONB.
fn stopped_with_what_to_do(
    (code, _, err): &(i32, String, String),
    (thread, id): (&str, &str),
    a_value: bool,
) {
    assert_eq!(*code, 2, "{err}");
    for said in [
        id,
        &format!("`--exclude-thread {thread}`"),
        "run the same copy again",
    ] {
        assert!(err.contains(said), "{said:?} not in {err}");
    }
    let commands = suggested(err);
    assert_eq!(commands.len(), 2, "{err}");
    for args in commands {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = crate::lgcodec(&args, &[]);
        assert!(code == 0 || code == 1, "{args:?} as pasted: {code} {err}");
        if args[1] == "audit" && a_value {
            assert!(out.contains(id), "the audit does not list the row: {out}");
        }
        if args[1] == "inspect" {
            // The history with that checkpoint, and only that one, marked (exit 1).
            assert_eq!(code, 1, "{args:?}: {err}");
            let marked: Vec<&str> = out.lines().filter(|l| l.contains("UNREADABLE")).collect();
            assert!(
                marked.len() == 1 && marked[0].trim_start().starts_with(id),
                "{args:?}: {out}"
            );
            let mut json = args.clone();
            json.push("--json");
            let (code, out, err) = crate::lgcodec(&json, &[]);
            assert_eq!(code, 1, "{err}");
            let history: Json = serde_json::from_str(&out).expect("the history");
            let nodes = history["nodes"].as_array().expect("nodes");
            let unreadable: Vec<&str> = nodes
                .iter()
                .filter(|n| !n["unreadable"].is_null())
                .filter_map(|n| n["checkpoint_id"].as_str())
                .collect();
            assert_eq!(unreadable, [id], "{out}");
            assert!(nodes.len() > 1, "{out}");
        }
    }
}

/// The `(thread, ns, id)` of every checkpoint of a SQLite store, in order.
pub(crate) fn sqlite_keys(path: &Path) -> Vec<(String, String, String)> {
    let conn = rusqlite::Connection::open(path).expect("open");
    let mut stmt = conn
        .prepare("SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints ORDER BY 1, 2, 3")
        .expect("keys");
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("keys");
    rows.collect::<Result<_, _>>().expect("keys")
}

/// A copy that meets a source row it cannot read stops there (exit 2,
/// `unreadable_row`), naming the row, its thread and what to do; the commands it names
/// run as pasted. `--exclude-thread` then copies every other thread and nothing of that
/// one, even where the target holds that thread with a history of its own; once the
/// row is mended, the same copy completes the target to the source's checkpoints. A
/// SQLite source (Python's store, the first checkpoint's blob made bytes no serializer
/// reads: the row the copy reads before it touches the target) into SQLite.
#[test]
fn a_copy_stopped_by_an_unreadable_row_names_its_thread_and_goes_on_without_it() {
    let dir = scratch("copy-stopped");
    let store = dir.join("source.sqlite");
    std::fs::copy(
        stores().join("sqlite-py-3.1.2").join("store.sqlite"),
        &store,
    )
    .expect("copy");
    let keys = sqlite_keys(&store);
    let (thread, ns, id) = keys.first().cloned().expect("a checkpoint");
    let conn = rusqlite::Connection::open(&store).expect("open");
    let at = "WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3";
    let stored: Vec<u8> = conn
        .query_row(
            &format!("SELECT checkpoint FROM checkpoints {at}"),
            [&thread, &ns, &id],
            |r| r.get(0),
        )
        .expect("row");
    let set = format!("UPDATE checkpoints SET checkpoint = ?4 {at}");
    conn.execute(&set, rusqlite::params![thread, ns, id, vec![0xc1u8]])
        .expect("damage");
    let (s, target) = (store.to_str().expect("utf-8"), dir.join("target.sqlite"));
    let t = target.to_str().expect("utf-8");

    let stopped = crate::lgcodec(&["store", "copy", s, t], &[]);
    stopped_with_what_to_do(&stopped, (&thread, &id), true);
    let (code, out, _) = crate::lgcodec(&["store", "copy", s, t, "--json"], &[]);
    let error: Json = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!((code, error["kind"].as_str()), (2, Some("unreadable_row")));

    let others: Vec<_> = keys.iter().filter(|k| k.0 != thread).cloned().collect();
    assert!(!others.is_empty());
    let (code, out, err) = crate::lgcodec(
        &["store", "copy", s, t, "--exclude-thread", &thread, "--json"],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let report: Json = serde_json::from_str(&out).expect("the report");
    assert_eq!(report["excluded_threads"], serde_json::json!([thread]));
    assert_eq!(report["checkpoints"], others.len());
    assert_eq!(report["verified"], others.len());
    assert_eq!(sqlite_keys(&target), others);
    // Threads named and one of them left out: the others' checkpoints, counted once.
    let every: std::collections::BTreeSet<&str> = keys.iter().map(|k| k.0.as_str()).collect();
    let mut named = vec!["store", "copy", s, t, "--dry-run", "--json"];
    for name in every {
        named.extend(["--thread", name]);
    }
    named.extend(["--exclude-thread", thread.as_str()]);
    let (code, out, err) = crate::lgcodec(&named, &[]);
    assert_eq!(code, 0, "{err}");
    let report: Json = serde_json::from_str(&out).expect("the report");
    assert_eq!(report["checkpoints"], others.len(), "{named:?}");
    // The target gets a checkpoint of that thread the source lacks: a history of its
    // own, which a copy of the thread would refuse. Left out, it is no clash.
    let into = rusqlite::Connection::open(&target).expect("open");
    let own = "INSERT INTO checkpoints SELECT ?1, checkpoint_ns, 'own', NULL, type, \
               checkpoint, metadata FROM checkpoints LIMIT 1";
    into.execute(own, [&thread]).expect("own");
    let (code, _, err) = crate::lgcodec(&["store", "copy", s, t, "--exclude-thread", &thread], &[]);
    assert_eq!(code, 0, "{err}");
    into.execute("DELETE FROM checkpoints WHERE checkpoint_id = 'own'", [])
        .expect("own");

    conn.execute(&set, rusqlite::params![thread, ns, id, stored])
        .expect("mend");
    let (code, out, err) = crate::lgcodec(&["store", "copy", s, t, "--json"], &[]);
    assert_eq!(code, 0, "{err}");
    let report: Json = serde_json::from_str(&out).expect("the report");
    assert_eq!(report["already_there"], others.len());
    assert_eq!(sqlite_keys(&target), keys);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Python's Postgres store's thread `t-main` copied, rows, blobs and writes, under the
/// id `t-a`, which comes before it in the table's order.
const T_MAIN_AS_T_A: &str = "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, \
         parent_checkpoint_id, type, checkpoint, metadata) \
     SELECT 't-a', checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, \
         checkpoint, metadata FROM checkpoints WHERE thread_id = 't-main'; \
     INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
     SELECT 't-a', checkpoint_ns, channel, version, type, blob \
         FROM checkpoint_blobs WHERE thread_id = 't-main'; \
     INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, \
         task_path, idx, channel, type, blob) \
     SELECT 't-a', checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, \
         type, blob FROM checkpoint_writes WHERE thread_id = 't-main'";

/// Python's Postgres store restored into a database of its own (`tag`) with
/// [`T_MAIN_AS_T_A`]: its URL and every checkpoint key, in byte order.
async fn python_store_with_t_a(url: &str, tag: &str) -> (String, Vec<(String, String, String)>) {
    let db = pg::restored(url, "postgres-py-3.2.0", tag).await;
    let client = pg::connect(&db).await;
    client
        .batch_execute(T_MAIN_AS_T_A)
        .await
        .expect("a thread before t-main");
    let keys = client
        .query(
            "SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints \
             ORDER BY thread_id COLLATE \"C\", checkpoint_ns COLLATE \"C\", checkpoint_id COLLATE \"C\"",
            &[],
        )
        .await
        .expect("keys")
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    (db, keys)
}

/// A copy out of Postgres of threads named in another order than the table's
/// (`--thread t-main --thread t-a`, `t-a` first in the table): a read of the source
/// then holds keys of both threads, and each is read as the checkpoints it names. The
/// target holds every checkpoint of both, verified.
#[tokio::test]
async fn a_copy_out_of_postgres_of_threads_named_out_of_order_copies_them_all() {
    let Some(url) = pg::url() else { return };
    let dir = scratch("copy-named-pg");
    let (db, keys) = python_store_with_t_a(&url, "copynamed").await;
    let keys: Vec<_> = keys.into_iter().filter(|k| k.0 != "t-short").collect();
    assert!(keys.len() > 6, "{keys:?}");
    let target = dir.join("target.sqlite");
    let t = target.to_str().expect("utf-8");
    let (code, out, err) = crate::lgcodec(
        &[
            "store", "copy", &db, t, "--thread", "t-main", "--thread", "t-a", "--json",
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let report: Json = serde_json::from_str(&out).expect("the report");
    assert_eq!(report["copied"], keys.len(), "{out}");
    assert_eq!(report["verified"], keys.len(), "{out}");
    assert_eq!(sqlite_keys(&target), keys);
    let _ = std::fs::remove_dir_all(&dir);
}

/// As above from a Postgres source (Python's store, one checkpoint's JSONB made a
/// string), whose rows are read another way: the copy into SQLite stops naming the
/// thread, and `--exclude-thread` copies exactly the other threads. The thread left
/// out lies between two others in the source's order (a copy of its rows under a
/// thread id before it), inside the range of keys one read of the copy takes.
#[tokio::test]
async fn a_copy_out_of_postgres_stopped_by_an_unreadable_row_goes_on_without_its_thread() {
    let Some(url) = pg::url() else { return };
    let dir = scratch("copy-stopped-pg");
    let (db, keys) = python_store_with_t_a(&url, "copystopped").await;
    let client = pg::connect(&db).await;
    let (thread, ns, id) = keys
        .iter()
        .filter(|k| k.0 == "t-main" && k.1.is_empty())
        .nth(2)
        .cloned()
        .expect("a third checkpoint of t-main");
    client
        .execute(
            "UPDATE checkpoints SET checkpoint = '\"not a checkpoint\"'::jsonb \
             WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3",
            &[&thread, &ns, &id],
        )
        .await
        .expect("damage");
    let target = dir.join("target.sqlite");
    let t = target.to_str().expect("utf-8");
    let stopped = crate::lgcodec(&["store", "copy", &db, t], &[]);
    stopped_with_what_to_do(&stopped, (&thread, &id), false);
    let (code, out, err) = crate::lgcodec(
        &[
            "store",
            "copy",
            &db,
            t,
            "--exclude-thread",
            &thread,
            "--json",
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let report: Json = serde_json::from_str(&out).expect("the report");
    let others: Vec<_> = keys.iter().filter(|k| k.0 != thread).cloned().collect();
    assert!(!others.is_empty());
    assert_eq!(report["checkpoints"], others.len());
    assert_eq!(sqlite_keys(&target), others);

    // A Postgres target holding the thread in part (Python's store with the thread's
    // newest checkpoint deleted): leaving the thread out, the copy says so, dry run or
    // not, and exits 1.
    let into = pg::restored(&url, "postgres-py-3.2.0", "copystopped_into").await;
    let newest = keys
        .iter()
        .filter(|k| k.0 == thread)
        .max_by(|a, b| a.2.cmp(&b.2));
    let (_, newest_ns, newest_id) = newest.cloned().expect("the thread's newest");
    let gone = pg::connect(&into)
        .await
        .execute(
            "DELETE FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 \
             AND checkpoint_id = $3",
            &[&thread, &newest_ns, &newest_id],
        )
        .await
        .expect("delete");
    assert_eq!(gone, 1);
    let in_source = keys.iter().filter(|k| k.0 == thread).count();
    for dry in [true, false] {
        let mut args = vec!["store", "copy", &db, &into, "--exclude-thread", &thread];
        args.extend(if dry {
            &["--json", "--dry-run"][..]
        } else {
            &["--json"]
        });
        let (code, out, err) = crate::lgcodec(&args, &[]);
        assert_eq!(code, 1, "{args:?}: {err}");
        let report: Json = serde_json::from_str(&out).expect("the report");
        let want = serde_json::json!([
            {"thread": thread, "in_target": in_source - 1, "in_source": in_source}
        ]);
        assert_eq!(report["excluded_partly_copied"], want, "{args:?}: {out}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A thread id SQLite holds as text that is not UTF-8 (written by something else than
/// Python's saver): `stats --json`, which streams its document, stops with exit 2;
/// the document cut short ends its line, and the last line of standard output is the
/// error's own JSON object (`unreadable_row`), naming the thread id by its bytes as a
/// SQL literal. A prune, which reads it through rusqlite's conversion, says the same
/// kind and words, and so do `inspect`, `export` and `copy`. The statements the message gives find the thread's checkpoint and
/// give it a text id, run as pasted; then both commands go through.
#[test]
fn stats_json_stopped_mid_document_ends_with_the_error_on_a_line_of_its_own() {
    let dir = scratch("stats-not-utf8");
    let path = dir.join("s.db");
    std::fs::copy(stores().join("sqlite-py-3.1.2").join("store.sqlite"), &path).expect("copy");
    // 0xff sorts after every UTF-8 id: the threads before it are listed first.
    rusqlite::Connection::open(&path)
        .expect("open")
        .execute_batch(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, type, checkpoint, metadata) \
             VALUES (CAST(x'ff00' AS TEXT), '', 'c1', 'msgpack', x'80', CAST('{}' AS BLOB))",
        )
        .expect("insert");
    let (code, out, err) = crate::lgcodec(
        &["store", "stats", path.to_str().expect("utf-8"), "--json"],
        &[],
    );
    assert_eq!(code, 2, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("{\"store\":") && lines[0].contains("\"t-main\""),
        "{out}"
    );
    let error: Json = serde_json::from_str(lines[1]).expect("the error's line is JSON");
    assert_eq!(error["kind"], "unreadable_row", "{out}");
    let said = error["error"].as_str().expect("error");
    assert!(
        said.contains("a thread id: not UTF-8 text: 2 byte(s), X'FF00'"),
        "{said}"
    );
    // A prune reading the same id through SQLite's own conversion says it as well.
    let (code, out, err) = crate::lgcodec(
        &[
            "store",
            "prune",
            path.to_str().expect("utf-8"),
            "--keep-latest",
            "1",
            "--dry-run",
            "--json",
        ],
        &[],
    );
    assert_eq!(code, 2, "{err}");
    let error: Json = serde_json::from_str(out.trim()).expect("one JSON object");
    assert_eq!(error["kind"], "unreadable_row", "{out}");
    assert_eq!(error["error"].as_str(), Some(said), "{out}");
    // So do the commands that read every thread: inspect, export, copy.
    let store = path.to_str().expect("utf-8");
    let (backup, target) = (dir.join("b.jsonl"), dir.join("t.db"));
    for args in [
        vec!["store", "inspect", store],
        vec!["store", "export", store, backup.to_str().expect("utf-8")],
        vec!["store", "copy", store, target.to_str().expect("utf-8")],
    ] {
        let (code, _, err) = crate::lgcodec(&args, &[]);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
    }
    // The statements between backquotes, as pasted into sqlite3.
    let pasted: Vec<&str> = said.split('`').skip(1).step_by(2).collect();
    assert_eq!(pasted.len(), 3, "{said}");
    let conn = rusqlite::Connection::open(&path).expect("open");
    let found: i64 = conn
        .query_row(pasted[0], [], |r| r.get(0))
        .expect("the count runs");
    assert_eq!(found, 1, "{}", pasted[0]);
    for update in &pasted[1..] {
        conn.execute(&update.replace("NEW-ID", "t-renamed"), [])
            .expect("the update runs");
    }
    let (code, out, err) = crate::lgcodec(
        &["store", "stats", path.to_str().expect("utf-8"), "--json"],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"t-renamed\""), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
