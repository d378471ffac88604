//! The store operations a service runs on its own schedule can be spawned on a
//! multi-threaded runtime (`tokio::spawn` needs a `Send` future): `copy`, `prune`,
//! `retain`, `upgrade`, the audit and the sweeps. The futures below are made and
//! dropped, never polled: only their types are checked, when this file compiles. Not
//! these: `import` and `export` read and write a caller's `&mut dyn BufRead` / `Write`,
//! which are not `Send`; they run on the caller's task.

use langgraph_codec::store::{
    audit, copy, encrypt, prune, rekey, retain, upgrade, AuditOptions, CopyOptions, PruneOptions,
    RetainOptions, RetentionPolicy, Store, StoreKeys, SweepOptions, UpgradeOptions,
};

fn spawnable<T: Send>(_: T) {}

#[test]
fn store_operations_make_send_futures() {
    let keys = StoreKeys::none();
    spawnable(copy("a.db", "b.db", &keys, &CopyOptions::new()));
    spawnable(prune("a.db", &keys, &PruneOptions::new().keep_latest(1)));
    spawnable(upgrade("a.db", &UpgradeOptions::new()));
    let policy = RetentionPolicy::from_value(&serde_json::json!({}), "policy.toml");
    if let Ok(policy) = policy {
        spawnable(retain("a.db", &keys, &RetainOptions::new(policy)));
    }
    // The audit and the sweeps take an open store; made here only as a type.
    let with_store = |store: &Store| {
        spawnable(audit(store, &keys, &AuditOptions::new()));
        spawnable(encrypt(store, &keys, &SweepOptions::new()));
        spawnable(rekey(store, &keys, &SweepOptions::new()));
    };
    let _ = with_store;
}
