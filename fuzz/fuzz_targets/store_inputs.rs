//! The text an operator gives `lgcodec store`: a store location, a date (`--before`,
//! `--idle-since`), a duration, a checkpoint id's time, a retention policy
//! (LangGraph's `langgraph.json` or the policy's own JSON) and the key variables.
//! Never panics; what is accepted holds what was asked.
#![no_main]

use std::ffi::OsString;

use langgraph_codec::store::{
    id_time, parse_date, parse_duration, Location, RetentionPolicy, StoreKeys,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Some((&selector, data)) = input.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(data);
    match selector % 6 {
        0 => {
            if let Ok(loc) = Location::parse(&text) {
                // Whatever was accepted names a store: a Postgres URL as given, or a
                // non-empty path.
                match loc {
                    Location::Postgres(url) => assert_eq!(url, text),
                    Location::Sqlite(path) => assert!(!path.as_os_str().is_empty()),
                    _ => {}
                }
            }
        }
        1 => {
            if let Ok(secs) = parse_date(&text) {
                // Python's datetime range: 0001-01-01 to 9999-12-31T23:59:59.
                assert!((-62_135_596_800..=253_402_300_799).contains(&secs), "{secs}");
            }
        }
        2 => {
            if let Ok(d) = parse_duration(&text) {
                assert!(!d.is_zero());
            }
        }
        3 => {
            if let Some(t) = id_time(&text) {
                assert!(t >= 0, "{t}");
            }
        }
        4 => {
            // Either shape of policy; each accepted one passes its own check.
            if let Ok(p) = RetentionPolicy::from_langgraph_json(&text, "fuzz") {
                let _ = p.validate();
            }
            if let Ok(json) = serde_json::from_str(&text) {
                if let Ok(p) = RetentionPolicy::from_value(&json, "fuzz") {
                    let _ = p.validate();
                }
            }
        }
        _ => {
            // The three key variables, split from the text at NUL bytes.
            let mut parts = data.split(|b| *b == 0);
            let vars: Vec<Option<OsString>> = (0..3)
                .map(|_| {
                    parts
                        .next()
                        .map(|p| OsString::from(String::from_utf8_lossy(p).into_owned()))
                })
                .collect();
            let names = [
                "LANGGRAPH_AES_KEY",
                "LANGGRAPH_AES_KEY_PREVIOUS",
                "LANGGRAPH_AES_FALLBACK_KEYS",
            ];
            let lookup = |name: &str| {
                let i = names.iter().position(|n| *n == name)?;
                vars[i].clone()
            };
            if let Ok(keys) = StoreKeys::from_env_vars_os(lookup) {
                assert_eq!(keys.has_primary(), vars[0].is_some());
                let _ = format!("{keys:?}");
            }
        }
    }
});
