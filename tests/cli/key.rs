//! `lgcodec key generate` and `crypto::generate_key`: the key alone on standard output,
//! of the length asked, from the 64-symbol alphabet, uniformly drawn, and a key both
//! the Rust parser and the row cipher take. (`python/tests/test_generate_key.py` has
//! Python's `from_pycryptodome_aes()` read rows under these keys, and Rust read rows
//! under the Python companion's keys.)

use std::collections::{BTreeMap, HashSet};
use std::process::Command;

use langgraph_codec::crypto::{generate_key, AesKey, Cipher, KeyRing};

const BIN: &str = env!("CARGO_BIN_EXE_lgcodec");
/// base64url's alphabet, written out here (not taken from the crate).
const ALPHABET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn lgcodec(args: &[&str]) -> Run {
    let out = Command::new(BIN)
        .args(args)
        .env_remove("LANGGRAPH_AES_KEY")
        .output()
        .expect("lgcodec runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("UTF-8"),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn of_the_alphabet(key: &str) -> bool {
    key.chars().all(|c| ALPHABET.contains(c))
}

/// A key as `LANGGRAPH_AES_KEY` gives it to the ring, and a row through it.
fn round_trip(key: &str) {
    let ring = KeyRing::from_env_vars(|name| (name == "LANGGRAPH_AES_KEY").then(|| key.to_owned()))
        .expect("the environment parser takes it");
    let (name, blob) = ring.encrypt(b"a row", b"").expect("encrypt");
    assert_eq!(ring.decrypt(&name, &blob, b"").expect("decrypt"), b"a row");
}

#[test]
fn generate_prints_the_key_and_a_newline_and_nothing_else() {
    let run = lgcodec(&["key", "generate"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    let key = run.stdout.strip_suffix('\n').expect("one line");
    assert!(!key.contains('\n'), "{:?}", run.stdout);
    assert_eq!(key.len(), 32);
    assert!(of_the_alphabet(key), "{key}");
    assert_eq!(AesKey::from_text(key).expect("a key").bits(), 256);
    round_trip(key);
    // `key_help_examples_work_when_pasted` has `lgcodec encode --encrypt` use one.
}

#[test]
fn bytes_takes_16_24_or_32_and_refuses_the_rest() {
    for (n, bits) in [("16", 128), ("24", 192), ("32", 256)] {
        let run = lgcodec(&["key", "generate", "--bytes", n]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let key = run.stdout.trim_end_matches('\n');
        assert_eq!(key.len().to_string(), n);
        assert!(of_the_alphabet(key), "{key}");
        assert_eq!(AesKey::from_text(key).expect("a key").bits(), bits);
        round_trip(key);
    }
    for n in ["0", "15", "20", "33", "64", "x"] {
        let run = lgcodec(&["key", "generate", "--bytes", n]);
        assert_eq!(run.code, 2, "{n}");
        assert_eq!(run.stdout, "", "{n}");
        assert!(run.stderr.contains("16, 24, 32"), "{}", run.stderr);
    }
    assert!(generate_key(20).is_err());
}

#[test]
fn json_names_the_length_and_the_entropy() {
    let run = lgcodec(&["key", "generate", "--json", "--bytes", "24"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    assert_eq!(run.stdout.lines().count(), 1);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let key = json["key"].as_str().expect("key");
    assert_eq!(key.len(), 24);
    assert!(of_the_alphabet(key), "{key}");
    assert_eq!(json["bytes"], 24);
    // 64 symbols: log2(64) = 6 bits a character.
    assert_eq!(json["bits_per_character"], 6);
    assert_eq!(json["entropy_bits"], 24 * 6);
    assert_eq!(json["alphabet"], ALPHABET);
}

#[test]
fn a_thousand_keys_are_distinct_uniform_and_of_the_alphabet() {
    let keys: Vec<String> = (0..1000)
        .map(|_| generate_key(32).expect("key").as_str().to_owned())
        .collect();
    let distinct: HashSet<&String> = keys.iter().collect();
    assert_eq!(distinct.len(), 1000);
    let mut counts: BTreeMap<char, u32> = BTreeMap::new();
    for key in &keys {
        assert_eq!(key.len(), 32);
        assert!(of_the_alphabet(key), "{key}");
        for c in key.chars() {
            *counts.entry(c).or_default() += 1;
        }
    }
    // 32,000 characters over 64 symbols: 500 each expected, standard deviation about
    // 22; every symbol within 150 of it (about 7 deviations) unless the draw is biased.
    assert_eq!(counts.len(), 64, "{counts:?}");
    assert!(
        counts.values().all(|n| (350..=650).contains(n)),
        "{counts:?}"
    );
    for key in keys.iter().take(50) {
        AesKey::from_text(key).expect("a key");
    }
    round_trip(&keys[0]);
    // The command draws afresh each time too.
    let from_cli: HashSet<String> = (0..20)
        .map(|_| lgcodec(&["key", "generate"]).stdout)
        .collect();
    assert_eq!(from_cli.len(), 20);
    // Debug never shows the key.
    let key = generate_key(16).expect("key");
    assert_eq!(format!("{key:?}"), "KeyText { len: 16, .. }");
}

#[test]
fn key_help_examples_work_when_pasted() {
    let help = lgcodec(&["key", "generate", "--help"]);
    assert_eq!(help.code, 0);
    let examples = crate::lgcodec::pasted_examples(&help.stdout);
    assert!(examples.len() >= 4, "{}", help.stdout);
    let path = crate::lgcodec::path_with_lgcodec();
    // Pasted one after another into one shell: the export is then what the next
    // command (a row encrypted under it) reads.
    let script = format!(
        "{}\nprintf '{{\"type\": \"msgpack\", \"value\": 1}}' | lgcodec encode --encrypt --base64",
        examples.join("\n")
    );
    let out = Command::new("sh")
        .args(["-ec", &script])
        .env("PATH", &path)
        .env_remove("LANGGRAPH_AES_KEY")
        .output()
        .expect("sh runs");
    assert!(
        out.status.success(),
        "{script}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
