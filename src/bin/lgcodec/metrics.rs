//! `lgcodec store retain --metrics-addr ADDR`: the counters of each sweep's JSON line,
//! served for Prometheus at `http://ADDR/metrics` while the sweeper runs (feature
//! `metrics`: metrics-rs's Prometheus exporter on the command's Tokio runtime). The
//! listener is opened before the first sweep, so a port in use is an error before
//! anything is read or deleted.

use langgraph_codec::store::RetainReport;

/// A counter (only goes up) or a gauge (the last value), `# TYPE` in the exposition.
#[cfg(feature = "metrics")]
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Counter,
    Gauge,
}

/// Every metric, with its kind and help text (`# HELP` in the exposition).
#[cfg(feature = "metrics")]
const METRICS: &[(&str, Kind, &str)] = &[
    ("lgcodec_retain_sweeps_total", Kind::Counter, "Sweeps, by result: done, skipped_locked (another sweeper held the store's lock) or failed."),
    ("lgcodec_retain_threads_total", Kind::Counter, "Threads looked at."),
    ("lgcodec_retain_threads_deleted_total", Kind::Counter, "Threads deleted whole (with dry_run=\"true\": that would be)."),
    ("lgcodec_retain_checkpoints_deleted_total", Kind::Counter, "Checkpoints deleted, whole threads' included."),
    ("lgcodec_retain_writes_deleted_total", Kind::Counter, "Pending-write rows deleted."),
    ("lgcodec_retain_blobs_deleted_total", Kind::Counter, "Postgres blob rows deleted."),
    ("lgcodec_retain_bytes_freed_total", Kind::Counter, "Bytes of the deleted rows' values (Postgres: with their JSONB's stored size)."),
    ("lgcodec_retain_kept_total", Kind::Counter, "What a rule spared that another would have deleted, by rule (kept_by_rule in the JSON line)."),
    ("lgcodec_retain_unreadable_total", Kind::Counter, "Checkpoints that could not be read where a DeltaChannel needed them; their chains were kept."),
    ("lgcodec_retain_thread_errors_total", Kind::Counter, "Threads left as they were because of a problem with them (errors in the JSON line)."),
    ("lgcodec_retain_connections_refused_total", Kind::Counter, "Postgres connections beyond the first the server had no slot for (CONNECTION LIMIT, max_connections); the sweep did that work on the connections it had."),
    ("lgcodec_retain_last_sweep_duration_seconds", Kind::Gauge, "How long the last sweep that ran took."),
    ("lgcodec_retain_last_success_timestamp_seconds", Kind::Gauge, "When the last sweep that ran (not skipped, not failed) ended, Unix seconds."),
];

/// Opens the listener on `addr` and installs the recorder; `dry_run` becomes a label
/// of every metric.
#[cfg(feature = "metrics")]
pub fn serve(addr: &str, dry_run: bool) -> Result<(), String> {
    use metrics_exporter_prometheus::PrometheusBuilder;
    let socket: std::net::SocketAddr = addr.parse().map_err(|e| {
        format!("--metrics-addr {addr:?}: not an address and port such as 0.0.0.0:9464 ({e})")
    })?;
    let (recorder, exporter) = PrometheusBuilder::new()
        .with_http_listener(socket)
        .add_global_label("dry_run", dry_run.to_string())
        .build()
        .map_err(|e| {
            format!(
                "--metrics-addr {addr}: cannot serve metrics there ({e}); choose a free port, \
                 or stop what listens on it"
            )
        })?;
    metrics::set_global_recorder(recorder).map_err(|e| format!("--metrics-addr {addr}: {e}"))?;
    tokio::spawn(async move {
        if let Err(e) = exporter.await {
            note!("lgcodec store retain: the metrics listener stopped: {e:?}");
        }
    });
    for (name, kind, help) in METRICS {
        match kind {
            Kind::Gauge => metrics::describe_gauge!(*name, *help),
            Kind::Counter => metrics::describe_counter!(*name, *help),
        }
    }
    // Every series exists from the start (a counter Prometheus has never seen cannot
    // be rated): the sweep results at zero.
    for result in ["done", "skipped_locked", "failed"] {
        metrics::counter!("lgcodec_retain_sweeps_total", "result" => result).absolute(0);
    }
    Ok(())
}

/// Without the `metrics` feature the flag is refused with how to get it.
#[cfg(not(feature = "metrics"))]
pub fn serve(addr: &str, _dry_run: bool) -> Result<(), String> {
    Err(format!(
        "--metrics-addr {addr}: this lgcodec was built without Prometheus metrics; the \
         wheel has them (pip install langgraph-codec), or build with \
         `cargo install langgraph-codec --features cli,sqlite,postgres,metrics`"
    ))
}

/// Adds a sweep's report to the counters (a no-op until [`serve`] ran).
#[cfg(feature = "metrics")]
pub fn sweep_done(r: &RetainReport) {
    use metrics::{counter, gauge};
    if r.skipped_locked {
        counter!("lgcodec_retain_sweeps_total", "result" => "skipped_locked").increment(1);
        return;
    }
    counter!("lgcodec_retain_sweeps_total", "result" => "done").increment(1);
    counter!("lgcodec_retain_threads_total").increment(r.threads);
    counter!("lgcodec_retain_threads_deleted_total").increment(r.threads_deleted);
    counter!("lgcodec_retain_checkpoints_deleted_total").increment(r.checkpoints_deleted);
    counter!("lgcodec_retain_writes_deleted_total").increment(r.writes_deleted);
    counter!("lgcodec_retain_blobs_deleted_total").increment(r.blobs_deleted);
    counter!("lgcodec_retain_bytes_freed_total").increment(r.bytes_freed);
    let k = &r.kept_by_rule;
    for (rule, n) in [
        ("labeled", k.labeled),
        ("newest", k.newest),
        ("delta_ancestors", k.delta_ancestors),
        ("pinned_threads", k.pinned_threads),
        ("interrupted_threads", k.interrupted_threads),
        ("overridden_threads", k.overridden_threads),
    ] {
        counter!("lgcodec_retain_kept_total", "rule" => rule).increment(n);
    }
    counter!("lgcodec_retain_unreadable_total").increment(r.unreadable);
    counter!("lgcodec_retain_thread_errors_total").increment(r.errors.len() as u64);
    counter!("lgcodec_retain_connections_refused_total").increment(r.connections_refused);
    gauge!("lgcodec_retain_last_sweep_duration_seconds").set(r.duration_s);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    gauge!("lgcodec_retain_last_success_timestamp_seconds").set(now);
}

#[cfg(not(feature = "metrics"))]
pub fn sweep_done(_r: &RetainReport) {}

/// Counts a sweep that failed (and that the service survives, to try again).
#[cfg(feature = "metrics")]
pub fn sweep_failed() {
    metrics::counter!("lgcodec_retain_sweeps_total", "result" => "failed").increment(1);
}

#[cfg(not(feature = "metrics"))]
pub fn sweep_failed() {}
