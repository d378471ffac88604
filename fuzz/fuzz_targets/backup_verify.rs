//! `store::verify_backup` (and so `import`, which reads through the same reader) on
//! arbitrary bytes as a backup file: never panics, never holds a line past its limit,
//! and what it counts as read is at most what the file's lines could hold.
#![no_main]

use std::io::Cursor;

use langgraph_codec::store::verify_backup;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    // The whole input under the default limit, then under one that cuts most lines.
    for limit in [None, Some(64)] {
        let mut file = Cursor::new(input);
        if let Ok(check) = verify_backup(&mut file, "fuzz.jsonl", limit) {
            let lines = input.split(|b| *b == b'\n').count() as u64;
            assert!(check.checkpoints + check.blobs + check.writes <= lines);
        }
    }
});
