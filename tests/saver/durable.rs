//! `DurableSaver`: the conformance kit in every mode (over `InMemorySaver` and a real
//! SQLite file, plain and encrypted), `exit`'s flush (only the final checkpoint and
//! its writes reach the store, as LangGraph's `exit` mode writes when a run ends), and
//! `async`'s queue: `put` returns before the store has it, reads wait for the
//! thread's queued writes, a full queue makes the caller wait, a failed write is kept
//! and reported, `flush` times out without losing anything, `shutdown`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
use langgraph_codec::saver::conformance;
use langgraph_codec::saver::durable::{Durability, DurableOptions, DurableSaver};
use langgraph_codec::saver::sqlite::SqliteSaver;
use langgraph_codec::saver::{
    async_trait, ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver, CheckpointTuple, InMemorySaver, ListOptions,
};
use langgraph_codec::{Error, ErrorKind, Result, Value};

const MODES: [Durability; 3] = [Durability::Sync, Durability::Async, Durability::Exit];
const SECOND: Duration = Duration::from_secs(10);

struct TempDir(tempfile::TempDir);

impl TempDir {
    fn new(tag: &str) -> Self {
        TempDir(
            tempfile::Builder::new()
                .prefix(&format!("lgcodec-durable-{tag}-"))
                .tempdir()
                .expect("temp dir"),
        )
    }
    fn file(&self, name: &str) -> std::path::PathBuf {
        self.0.path().join(name)
    }
}

fn aes() -> Arc<EncryptedSerializer> {
    Arc::new(
        EncryptedSerializer::from_aes_key(b"0123456789abcdef0123456789abcdef", AesMode::Eax)
            .expect("32-byte key"),
    )
}

fn wrap<S: CheckpointSaver + 'static>(inner: S, mode: Durability) -> DurableSaver<S> {
    DurableSaver::new(Arc::new(inner), mode).expect("inside a runtime")
}

async fn full<S, F>(name: &str, mut make: F)
where
    S: CheckpointSaver + 'static,
    F: FnMut() -> S,
{
    full_async(name, || {
        let inner = make();
        async move { inner }
    })
    .await;
}

async fn full_async<S, F, Fut>(name: &str, mut make: F)
where
    S: CheckpointSaver + 'static,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = S>,
{
    for mode in MODES {
        let label = format!("Durable[{}]<{name}>", mode.as_str());
        let report = conformance::run_conformance_named(&label, || {
            let inner = make();
            async move { wrap(inner.await, mode) }
        })
        .await;
        assert!(report.is_success(), "{report}");
        assert_eq!(report.conformance_level(), "FULL", "{label}");
        assert_eq!(report.passed(), 98, "{label}: {report}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_full_in_every_mode_over_memory() {
    full("InMemorySaver", InMemorySaver::new).await;
    full(
        "InMemorySaver+aes",
        || InMemorySaver::with_serializer(aes()),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_full_in_every_mode_over_a_sqlite_file() {
    let dir = TempDir::new("conf");
    let mut n = 0;
    full("SqliteSaver", || {
        n += 1;
        SqliteSaver::create(dir.file(&format!("plain-{n}.sqlite"))).expect("create")
    })
    .await;
    full("SqliteSaver+aes", || {
        n += 1;
        SqliteSaver::builder(dir.file(&format!("aes-{n}.sqlite")))
            .serializer(aes())
            .create(true)
            .open()
            .expect("create")
    })
    .await;
}

/// Over Postgres (feature `postgres`, `LGCODEC_TEST_PG_URL`), plain and encrypted.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_full_in_every_mode_over_postgres() {
    let Some(url) = pg_url() else { return };
    for encrypted in [false, true] {
        full_async(
            if encrypted {
                "PostgresSaver+aes"
            } else {
                "PostgresSaver"
            },
            || pg_saver(url.clone(), encrypted),
        )
        .await;
    }
}

#[cfg(feature = "postgres")]
use crate::support::pg::url as pg_url;

#[cfg(feature = "postgres")]
async fn pg_saver(url: String, encrypted: bool) -> langgraph_codec::saver::postgres::PostgresSaver {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let schema = format!(
        "t_durable_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    let mut b = langgraph_codec::saver::postgres::PostgresSaver::builder_from_url(&url)
        .expect("url")
        .schema(&schema);
    if encrypted {
        b = b.serializer(aes());
    }
    let s = b.build().expect("build");
    s.setup().await.expect("setup");
    s
}

// ---------------------------------------------------------------------------------
// exit

fn versions(pairs: &[(&str, i64)]) -> ChannelVersions {
    pairs
        .iter()
        .map(|(c, v)| ((*c).to_owned(), ChannelVersion::Int(*v)))
        .collect()
}

/// A checkpoint with the given channel values and versions.
fn checkpoint(id: &str, values: &[(&str, &str)], vers: &[(&str, i64)]) -> Checkpoint {
    let mut cp = Checkpoint::new(id, "2026-11-25T00:00:00+00:00");
    for (c, v) in values {
        cp.channel_values.insert((*c).to_owned(), Value::from(*v));
    }
    cp.channel_versions = versions(vers);
    cp
}

async fn ids(saver: &dyn CheckpointSaver, thread: &str) -> Vec<String> {
    saver
        .list(
            Some(&CheckpointConfig::every_namespace(thread)),
            &ListOptions::new(),
        )
        .await
        .expect("list")
        .into_iter()
        .map(|t| t.checkpoint.id)
        .collect()
}

fn write_tasks(t: &CheckpointTuple) -> Vec<(String, String)> {
    t.pending_writes
        .iter()
        .map(|w| (w.task_id.clone(), w.channel.clone()))
        .collect()
}

/// One run of three supersteps in `exit` mode stores only the last checkpoint, under
/// its own id, with no parent (the thread's first run), every channel's latest value
/// (the intermediate checkpoints gave `a` and `b` their versions; the last one only
/// `c`), and only the writes against it; the next run's final checkpoint has the first
/// run's as parent. LangGraph: `_suppress_interrupt` calls `_put_checkpoint` (the
/// final checkpoint, `id=self.checkpoint["id"]`, parent the last saved one,
/// `new_versions` against the versions last saved) and `_put_pending_writes`.
#[tokio::test]
async fn exit_flush_stores_only_the_final_checkpoint_and_its_writes() {
    let inner = Arc::new(InMemorySaver::new());
    let saver = DurableSaver::new(inner.clone(), Durability::Exit).expect("new");
    let thread = CheckpointConfig::new("t");
    let md = |step| CheckpointMetadata::new("loop", step);

    let c1 = saver
        .put(
            &thread,
            &checkpoint("01", &[("a", "a1"), ("b", "b1")], &[("a", 1), ("b", 1)]),
            &md(0),
            &versions(&[("a", 1), ("b", 1)]),
        )
        .await
        .expect("put");
    saver
        .put_writes(&c1, &[("a".into(), "w1".into())], "task-1", "p1")
        .await
        .expect("writes");
    let c2 = saver
        .put(
            &c1,
            &checkpoint("02", &[("a", "a2"), ("b", "b1")], &[("a", 2), ("b", 1)]),
            &md(1),
            &versions(&[("a", 2)]),
        )
        .await
        .expect("put");
    saver
        .put_writes(&c2, &[("b".into(), "w2".into())], "task-2", "p2")
        .await
        .expect("writes");
    let c3 = saver
        .put(
            &c2,
            &checkpoint(
                "03",
                &[("a", "a2"), ("b", "b1"), ("c", "c1")],
                &[("a", 2), ("b", 1), ("c", 1)],
            ),
            &md(2),
            &versions(&[("c", 1)]),
        )
        .await
        .expect("put");
    saver
        .put_writes(&c3, &[("c".into(), "w3".into())], "task-3", "p3")
        .await
        .expect("writes");

    // Before the flush: the wrapper reads all three, the store has nothing.
    assert_eq!(ids(&saver, "t").await, ["03", "02", "01"]);
    assert!(ids(&*inner, "t").await.is_empty());
    assert_eq!(saver.pending().await, 6);

    let report = saver.flush(SECOND).await.expect("flush");
    assert_eq!(
        (
            report.written,
            report.dropped_checkpoints,
            report.dropped_writes
        ),
        (2, 2, 2)
    );
    assert_eq!(saver.pending().await, 0);
    assert_eq!(ids(&*inner, "t").await, ["03"]);
    let stored = inner
        .get_tuple(&thread)
        .await
        .expect("get")
        .expect("stored");
    assert_eq!(stored.parent_config, None);
    assert_eq!(stored.metadata.step(), Some(2));
    let values: Vec<(&str, &Value)> = stored
        .checkpoint
        .channel_values
        .iter()
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    assert_eq!(
        values,
        [
            ("a", &Value::from("a2")),
            ("b", &Value::from("b1")),
            ("c", &Value::from("c1"))
        ]
    );
    assert_eq!(write_tasks(&stored), [("task-3".into(), "c".into())]);
    // The wrapper now reads the store.
    assert_eq!(ids(&saver, "t").await, ["03"]);

    // The next run starts from the stored checkpoint: its final one points at it.
    let c4 = saver
        .put(
            &c3,
            &checkpoint("04", &[("a", "a3")], &[("a", 3)]),
            &md(3),
            &versions(&[("a", 3)]),
        )
        .await
        .expect("put");
    saver
        .put(
            &c4,
            &checkpoint("05", &[("a", "a4")], &[("a", 4)]),
            &md(4),
            &versions(&[("a", 4)]),
        )
        .await
        .expect("put");
    // A write against the stored checkpoint (a resumed task) is kept.
    saver
        .put_writes(&c3, &[("x".into(), "late".into())], "task-late", "p9")
        .await
        .expect("writes");
    let seen = saver
        .get_tuple(&c3)
        .await
        .expect("get")
        .expect("stored one");
    assert_eq!(
        write_tasks(&seen),
        [
            ("task-3".into(), "c".into()),
            ("task-late".into(), "x".into())
        ]
    );
    assert_eq!(ids(&saver, "t").await, ["05", "04", "03"]);
    saver.flush(SECOND).await.expect("flush");
    assert_eq!(ids(&*inner, "t").await, ["05", "03"]);
    let last = inner
        .get_tuple(&thread)
        .await
        .expect("get")
        .expect("stored");
    assert_eq!(
        last.parent_config.and_then(|c| c.checkpoint_id).as_deref(),
        Some("03")
    );
    let mid = inner.get_tuple(&c3).await.expect("get").expect("stored");
    assert_eq!(write_tasks(&mid).len(), 2);
}

/// Each namespace keeps its own final checkpoint; other threads are untouched.
#[tokio::test]
async fn exit_flush_keeps_one_final_checkpoint_per_namespace() {
    let inner = Arc::new(InMemorySaver::new());
    let saver = DurableSaver::new(inner.clone(), Durability::Exit).expect("new");
    for ns in ["", "child:1"] {
        let base = CheckpointConfig::new("t").with_ns(ns);
        let mut parent = base.clone();
        for i in 1..=3 {
            let id = format!("{ns}-{i:02}");
            parent = saver
                .put(
                    &parent,
                    &checkpoint(&id, &[("a", "v")], &[("a", i)]),
                    &CheckpointMetadata::new("loop", i),
                    &versions(&[("a", i)]),
                )
                .await
                .expect("put");
        }
    }
    saver.flush(SECOND).await.expect("flush");
    let mut stored = ids(&*inner, "t").await;
    stored.sort();
    assert_eq!(stored, ["-03", "child:1-03"]);
}

// ---------------------------------------------------------------------------------
// async

/// What a [`Hooked`] saver runs before each `put` and `put_writes` it forwards; an
/// error is returned instead of the call.
#[async_trait]
trait WriteHook: Send + Sync {
    /// `what` names the call: `put {checkpoint id}` or `writes {checkpoint id}`.
    async fn before(&self, config: &CheckpointConfig, what: String) -> Result<()>;
}

/// `inner` with `hook` run before each write; every other call is forwarded as it is.
/// Derefs to the hook, so a test reaches its controls (`gated.open()`).
struct Hooked<S, H> {
    inner: S,
    hook: H,
}

impl<S, H> std::ops::Deref for Hooked<S, H> {
    type Target = H;
    fn deref(&self) -> &H {
        &self.hook
    }
}

#[async_trait]
impl<S: CheckpointSaver, H: WriteHook> CheckpointSaver for Hooked<S, H> {
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig> {
        let what = format!("put {}", checkpoint.id);
        self.hook.before(config, what).await?;
        self.inner
            .put(config, checkpoint, metadata, new_versions)
            .await
    }
    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: &[(String, Value)],
        task_id: &str,
        task_path: &str,
    ) -> Result<()> {
        let id = config.checkpoint_id.clone().unwrap_or_default();
        self.hook.before(config, format!("writes {id}")).await?;
        self.inner
            .put_writes(config, writes, task_id, task_path)
            .await
    }
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
        self.inner.get_tuple(config).await
    }
    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>> {
        self.inner.list(config, options).await
    }
    async fn delete_thread(&self, thread_id: &str) -> Result<()> {
        self.inner.delete_thread(thread_id).await
    }
}

/// A gate for writes: `put` and `put_writes` wait for a permit, and fail while `fail`
/// is set.
struct Gate {
    gate: tokio::sync::Semaphore,
    fail: AtomicBool,
}

/// `InMemorySaver` behind a [`Gate`].
type Gated = Hooked<InMemorySaver, Gate>;

impl Gated {
    fn closed() -> Arc<Self> {
        Arc::new(Hooked {
            inner: InMemorySaver::new(),
            hook: Gate {
                gate: tokio::sync::Semaphore::new(0),
                fail: AtomicBool::new(false),
            },
        })
    }
}

impl Gate {
    fn open(&self) {
        self.gate.add_permits(1 << 20);
    }
}

#[async_trait]
impl WriteHook for Gate {
    async fn before(&self, _: &CheckpointConfig, _: String) -> Result<()> {
        let _permit = self.gate.acquire().await.expect("gate never closed");
        if self.fail.load(Ordering::SeqCst) {
            return Err(Error::with_source(
                ErrorKind::Storage,
                "put: the database failed: disk full",
                "disk full",
            )
            .with_operation("put"));
        }
        Ok(())
    }
}

async fn put_step(
    saver: &dyn CheckpointSaver,
    parent: &CheckpointConfig,
    id: &str,
) -> Result<CheckpointConfig> {
    saver
        .put(
            parent,
            &checkpoint(id, &[("a", id)], &[("a", 1)]),
            &CheckpointMetadata::new("loop", 0),
            &versions(&[("a", 1)]),
        )
        .await
}

async fn finishes_within<F: std::future::Future>(ms: u64, f: F) -> Option<F::Output> {
    tokio::time::timeout(Duration::from_millis(ms), f)
        .await
        .ok()
}

/// `put` returns the config the saver would, while the store does not have the
/// checkpoint yet; a read of the thread waits until it is stored and sees it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_put_returns_at_once_and_reads_wait_for_the_thread() {
    let gated = Gated::closed();
    let saver = Arc::new(DurableSaver::new(gated.clone(), Durability::Async).expect("new"));
    let thread = CheckpointConfig::new("t");
    let out = finishes_within(1000, put_step(&*saver, &thread, "01"))
        .await
        .expect("put returns while the store is blocked")
        .expect("put");
    assert_eq!(out, CheckpointConfig::for_checkpoint("t", "", "01"));
    assert!(gated.inner.get_tuple(&thread).await.expect("get").is_none());
    assert_eq!(saver.pending().await, 1);

    let reader = {
        let saver = saver.clone();
        tokio::spawn(async move { saver.get_tuple(&CheckpointConfig::new("t")).await })
    };
    // Another thread has nothing queued: its read does not wait.
    assert!(
        finishes_within(1000, saver.get_tuple(&CheckpointConfig::new("other")))
            .await
            .expect("other thread reads at once")
            .expect("get")
            .is_none()
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !reader.is_finished(),
        "the read must wait for the queued put"
    );
    gated.open();
    let seen = reader.await.expect("join").expect("get").expect("found");
    assert_eq!(seen.checkpoint.id, "01");
}

/// A full queue makes `put` wait (never drops); it goes on once the store catches up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_full_queue_makes_the_caller_wait() {
    let gated = Gated::closed();
    let saver = DurableSaver::with_options(
        gated.clone(),
        DurableOptions::new(Durability::Async).capacity(2),
    )
    .expect("new");
    let thread = CheckpointConfig::new("t");
    let c1 = put_step(&saver, &thread, "01").await.expect("put 1");
    let c2 = put_step(&saver, &c1, "02").await.expect("put 2");
    let third = put_step(&saver, &c2, "03");
    tokio::pin!(third);
    assert!(
        finishes_within(200, &mut third).await.is_none(),
        "a third put must wait for space"
    );
    gated.open();
    finishes_within(5000, &mut third)
        .await
        .expect("space freed")
        .expect("put 3");
    saver.flush(SECOND).await.expect("flush");
    assert_eq!(ids(&gated.inner, "t").await, ["03", "02", "01"]);
}

/// A background failure is reported by the next call and by `flush`, the failed write
/// stays queued, and a flush after the cause is gone stores it and everything after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_failed_write_is_reported_kept_and_retried_by_flush() {
    let gated = Gated::closed();
    gated.fail.store(true, Ordering::SeqCst);
    gated.open();
    let saver = DurableSaver::new(gated.clone(), Durability::Async).expect("new");
    let thread = CheckpointConfig::new("t");
    let c1 = put_step(&saver, &thread, "01").await.expect("queued");
    let err = saver.flush(SECOND).await.expect_err("the write failed");
    assert_eq!(err.kind(), ErrorKind::WriteBehind, "{err}");
    let text = err.to_string();
    assert!(
        text.contains("put") && text.contains("\"01\"") && text.contains("disk full"),
        "{text}"
    );
    // The next call reports it too, and is not performed.
    let err = put_step(&saver, &c1, "02").await.expect_err("reported");
    assert_eq!(err.kind(), ErrorKind::WriteBehind);
    let err = saver.get_tuple(&thread).await.expect_err("reported");
    assert_eq!(err.kind(), ErrorKind::WriteBehind);
    assert_eq!(saver.pending().await, 1, "the failed write is kept");

    gated.fail.store(false, Ordering::SeqCst);
    let report = saver.flush(SECOND).await.expect("retried");
    assert_eq!(report.written, 1);
    put_step(&saver, &c1, "02").await.expect("goes on");
    saver.flush(SECOND).await.expect("flush");
    assert_eq!(ids(&gated.inner, "t").await, ["02", "01"]);
}

/// `discard_failed` hands the failed write back and the queue goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_discard_failed_returns_the_write() {
    let gated = Gated::closed();
    gated.fail.store(true, Ordering::SeqCst);
    gated.open();
    let saver = DurableSaver::new(gated.clone(), Durability::Async).expect("new");
    put_step(&saver, &CheckpointConfig::new("t"), "01")
        .await
        .expect("queued");
    assert!(saver.flush(SECOND).await.is_err());
    let failed = saver.discard_failed();
    assert_eq!(failed.len(), 1);
    assert_eq!(
        (
            failed[0].operation,
            failed[0].thread_id.as_str(),
            failed[0].checkpoint_id.as_str()
        ),
        ("put", "t", "01")
    );
    gated.fail.store(false, Ordering::SeqCst);
    put_step(&saver, &CheckpointConfig::new("u"), "02")
        .await
        .expect("goes on");
    saver.flush(SECOND).await.expect("flush");
    assert!(ids(&gated.inner, "t").await.is_empty());
    assert_eq!(ids(&gated.inner, "u").await, ["02"]);
}

/// `flush` times out without losing anything; a later flush stores it all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_flush_timeout_loses_nothing() {
    let gated = Gated::closed();
    let saver = DurableSaver::new(gated.clone(), Durability::Async).expect("new");
    let c1 = put_step(&saver, &CheckpointConfig::new("t"), "01")
        .await
        .expect("put");
    saver
        .put_writes(&c1, &[("a".into(), "x".into())], "task", "")
        .await
        .expect("writes");
    let err = saver
        .flush(Duration::from_millis(50))
        .await
        .expect_err("blocked store");
    assert_eq!(err.kind(), ErrorKind::FlushTimeout);
    assert_eq!(err.count(), Some(2), "{err}");
    assert!(err.to_string().contains("2 writes still queued"), "{err}");
    gated.open();
    saver.flush(SECOND).await.expect("flush");
    let stored = gated
        .inner
        .get_tuple(&CheckpointConfig::new("t"))
        .await
        .expect("get")
        .expect("stored");
    assert_eq!(stored.pending_writes.len(), 1);
}

/// `shutdown` stores what was queued and refuses later calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_flushes_and_then_refuses() {
    for mode in MODES {
        let inner = Arc::new(InMemorySaver::new());
        let saver = DurableSaver::new(inner.clone(), mode).expect("new");
        let mut parent = CheckpointConfig::new("t");
        for i in 1..=5 {
            parent = put_step(&saver, &parent, &format!("{i:02}"))
                .await
                .expect("put");
        }
        saver.shutdown(SECOND).await.expect("shutdown");
        let stored = ids(&*inner, "t").await;
        let expected: Vec<&str> = match mode {
            Durability::Exit => vec!["05"],
            _ => vec!["05", "04", "03", "02", "01"],
        };
        assert_eq!(stored, expected, "{mode:?}");
        let err = put_step(&saver, &parent, "06").await.expect_err("closed");
        assert_eq!(err.kind(), ErrorKind::SaverClosed);
        let err = saver.get_tuple(&parent).await.expect_err("closed");
        assert_eq!(err.kind(), ErrorKind::SaverClosed);
    }
}

/// Records the order in which writes reach the store (per thread), with uneven delays
/// so that writes running concurrently would finish out of order.
struct Log(std::sync::Mutex<Vec<(String, String)>>);

#[async_trait]
impl WriteHook for Log {
    async fn before(&self, config: &CheckpointConfig, what: String) -> Result<()> {
        let delay = what.bytes().map(u64::from).sum::<u64>() % 3;
        tokio::time::sleep(Duration::from_micros(200 * delay)).await;
        let thread = config.thread_id.clone().unwrap_or_default();
        self.0.lock().expect("log").push((thread, what));
        Ok(())
    }
}

/// With several writers, each thread's calls reach the store in call order (threads
/// interleave), over a real SQLite file; the stored history is whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_keeps_each_threads_order_with_several_writers() {
    let dir = TempDir::new("order");
    let inner = Arc::new(Hooked {
        inner: SqliteSaver::create(dir.file("o.sqlite")).expect("create"),
        hook: Log(std::sync::Mutex::new(Vec::new())),
    });
    let saver = Arc::new(
        DurableSaver::with_options(
            inner.clone(),
            DurableOptions::new(Durability::Async)
                .writers(4)
                .capacity(16),
        )
        .expect("new"),
    );
    const STEPS: usize = 30;
    let mut tasks = Vec::new();
    for t in 0..6 {
        let saver = saver.clone();
        tasks.push(tokio::spawn(async move {
            let mut parent = CheckpointConfig::new(format!("t{t}"));
            for i in 0..STEPS {
                parent = put_step(&*saver, &parent, &format!("{i:03}"))
                    .await
                    .expect("put");
                saver
                    .put_writes(&parent, &[("a".into(), Value::from(i as i64))], "task", "")
                    .await
                    .expect("writes");
            }
        }));
    }
    for t in tasks {
        t.await.expect("join");
    }
    saver.flush(SECOND).await.expect("flush");
    let log = inner.0.lock().expect("log").clone();
    for t in 0..6 {
        let thread = format!("t{t}");
        let got: Vec<&str> = log
            .iter()
            .filter(|(th, _)| *th == thread)
            .map(|(_, what)| what.as_str())
            .collect();
        let want: Vec<String> = (0..STEPS)
            .flat_map(|i| [format!("put {i:03}"), format!("writes {i:03}")])
            .collect();
        assert_eq!(got, want, "order of {thread}");
        let list = inner
            .list(Some(&CheckpointConfig::new(thread)), &ListOptions::new())
            .await
            .expect("list");
        assert_eq!(list.len(), STEPS);
        assert!(list.iter().all(|t| t.pending_writes.len() == 1));
    }
}

/// Dropping the wrapper without `shutdown` lets the writer finish what is queued
/// (while the runtime runs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_drop_lets_the_writer_finish_the_queue() {
    let gated = Gated::closed();
    let saver = DurableSaver::new(gated.clone(), Durability::Async).expect("new");
    let mut parent = CheckpointConfig::new("t");
    for i in 1..=3 {
        parent = put_step(&saver, &parent, &format!("{i:02}"))
            .await
            .expect("put");
    }
    drop(saver);
    gated.open();
    for _ in 0..500 {
        if ids(&gated.inner, "t").await.len() == 3 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!(
        "queued writes lost on drop: {:?}",
        ids(&gated.inner, "t").await
    );
}

/// Outside a Tokio runtime, `async` mode cannot start its writers: a typed error.
#[test]
fn async_mode_outside_a_runtime_is_an_error() {
    let err = DurableSaver::new(Arc::new(InMemorySaver::new()), Durability::Async)
        .expect_err("no runtime");
    assert_eq!(err.kind(), ErrorKind::InvalidConfig);
    assert!(DurableSaver::new(Arc::new(InMemorySaver::new()), Durability::Exit).is_ok());
}
