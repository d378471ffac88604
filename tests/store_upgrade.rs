//! Stores of old releases (`vectors/stores/`, written by the real old packages): read
//! and copied out of old Postgres layouts without a write, upgraded in place only when
//! asked, and read by today's Python savers afterwards. The expected reads are
//! Python's own (`vectors/store_maint/python_reads_equal.py`), never this crate's.
//!
//! Postgres tests read `LGCODEC_TEST_PG_URL` and print a skip line without it; the
//! Python reads use `LGCODEC_PYTHON` (or a venv found on the machine; skipped with a
//! printed reason without one).

use std::fs;

use langgraph_codec::store::{
    copy, export, import, AnyStore, CopyOptions, ExportOptions, ImportOptions, StoreKeys,
};

#[path = "support/store_pg.rs"]
pub mod pg;

use pg::{scratch, stores};

/// How many `messages` the writing release's own saver read back at checkpoint `id`
/// of `t-main` (`reads.json`, recorded by the old package).
fn recorded_messages(fixture: &str, id: &str) -> usize {
    let text = fs::read_to_string(stores().join(fixture).join("reads.json")).expect("reads.json");
    let reads: serde_json::Value = serde_json::from_str(&text).expect("json");
    let tuples = reads["threads"]["t-main"]["get_tuple"]
        .as_array()
        .expect("get_tuple");
    for t in tuples {
        let t = t.get("$CheckpointTuple").unwrap_or(t);
        if t["checkpoint"]["id"] == id {
            return t["checkpoint"]["channel_values"]["messages"]
                .as_array()
                .map_or(0, Vec::len);
        }
    }
    panic!("{fixture}: no recorded read of {id}")
}

const OLD_POSTGRES: [&str; 4] = [
    "postgres-py-1.0.0",
    "postgres-py-2.0.0",
    "postgres-py-2.0.8",
    "postgres-js-1.0.5",
];

fn short(fixture: &str) -> String {
    fixture
        .trim_start_matches("postgres-")
        .replace(['-', '.'], "_")
}

#[tokio::test]
async fn old_postgres_stores_copy_into_fresh_stores_that_python_reads_as_after_its_setup() {
    let Some(url) = pg::url() else { return };
    let python = pg::python();
    let dir = scratch("oldcopy");
    for fixture in OLD_POSTGRES {
        let tag = short(fixture);
        let source = pg::restored(&url, fixture, "upc_src").await;
        let before = pg::digest(&source).await;
        let sqlite_target = dir.join(format!("{tag}.sqlite"));
        let sqlite_target = sqlite_target.to_str().expect("utf-8").to_owned();
        let pg_target = pg::fresh(&url, &format!("upc_tgt_{tag}")).await;
        for target in [&sqlite_target, &pg_target] {
            let report = copy(
                &source,
                target,
                &StoreKeys::none(),
                &CopyOptions::new().page_size(3),
            )
            .await
            .unwrap_or_else(|e| panic!("{fixture} -> {target}: {e}"));
            assert!(report.checkpoints > 0, "{fixture}");
            assert_eq!(
                (report.copied, report.verified),
                (report.checkpoints, report.checkpoints),
                "{fixture} -> {target}: {:?}",
                report.mismatches
            );
            assert!(report.created_tables, "{fixture}");
        }
        // And a backup of it (export), restored into a fresh Postgres (import).
        let backup = dir.join(format!("{tag}.jsonl"));
        {
            let store = AnyStore::open(&source).await.expect("open");
            let mut file = std::io::BufWriter::new(fs::File::create(&backup).expect("create"));
            export(&store, &mut file, &ExportOptions::new())
                .await
                .unwrap_or_else(|e| panic!("{fixture}: export: {e}"));
        }
        let imported = pg::fresh(&url, &format!("upc_imp_{tag}")).await;
        let mut input = std::io::BufReader::new(fs::File::open(&backup).expect("open"));
        let report = import(&mut input, "backup", &imported, &ImportOptions::new())
            .await
            .unwrap_or_else(|e| panic!("{fixture}: import: {e}"));
        assert!(
            report.complete && report.conflicts == 0,
            "{fixture}: {report:?}"
        );
        assert_eq!(
            pg::digest(&source).await,
            before,
            "{fixture}: the copy or export changed its source"
        );
        // What Python reads from its own migration of a separate copy.
        if let Some(py) = &python {
            let reference = pg::restored(&url, fixture, "upc_ref").await;
            let out = pg::python_reads_equal(
                py,
                true,
                &reference,
                &[&sqlite_target, &pg_target, &imported],
            );
            println!("{fixture}: {}", out.trim());
        }
    }
    let _ = fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn old_postgres_stores_show_state_and_diff_without_a_write() {
    let Some(url) = pg::url() else { return };
    for fixture in OLD_POSTGRES {
        let source = pg::restored(&url, fixture, "upi_src").await;
        let before = pg::digest(&source).await;
        let store = AnyStore::open(&source).await.expect(fixture);
        let none = StoreKeys::none();
        let history = store.history("t-main").await.expect("history");
        let root: Vec<_> = history
            .nodes
            .iter()
            .filter(|n| n.checkpoint_ns.is_empty())
            .collect();
        let (first, last) = (root.first().expect("first"), root.last().expect("last"));
        let state = store
            .state(&none, "t-main", &last.checkpoint_id)
            .await
            .unwrap_or_else(|e| panic!("{fixture}: {e}"))
            .expect("present");
        let messages = state["checkpoint"]["channel_values"]["messages"]
            .as_array()
            .unwrap_or_else(|| panic!("{fixture}: {state}"));
        assert_eq!(
            messages.len(),
            recorded_messages(fixture, &last.checkpoint_id),
            "{fixture}: as many messages as the writing saver read back (reads.json)"
        );
        let d = store
            .diff(&none, "t-main", &first.checkpoint_id, &last.checkpoint_id)
            .await
            .unwrap_or_else(|e| panic!("{fixture}: {e}"));
        assert!(
            d.added.iter().any(|c| c == "messages") || d.changed.iter().any(|c| c == "messages"),
            "{fixture}: {d:?}"
        );
        drop(store);
        assert_eq!(pg::digest(&source).await, before, "{fixture}: rows changed");
    }
}
