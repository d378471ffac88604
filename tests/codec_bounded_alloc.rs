//! Bounded resources: a few bytes declaring gigabytes allocate (almost) nothing.
//!
//! This test binary installs a counting global allocator and checks the peak number of
//! bytes live while each hostile input is refused. It holds one `#[test]` so no other
//! test's allocations run concurrently and disturb the count.

// A global allocator is an `unsafe impl` by nature; everything else stays safe.
#![allow(unsafe_code)]

#[path = "support/counting.rs"]
mod counting;

use counting::peak_during;
use langgraph_codec::msgpack::{self, DecodeOptions};
use langgraph_codec::{msgpack::DecodeErrorKind, view, JsonPlusSerializer, Serializer, Value};

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

/// Far below any of the declared sizes (4 GiB), far above what refusing needs.
const SMALL: usize = 64 * 1024;

#[test]
fn hostile_lengths_are_refused_without_allocating_them() {
    // The counter sees allocations: a 1 MiB vector must show up as ≥ 1 MiB.
    let (v, peak) = peak_during(|| vec![1u8; 1 << 20]);
    assert!(peak >= 1 << 20, "allocator not counting: {peak}");
    drop(v);

    // Each ≤ 20 bytes, declaring u32::MAX elements or bytes, at the top level, inside an
    // array, and inside an extension payload (codes 0–7 are decoded as nested documents).
    let cases: &[(&str, &[u8])] = &[
        ("array32", b"\xdd\xff\xff\xff\xff\x01\x02\x03"),
        ("map32", b"\xdf\xff\xff\xff\xff\x01\x02\x03"),
        ("str32", b"\xdb\xff\xff\xff\xffabc"),
        ("bin32", b"\xc6\xff\xff\xff\xffabc"),
        ("ext32 code 7", b"\xc9\xff\xff\xff\xff\x07\x01"),
        ("ext32 code 5", b"\xc9\xff\xff\xff\xff\x05\x01"),
        ("ext32 code 42", b"\xc9\xff\xff\xff\xff\x2a\x01"),
        ("array16", b"\xdc\xff\xff\x01"),
        ("map16", b"\xde\xff\xff\x01"),
        ("nested array32", b"\x91\x91\x91\xdd\xff\xff\xff\xff\x01"),
        ("map value str32", b"\x81\xa1k\xdb\xff\xff\xff\xff"),
        // ext 7 whose payload (8 bytes) declares a 4 GiB array: the payload is kept raw,
        // nothing is allocated for the array.
        (
            "array32 in ext7",
            b"\xd7\x07\xdd\xff\xff\xff\xff\x01\x02\x03",
        ),
        (
            "str32 in ext5 tuple",
            b"\xc7\x0a\x05\x93\xa1m\xa1n\xdb\xff\xff\xff\xff",
        ),
    ];
    let serde = JsonPlusSerializer::new();
    let liberal = DecodeOptions::new().allow_non_canonical(true);
    for &(name, bytes) in cases {
        assert!(bytes.len() <= 20, "{name}");
        let (result, peak) = peak_during(|| msgpack::decode(bytes));
        assert!(peak < SMALL, "{name}: decode peaked at {peak} bytes");
        match &result {
            Err(e) => assert!(
                matches!(
                    e.kind(),
                    DecodeErrorKind::LengthExceedsInput { .. }
                        | DecodeErrorKind::NonCanonical { .. }
                ),
                "{name}: {e}"
            ),
            // Only the ext payloads may decode (kept raw, with their 8 or 10 bytes).
            Ok(Value::Ext(raw)) => assert!(raw.data.len() <= 10, "{name}"),
            Ok(other) => panic!("{name}: decoded {other:?}"),
        }
        let (_, peak) = peak_during(|| liberal.decode(bytes));
        assert!(
            peak < SMALL,
            "{name}: liberal decode peaked at {peak} bytes"
        );
        let (_, peak) = peak_during(|| serde.loads_typed("msgpack", bytes));
        assert!(peak < SMALL, "{name}: loads_typed peaked at {peak} bytes");
        let shared = bytes::Bytes::copy_from_slice(bytes);
        let (_, peak) = peak_during(|| serde.loads_typed_bytes("msgpack", &shared));
        assert!(
            peak < SMALL,
            "{name}: loads_typed_bytes peaked at {peak} bytes"
        );
    }

    // A declared length is checked against the bytes left, and beyond that nothing is
    // reserved ahead of the items: an array declaring a million items whose 1 MiB of
    // input is one bin, then nothing, fails without reserving a million slots (40 MB).
    let mut amplifier = vec![0xdd, 0x00, 0x0f, 0x42, 0x40, 0xc6];
    amplifier.extend_from_slice(&(1u32 << 20).to_be_bytes());
    amplifier.resize(amplifier.len() + (1 << 20), 0x00);
    let (result, peak) = peak_during(|| msgpack::decode(&amplifier));
    assert!(matches!(
        result.map_err(|e| e.kind().clone()),
        Err(DecodeErrorKind::Truncated)
    ));
    assert!(peak < 4 << 20, "amplifier peaked at {peak} bytes");

    // 100,000 levels of nesting in 100 KB: refused at depth 1,024, holding at most the
    // decoder's stack of 1,024 frames (a few hundred bytes each), not the whole input.
    let deep = vec![0x91u8; 100_000];
    let (result, peak) = peak_during(|| msgpack::decode(&deep));
    assert!(matches!(
        result.map_err(|e| e.kind().clone()),
        Err(DecodeErrorKind::DepthLimit { limit: 1024 })
    ));
    assert!(peak < 1024 * 512, "deep array peaked at {peak} bytes");
    let deep_json = vec![b'['; 100_000];
    let (result, peak) = peak_during(|| serde.loads_typed("json", &deep_json));
    assert!(result.is_err());
    assert!(peak < 1024 * 512, "deep json peaked at {peak} bytes");
    // A view may nest as deep as the view of the deepest value the decoder accepts
    // (131,072 levels across extension payloads, up to 3 JSON levels each), so this one
    // is read to its end: one parser frame per level, linear in the text.
    let deep_view = "[".repeat(100_000);
    let (result, peak) = peak_during(|| view::from_str(&deep_view));
    assert!(result.is_err());
    assert!(
        peak < 80 * deep_view.len(),
        "deep view peaked at {peak} bytes"
    );
    let deeper = "[".repeat(400_000);
    assert!(matches!(view::from_str(&deeper), Err(e) if e.to_string().contains("nesting deeper")));

    // lgcodec --jsonl (records::run_jsonl, feature `cli`): a 16 MiB line under a 64 KiB
    // limit is answered line_too_long without being held; the next line is answered.
    // Memory stays a small multiple of the limit, not of the line.
    #[cfg(feature = "cli")]
    {
        let limit = 64 * 1024;
        let mut input = vec![b'x'; 16 << 20];
        input.extend_from_slice(b"\n{\"id\": 2, \"type\": \"msgpack\", \"data\": \"AQ==\"}\n");
        let mut out = Vec::new();
        let reader = langgraph_codec::records::RowReader::from_env();
        let (summary, peak) = peak_during(|| {
            langgraph_codec::records::run_jsonl(&input[..], &mut out, limit, &|record| {
                let typed = record.data()?;
                Ok(langgraph_codec::records::Answer::Value(
                    typed.type_tag.clone(),
                    reader.loads(&typed.type_tag, &typed.data)?,
                ))
            })
        });
        let summary = summary.expect("in memory");
        assert_eq!((summary.records, summary.failed), (2, 1));
        let text = String::from_utf8(out).expect("utf-8");
        assert!(
            text.contains("line_too_long")
                && text.contains(r#"{"line":2,"id":2,"type":"msgpack","value":1}"#),
            "{text}"
        );
        assert!(
            peak < 4 * limit,
            "jsonl peaked at {peak} bytes for a {limit}-byte limit"
        );
    }

    // `store import` of a backup line whose unknown field holds 8 MB of empty arrays
    // (`[[],[],…]`): the field is skipped unparsed, so the import costs about the line
    // itself, not a tree of values ~16 times its size.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    {
        let dir = tempfile::tempdir().expect("temp dir");
        let target = dir.path().join("t.db");
        let arrays = "[],".repeat((8 << 20) / 3);
        let line_len = arrays.len();
        let backup = format!(
            concat!(
                "{{\"format\":\"lgcodec-store-backup\",\"version\":1,\"backend\":\"sqlite\",\"layout\":\"x\",\"threads\":null}}\n",
                "{{\"t\":\"write\",\"thread_id\":\"t\",\"checkpoint_ns\":\"\",\"checkpoint_id\":\"c\",\"task_id\":\"k\",\"idx\":0,",
                "\"task_path\":\"\",\"channel\":\"ch\",\"type\":\"msgpack\",\"value\":\"wA==\",\"junk\":[{}[]]}}\n",
                "{{\"t\":\"end\",\"checkpoints\":0,\"blobs\":0,\"writes\":1}}\n"
            ),
            arrays
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        // The target's tables first (SQLite's own allocations are not the line's).
        let mut empty = std::io::Cursor::new(
            b"{\"format\":\"lgcodec-store-backup\",\"version\":1,\"backend\":\"sqlite\",\"layout\":\"x\",\"threads\":null}\n{\"t\":\"end\",\"checkpoints\":0,\"blobs\":0,\"writes\":0}\n".to_vec(),
        );
        let t = target.to_str().expect("utf-8").to_owned();
        runtime
            .block_on(langgraph_codec::store::import(
                &mut empty,
                "empty",
                &t,
                &langgraph_codec::store::ImportOptions::new(),
            ))
            .expect("tables");
        let mut input = std::io::Cursor::new(backup.into_bytes());
        let (report, peak) = peak_during(|| {
            runtime.block_on(langgraph_codec::store::import(
                &mut input,
                "crafted",
                &t,
                &langgraph_codec::store::ImportOptions::new(),
            ))
        });
        let report = report.expect("imports the row");
        assert_eq!(report.inserted, 1, "{report:?}");
        assert!(
            peak < 4 * line_len,
            "import peaked at {peak} bytes for a {line_len}-byte line"
        );
    }
}
