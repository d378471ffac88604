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
