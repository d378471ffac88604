//! Bounded memory of the store sweeps: `audit` and `encrypt` of a store of large values
//! hold about one page's byte budget, not the batch's row count times the value size;
//! a `copy` of large checkpoints holds a few batches of its byte budget, not the store.
//!
//! This test binary installs a counting global allocator and checks the peak number of
//! bytes live while each sweep runs over a real SQLite file (and a real Postgres server
//! with `LGCODEC_TEST_PG_URL`). It holds one `#[test]` so no other test's allocations
//! run concurrently and disturb the count.
#![cfg(all(feature = "sqlite", feature = "postgres"))]
// A global allocator is an `unsafe impl` by nature; everything else stays safe.
#![allow(unsafe_code)]

#[path = "support/counting.rs"]
mod counting;

use counting::peak_during;
use langgraph_codec::crypto::AesKey;
use langgraph_codec::saver::sqlite::SqliteSaver;
use langgraph_codec::saver::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver,
};
use langgraph_codec::store::{
    self, AnyStore, AuditOptions, CopyOptions, ExportOptions, HistoryFormat, ImportOptions,
    PruneOptions, StatsOptions, Store, StoreKeys, SweepOptions, ThreadOrder,
};
use langgraph_codec::Value;

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

const MIB: usize = 1 << 20;
/// Values in the store: 48 of 1 MiB, fewer than one batch's 500 rows, three times the
/// default 16 MiB page budget.
const ROWS: usize = 48;

/// A `msgpack` value of `len` bytes: a bin 32 header and bytes that do not compress.
fn value(len: usize, seed: u8) -> Vec<u8> {
    let body = len - 5;
    let mut out = Vec::with_capacity(len);
    out.push(0xc6);
    out.extend_from_slice(&u32::try_from(body).expect("fits").to_be_bytes());
    let mut x = u32::from(seed) | 1;
    for _ in 0..body {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        out.push(x as u8);
    }
    out
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn keys() -> StoreKeys {
    StoreKeys::new(AesKey::new(b"new-key-16-bytes").expect("key"))
}

/// Peaks of the sweeps (audit, encrypt) and of the backup (export, import).
struct Peaks {
    audit: usize,
    encrypt: usize,
    export: usize,
    import: usize,
}

/// Runs export (to `backup`), audit, encrypt, and import of the backup into `restore`,
/// with default options; the peak of each.
fn peaks(location: &str, backup: &std::path::Path, restore: &str) -> Peaks {
    let rt = rt();
    let (exported, export_peak) = peak_during(|| {
        rt.block_on(async {
            let mut file = std::io::BufWriter::new(std::fs::File::create(backup)?);
            let report = store::export(
                &AnyStore::open(location).await?,
                &mut file,
                &ExportOptions::new(),
            )
            .await?;
            std::io::Write::flush(&mut file)?;
            Ok::<_, Box<dyn std::error::Error>>(report)
        })
    });
    assert_eq!(exported.expect("export").writes as usize, ROWS);
    let (imported, import_peak) = peak_during(|| {
        rt.block_on(async {
            let mut input = std::io::BufReader::new(std::fs::File::open(backup)?);
            let report =
                store::import(&mut input, "backup", restore, &ImportOptions::new()).await?;
            Ok::<_, Box<dyn std::error::Error>>(report)
        })
    });
    let imported = imported.expect("import");
    assert!(imported.complete, "{imported:?}");
    assert_eq!(imported.inserted as usize, ROWS);
    let (audit, audit_peak) = peak_during(|| {
        rt.block_on(async {
            store::audit(&Store::open(location).await?, &keys(), &AuditOptions::new()).await
        })
    });
    let audit = audit.expect("audit");
    assert_eq!(audit.totals.clear.rows as usize, ROWS, "{:?}", audit.totals);
    let (report, encrypt_peak) = peak_during(|| {
        rt.block_on(async {
            store::encrypt(
                &Store::open_for_writing(location).await?,
                &keys(),
                &SweepOptions::new(),
            )
            .await
        })
    });
    let report = report.expect("encrypt");
    assert!(report.complete, "{report:?}");
    assert_eq!(report.rewritten.rows as usize, ROWS);
    Peaks {
        audit: audit_peak,
        encrypt: encrypt_peak,
        export: export_peak,
        import: import_peak,
    }
}

/// What the sweeps may hold at most, in pages of the default budget (16 MiB plus one
/// value): audit one page and the database library's read buffer; encrypt the old
/// bytes its compare-and-swap sends and the rewrites (two pages), and on Postgres the
/// bind message carrying both, whose buffer doubles as it grows (up to four more).
/// A sweep that reads a whole batch of 500 rows holds the store's 48 MiB that many
/// times over.
const AUDIT_LIMIT: usize = 32 * MIB;
/// A backup page or batch: its values as base64 text (4/3 of a page) and the JSON
/// line being written or parsed.
const BACKUP_LIMIT: usize = 40 * MIB;
const ENCRYPT_LIMIT_SQLITE: usize = 48 * MIB;
const ENCRYPT_LIMIT_POSTGRES: usize = 112 * MIB;

fn check(backend: &str, p: &Peaks, encrypt_limit: usize) {
    println!(
        "{backend}: peaks over {ROWS} MiB of values: audit {} MiB, encrypt {} MiB, export {} MiB, import {} MiB",
        p.audit / MIB,
        p.encrypt / MIB,
        p.export / MIB,
        p.import / MIB
    );
    assert!(
        p.audit < AUDIT_LIMIT,
        "{backend} audit held {} bytes",
        p.audit
    );
    assert!(
        p.encrypt < encrypt_limit,
        "{backend} encrypt held {} bytes",
        p.encrypt
    );
    assert!(
        p.export < BACKUP_LIMIT,
        "{backend} export held {} bytes",
        p.export
    );
    assert!(
        p.import < BACKUP_LIMIT,
        "{backend} import held {} bytes",
        p.import
    );
}

#[test]
fn sweeps_of_large_values_hold_one_page_budget() {
    // The counter sees allocations: a 1 MiB vector must show up as ≥ 1 MiB.
    let (v, peak) = peak_during(|| vec![1u8; MIB]);
    assert!(peak >= MIB, "allocator not counting: {peak}");
    drop(v);

    let dir = tempfile::tempdir().expect("scratch");
    let path = dir.path().join("large.db");
    drop(
        SqliteSaver::builder(&path)
            .create(true)
            .open()
            .expect("saver"),
    );
    {
        let conn = rusqlite::Connection::open(&path).expect("open");
        for i in 0..ROWS {
            conn.execute(
                "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value) VALUES ('t', '', 'c1', 'task', '', ?1, 'ch', 'msgpack', ?2)",
                rusqlite::params![i as i64, value(MIB, i as u8)],
            )
            .expect("insert");
        }
    }
    let restore = dir.path().join("restored.db");
    check(
        "sqlite",
        &peaks(
            path.to_str().expect("utf-8"),
            &dir.path().join("sqlite.jsonl"),
            restore.to_str().expect("utf-8"),
        ),
        ENCRYPT_LIMIT_SQLITE,
    );
    let copy = copy_peak(dir.path());
    println!(
        "sqlite: copy of {COPIED} checkpoints of 1 MiB in batches of {} MiB: peak {} MiB",
        COPY_BATCH_BYTES / MIB,
        copy / MIB
    );
    assert!(copy < COPY_LIMIT, "copy held {copy} bytes");

    let (long, metadata) = long_thread(dir.path());
    check_long_thread("sqlite", &long, metadata);
    many_threads(dir.path());

    postgres(dir.path());
}

/// Checkpoints in the one thread of [`long_thread`].
const LONG_THREAD: usize = 20_000;

/// The peaks of a dry-run prune and of a thread's history on one thread of
/// [`LONG_THREAD`] checkpoints.
struct LongThread {
    prune: usize,
    history: usize,
    /// `AnyStore::write_history` of the same thread, the tree and then its JSON.
    walked: [usize; 2],
}

/// Both read every checkpoint's metadata and keep little of it (whether it holds a
/// label and the latest's; step and source). The history's peak, held whole, is the thread's ids,
/// under half its stored metadata: holding the rows and a copy of them took more than
/// the metadata's size. The prune reads the thread a window of 1,000 at a time
/// (uuid6-shaped ids, parents below their children): its peak is a window's, under a
/// thirty-second of the metadata (5 MiB on either backend with the thread planned
/// whole; 3 MiB on Postgres with each window's rows collected before they were read).
fn check_long_thread(backend: &str, p: &LongThread, metadata: usize) {
    println!(
        "{backend}: one thread of {LONG_THREAD} checkpoints holding {} MiB of metadata: dry-run prune peak {} KiB, history {} MiB, walked as a tree {} KiB, as JSON {} KiB",
        metadata / MIB,
        p.prune / 1024,
        p.history / MIB,
        p.walked[0] / 1024,
        p.walked[1] / 1024
    );
    assert!(
        p.prune < metadata / 32,
        "{backend}: prune held {} bytes for a thread of {metadata} bytes of metadata",
        p.prune
    );
    // Walked from the scratch file, a node at a time: under a quarter of the ids'
    // bytes alone (35 KiB on SQLite, 73 KiB on Postgres, where the history held
    // whole is 8 MiB).
    for (peak, format) in p.walked.iter().zip(["tree", "JSON"]) {
        assert!(
            *peak < LONG_THREAD * 36 / 4,
            "{backend}: the history walked as {format} held {peak} bytes"
        );
    }
    assert!(
        p.history < metadata / 2,
        "{backend}: history held {} bytes for a thread of {metadata} bytes of metadata",
        p.history
    );
}

/// The peaks of [`long_thread_peaks`] over a SQLite store of one thread of
/// [`LONG_THREAD`] checkpoints, each with 2 KiB of metadata (as the `writes` older
/// LangGraph releases kept there), and the metadata's stored bytes.
fn long_thread(dir: &std::path::Path) -> (LongThread, usize) {
    let path = dir.join("long-thread.db");
    drop(
        SqliteSaver::builder(&path)
            .create(true)
            .open()
            .expect("saver"),
    );
    let mut stored = 0;
    {
        let mut conn = rusqlite::Connection::open(&path).expect("open");
        let tx = conn.transaction().expect("transaction");
        for i in 0..LONG_THREAD {
            let metadata = format!(
                r#"{{"source":"loop","step":{i},"parents":{{}},"writes":{{"agent":{{"note":"{}"}}}}}}"#,
                "x".repeat(2048)
            );
            stored += metadata.len();
            tx.execute(
                "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) VALUES ('long', '', ?1, ?2, 'msgpack', x'80', ?3)",
                rusqlite::params![
                    uuid6_like(i),
                    (i > 0).then(|| uuid6_like(i - 1)),
                    metadata.into_bytes()
                ],
            )
            .expect("insert");
        }
        tx.commit().expect("commit");
    }
    (long_thread_peaks(path.to_str().expect("utf-8")), stored)
}

/// The `i`th id of [`long_thread`]: a uuid6's shape, times in 2024 (so the thread is
/// pruned a window at a time, as one LangGraph wrote would be).
fn uuid6_like(i: usize) -> String {
    format!("{:08x}-0000-6000-8000-000000000000", 0x1ef0_0000 + i)
}

/// The peaks of a dry-run `prune --keep-latest 1` and of `AnyStore::history` on the
/// store at `location`, one thread (`long`) of [`LONG_THREAD`] checkpoints.
fn long_thread_peaks(location: &str) -> LongThread {
    let (history, history_peak) = peak_during(|| {
        rt().block_on(async { AnyStore::open(location).await?.history("long").await })
    });
    let history = history.expect("history");
    assert_eq!(history.nodes.len(), LONG_THREAD);
    assert!(history.nodes.iter().all(|n| n.step.is_some()));
    // Held whole, drawn and written as JSON: what the walk from the scratch file
    // must write the same of.
    let want = [
        history.render().len(),
        serde_json::to_string(&history).expect("json").len(),
    ];
    drop(history);
    let mut walked = [0; 2];
    for (i, format) in [HistoryFormat::Tree, HistoryFormat::Json]
        .into_iter()
        .enumerate()
    {
        let mut out = Counted(0);
        let (counts, peak) = peak_during(|| {
            rt().block_on(async {
                AnyStore::open(location)
                    .await?
                    .write_history("long", None, format, &mut out)
                    .await
            })
        });
        assert_eq!(counts.expect("walk").checkpoints, LONG_THREAD as u64);
        assert_eq!(out.0, want[i], "{format:?}: bytes written");
        walked[i] = peak;
    }
    let (report, prune) = peak_during(|| {
        rt().block_on(store::prune(
            location,
            &StoreKeys::none(),
            &PruneOptions::new().keep_latest(1).dry_run(true),
        ))
    });
    let report = report.expect("prune");
    assert_eq!(
        (report.checkpoints_deleted, report.checkpoints_kept),
        (LONG_THREAD as u64 - 1, 1),
        "{report:?}"
    );
    LongThread {
        prune,
        history: history_peak,
        walked,
    }
}

/// An output that counts the bytes written to it and keeps none.
struct Counted(usize);

impl std::io::Write for Counted {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Threads in the store of [`many_threads`].
const MANY_THREADS: usize = 20_000;

/// `stats` of a store of [`MANY_THREADS`] threads: with every thread handed over as it
/// is counted (`StatsOptions::on_thread`, what `lgcodec store stats` lists by default)
/// it holds less than the thread ids' own bytes, and hands over each thread once, in
/// id order, their sizes adding up to the totals; held in the report, the same threads
/// take more than the ids' bytes (the measure tells the two apart). Handed over in
/// size order (`StatsOptions::sorted`, `lgcodec store stats --sort size`), each comes
/// once, largest first and ties by id, and the heap again holds less than the ids
/// (they are sorted in SQLite's scratch file: SQLite's own pages, at most its
/// `cache_size`, are not on this heap).
fn many_threads(dir: &std::path::Path) {
    let path = dir.join("many-threads.db");
    drop(
        SqliteSaver::builder(&path)
            .create(true)
            .open()
            .expect("saver"),
    );
    let id = |i: usize| format!("thread-{i:05}");
    {
        let mut conn = rusqlite::Connection::open(&path).expect("open");
        let tx = conn.transaction().expect("transaction");
        for i in 0..MANY_THREADS {
            tx.execute(
                "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, type, checkpoint, metadata) VALUES (?1, '', 'c1', 'msgpack', x'80', CAST('{\"n\":\"' || hex(zeroblob(?2)) || '\"}' AS BLOB))",
                rusqlite::params![id(i), (i * 7919) % 50],
            )
            .expect("insert");
        }
        tx.commit().expect("commit");
    }
    let ids_bytes = (0..MANY_THREADS).map(|i| id(i).len()).sum::<usize>();
    let location = path.to_str().expect("utf-8");
    // (threads handed over, their bytes, in order so far, the last id).
    let seen = std::sync::Arc::new(std::sync::Mutex::new((0u64, 0u64, true, String::new())));
    let sink = std::sync::Arc::clone(&seen);
    let options = StatsOptions::new().on_thread(move |thread, size| {
        let mut s = sink.lock().expect("lock");
        s.0 += 1;
        s.1 += size.total_bytes;
        s.2 &= s.3.as_str() < thread;
        s.3.clear();
        s.3.push_str(thread);
    });
    let (streamed, streamed_peak) = peak_during(|| {
        rt().block_on(async {
            AnyStore::open(location)
                .await?
                .stats(&StoreKeys::none(), &options)
                .await
        })
    });
    let streamed = streamed.expect("stats");
    let (held, held_peak) = peak_during(|| {
        rt().block_on(async {
            AnyStore::open(location)
                .await?
                .stats(&StoreKeys::none(), &StatsOptions::new())
                .await
        })
    });
    let held = held.expect("stats");
    // (threads handed over, their bytes, in order so far, the last size and id).
    let sorted = std::sync::Arc::new(std::sync::Mutex::new((
        0u64,
        0u64,
        true,
        u64::MAX,
        String::new(),
    )));
    let sink = std::sync::Arc::clone(&sorted);
    let options = StatsOptions::new().sorted(ThreadOrder::Size, move |thread, size| {
        let mut s = sink.lock().expect("lock");
        s.0 += 1;
        s.1 += size.total_bytes;
        s.2 &= s.3 > size.total_bytes || (s.3 == size.total_bytes && s.4.as_str() < thread);
        s.3 = size.total_bytes;
        s.4.clear();
        s.4.push_str(thread);
    });
    let (in_order, sorted_peak) = peak_during(|| {
        rt().block_on(async {
            AnyStore::open(location)
                .await?
                .stats(&StoreKeys::none(), &options)
                .await
        })
    });
    let in_order = in_order.expect("stats");
    println!(
        "sqlite: stats of {MANY_THREADS} threads ({ids_bytes} bytes of ids): handed over, peak {streamed_peak} bytes; held, {held_peak} bytes; sorted, {sorted_peak} bytes"
    );
    let seen = seen.lock().expect("lock");
    assert_eq!(
        (seen.0, seen.1, seen.2),
        (MANY_THREADS as u64, streamed.total.total_bytes, true),
        "every thread once, in id order, adding up to the total"
    );
    assert!(streamed.per_thread.is_empty());
    assert_eq!(streamed.threads, MANY_THREADS as u64);
    assert_eq!(held.per_thread.len(), MANY_THREADS);
    assert!(
        streamed_peak < ids_bytes,
        "stats handing threads over held {streamed_peak} bytes (the ids alone are {ids_bytes})"
    );
    assert!(held_peak > ids_bytes, "held {held_peak}");
    let sorted = sorted.lock().expect("lock");
    assert_eq!(
        (sorted.0, sorted.1, sorted.2),
        (MANY_THREADS as u64, in_order.total.total_bytes, true),
        "every thread once, largest first then by id, adding up to the total"
    );
    assert!(in_order.per_thread.is_empty());
    assert!(
        sorted_peak < ids_bytes,
        "stats handing threads over sorted held {sorted_peak} bytes (the ids alone are {ids_bytes})"
    );
    // `audit` per thread: handed over (`AuditOptions::on_thread`) each once, in id
    // order, adding up to the totals, the heap a tenth of what holding them in the
    // report (`per_thread`) takes, which is over the ids' bytes (the audit's page of
    // 1,000 rows is most of what it holds: 0.2 MB).
    let seen = std::sync::Arc::new(std::sync::Mutex::new((0u64, 0u64, true, String::new())));
    let sink = std::sync::Arc::clone(&seen);
    let options = AuditOptions::new().on_thread(move |thread, counts| {
        let mut s = sink.lock().expect("lock");
        s.0 += 1;
        s.1 += counts.total.rows;
        s.2 &= s.3.as_str() < thread;
        s.3.clear();
        s.3.push_str(thread);
    });
    let (audited, audit_peak) = peak_during(|| {
        rt().block_on(async {
            store::audit(&Store::open(location).await?, &StoreKeys::none(), &options).await
        })
    });
    let audited = audited.expect("audit");
    let (audit_held, audit_held_peak) = peak_during(|| {
        rt().block_on(async {
            store::audit(
                &Store::open(location).await?,
                &StoreKeys::none(),
                &AuditOptions::new().per_thread(true),
            )
            .await
        })
    });
    let audit_held = audit_held.expect("audit");
    println!(
        "sqlite: audit of {MANY_THREADS} threads per thread: handed over, peak {audit_peak} bytes; held, {audit_held_peak} bytes"
    );
    let seen = seen.lock().expect("lock");
    assert_eq!(
        (seen.0, seen.1, seen.2),
        (MANY_THREADS as u64, audited.totals.total.rows, true),
        "every thread once, in id order, adding up to the totals"
    );
    assert!(audited.threads.is_empty());
    assert_eq!(audit_held.threads.len(), MANY_THREADS);
    assert!(
        audit_peak < audit_held_peak / 10,
        "audit handing threads over held {audit_peak} bytes (holding them, {audit_held_peak})"
    );
    assert!(audit_held_peak > ids_bytes, "audit held {audit_held_peak}");
}

/// Checkpoints in the copy's source, one thread, each holding a channel value of 1 MiB
/// that does not compress: 24 batches of the copy's budget.
const COPIED: usize = 96;
const COPY_BATCH_BYTES: usize = 4 * MIB;
/// A copy holds five batches at most (`store::copy`'s docs: the one written, the one
/// read back, the one done with until the reading drops it, one read and waiting, one
/// being read), each up to its budget plus one checkpoint (25 MiB in all), and a
/// checkpoint's row and decoded value as it is read and written: under 32 MiB (12 MiB
/// measured). A copy that kept the batches it is done with holds the whole 96 MiB.
const COPY_LIMIT: usize = 32 * MIB;

/// The peak of a copy SQLite → SQLite of [`COPIED`] checkpoints of 1 MiB, in batches of
/// [`COPY_BATCH_BYTES`], every one verified.
fn copy_peak(dir: &std::path::Path) -> usize {
    let source = dir.join("copy-source.db");
    let target = dir.join("copy-target.db");
    rt().block_on(async {
        let saver = SqliteSaver::builder(&source)
            .create(true)
            .open()
            .expect("saver");
        let mut config = CheckpointConfig::new("t");
        for i in 0..COPIED {
            let mut cp = Checkpoint::now(i as i64);
            let bytes = value(MIB, i as u8);
            cp.channel_values
                .insert("blob".into(), Value::from(bytes::Bytes::from(bytes)));
            let mut versions = ChannelVersions::new();
            versions.insert("blob".into(), ChannelVersion::from((i + 1) as i64));
            cp.channel_versions = versions.clone();
            config = saver
                .put(
                    &config,
                    &cp,
                    &CheckpointMetadata::new("loop", i as i64),
                    &versions,
                )
                .await
                .expect("put");
        }
    });
    let (source, target) = (
        source.to_str().expect("utf-8").to_owned(),
        target.to_str().expect("utf-8").to_owned(),
    );
    let (report, peak) = peak_during(|| {
        rt().block_on(store::copy(
            &source,
            &target,
            &StoreKeys::none(),
            &CopyOptions::new().batch_bytes(COPY_BATCH_BYTES),
        ))
    });
    let report = report.expect("copy");
    assert_eq!(report.verified as usize, COPIED, "{report:?}");
    assert!(report.mismatches.is_empty(), "{report:?}");
    assert!(report.batches >= 20, "{report:?}");
    peak
}

/// A client of the test server; its connection runs on a spawned task.
async fn admin(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    client
}

fn postgres(dir: &std::path::Path) {
    use langgraph_codec::saver::postgres::PostgresSaver;
    let Some(base) = std::env::var("LGCODEC_TEST_PG_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        println!("skipped: LGCODEC_TEST_PG_URL is not set (no PostgreSQL server to test against)");
        return;
    };
    let schema = format!("bounded_memory_{}", std::process::id());
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}options=-csearch_path%3D{schema}");
    let restore_schema = format!("{schema}_restored");
    let restore = format!("{base}{sep}options=-csearch_path%3D{restore_schema}");
    rt().block_on(async {
        let client = admin(&base).await;
        client
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}; \
                 DROP SCHEMA IF EXISTS {restore_schema} CASCADE; CREATE SCHEMA {restore_schema}"
            ))
            .await
            .expect("schema");
        let saver = PostgresSaver::builder_from_url(&url)
            .expect("url")
            .build()
            .expect("saver");
        saver.setup().await.expect("setup");
        drop(saver);
        for i in 0..ROWS {
            client
                .execute(
                    &format!(
                        "INSERT INTO {schema}.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) VALUES ('t', '', 'c1', 'task', '', $1, 'ch', 'msgpack', $2)"
                    ),
                    &[&(i as i32), &value(MIB, i as u8)],
                )
                .await
                .expect("insert");
        }
    });
    let peaks = peaks(&url, &dir.join("postgres.jsonl"), &restore);
    // The long thread of `long_thread` (its ids `uuid6_like`'s: 518979584 is
    // 0x1ef00000), written by the server.
    let metadata = rt().block_on(async {
        let client = admin(&base).await;
        client
            .execute(
                &format!(
                    "INSERT INTO {schema}.checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) \
                     SELECT 'long', '', to_hex(518979584 + i) || '-0000-6000-8000-000000000000', \
                     CASE WHEN i > 0 THEN to_hex(518979584 + i - 1) || '-0000-6000-8000-000000000000' END, NULL, \
                     '{{\"v\": 4, \"channel_values\": {{}}, \"channel_versions\": {{}}, \"versions_seen\": {{}}}}'::jsonb, \
                     jsonb_build_object('source', 'loop', 'step', i, 'parents', '{{}}'::jsonb, \
                       'writes', jsonb_build_object('agent', jsonb_build_object('note', repeat('x', 2048)))) \
                     FROM generate_series(0, $1 - 1) AS i"
                ),
                &[&(LONG_THREAD as i32)],
            )
            .await
            .expect("insert");
        let row = client
            .query_one(
                &format!("SELECT sum(length(metadata::text))::int8 FROM {schema}.checkpoints"),
                &[],
            )
            .await
            .expect("sum");
        usize::try_from(row.get::<_, i64>(0)).expect("size")
    });
    let long = long_thread_peaks(&url);
    rt().block_on(async {
        admin(&base)
            .await
            .batch_execute(&format!(
                "DROP SCHEMA {schema} CASCADE; DROP SCHEMA {restore_schema} CASCADE"
            ))
            .await
            .expect("drop");
    });
    check("postgres", &peaks, ENCRYPT_LIMIT_POSTGRES);
    check_long_thread("postgres", &long, metadata);
}
