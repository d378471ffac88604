//! Canonical associated data (AAD) binding a ciphertext to its row, as upstream
//! LangGraph builds it (`langgraph.checkpoint.serde` `build_aad`, newer than 4.3.2):
//!
//! ```text
//! b"langgraph-aad-v1" | u32be(len(kind)) | kind | u32be(n_fields) | (u32be(len(f)) | f)*
//! ```
//!
//! All strings are UTF-8; integers are written as Python's `str(int)` (decimal). A
//! ciphertext encrypted with one row's AAD fails to decrypt with any other row's.
//!
//! ```
//! use langgraph_codec::crypto::aad;
//!
//! let a = aad::checkpoint("thread-1", "", "1ef4f797-8335-6428-8001-8a1503f9b875")?;
//! assert!(a.starts_with(b"langgraph-aad-v1\x00\x00\x00\x0acheckpoint\x00\x00\x00\x03"));
//! // Fields are length-prefixed, so ("ab", "c") and ("a", "bc") differ.
//! assert_ne!(aad::build("blob", &["ab", "c"])?, aad::build("blob", &["a", "bc"])?);
//! # Ok::<(), langgraph_codec::Error>(())
//! ```

use super::CryptoFault;
use crate::error::Error;

/// The version prefix of every canonical AAD.
pub const AAD_VERSION: &[u8] = b"langgraph-aad-v1";

fn push_len(out: &mut Vec<u8>, len: usize) -> Result<(), Error> {
    let n = u32::try_from(len).map_err(|_| CryptoFault::TooLong {
        what: "associated-data field",
        len,
    })?;
    out.extend_from_slice(&n.to_be_bytes());
    Ok(())
}

/// The canonical AAD for a row kind and its identifying fields.
///
/// # Errors
/// [`ErrorKind::TooLong`](crate::ErrorKind::TooLong) when a field is longer than its 32-bit length prefix.
pub fn build(kind: &str, fields: &[&str]) -> Result<Vec<u8>, Error> {
    let size = fields.iter().fold(
        AAD_VERSION
            .len()
            .saturating_add(8)
            .saturating_add(kind.len()),
        |acc, f| acc.saturating_add(4).saturating_add(f.len()),
    );
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(AAD_VERSION);
    push_len(&mut out, kind.len())?;
    out.extend_from_slice(kind.as_bytes());
    push_len(&mut out, fields.len())?;
    for field in fields {
        push_len(&mut out, field.len())?;
        out.extend_from_slice(field.as_bytes());
    }
    Ok(out)
}

/// AAD of a checkpoint row: kind `checkpoint`, `(thread_id, checkpoint_ns, checkpoint_id)`.
///
/// # Errors
/// As [`build`]: [`ErrorKind::TooLong`](crate::ErrorKind::TooLong) for a field longer than 2^32-1 bytes.
pub fn checkpoint(
    thread_id: &str,
    checkpoint_ns: &str,
    checkpoint_id: &str,
) -> Result<Vec<u8>, Error> {
    build("checkpoint", &[thread_id, checkpoint_ns, checkpoint_id])
}

/// AAD of a checkpoint's metadata: kind `metadata`, `(thread_id, checkpoint_ns, checkpoint_id)`.
///
/// # Errors
/// As [`build`]: [`ErrorKind::TooLong`](crate::ErrorKind::TooLong) for a field longer than 2^32-1 bytes.
pub fn metadata(
    thread_id: &str,
    checkpoint_ns: &str,
    checkpoint_id: &str,
) -> Result<Vec<u8>, Error> {
    build("metadata", &[thread_id, checkpoint_ns, checkpoint_id])
}

/// AAD of a channel blob: kind `blob`, `(thread_id, checkpoint_ns, channel, version)`.
/// An integer version is written as its decimal text (Python `str(version)`).
///
/// # Errors
/// As [`build`]: [`ErrorKind::TooLong`](crate::ErrorKind::TooLong) for a field longer than 2^32-1 bytes.
pub fn blob(
    thread_id: &str,
    checkpoint_ns: &str,
    channel: &str,
    version: &str,
) -> Result<Vec<u8>, Error> {
    build("blob", &[thread_id, checkpoint_ns, channel, version])
}

/// AAD of a shallow saver's blob: kind `shallow_blob`, `(thread_id, checkpoint_ns, channel)`.
///
/// # Errors
/// As [`build`]: [`ErrorKind::TooLong`](crate::ErrorKind::TooLong) for a field longer than 2^32-1 bytes.
pub fn shallow_blob(thread_id: &str, checkpoint_ns: &str, channel: &str) -> Result<Vec<u8>, Error> {
    build("shallow_blob", &[thread_id, checkpoint_ns, channel])
}

/// AAD of a pending write: kind `write`,
/// `(thread_id, checkpoint_ns, checkpoint_id, task_id, str(idx), channel)`.
///
/// # Errors
/// As [`build`]: [`ErrorKind::TooLong`](crate::ErrorKind::TooLong) for a field longer than 2^32-1 bytes.
pub fn write(
    thread_id: &str,
    checkpoint_ns: &str,
    checkpoint_id: &str,
    task_id: &str,
    idx: i64,
    channel: &str,
) -> Result<Vec<u8>, Error> {
    let idx = idx.to_string();
    build(
        "write",
        &[
            thread_id,
            checkpoint_ns,
            checkpoint_id,
            task_id,
            &idx,
            channel,
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    // Expected bytes from the spec (PROTOCOL.md section 4) written out with Python's
    // struct module, independently of this code:
    //   def build(kind, fields):
    //       f = [str(x).encode() for x in fields]
    //       return (b"langgraph-aad-v1" + struct.pack(">I", len(kind)) + kind.encode()
    //               + struct.pack(">I", len(f)) + b"".join(struct.pack(">I", len(x)) + x for x in f))
    #[test]
    fn matches_python_struct_encoding() {
        let cases = [
            (
                write("t1", "", "c1", "task", -1, "__error__"),
                "6c616e6767726170682d6161642d76310000000577726974650000000600000002743100000000000000026331000000047461736b000000022d31000000095f5f6572726f725f5f",
            ),
            (
                blob("thread-é", "ns", "messages", "00000000000000000000000000000002.0"),
                "6c616e6767726170682d6161642d763100000004626c6f6200000004000000097468726561642dc3a9000000026e73000000086d657373616765730000002230303030303030303030303030303030303030303030303030303030303030322e30",
            ),
            (
                checkpoint("t", "", "id"),
                "6c616e6767726170682d6161642d76310000000a636865636b706f696e7400000003000000017400000000000000026964",
            ),
            (
                metadata("t", "n", "id"),
                "6c616e6767726170682d6161642d7631000000086d65746164617461000000030000000174000000016e000000026964",
            ),
            (
                shallow_blob("t", "n", "ch"),
                "6c616e6767726170682d6161642d76310000000c7368616c6c6f775f626c6f62000000030000000174000000016e000000026368",
            ),
        ];
        for (got, expected) in cases {
            assert_eq!(hex(&got.expect("aad")), expected);
        }
    }
}
