//! A copy SQLite → Postgres of clear rows of Python's SQLite layout: channel values go
//! into Postgres as Python's `PostgresSaver.put` splits them (inline JSONB or a blob of
//! `dumps_typed`'s bytes), checked by Python (`vectors/store_maint/split_blobs.py`), and
//! each checkpoint is verified against what the target holds.
//!
//! Reads `LGCODEC_TEST_PG_URL` and `LGCODEC_PYTHON` (skip lines without them).

use langgraph_codec::store::{copy, CopyOptions, StoreKeys};

use crate::support::{self, pg, scratch};

/// A store Python's `SqliteSaver` wrote (3 threads of 4 checkpoints, every kind of
/// value `put` sorts); its path.
fn python_store() -> Option<(String, String)> {
    let py = support::python()?;
    let path = scratch("split").join("split.sqlite");
    let path = path.to_str().expect("utf-8").to_owned();
    support::python_script(&py, "split_blobs.py", &["make", &path]);
    Some((py, path))
}

/// [`python_store`] copied into a new Postgres database `name`; Python and its URL.
async fn python_store_in_postgres(name: &str) -> Option<(String, String)> {
    let url = pg::url()?;
    let (py, python) = python_store()?;
    let source = pg::fresh(&url, name).await;
    let there = copy(&python, &source, &StoreKeys::none(), &CopyOptions::new())
        .await
        .expect("into Postgres");
    assert_eq!(there.verified, 12, "{:?}", there.mismatches);
    Some((py, source))
}

/// Each thread a mismatch names, with the first two words of why, once.
fn reasons(mismatches: &[String]) -> Vec<(String, String)> {
    let mut threads: Vec<(String, String)> = mismatches
        .iter()
        .map(|m| {
            let thread = m.split('/').next().unwrap_or_default().to_owned();
            let why = m.rsplit(": ").next().unwrap_or_default();
            (thread, why.split(' ').take(2).collect::<Vec<_>>().join(" "))
        })
        .collect();
    threads.sort();
    threads.dedup();
    threads
}

/// `source` copied in clear into `target` in batches of 5 checkpoints.
async fn copy_by_fives(source: &str, target: &str) -> langgraph_codec::store::CopyReport {
    copy(
        source,
        target,
        &StoreKeys::none(),
        &CopyOptions::new().batch_size(5),
    )
    .await
    .expect("copy")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_into_postgres_stores_channel_values_as_pythons_put_does() {
    let Some(url) = pg::url() else { return };
    let Some((py, source)) = python_store() else {
        return;
    };
    let target = pg::fresh(&url, "split_as_python").await;
    let report = copy_by_fives(&source, &target).await;
    assert_eq!(
        (report.copied, report.verified, report.writes_inserted),
        (12, 12, 24),
        "{:?}",
        report.mismatches
    );
    // Expected from Python: each value where and as its `put` stores it.
    let out = support::python_script(&py, "split_blobs.py", &["check", &source, &target]);
    assert!(
        out.contains(r#"{"checkpoints": 12, "blobs": 48, "inline": 60}"#),
        "{out}"
    );
    support::python_reads_equal(&py, false, &source, &[&target]);
}

/// What the target holds is compared with what was sent, not taken on trust: triggers
/// change rows as they go in (a blob of one thread, an inline value of another, a
/// write of a third), and those checkpoints, and only those, are reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_into_postgres_reports_rows_the_target_holds_otherwise_than_sent() {
    let Some(url) = pg::url() else { return };
    let Some((_, source)) = python_store() else {
        return;
    };
    let target = pg::fresh_set_up(&url, "split_changed").await;
    pg::connect(&target)
        .await
        .batch_execute(
            r#"
CREATE FUNCTION change_blob() RETURNS trigger AS $$ BEGIN
  IF NEW.thread_id = 'split-1' AND NEW.channel = 'raw' THEN NEW.blob := NEW.blob || '\x00'::bytea; END IF;
  RETURN NEW; END $$ LANGUAGE plpgsql;
CREATE TRIGGER change_blob BEFORE INSERT ON checkpoint_blobs FOR EACH ROW EXECUTE FUNCTION change_blob();
CREATE FUNCTION change_inline() RETURNS trigger AS $$ BEGIN
  IF NEW.thread_id = 'split-2' THEN
    NEW.checkpoint := jsonb_set(NEW.checkpoint, '{channel_values,text}', '"changed"');
  END IF;
  RETURN NEW; END $$ LANGUAGE plpgsql;
CREATE TRIGGER change_inline BEFORE INSERT ON checkpoints FOR EACH ROW EXECUTE FUNCTION change_inline();
CREATE FUNCTION change_write() RETURNS trigger AS $$ BEGIN
  IF NEW.thread_id = 'split-0' AND NEW.channel = 'raw' THEN NEW.blob := 'other'::bytea; END IF;
  RETURN NEW; END $$ LANGUAGE plpgsql;
CREATE TRIGGER change_write BEFORE INSERT ON checkpoint_writes FOR EACH ROW EXECUTE FUNCTION change_write();
"#,
        )
        .await
        .expect("triggers");
    let report = copy_by_fives(&source, &target).await;
    assert_eq!(
        (report.copied, report.verified),
        (12, 0),
        "{:?}",
        report.mismatches
    );
    assert_eq!(
        reasons(&report.mismatches),
        [
            ("split-0".to_owned(), "pending writes".to_owned()),
            ("split-1".to_owned(), "checkpoint differs".to_owned()),
            ("split-2".to_owned(), "checkpoint differs".to_owned()),
        ],
        "{:?}",
        report.mismatches
    );
    assert_eq!(report.mismatches.len(), 12);
}

/// A blob the target held before the copy, at a key the copy also writes, with other
/// bytes: the copy leaves it as it is (a key is never overwritten) and reads it back,
/// so the checkpoints that refer to it, and only those, are reported. (The blobs the
/// copy's own `COPY` stored, into a table without triggers, are the bytes sent.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_into_postgres_reports_a_blob_the_target_held_before_with_other_bytes() {
    let Some(url) = pg::url() else { return };
    let Some((_, source)) = python_store() else {
        return;
    };
    // A copy as it should go, to learn a blob's key and bytes.
    let plain = pg::fresh(&url, "split_held_plain").await;
    let first = copy_by_fives(&source, &plain).await;
    assert_eq!(first.verified, 12, "{:?}", first.mismatches);
    let row = pg::connect(&plain)
        .await
        .query_one(
            "SELECT thread_id, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs
             WHERE thread_id = 'split-1' ORDER BY channel, version LIMIT 1",
            &[],
        )
        .await
        .expect("a blob of split-1");
    let (thread, ns, channel, version, ty): (String, String, String, String, String) =
        (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4));
    let mut other: Vec<u8> = row.get(5);
    other.push(0);
    // The same blob with other bytes, there before the copy.
    let target = pg::fresh_set_up(&url, "split_held").await;
    pg::connect(&target)
        .await
        .execute(
            "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[&thread, &ns, &channel, &version, &ty, &other],
        )
        .await
        .expect("the blob there before");
    let report = copy_by_fives(&source, &target).await;
    assert_eq!(report.copied, 12, "{:?}", report.mismatches);
    assert!(!report.mismatches.is_empty(), "the blob was taken on trust");
    // Named by each checkpoint of split-1 that refers to it (its bytes, one byte
    // longer, no longer read as a value).
    assert!(
        report.mismatches.iter().all(|m| m.starts_with("split-1/")),
        "{:?}",
        report.mismatches
    );
    assert_eq!(report.verified + report.mismatches.len() as u64, 12);
    let kept: Vec<u8> = pg::connect(&target)
        .await
        .query_one(
            "SELECT blob FROM checkpoint_blobs WHERE thread_id = $1 AND checkpoint_ns = $2
             AND channel = $3 AND version = $4",
            &[&thread, &ns, &channel, &version],
        )
        .await
        .expect("the blob")
        .get(0);
    assert_eq!(kept, other, "a key the target held is never overwritten");
}

/// A write row the Postgres target held before the copy under one of the source's
/// checkpoints, at a key the copy does not write: the checkpoint, which Python would
/// now read with one pending write more, is reported, and only it. (The write rows of
/// a batch whose every write row went in at a free key, into a table without
/// triggers, are counted rather than read.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_into_postgres_reports_a_write_the_target_held_before_under_a_checkpoint() {
    let Some(url) = pg::url() else { return };
    let Some((_, source)) = python_store() else {
        return;
    };
    let (thread, ns, id) = second_checkpoint_of(&source, "split-1");
    let target = pg::fresh_set_up(&url, "split_extra_write").await;
    pg::connect(&target)
        .await
        .execute(
            "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
             VALUES ($1, $2, $3, 'a-task-of-its-own', '', 0, 'raw', 'msgpack', '\\xc0'::bytea)",
            &[&thread, &ns, &id],
        )
        .await
        .expect("the write there before");
    let report = copy_by_fives(&source, &target).await;
    assert_only_checkpoint_reported(&report, &thread, &id);
}

/// Into SQLite too, what `put` wrote is compared with what the file holds, not taken
/// on trust: triggers change rows as they go in (the metadata of one thread, a write
/// of another, and drop one write of a third thread's first checkpoint), and those
/// checkpoints, and only those, are reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_into_sqlite_reports_rows_the_target_holds_otherwise_than_written() {
    let Some((_, source)) = python_store_in_postgres("split_back").await else {
        return;
    };
    let target = scratch("split_back").join("target.sqlite");
    drop(langgraph_codec::saver::sqlite::SqliteSaver::create(&target).expect("tables"));
    rusqlite::Connection::open(&target)
        .expect("open")
        .execute_batch(
            "CREATE TRIGGER change_metadata AFTER INSERT ON checkpoints WHEN NEW.thread_id = 'split-1' \
             BEGIN UPDATE checkpoints SET metadata = json_set(metadata, '$.step', 99) \
             WHERE rowid = NEW.rowid; END; \
             CREATE TRIGGER change_write AFTER INSERT ON writes WHEN NEW.thread_id = 'split-0' AND NEW.channel = 'raw' \
             BEGIN UPDATE writes SET value = x'c4056f74686572' WHERE rowid = NEW.rowid; END; \
             CREATE TRIGGER drop_write AFTER INSERT ON writes WHEN NEW.thread_id = 'split-2' AND NEW.task_id = 'task-0' \
             AND NEW.channel = 'raw' BEGIN DELETE FROM writes WHERE rowid = NEW.rowid; END;",
        )
        .expect("triggers");
    let target = target.to_str().expect("utf-8").to_owned();
    let report = copy_by_fives(&source, &target).await;
    assert_eq!(
        (report.copied, report.verified),
        (12, 3),
        "{:?}",
        report.mismatches
    );
    assert_eq!(
        reasons(&report.mismatches),
        [
            ("split-0".to_owned(), "pending writes".to_owned()),
            ("split-1".to_owned(), "metadata differs".to_owned()),
            ("split-2".to_owned(), "pending writes".to_owned()),
        ],
        "{:?}",
        report.mismatches
    );
}

/// A write row the SQLite target held before the copy under one of the source's
/// checkpoints, at a key the copy does not write: the copy's own rows all go in, and
/// the checkpoint, which Python would now read with one pending write more, is
/// reported, and only it. (A batch whose rows all went in, into tables without
/// triggers, is not read back row by row; the write rows under its keys are counted.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_into_sqlite_reports_a_write_the_target_held_before_under_a_checkpoint() {
    let Some((_, source)) = python_store() else {
        return;
    };
    let (thread, ns, id) = second_checkpoint_of(&source, "split-1");
    let target = scratch("split_extra_write").join("target.sqlite");
    drop(langgraph_codec::saver::sqlite::SqliteSaver::create(&target).expect("tables"));
    rusqlite::Connection::open(&target)
        .expect("open")
        .execute(
            "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)
             VALUES (?1, ?2, ?3, 'a-task-of-its-own', '', 0, 'raw', 'msgpack', x'c0')",
            [&thread, &ns, &id],
        )
        .expect("the write there before");
    let report = copy_by_fives(&source, target.to_str().expect("utf-8")).await;
    assert_only_checkpoint_reported(&report, &thread, &id);
}

/// The key of the second checkpoint of `thread` in the SQLite store at `source`.
fn second_checkpoint_of(source: &str, thread: &str) -> (String, String, String) {
    rusqlite::Connection::open(source)
        .expect("the source")
        .query_row(
            "SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints
             WHERE thread_id = ?1 ORDER BY checkpoint_id LIMIT 1 OFFSET 1",
            [thread],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("a checkpoint")
}

/// Every checkpoint copied, and only the one `(thread, id)` reported.
fn assert_only_checkpoint_reported(
    report: &langgraph_codec::store::CopyReport,
    thread: &str,
    id: &str,
) {
    assert_eq!(
        (report.copied, report.verified),
        (12, 11),
        "{:?}",
        report.mismatches
    );
    assert_eq!(report.mismatches.len(), 1, "{:?}", report.mismatches);
    assert!(
        report.mismatches[0].starts_with(&format!("{thread}/"))
            && report.mismatches[0].contains(id),
        "{:?}",
        report.mismatches
    );
}

/// Out of Postgres into SQLite, the values Postgres holds as clear blobs go into the
/// SQLite row as their bytes, never decoded: Python checks that each reads as the
/// Postgres reader reads it (the same type and value) and that the row is what its
/// serializer writes of what it holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_into_sqlite_writes_blob_values_as_pythons_serializer_does() {
    let Some((py, source)) = python_store_in_postgres("split_out").await else {
        return;
    };
    let none = StoreKeys::none();
    let target = scratch("split_out").join("target.sqlite");
    let target = target.to_str().expect("utf-8").to_owned();
    let report = copy_by_fives(&source, &target).await;
    assert_eq!(
        (report.copied, report.verified, report.writes_inserted),
        (12, 12, 24),
        "{:?}",
        report.mismatches
    );
    // Run again, each checkpoint is there already and read back whole (its values and
    // writes decoded) to be compared with the source's.
    let again = copy(&source, &target, &none, &CopyOptions::new().batch_size(5))
        .await
        .expect("copy again");
    assert_eq!(
        (again.already_there, again.verified),
        (12, 12),
        "{:?}",
        again.mismatches
    );
    // Expected from Python: its Postgres reader's values, its serializer's bytes.
    let out = support::python_script(&py, "split_blobs.py", &["check-back", &source, &target]);
    assert!(
        out.contains(r#"{"checkpoints": 12, "values": 108}"#),
        "{out}"
    );
    support::python_reads_equal(&py, false, &source, &[&target]);
}

/// Into SQLite, each batch is read back a thread at a time by a range of keys in the
/// file's (bytewise) order, whatever order the source gives them in. A Postgres source
/// whose collation is ICU's `en-US` lists namespace `a` before `B`, where bytewise `B`
/// comes first: thread `split-0` is put there three times (namespaces ``, `a`, `B`),
/// and every one of its 12 checkpoints must be found and verified.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_into_sqlite_reads_back_keys_a_collation_orders_otherwise() {
    let Some(url) = pg::url() else { return };
    let Some((_, python)) = python_store() else {
        return;
    };
    let source = pg::fresh(&url, "split_icu").await;
    let db = source.rsplit('/').next().expect("database").to_owned();
    let admin = pg::connect(&url).await;
    for sql in [
        format!("DROP DATABASE \"{db}\" WITH (FORCE)"),
        format!(
            "CREATE DATABASE \"{db}\" TEMPLATE template0 LOCALE_PROVIDER icu \
             ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
        ),
    ] {
        admin.batch_execute(&sql).await.expect("an ICU database");
    }
    let none = StoreKeys::none();
    let into = copy(&python, &source, &none, &CopyOptions::new())
        .await
        .expect("into Postgres");
    assert_eq!(into.verified, 12, "{:?}", into.mismatches);
    let client = pg::connect(&source).await;
    for table in ["checkpoints", "checkpoint_blobs", "checkpoint_writes"] {
        client
            .batch_execute(&format!(
                "CREATE TEMP TABLE x AS SELECT * FROM {table} WHERE thread_id = 'split-0'; \
                 UPDATE x SET checkpoint_ns = 'a'; INSERT INTO {table} SELECT * FROM x; \
                 UPDATE x SET checkpoint_ns = 'B'; INSERT INTO {table} SELECT * FROM x; \
                 DROP TABLE x"
            ))
            .await
            .expect("namespaces a and B");
    }
    // The premise: the source lists `a` before `B`.
    let order: Vec<String> = client
        .query(
            "SELECT DISTINCT checkpoint_ns FROM checkpoints ORDER BY checkpoint_ns",
            &[],
        )
        .await
        .expect("namespaces")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(order, ["", "a", "B"]);
    let target = scratch("split_icu").join("target.sqlite");
    let target = target.to_str().expect("utf-8").to_owned();
    let report = copy(&source, &target, &none, &CopyOptions::new())
        .await
        .expect("copy");
    assert_eq!(
        (report.copied, report.verified, report.mismatches.len()),
        (20, 20, 0),
        "{:?}",
        report.mismatches
    );
    // The copies in `a` and `B` hold what the one in `` holds, byte for byte.
    let file = rusqlite::Connection::open(&target).expect("target");
    let same: i64 = file
        .query_row(
            "SELECT count(*) FROM checkpoints c JOIN checkpoints d ON d.thread_id = c.thread_id \
             AND d.checkpoint_ns = '' AND d.checkpoint_id = c.checkpoint_id \
             AND d.checkpoint = c.checkpoint AND d.metadata = c.metadata \
             WHERE c.checkpoint_ns IN ('a', 'B')",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(same, 8);
}
