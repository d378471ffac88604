//! The borrowed decoder and the lazy lookups on arbitrary bytes: they never panic, the
//! borrowed decode gives exactly what the owned decoder gives (the same value, or the
//! same error kind at the same offset), so does the typed deserializer reading a
//! `Value`, and every lookup finds what the decoded tree holds, also with tight limits.
#![no_main]

use langgraph_codec::msgpack::DecodeOptions;
use langgraph_codec::Value;
use libfuzzer_sys::fuzz_target;

fn check(data: &[u8], options: &DecodeOptions) {
    let owned = options.decode(data);
    let borrowed = options.decode_ref(data);
    match (&owned, &borrowed) {
        (Ok(o), Ok(b)) => assert_eq!(&b.to_owned_value(), o),
        (Err(o), Err(b)) => assert_eq!(o, b),
        _ => panic!("owned {owned:?} vs borrowed {borrowed:?}"),
    }
    match (&owned, options.from_slice::<Value>(data)) {
        (Ok(o), Ok(t)) => assert_eq!(o, &t),
        (Err(o), Err(t)) => assert_eq!(t.offset(), Some(o.offset())),
        (o, t) => panic!("owned {o:?} vs typed {t:?}"),
    }
    let lazy = options.lazy(data);
    match &borrowed {
        Ok(tree) => {
            assert_eq!(lazy.bytes().expect("a decoded item skips"), data);
            for (k, _) in tree.as_map().unwrap_or_default() {
                if let Some(key) = k.as_str() {
                    let found = lazy.get(key).expect("reads").expect("present");
                    assert_eq!(Some(&found.decode().expect("decodes")), tree.get(key));
                }
            }
            if let Some(items) = tree.as_array() {
                let last = lazy.last().expect("reads").map(|l| l.decode().expect("decodes"));
                assert_eq!(last.as_ref(), items.last());
                assert_eq!(lazy.len().expect("reads"), Some(items.len()));
            }
        }
        Err(e) => {
            // Skipping checks what decoding checks (only trailing bytes are left to
            // the caller of a lookup).
            if !matches!(e.kind(), langgraph_codec::msgpack::DecodeErrorKind::TrailingBytes { .. }) {
                assert_eq!(lazy.bytes().err().as_ref(), Some(e));
            }
            let _ = lazy.get("messages");
            let _ = lazy.last();
        }
    }
}

fuzz_target!(|data: &[u8]| {
    check(data, &DecodeOptions::new());
    check(data, &DecodeOptions::new().max_depth(3).max_total_depth(6));
    check(data, &DecodeOptions::new().allow_non_canonical(true));
});
