//! Second, independent tests for behaviours that hung on a single test (or none) when a
//! review planted bugs one at a time: strict mode on the typed read path,
//! the `__scheduled__` write index, ext8 holding exactly 16 bytes, AES key lengths,
//! the AAD field encoding, first-write-wins for regular writes, and the conformance
//! level. Each test here reaches the behaviour by a different road than the first one
//! (named in its doc comment); expected values come from Python's source or the specs.

use langgraph_codec::crypto::{aad, AesMode, EncryptedSerializer};
use langgraph_codec::msgpack;
use langgraph_codec::saver::{
    CheckpointConfig, CheckpointMetadata, CheckpointSaver, InMemorySaver, PendingWrite, ERROR,
    INTERRUPT, RESUME, SCHEDULED,
};
use langgraph_codec::serializer::TypedSerializerExt;
use langgraph_codec::{DecodeErrorKind, JsonPlusSerializer, Serializer, TypedBytes, Value};

// ---- strict mode on the typed read path ------------------------------------------
// First test: tests/crypto.rs `strict_mode_refuses_plaintext` (Value path).

const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

fn strict() -> EncryptedSerializer {
    EncryptedSerializer::from_aes_key(KEY, AesMode::Eax)
        .expect("32-byte key")
        .with_strict(true)
}

/// Plaintext rows of every tag JsonPlus writes are refused by a strict serializer's
/// typed reads, as its `Value` reads refuse them.
#[test]
fn strict_typed_reads_refuse_plaintext_of_every_tag() {
    let plain = JsonPlusSerializer::new();
    let s = strict();
    let rows: Vec<TypedBytes> = vec![
        plain.dumps_typed(&Value::from("secret")).expect("msgpack"),
        plain.dumps_typed(&Value::Nil).expect("null"),
        plain
            .dumps_typed(&Value::Bin(vec![1u8, 2, 3].into()))
            .expect("bytes"),
        TypedBytes::new("json", b"\"secret\"".to_vec()),
    ];
    for row in rows {
        assert!(
            s.loads_typed(&row.type_tag, &row.data).is_err(),
            "{}: Value read accepted plaintext",
            row.type_tag
        );
        let typed = s.loads_typed_value::<Option<String>>(&row.type_tag, &row.data);
        assert!(
            matches!(&typed, Err(e) if e.kind() == langgraph_codec::ErrorKind::PlaintextRefused),
            "{}: typed read accepted plaintext: {typed:?}",
            row.type_tag
        );
        let with = s.loads_typed_value_with::<Option<String>, _>(
            &row.type_tag,
            &row.data,
            &langgraph_codec::typed::JsonFallback,
        );
        assert!(
            with.is_err(),
            "{}: typed read (with fallback) accepted plaintext",
            row.type_tag
        );
    }
}

/// A strict serializer's own typed rows read back; the same rows with the encryption
/// peeled off (what a downgrade attack stores) are refused.
#[test]
fn strict_typed_reads_take_ciphertext_and_refuse_it_decrypted() {
    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct State {
        messages: Vec<String>,
        step: i64,
    }
    let s = strict();
    let state = State {
        messages: vec!["hi".into()],
        step: 3,
    };
    let row = s.dumps_typed_value(&state).expect("dumps");
    assert!(row.type_tag.ends_with("+aes"), "{}", row.type_tag);
    assert_eq!(
        s.loads_typed_value::<State>(&row.type_tag, &row.data)
            .expect("loads"),
        state
    );
    let peeled = s
        .decrypt_typed(&row.type_tag, &row.data, b"")
        .expect("decrypts");
    assert_eq!(peeled.type_tag, "msgpack");
    assert!(s
        .loads_typed_value::<State>(&peeled.type_tag, &peeled.data)
        .is_err());
    // Non-strict reads it (so the refusal above is strict mode's doing).
    assert_eq!(
        s.clone()
            .with_strict(false)
            .loads_typed_value::<State>(&peeled.type_tag, &peeled.data)
            .expect("lax loads"),
        state
    );
}

// ---- the __scheduled__ write index -----------------------------------------------
// First test: the kit's test_put_writes_special_channels (index order and collisions).

/// Python: `WRITES_IDX_MAP = {ERROR: -1, SCHEDULED: -2, INTERRUPT: -3, RESUME: -4}`
/// (langgraph/checkpoint/base/__init__.py); other channels use their position.
#[test]
fn write_idx_is_pythons_writes_idx_map() {
    use langgraph_codec::saver::write_idx;
    for position in [0usize, 1, 5] {
        assert_eq!(write_idx("__error__", position), -1);
        assert_eq!(write_idx("__scheduled__", position), -2);
        assert_eq!(write_idx("__interrupt__", position), -3);
        assert_eq!(write_idx("__resume__", position), -4);
        assert_eq!(write_idx("messages", position), position as i64);
    }
    assert_eq!(SCHEDULED, "__scheduled__");
}

/// The rows `InMemorySaver` stores carry those indices (what Python's saver stores in
/// its `writes` dict keys).
#[tokio::test]
async fn stored_write_rows_use_the_special_indices() {
    let s = InMemorySaver::new();
    let cp = langgraph_codec::saver::Checkpoint::now(0);
    let at = s
        .put(
            &CheckpointConfig::new("t"),
            &cp,
            &CheckpointMetadata::new("loop", 0),
            &Default::default(),
        )
        .await
        .expect("put");
    let writes: Vec<(String, Value)> = ["a", SCHEDULED, ERROR, INTERRUPT, RESUME, "b"]
        .iter()
        .map(|c| ((*c).to_owned(), Value::from(*c)))
        .collect();
    s.put_writes(&at, &writes, "task", "")
        .await
        .expect("writes");
    let mut got: Vec<(String, i64)> = s
        .export_rows()
        .writes
        .iter()
        .map(|w| (w.channel.clone(), w.idx))
        .collect();
    got.sort();
    let mut want = vec![
        ("a".to_owned(), 0),
        (SCHEDULED.to_owned(), -2),
        (ERROR.to_owned(), -1),
        (INTERRUPT.to_owned(), -3),
        (RESUME.to_owned(), -4),
        ("b".to_owned(), 5),
    ];
    want.sort();
    assert_eq!(got, want);
}

// ---- ext8 holding exactly 16 bytes -------------------------------------------------
// First test: tests/hostile.rs `non_canonical_forms_are_refused_unless_allowed`.

/// The msgpack spec's shortest ext header: fixext for 1, 2, 4, 8, 16 bytes, ext8 for
/// the other lengths up to 255. ormsgpack writes the shortest, so an ext8 of a fixext
/// size is non-canonical, and every other ext8 is read.
#[test]
fn ext8_is_refused_exactly_at_the_fixext_sizes() {
    for n in 0usize..=40 {
        let mut bytes = vec![0xc7, n as u8, 0x63];
        bytes.extend(std::iter::repeat_n(0xaa, n));
        let got = msgpack::decode(&bytes);
        if matches!(n, 1 | 2 | 4 | 8 | 16) {
            let e = got.expect_err("fixext size in an ext8");
            assert!(
                matches!(e.kind(), DecodeErrorKind::NonCanonical { .. }) && e.offset() == 0,
                "n={n}: {e:?}"
            );
        } else {
            let v = got.unwrap_or_else(|e| panic!("n={n}: {e:?}"));
            assert_eq!(msgpack::encode(&v).expect("encodes"), bytes, "n={n}");
        }
    }
}

/// Through the serializer and the typed layer: an ext8 of 16 bytes inside a value is
/// refused, the fixext16 of the same payload is read.
#[test]
fn an_ext8_of_16_bytes_is_refused_by_serializer_and_typed_reads() {
    let payload = [0x55u8; 16];
    // [ext] as a one-element array, so the ext is not at offset 0.
    let mut ext8 = vec![0x91, 0xc7, 16, 0x63];
    ext8.extend_from_slice(&payload);
    let mut fixext16 = vec![0x91, 0xd8, 0x63];
    fixext16.extend_from_slice(&payload);
    let serde = JsonPlusSerializer::new();
    assert!(serde.loads_typed("msgpack", &fixext16).is_ok());
    assert!(serde.loads_typed("msgpack", &ext8).is_err());
    assert!(langgraph_codec::typed::from_slice::<Value>(&fixext16).is_ok());
    assert!(langgraph_codec::typed::from_slice::<Value>(&ext8).is_err());
}

// ---- AES key lengths ---------------------------------------------------------------
// First tests: crypto/key.rs `lengths_follow_aes` and tests/crypto_vectors.rs (Python
// rows under 16-, 24- and 32-byte keys).

/// A 16/24/32-byte key is AES-128/192/256: GCM rows decrypt with RustCrypto's
/// `aes-gcm` directly (`nonce(16) | tag(16) | ciphertext`, pycryptodome's layout).
#[test]
fn key_lengths_select_aes_128_192_256() {
    use aes_gcm::aead::consts::U16;
    use aes_gcm::aead::{Aead, KeyInit, Payload};
    use aes_gcm::aes::{Aes128, Aes192, Aes256};
    use aes_gcm::AesGcm;

    fn open<C: KeyInit + Aead>(key: &[u8], blob: &[u8]) -> Option<Vec<u8>> {
        let cipher = C::new_from_slice(key).ok()?;
        let (nonce, rest) = blob.split_at(16);
        let (tag, body) = rest.split_at(16);
        let mut ct = body.to_vec();
        ct.extend_from_slice(tag);
        cipher
            .decrypt(nonce.try_into().ok()?, Payload { msg: &ct, aad: b"" })
            .ok()
    }
    let key: Vec<u8> = (0u8..32).collect();
    for len in [16usize, 24, 32] {
        let k = &key[..len];
        let s = EncryptedSerializer::from_aes_key(k, AesMode::Gcm).expect("valid length");
        let row = s.dumps_typed(&Value::from("secret")).expect("dumps");
        let plain = JsonPlusSerializer::new()
            .dumps_typed(&Value::from("secret"))
            .expect("plain");
        let opened = [
            open::<AesGcm<Aes128, U16>>(k, &row.data),
            open::<AesGcm<Aes192, U16>>(k, &row.data),
            open::<AesGcm<Aes256, U16>>(k, &row.data),
        ];
        let which: Vec<usize> = opened
            .iter()
            .enumerate()
            .filter(|(_, o)| o.as_deref() == Some(&plain.data[..]))
            .map(|(i, _)| [16, 24, 32][i])
            .collect();
        assert_eq!(which, [len], "a {len}-byte key");
    }
}

/// Every other length is refused with a typed error, through the serializer's
/// constructor (the first test checks `AesKey::new`).
#[test]
fn other_key_lengths_are_refused_by_the_serializer() {
    for len in (0..=64).filter(|n| !matches!(n, 16 | 24 | 32)) {
        let key = vec![b'k'; len];
        for mode in [AesMode::Eax, AesMode::Gcm] {
            assert!(
                EncryptedSerializer::from_aes_key(&key, mode).is_err(),
                "{len}-byte key accepted"
            );
        }
    }
}

// ---- AAD field encoding --------------------------------------------------------------
// First test: crypto/aad.rs `matches_python_struct_encoding`.

/// `b"langgraph-aad-v1" | u32be(len(kind)) | kind | u32be(n) | (u32be(len(f)) | f)*`,
/// written out byte by byte here (PROTOCOL.md section 4), for fields with multi-byte
/// UTF-8, empty strings and a negative index; and a row sealed under it opens only
/// under the same bytes.
#[test]
fn aad_bytes_follow_the_spec_and_bind_the_row() {
    fn field(out: &mut Vec<u8>, f: &str) {
        out.extend_from_slice(&(f.len() as u32).to_be_bytes());
        out.extend_from_slice(f.as_bytes());
    }
    let mut want = b"langgraph-aad-v1".to_vec();
    field(&mut want, "write");
    want.extend_from_slice(&6u32.to_be_bytes());
    for f in ["thé", "", "cp", "task-1", "-4", "__resume__"] {
        field(&mut want, f);
    }
    let got = aad::write("thé", "", "cp", "task-1", -4, "__resume__").expect("aad");
    assert_eq!(got, want);
    // Lengths are bytes, not characters: "thé" is 4.
    assert_eq!(
        &want[16 + 4 + 5 + 4..16 + 4 + 5 + 4 + 4],
        &4u32.to_be_bytes()
    );

    let s = EncryptedSerializer::from_aes_key(KEY, AesMode::Eax).expect("key");
    let row = s
        .dumps_typed_with_aad(&Value::from("v"), &want)
        .expect("seal");
    assert_eq!(
        s.loads_typed_with_aad(&row.type_tag, &row.data, &got)
            .expect("same AAD opens"),
        Value::from("v")
    );
    let other = aad::write("thé", "", "cp", "task-1", -3, "__resume__").expect("aad");
    assert!(s
        .loads_typed_with_aad(&row.type_tag, &row.data, &other)
        .is_err());
}

// ---- first write wins for regular writes ---------------------------------------------
// First test: the kit's test_put_writes_idempotent (retry with another value).

/// A task's retried call with different values keeps every first regular write and
/// replaces the special ones, in the same call: Python's InMemorySaver `put_writes`
/// (skip when `inner_key[1] >= 0` and present) and SQLite's `INSERT OR IGNORE` /
/// `INSERT OR REPLACE` when every write is special.
#[tokio::test]
async fn retried_writes_keep_regular_firsts_and_replace_specials() {
    let s = InMemorySaver::new();
    let at = s
        .put(
            &CheckpointConfig::new("t"),
            &langgraph_codec::saver::Checkpoint::now(0),
            &CheckpointMetadata::new("loop", 0),
            &Default::default(),
        )
        .await
        .expect("put");
    let w = |pairs: &[(&str, &str)]| -> Vec<(String, Value)> {
        pairs
            .iter()
            .map(|(c, v)| ((*c).to_owned(), Value::from(*v)))
            .collect()
    };
    s.put_writes(&at, &w(&[("a", "a1"), ("b", "b1")]), "task", "")
        .await
        .expect("first");
    s.put_writes(
        &at,
        &w(&[("a", "a2"), ("b", "b2"), ("c", "c2")]),
        "task",
        "",
    )
    .await
    .expect("retry");
    s.put_writes(&at, &w(&[(ERROR, "e1")]), "task", "")
        .await
        .expect("error");
    s.put_writes(&at, &w(&[(ERROR, "e2")]), "task", "")
        .await
        .expect("error retry");
    let got = s
        .get_tuple(&at)
        .await
        .expect("get")
        .expect("stored")
        .pending_writes;
    let want: Vec<PendingWrite> = [(ERROR, "e2"), ("a", "a1"), ("b", "b1"), ("c", "c2")]
        .iter()
        .map(|(c, v)| PendingWrite::new("task", *c, *v))
        .collect();
    assert_eq!(got, want);
}

// ---- the conformance level ------------------------------------------------------------
// First tests: tests/conformance.rs (FULL on a passing saver, BASE on a reversed list).

#[cfg(feature = "conformance")]
mod conformance_level {
    use langgraph_codec::saver::conformance::{CapabilityReport, CaseReport, Outcome, Report};
    use langgraph_codec::saver::Capability;

    fn report(failing: &[Capability], undetected: &[Capability]) -> Report {
        Report {
            saver_name: "made up".into(),
            capabilities: Capability::ALL
                .iter()
                .map(|c| CapabilityReport {
                    capability: *c,
                    detected: !undetected.contains(c),
                    cases: if undetected.contains(c) {
                        Vec::new()
                    } else {
                        vec![CaseReport {
                            name: "test_x",
                            outcome: if failing.contains(c) {
                                Outcome::Failed("no".into())
                            } else {
                                Outcome::Passed
                            },
                        }]
                    },
                })
                .collect(),
        }
    }

    /// Python's `CapabilityReport.conformance_level` (conformance/report.py): FULL when
    /// every detected capability passed, BASE+PARTIAL when every base one did, BASE when
    /// some base one did, else NONE. Base: put, put_writes, get_tuple, list, delete_thread.
    #[test]
    fn conformance_levels_follow_python_report() {
        use Capability::*;
        let base = [Put, PutWrites, GetTuple, List, DeleteThread];
        assert_eq!(report(&[], &[]).conformance_level(), "FULL");
        // Undetected extended capabilities do not count against FULL.
        assert_eq!(
            report(&[], &[DeleteForRuns, CopyThread, Prune]).conformance_level(),
            "FULL"
        );
        // The delta cases are not in Python's suite: they count as extended.
        for ext in [DeleteForRuns, CopyThread, Prune, DeltaChannelHistory] {
            assert_eq!(report(&[ext], &[]).conformance_level(), "BASE+PARTIAL");
        }
        for b in base {
            assert_eq!(report(&[b], &[]).conformance_level(), "BASE", "{b} failing");
        }
        assert_eq!(
            report(&[Put, PutWrites, GetTuple, List], &[]).conformance_level(),
            "BASE"
        );
        assert_eq!(report(&base, &[]).conformance_level(), "NONE");
        assert!(report(&[], &[]).is_success());
        assert!(!report(&[Prune], &[]).is_success());
    }
}

// ---- writes_sort_key ------------------------------------------------------------------
// Killed the cargo-mutants survivors of `writes_sort_key` (MUTANTS.md).

/// Python's `writes_sort_key(write) = (task_path, task_id, idx)`: sorting by it puts
/// writes in path order, then task id, then index (specials before regular writes).
#[test]
fn writes_sort_key_orders_by_path_then_task_then_index() {
    use langgraph_codec::saver::types::writes_sort_key;
    assert_eq!(writes_sort_key("a:b", "t1", -2), ("a:b", "t1", -2));
    let mut writes = vec![
        ("~z", "t0", 0),
        ("", "t9", 1),
        ("~a", "t2", 0),
        ("~a", "t1", 3),
        ("~a", "t1", -1),
        ("", "t9", 0),
    ];
    writes.sort_by_key(|(p, t, i)| writes_sort_key(p, t, *i));
    assert_eq!(
        writes,
        [
            ("", "t9", 0),
            ("", "t9", 1),
            ("~a", "t1", -1),
            ("~a", "t1", 3),
            ("~a", "t2", 0),
            ("~z", "t0", 0),
        ]
    );
}
