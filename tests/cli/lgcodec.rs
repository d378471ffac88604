//! The `lgcodec` command as a user meets it: messages that say what to do, JSONL batches
//! that keep going and say where, keys, and `--help` examples that work when pasted.
//!
//! Expected values come from first principles (Python's rows: `ormsgpack.packb(1)` is
//! `\x01`, `packb({"a": 1})` is `\x81\xa1a\x01`) or from the library's own encryption,
//! which other tests check against Python byte for byte.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
use langgraph_codec::{Serializer, Value};

const BIN: &str = env!("CARGO_BIN_EXE_lgcodec");
const KEY: &str = "0123456789abcdef";
const OLD_KEY: &str = "fedcba9876543210";

pub(crate) struct Run {
    pub(crate) code: i32,
    stdout: String,
    pub(crate) stderr: String,
}

pub(crate) fn lgcodec(args: &[&str], env: &[(&str, &[u8])], stdin: &[u8]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env_remove("LANGGRAPH_AES_KEY")
        .env_remove("LANGGRAPH_AES_KEY_PREVIOUS")
        .env_remove("LANGGRAPH_AES_FALLBACK_KEYS")
        .env_remove("LANGGRAPH_AES_STRICT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, os(v));
    }
    let mut child = cmd.spawn().expect("lgcodec starts");
    // A run that fails at start-up (a bad key) may exit before reading its input: a
    // broken pipe here is that, not a test failure.
    if let Err(e) = child.stdin.take().expect("stdin").write_all(stdin) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    let Output {
        status,
        stdout,
        stderr,
    } = child.wait_with_output().expect("lgcodec ends");
    Run {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8(stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

#[cfg(unix)]
fn os(bytes: &[u8]) -> std::ffi::OsString {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(bytes).to_owned()
}

fn answers(run: &Run) -> Vec<serde_json::Value> {
    run.stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("every answer is JSON"))
        .collect()
}

/// `bytes` in a file of its own directory (kept: the test reads it after this returns).
fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = tempfile::Builder::new()
        .prefix("lgcodec-cli-test-")
        .tempdir()
        .expect("temp dir")
        .keep();
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write temp file");
    path
}

fn encrypted(value: &Value, key: &str) -> langgraph_codec::TypedBytes {
    EncryptedSerializer::from_aes_key(key.as_bytes(), AesMode::Eax)
        .expect("key")
        .dumps_typed(value)
        .expect("encrypt")
}

fn data_line(type_tag: &str, data: &[u8]) -> String {
    format!(
        "{{\"type\": \"{type_tag}\", \"data\": \"{}\"}}\n",
        B64.encode(data)
    )
}

#[test]
fn io_errors_name_the_file() {
    let tmp = tempfile::Builder::new()
        .prefix("lgcodec-cli-missing-")
        .tempdir()
        .expect("temp dir");
    let missing = tmp.path().join("no-such-dir/row.bin");
    let missing = missing.to_str().expect("utf-8 path");
    for args in [
        vec!["decode", "--type", "msgpack", missing],
        vec!["decode", "--jsonl", missing],
        vec!["encode", missing],
        vec!["rekey", missing],
    ] {
        let run = lgcodec(&args, &[("LANGGRAPH_AES_KEY", KEY.as_bytes())], b"");
        assert_eq!(run.code, 2, "{args:?}");
        assert!(
            run.stderr.contains(missing) && run.stderr.contains("No such file"),
            "{args:?}: {}",
            run.stderr
        );
    }
}

#[test]
fn aes_row_without_a_key_says_to_set_it() {
    let row = encrypted(&Value::from("secret"), KEY);
    let file = temp_file("row.aes", &row.data);
    let run = lgcodec(
        &[
            "decode",
            "--type",
            "msgpack+aes",
            file.to_str().expect("path"),
        ],
        &[],
        b"",
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("set LANGGRAPH_AES_KEY"),
        "{}",
        run.stderr
    );
    let run = lgcodec(
        &["decode", "--jsonl"],
        &[],
        data_line("msgpack+aes", &row.data).as_bytes(),
    );
    let a = answers(&run);
    assert_eq!(a[0]["error"]["kind"], "missing_key");
    assert!(a[0]["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("set LANGGRAPH_AES_KEY")));
}

#[test]
fn base64_text_given_as_bytes_is_named() {
    // base64 of packb({"a": 1}); read as msgpack, "g" (0x67) is the fixint 103 and the
    // rest are trailing bytes.
    let text = B64.encode(b"\x81\xa1a\x01");
    let file = temp_file("row.b64", text.as_bytes());
    let path = file.to_str().expect("path");
    let run = lgcodec(&["decode", "--type", "msgpack", path], &[], b"");
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("trailing") && run.stderr.contains("base64"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--base64"), "{}", run.stderr);
    // The hint works: --base64 reads it.
    let run = lgcodec(&["decode", "--base64", "--type", "msgpack", path], &[], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(v["value"]["a"], 1);
}

#[test]
fn ciphertext_read_as_plaintext_is_named() {
    let row = encrypted(&Value::map([("k", Value::from("v".repeat(64)))]), KEY);
    let run = lgcodec(
        &["decode", "--jsonl"],
        &[],
        data_line("msgpack", &row.data).as_bytes(),
    );
    let a = answers(&run);
    let hint = a[0]["error"]["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("+aes"), "{a:?}");
}

#[test]
fn compressed_rows_decode_with_and_without_encryption() {
    use langgraph_codec::compression::CompressedSerializer;
    use langgraph_codec::crypto::{AesKey, KeyRing};
    let zlib = CompressedSerializer::new(langgraph_codec::JsonPlusSerializer::new());
    let plain = zlib
        .dumps_typed(&Value::from("z".repeat(500)))
        .expect("dumps");
    let ring = KeyRing::new(AesKey::new(KEY.as_bytes()).expect("key"));
    let sealed = EncryptedSerializer::new(ring, zlib)
        .dumps_typed(&Value::from(3i64))
        .expect("dumps");
    assert_eq!(
        (plain.type_tag.as_str(), sealed.type_tag.as_str()),
        ("msgpack+zlib", "msgpack+zlib+aes")
    );
    let input =
        data_line(&plain.type_tag, &plain.data) + &data_line(&sealed.type_tag, &sealed.data);
    let run = lgcodec(
        &["decode", "--jsonl"],
        &[("LANGGRAPH_AES_KEY", KEY.as_bytes())],
        input.as_bytes(),
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    let a = answers(&run);
    assert_eq!(a[0]["value"], "z".repeat(500));
    assert_eq!(
        (&a[1]["type"], &a[1]["value"]),
        (&"msgpack".into(), &3.into())
    );
}

#[test]
fn unknown_type_lists_the_valid_ones() {
    let run = lgcodec(&["decode", "--type", "msgpak", "-"], &[], b"\x01");
    assert_eq!(run.code, 2);
    for tag in ["null", "bytes", "bytearray", "msgpack", "json", "empty"] {
        assert!(run.stderr.contains(tag), "{tag}: {}", run.stderr);
    }
}

#[test]
fn empty_rows_decode_and_encode() {
    // Python's savers write ("empty", b"") for a channel without a value.
    let run = lgcodec(
        &["decode", "--jsonl"],
        &[],
        data_line("empty", b"").as_bytes(),
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    let a = answers(&run);
    assert_eq!(a[0]["type"], "empty");
    assert_eq!(a[0]["value"], serde_json::Value::Null);
    let run = lgcodec(&["encode", "--jsonl"], &[], run.stdout.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stdout);
    let a = answers(&run);
    assert_eq!(
        (&a[0]["type"], &a[0]["data"]),
        (&"empty".into(), &"".into())
    );
    // Single-row forms too; an empty marker with bytes is refused.
    let run = lgcodec(&["decode", "--type", "empty", "-"], &[], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = lgcodec(&["decode", "--type", "empty", "-"], &[], b"x");
    assert_eq!(run.code, 2);
    let run = lgcodec(
        &["encode", "-"],
        &[],
        br#"{"type": "empty", "value": null}"#,
    );
    assert_eq!((run.code, run.stdout.as_str()), (0, ""));
}

#[test]
fn jsonl_answers_carry_line_numbers_and_other_fields() {
    let input = format!(
        "{}\n\n{}{}",
        r#"{"id": 7, "type": "msgpack", "data": "AQ==", "note": {"x": [1]}}"#,
        r#"{"id": "b", "type": "msgpack", "data": "AQE="}"#,
        "\n   \n\n{\"id\": 9, \"type\": \"null\", \"data\": \"\"}\n"
    );
    let run = lgcodec(&["decode", "--jsonl"], &[], input.as_bytes());
    assert_eq!(run.code, 1);
    let a = answers(&run);
    assert_eq!(a.len(), 3, "{}", run.stdout);
    assert_eq!(a[0]["line"], 1);
    assert_eq!(a[0]["id"], 7);
    assert_eq!(a[0]["note"]["x"][0], 1);
    assert_eq!(a[0]["value"], 1);
    assert_eq!(a[1]["line"], 3);
    assert_eq!(a[1]["id"], "b");
    assert_eq!(a[1]["error"]["kind"], "trailing_bytes");
    assert_eq!(a[2]["line"], 6);
    assert_eq!(a[2]["id"], 9);
    // Blank lines are counted.
    assert!(run.stderr.contains("3 blank"), "{}", run.stderr);
    // The error record passes through encode, still failing the batch.
    let run = lgcodec(&["encode", "--jsonl"], &[], run.stdout.as_bytes());
    assert_eq!(run.code, 1);
    let b = answers(&run);
    assert_eq!(b.len(), 3);
    assert_eq!(b[0]["data"], "AQ==");
    assert_eq!(b[0]["id"], 7);
    assert_eq!(b[1]["error"], a[1]["error"]);
    assert_eq!(b[1]["id"], "b");
    assert_eq!(b[2]["data"], "");
    assert_eq!(b[2]["type"], "null");
}

#[test]
fn overlong_and_non_utf8_lines_fail_alone() {
    let long = format!(
        "{{\"type\": \"bytes\", \"data\": \"{}\"}}\n",
        "A".repeat(400)
    );
    let mut input = long.into_bytes();
    input.extend_from_slice(b"{\"type\": \"msgpack\", \"data\": \"AQ==\"}\n");
    input.extend_from_slice(b"{\"type\": \"msgpack\", \"data\": \"\xff\"}\n");
    input.extend_from_slice(b"{\"type\": \"msgpack\", \"data\": \"Ag==\"}");
    let run = lgcodec(
        &["decode", "--jsonl", "--max-line-bytes", "100"],
        &[],
        &input,
    );
    assert_eq!(run.code, 1);
    let a = answers(&run);
    assert_eq!(a.len(), 4, "{}", run.stdout);
    assert_eq!(a[0]["error"]["kind"], "line_too_long");
    assert_eq!(a[0]["line"], 1);
    assert_eq!(a[1]["value"], 1);
    assert_eq!(a[2]["error"]["kind"], "invalid_utf8");
    assert_eq!(a[2]["line"], 3);
    assert_eq!(a[3]["value"], 2);
    assert_eq!(a[3]["line"], 4);
}

#[test]
fn rekey_reads_jsonl_without_a_flag_and_refuses_unreadable_rows() {
    let old = encrypted(&Value::from(5i64), OLD_KEY);
    let mut input = data_line(&old.type_tag, &old.data);
    input.push_str(&data_line("msgpack", b"\x01"));
    input.push_str(&data_line("msgpack", b"\x01\x02")); // trailing byte: unreadable
    input.push_str(&data_line("yaml", b"a: 1")); // unknown tag
    let env: [(&str, &[u8]); 2] = [
        ("LANGGRAPH_AES_KEY", KEY.as_bytes()),
        ("LANGGRAPH_AES_KEY_PREVIOUS", OLD_KEY.as_bytes()),
    ];
    let run = lgcodec(&["rekey"], &env, input.as_bytes());
    assert_eq!(run.code, 1, "{}", run.stderr);
    let a = answers(&run);
    assert_eq!(a.len(), 4);
    let serde = EncryptedSerializer::from_aes_key(KEY.as_bytes(), AesMode::Eax).expect("key");
    for (answer, want) in a.iter().zip([5i64, 1]) {
        let data = B64
            .decode(answer["data"].as_str().expect("data"))
            .expect("b64");
        let tag = answer["type"].as_str().expect("type");
        assert_eq!(serde.loads_typed(tag, &data).ok(), Some(Value::from(want)));
    }
    assert_eq!(a[2]["error"]["kind"], "trailing_bytes");
    assert_eq!(a[3]["error"]["kind"], "unknown_type");
}

#[test]
fn an_invalid_key_does_not_block_plaintext_rows() {
    let row = encrypted(&Value::from(1i64), KEY);
    let input = format!(
        "{}{}",
        data_line("msgpack", b"\x01"),
        data_line(&row.type_tag, &row.data)
    );
    let env: [(&str, &[u8]); 1] = [("LANGGRAPH_AES_KEY", b"short")];
    let run = lgcodec(&["decode", "--jsonl"], &env, input.as_bytes());
    let a = answers(&run);
    assert_eq!(a[0]["value"], 1, "{}", run.stdout);
    assert_eq!(a[1]["error"]["kind"], "invalid_key_length");
    let run = lgcodec(&["decode", "--type", "msgpack", "-"], &env, b"\x01");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("LANGGRAPH_AES_KEY"), "{}", run.stderr);
    // Encrypting needs the key: a start-up error.
    let run = lgcodec(
        &["encode", "--encrypt", "-"],
        &env,
        br#"{"type": "msgpack", "value": 1}"#,
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("5 bytes"), "{}", run.stderr);
}

#[test]
fn keys_that_are_not_utf8_are_named() {
    let run = lgcodec(
        &["encode", "--encrypt", "-"],
        &[("LANGGRAPH_AES_KEY", b"\xff123456789abcdef")],
        br#"{"type": "msgpack", "value": 1}"#,
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("LANGGRAPH_AES_KEY") && run.stderr.contains("UTF-8"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("not set"), "{}", run.stderr);
    // A previous key that cannot be read is a start-up error, not a dropped key.
    let env: [(&str, &[u8]); 2] = [
        ("LANGGRAPH_AES_KEY", KEY.as_bytes()),
        ("LANGGRAPH_AES_KEY_PREVIOUS", b"\xfe23456789abcdef"),
    ];
    let row = data_line("msgpack", b"\x01");
    let run = lgcodec(&["rekey"], &env, row.as_bytes());
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("LANGGRAPH_AES_KEY_PREVIOUS") && run.stderr.contains("UTF-8"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout, "");
}

#[test]
fn errors_about_decrypted_rows_hold_no_plaintext() {
    // A json row that is not valid JSON right after the secret digits (big integers
    // themselves now read as Value::BigInt): the message may not repeat them.
    let secret = "98765432109876543210987654321";
    let serde = EncryptedSerializer::from_aes_key(KEY.as_bytes(), AesMode::Eax).expect("key");
    let json_row = serde
        .encrypt_typed(
            &langgraph_codec::TypedBytes::new("json", format!("{{\"pin\": {secret}x}}")),
            b"",
        )
        .expect("encrypt");
    let run = lgcodec(
        &["decode", "--jsonl"],
        &[("LANGGRAPH_AES_KEY", KEY.as_bytes())],
        data_line(&json_row.type_tag, &json_row.data).as_bytes(),
    );
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("invalid_json"), "{}", run.stdout);
    assert!(!run.stdout.contains("987654321"), "{}", run.stdout);
}

/// The `$ ` lines of a `--help` text: its examples, as they are to be pasted.
pub(crate) fn pasted_examples(help: &str) -> Vec<&str> {
    help.lines()
        .filter_map(|l| l.trim_start().strip_prefix("$ "))
        .collect()
}

/// `PATH` with the tested `lgcodec` first, for examples run by a shell.
pub(crate) fn path_with_lgcodec() -> String {
    let bin_dir = Path::new(BIN).parent().expect("bin dir");
    format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn help_examples_work_when_pasted() {
    let help = lgcodec(&["--help"], &[], b"");
    assert_eq!(help.code, 0);
    let examples = pasted_examples(&help.stdout);
    assert!(examples.len() >= 4, "{}", help.stdout);
    let tmp = tempfile::Builder::new()
        .prefix("lgcodec-help-")
        .tempdir()
        .expect("temp dir");
    let dir = tmp.path().to_path_buf();
    let path = path_with_lgcodec();
    for example in examples {
        let out = Command::new("sh")
            .args(["-ec", example])
            .current_dir(&dir)
            .env("PATH", &path)
            .env_remove("LANGGRAPH_AES_KEY")
            .env_remove("LANGGRAPH_AES_KEY_PREVIOUS")
            .output()
            .expect("sh runs");
        assert!(
            out.status.success(),
            "{example}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn rekey_keeps_zlib_rows_compressed() {
    use langgraph_codec::compression::CompressedSerializer;
    use langgraph_codec::JsonPlusSerializer;
    // Upstream's CompressedSerializer rows, in clear and under the old key.
    let value = Value::from("x".repeat(300));
    let zlib = CompressedSerializer::new(JsonPlusSerializer::new())
        .dumps_typed(&value)
        .expect("compress");
    assert_eq!(zlib.type_tag, "msgpack+zlib");
    let old = EncryptedSerializer::new(
        langgraph_codec::crypto::KeyRing::new(
            langgraph_codec::crypto::AesKey::new(OLD_KEY.as_bytes()).expect("key"),
        ),
        CompressedSerializer::new(JsonPlusSerializer::new()),
    )
    .dumps_typed(&value)
    .expect("encrypt");
    assert_eq!(old.type_tag, "msgpack+zlib+aes");
    let input = format!(
        "{}{}",
        data_line(&zlib.type_tag, &zlib.data),
        data_line(&old.type_tag, &old.data)
    );
    let env: [(&str, &[u8]); 2] = [
        ("LANGGRAPH_AES_KEY", KEY.as_bytes()),
        ("LANGGRAPH_AES_KEY_PREVIOUS", OLD_KEY.as_bytes()),
    ];
    let run = lgcodec(&["rekey"], &env, input.as_bytes());
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let new = EncryptedSerializer::new(
        langgraph_codec::crypto::KeyRing::new(
            langgraph_codec::crypto::AesKey::new(KEY.as_bytes()).expect("key"),
        ),
        CompressedSerializer::new(JsonPlusSerializer::new()),
    );
    for answer in answers(&run) {
        assert_eq!(answer["type"], "msgpack+zlib+aes", "{answer}");
        let data = B64
            .decode(answer["data"].as_str().expect("data"))
            .expect("b64");
        // Still compressed under the encryption: 300 bytes of x compress to a few.
        assert!(data.len() < 100, "{} bytes", data.len());
        assert_eq!(
            new.loads_typed("msgpack+zlib+aes", &data).ok(),
            Some(value.clone())
        );
    }
}

/// Without `--jsonl`, decode and encode read the whole input: with a cap
/// (`--max-input-bytes`), past which they stop with an error instead of reading on.
#[test]
fn whole_input_reads_are_capped() {
    // At the cap: read as usual.
    let run = lgcodec(
        &["decode", "--type", "msgpack", "--max-input-bytes", "3"],
        &[],
        b"\x81\xa1a",
    );
    assert_ne!(run.code, 0, "a truncated map is still an error");
    assert!(!run.stderr.contains("--max-input-bytes"), "{}", run.stderr);
    let run = lgcodec(
        &["decode", "--type", "msgpack", "--max-input-bytes", "1"],
        &[],
        b"\x01",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    // One byte over, from standard input and from a file.
    let over = vec![b'\x01'; 4097];
    let run = lgcodec(
        &["decode", "--type", "msgpack", "--max-input-bytes", "4096"],
        &[],
        &over,
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("more than 4096 bytes"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--max-input-bytes"), "{}", run.stderr);
    assert!(run.stdout.is_empty());
    let file = temp_file("over.bin", &over);
    let path = file.to_str().expect("utf-8 path");
    let run = lgcodec(
        &[
            "decode",
            "--type",
            "bytes",
            "--max-input-bytes",
            "4096",
            path,
        ],
        &[],
        b"",
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains(path), "{}", run.stderr);
    assert!(
        run.stderr.contains("more than 4096 bytes"),
        "{}",
        run.stderr
    );
    let value = format!(
        "{{\"type\": \"msgpack\", \"value\": \"{}\"}}",
        "A".repeat(100)
    );
    let run = lgcodec(
        &["encode", "--max-input-bytes", "50"],
        &[],
        value.as_bytes(),
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("more than 50 bytes"), "{}", run.stderr);
    let run = lgcodec(
        &["encode", "--base64", "--max-input-bytes", "500"],
        &[],
        value.as_bytes(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The default cap is the JSONL line cap.
    let help = lgcodec(&["decode", "--help"], &[], b"");
    assert!(help.stdout.contains("--max-input-bytes"), "{}", help.stdout);
    assert!(help.stdout.contains("67108864"), "{}", help.stdout);
}

/// Strict mode from the command line (`--strict`) or the environment
/// (`LANGGRAPH_AES_STRICT`): plaintext rows are refused by decode and rekey.
#[test]
fn strict_mode_by_flag_and_environment() {
    let key: (&str, &[u8]) = ("LANGGRAPH_AES_KEY", KEY.as_bytes());
    let strict_env: (&str, &[u8]) = ("LANGGRAPH_AES_STRICT", b"1");
    let row = encrypted(&Value::from(3i64), KEY);
    let mut input = data_line("msgpack", b"\x01");
    input.push_str(&data_line(&row.type_tag, &row.data));
    for (args, env) in [
        (&["decode", "--jsonl", "--strict"][..], &[key][..]),
        (&["decode", "--jsonl"][..], &[key, strict_env][..]),
        (&["rekey", "--strict"][..], &[key][..]),
        (&["rekey"][..], &[key, strict_env][..]),
    ] {
        let run = lgcodec(args, env, input.as_bytes());
        assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
        let a = answers(&run);
        assert_eq!(a.len(), 2, "{args:?}");
        assert_eq!(a[0]["error"]["kind"], "plaintext_refused", "{args:?}");
        assert!(a[1].get("error").is_none(), "{args:?}: {}", a[1]);
    }
    // Single row.
    let run = lgcodec(
        &["decode", "--type", "msgpack", "--strict"],
        &[key],
        b"\x01",
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("strict mode"), "{}", run.stderr);
    // Without strict mode the plaintext row reads.
    let run = lgcodec(
        &["decode", "--jsonl"],
        &[key, ("LANGGRAPH_AES_STRICT", b"0")],
        input.as_bytes(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    // A bad value is an error that names the variable.
    let run = lgcodec(
        &["decode", "--jsonl"],
        &[key, ("LANGGRAPH_AES_STRICT", b"on")],
        input.as_bytes(),
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("LANGGRAPH_AES_STRICT"),
        "{}",
        run.stderr
    );
}

/// A store backup given where rows go (`decode --jsonl backup.jsonl`, on standard input
/// too, `encode`, `rekey`) is said to be one, with the store commands that read it
/// (exit 2); every line failed for a missing `type` (exit 1).
#[cfg(all(feature = "sqlite", feature = "postgres"))]
#[test]
fn a_store_backup_given_as_rows_is_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    let backup = dir.path().join("backup.jsonl");
    let store =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/stores/sqlite-py-3.1.2/store.sqlite");
    let export = lgcodec(
        &[
            "store",
            "export",
            store.to_str().expect("utf-8"),
            backup.to_str().expect("utf-8"),
        ],
        &[],
        b"",
    );
    assert_eq!(export.code, 0, "{}", export.stderr);
    let bytes = std::fs::read(&backup).expect("backup");
    let file = backup.to_str().expect("utf-8");
    refused_as_rows(
        &[
            (&["decode", "--jsonl", file][..], &b""[..]),
            (&["decode", "--jsonl", "-"], &bytes[..]),
            (&["encode", "--jsonl", file], b""),
            (&["rekey", file], b""),
        ],
        &[
            "is a store backup (`lgcodec store export` wrote it)",
            "lgcodec store verify",
        ],
    );
}

/// Each run (arguments, standard input) exits 2 saying each of `words`, with nothing on
/// standard output.
fn refused_as_rows(runs: &[(&[&str], &[u8])], words: &[&str]) {
    for (args, stdin) in runs {
        let run = lgcodec(args, &[("LANGGRAPH_AES_KEY", KEY.as_bytes())], stdin);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        for w in words {
            assert!(
                run.stderr.contains(w),
                "{args:?}: {w:?} not in {}",
                run.stderr
            );
        }
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }
}

/// A SQLite database (a checkpoint store) given where a row or rows go (`decode --type
/// msgpack checkpoints.db`, on standard input too, `--jsonl`, `encode`, `rekey`) is said
/// to be one, with the store commands that read it (exit 2). As one value it failed
/// with "53247 trailing byte(s) after the msgpack value", as lines line by line. Read
/// as `bytes` it is one value, and decodes as such.
#[test]
fn a_sqlite_database_given_as_rows_is_named() {
    let store =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/stores/sqlite-py-3.1.2/store.sqlite");
    let bytes = std::fs::read(&store).expect("store");
    let file = store.to_str().expect("utf-8");
    refused_as_rows(
        &[
            (&["decode", "--type", "msgpack", file][..], &b""[..]),
            (&["decode", "--type", "msgpack+aes", "-"], &bytes[..]),
            (&["decode", "--jsonl", file], b""),
            (&["encode", "--jsonl", file], b""),
            (&["rekey", file], b""),
        ],
        &[
            "is a SQLite database (a checkpoint store?), not stored rows",
            "`lgcodec store inspect ",
        ],
    );
    let run = lgcodec(&["decode", "--type", "bytes", file], &[], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
}
