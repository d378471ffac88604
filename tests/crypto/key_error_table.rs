//! The shared table of key configurations and the error text each gives
//! (`vectors/keys/key_errors.json`): the Rust parsers give exactly these texts, and the
//! Python companion's test (`python/tests/test_key_errors.py`) holds its parser to the
//! same table, so the two cannot drift apart.

use std::collections::BTreeMap;
use std::path::Path;

use langgraph_codec::crypto::KeyRing;
use langgraph_codec::ErrorKind;

struct Case {
    name: String,
    env: BTreeMap<String, String>,
    kind: Option<String>,
    error: Option<String>,
    keys: Option<u64>,
}

fn cases() -> Vec<Case> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/keys/key_errors.json");
    let text = std::fs::read_to_string(&path).expect("the shared key-error table");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let cases = doc["cases"].as_array().expect("cases");
    cases
        .iter()
        .map(|c| Case {
            name: c["name"].as_str().expect("name").to_owned(),
            env: c["env"]
                .as_object()
                .expect("env")
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().expect("text").to_owned()))
                .collect(),
            kind: c["kind"].as_str().map(str::to_owned),
            error: c["error"].as_str().map(str::to_owned),
            keys: c["keys"].as_u64(),
        })
        .collect()
}

fn kind_name(kind: ErrorKind) -> String {
    kind.as_str().to_owned()
}

#[test]
fn every_case_of_the_shared_table_gives_its_text() {
    let cases = cases();
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let mut hints = 0;
    for case in &cases {
        let lookup = |name: &str| case.env.get(name).cloned();
        let got = KeyRing::from_env_vars(lookup);
        match (&case.error, got) {
            (None, Ok(ring)) => {
                assert_eq!(Some(ring.key_count() as u64), case.keys, "{}", case.name)
            }
            (Some(want), Err(e)) => {
                assert_eq!(&e.to_string(), want, "{}", case.name);
                assert_eq!(Some(kind_name(e.kind())), case.kind, "{}", case.name);
                hints += usize::from(want.contains("): it "));
            }
            (want, got) => panic!("{}: expected {want:?}, got {got:?}", case.name),
        }
    }
    // The table exercises every hint, not only the plain length error.
    assert!(hints >= 15, "{hints} cases with a hint");
}

/// The store commands read the same variables through `StoreKeys` (the fallback keys
/// on a path of their own): the same texts.
#[cfg(feature = "sqlite")]
#[test]
fn the_store_commands_give_the_same_texts() {
    use langgraph_codec::store::StoreKeys;
    for case in cases() {
        let lookup = |name: &str| case.env.get(name).map(std::ffi::OsString::from);
        let got = StoreKeys::from_env_vars_os(lookup);
        match (&case.error, got) {
            (None, Ok(keys)) => {
                assert_eq!(Some(keys.labels().len() as u64), case.keys, "{}", case.name)
            }
            // No key at all is allowed for a store audit: StoreKeys::none().
            (Some(_), Ok(keys)) if case.env.is_empty() => {
                assert!(keys.labels().is_empty(), "{}", case.name)
            }
            (Some(want), Err(e)) => assert_eq!(&e.to_string(), want, "{}", case.name),
            (want, got) => panic!("{}: expected {want:?}, got {got:?}", case.name),
        }
    }
}
