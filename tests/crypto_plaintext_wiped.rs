//! Decrypted and to-be-encrypted plaintext does not outlive the call: every heap block
//! freed while an encrypting serializer works is scanned for a marker that only the
//! plaintext holds, and none may still contain it.
//!
//! This test binary installs a global allocator that scans each block it frees (on the
//! thread that armed it) before handing it back to the system allocator. One `#[test]`,
//! so nothing else runs while it is armed.

// A global allocator is an `unsafe impl` by nature; everything else stays safe.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use langgraph_codec::crypto::{aad, AesMode, EncryptedSerializer};
use langgraph_codec::TypedSerializerExt;
use langgraph_codec::{Serializer, TypedBytes, Value};
use serde::{Deserialize, Serialize};

/// 32 bytes no other data in this test contains.
const MARKER: &[u8; 32] = b"wipe-me:7f3a9c1e-plaintext-only!";

struct Scanning;

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
}
static FOUND: AtomicUsize = AtomicUsize::new(0);

fn holds_marker(block: &[u8]) -> bool {
    block.windows(MARKER.len()).any(|w| w == MARKER)
}

// SAFETY: forwards every call to the system allocator unchanged; before freeing a block
// it only reads the block's own bytes, which the caller still owns.
unsafe impl GlobalAlloc for Scanning {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if ARMED.with(Cell::get) {
            // SAFETY: `ptr` points to `layout.size()` bytes allocated by us and not yet
            // freed (the caller's contract); u8 has no invalid values. Uninitialised
            // spare capacity is never produced here: Vec buffers that held plaintext
            // were written.
            let block = unsafe { std::slice::from_raw_parts(ptr, layout.size()) };
            if holds_marker(block) {
                FOUND.fetch_add(1, SeqCst);
            }
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Scanning = Scanning;

/// How many freed blocks still held the marker while `f` ran.
fn leaks_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    FOUND.store(0, SeqCst);
    ARMED.with(|a| a.set(true));
    let out = f();
    ARMED.with(|a| a.set(false));
    (out, FOUND.load(SeqCst))
}

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Secret {
    step: u32,
    note: String,
}

fn secret() -> Secret {
    Secret {
        step: 7,
        note: String::from_utf8(MARKER.to_vec()).expect("ascii"),
    }
}

/// A value whose serialized form starts with the marker and runs to ~200 KB, in
/// many small parts (like a checkpoint of messages).
fn large_secret() -> Vec<String> {
    let mut parts = vec![String::from_utf8(MARKER.to_vec()).expect("ascii")];
    parts.extend((0..2000).map(|i| format!("{i:0100}")));
    parts
}

#[test]
fn plaintext_is_wiped_on_every_path() {
    // The scanner sees freed plaintext: a Vec holding the marker, dropped while armed.
    let ((), found) = leaks_during(|| drop(MARKER.to_vec()));
    assert_eq!(found, 1, "the scanning allocator does not see freed blocks");

    for mode in [AesMode::Eax, AesMode::Gcm] {
        let serde = EncryptedSerializer::from_aes_key(b"0123456789abcdef", mode).expect("key");
        let here = aad::checkpoint("thread-1", "", "checkpoint-1").expect("aad");
        let there = aad::checkpoint("thread-1", "", "checkpoint-2").expect("aad");

        // Typed write: the serialized plaintext is wiped once sealed.
        let value = secret();
        let (row, found) = leaks_during(|| serde.with_aad(&here).dumps_typed_value(&value));
        drop(value);
        let row = row.expect("typed dumps");
        assert_eq!(found, 0, "{mode:?}: typed dumps left plaintext behind");

        // Typed read: the decrypted bytes are wiped once the value is read. The value
        // itself (which holds the marker) is returned, not freed.
        let (back, found) = leaks_during(|| {
            serde
                .with_aad(&here)
                .loads_typed_value::<Secret>(&row.type_tag, &row.data)
        });
        assert_eq!(back.expect("typed loads"), secret());
        assert_eq!(found, 0, "{mode:?}: typed loads left plaintext behind");

        // The typed path takes associated data: another row's refuses it.
        let refused = serde
            .with_aad(&there)
            .loads_typed_value::<Secret>(&row.type_tag, &row.data);
        assert!(
            matches!(
                refused.as_ref().map_err(|e| e.kind()),
                Err(langgraph_codec::ErrorKind::AuthenticationFailed)
            ),
            "{mode:?}: {refused:?}"
        );
        // …and so does no associated data, and the Value path reads the typed row.
        assert!(serde
            .loads_typed_value::<Secret>(&row.type_tag, &row.data)
            .is_err());
        let value = serde
            .with_aad(&here)
            .loads_typed(&row.type_tag, &row.data)
            .expect("the Value path reads a typed row");
        assert_eq!(value.get("step"), Some(&Value::from(7i64)));
        drop(value);

        // Value path and rekey go through the same core.
        let (read, found) =
            leaks_during(|| serde.with_aad(&here).loads_typed(&row.type_tag, &row.data));
        let read = read.expect("value loads");
        assert_eq!(found, 0, "{mode:?}: Value loads left plaintext behind");
        let (again, found) = leaks_during(|| serde.with_aad(&here).dumps_typed(&read));
        again.expect("value dumps");
        assert_eq!(found, 0, "{mode:?}: Value dumps left plaintext behind");
        drop(read);
        // `rekey` decodes the row to check it (the decoded Value, freed inside the call,
        // holds the marker too), so its decrypted buffer is checked through `open`,
        // the core it uses.
        let rekeyed = serde
            .with_aad(&here)
            .rekey(&TypedBytes::clone(&row))
            .expect("rekey");
        assert_ne!(rekeyed.data, row.data);
        let (opened, found) = leaks_during(|| {
            serde
                .open(&row.type_tag, &row.data, &here)
                .map(|o| o.map(|(_, plaintext)| drop(plaintext)))
        });
        assert!(matches!(opened, Ok(Some(()))));
        assert_eq!(found, 0, "{mode:?}: open's plaintext was not wiped");

        // Large rows: the serialized plaintext outgrows its first buffer many times
        // while it is written (a 150 KB checkpoint does), and no buffer it grew out
        // of may be freed holding it.
        let big = large_secret();
        let (row, found) = leaks_during(|| serde.with_aad(&here).dumps_typed_value(&big));
        let row = row.expect("large typed dumps");
        assert_eq!(
            found, 0,
            "{mode:?}: large typed dumps left plaintext behind"
        );
        let value = serde
            .with_aad(&here)
            .loads_typed(&row.type_tag, &row.data)
            .expect("reads back");
        let (again, found) = leaks_during(|| serde.with_aad(&here).dumps_typed(&value));
        again.expect("large value dumps");
        assert_eq!(
            found, 0,
            "{mode:?}: large Value dumps left plaintext behind"
        );
    }
}
