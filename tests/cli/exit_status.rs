//! One exit-status contract for every `lgcodec` command, as `lgcodec --help` and
//! docs/store-cli.md state it: 0 done; 1 findings or a partial result (a JSONL record
//! that failed, audit findings, …); 2 a usage or fatal error.

use std::process::Command;

use super::lgcodec::lgcodec;

const BIN: &str = env!("CARGO_BIN_EXE_lgcodec");

/// The exit status of `lgcodec ARGS` with `stdin`, without any key in the environment
/// but those given.
fn status(args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> i32 {
    let env: Vec<(&str, &[u8])> = env.iter().map(|(k, v)| (*k, v.as_bytes())).collect();
    lgcodec(args, &env, stdin).code
}

#[test]
fn every_command_exits_0_done_1_partial_2_fatal() {
    let missing = "/nonexistent-lgcodec-dir/missing.bin";
    let key = [("LANGGRAPH_AES_KEY", "0123456789abcdef")];
    let ok = br#"{"type": "msgpack", "data": "AQ=="}"#;
    let bad = b"{\"type\": \"msgpack\", \"data\": \"AQ==\"}\n{\"type\": \"msgpack\", \"data\": \"AQE=\"}\n";
    // 0: done.
    assert_eq!(status(&["decode", "--jsonl"], &[], ok), 0);
    assert_eq!(
        status(&["encode"], &[], br#"{"type": "msgpack", "value": 1}"#),
        0
    );
    assert_eq!(status(&["rekey"], &key, ok), 0);
    assert_eq!(status(&["key", "generate"], &[], b""), 0);
    // 1: a partial result, every other record answered.
    assert_eq!(status(&["decode", "--jsonl"], &[], bad), 1);
    assert_eq!(status(&["rekey"], &key, bad), 1);
    // 2: a usage error.
    assert_eq!(status(&["decode"], &[], b""), 2);
    assert_eq!(status(&["key", "generate", "--bytes", "7"], &[], b""), 2);
    // 2: a fatal error, nothing done.
    for args in [
        vec!["decode", "--type", "msgpack", missing],
        vec!["decode", "--jsonl", missing],
        vec!["encode", missing],
        vec!["rekey", missing],
    ] {
        assert_eq!(status(&args, &key, b""), 2, "{args:?}");
    }
    assert_eq!(
        status(&["decode", "--type", "msgpak", "-"], &[], b"\x01"),
        2
    );
    assert_eq!(status(&["encode"], &[], b"not json"), 2);
    assert_eq!(status(&["encode", "--encrypt", "--jsonl"], &[], ok), 2);
    assert_eq!(status(&["rekey"], &[], ok), 2);
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    assert_eq!(status(&["store", "audit", missing], &[], b""), 2);
}

#[test]
fn the_contract_is_stated_in_help() {
    let out = Command::new(BIN).arg("--help").output().expect("run");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("Exit status (every command): 0 done; 1 findings or a partial result"),
        "{help}"
    );
}

/// A count flag given 0 or what is not a whole number: exit 2 (usage), saying what to
/// give (clap's own range check said "0 is not in 1..18446744073709551615"); `prune
/// --keep-latest 0` also names the rule that deletes whole threads.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[test]
fn a_count_of_0_or_not_a_number_is_refused_saying_what_to_give() {
    for (command, flag) in [
        (&["store", "prune", "s.db"][..], "--keep-latest"),
        (
            &["store", "prune", "s.db", "--keep-latest", "1"],
            "--batch-size",
        ),
        (&["store", "copy", "s.db", "t.db"], "--batch-bytes"),
        (&["store", "import", "b.jsonl", "t.db"], "--batch-size"),
        (&["store", "encrypt", "s.db"], "--batch-bytes"),
        (&["store", "audit", "s.db"], "--max-rows-per-sec"),
        (
            &["store", "export", "s.db", "b.jsonl"],
            "--max-rows-per-sec",
        ),
        (
            &["store", "retain", "s.db", "--once", "--policy", "p.toml"],
            "--max-threads",
        ),
    ] {
        for (value, says) in [("0", "give 1 or more"), ("1.5", "not a whole number")] {
            let args: Vec<&str> = command.iter().copied().chain([flag, value]).collect();
            let run = lgcodec(&args, &[], b"");
            assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
            assert!(
                run.stderr
                    .contains(&format!("invalid value '{value}' for '{flag} <"))
                    && run.stderr.contains(says)
                    && !run.stderr.contains("18446744073709551615"),
                "{args:?}: {}",
                run.stderr
            );
        }
    }
    let run = lgcodec(&["store", "prune", "s.db", "--keep-latest", "0"], &[], b"");
    assert!(run.stderr.contains("--idle-since"), "{}", run.stderr);
}

/// A note that cannot be written because standard error's reader is gone (`lgcodec …
/// 2>&1 | head`) is dropped: the command ends with the status it would have had. With
/// standard output's reader gone (`| head`), the command ends quietly with 141, as a
/// Unix tool killed by SIGPIPE (128 + 13) does, where it said "cannot write: Broken
/// pipe" and exited 2 as for a fatal error; a command that writes nothing to standard
/// output keeps its status. `eprintln!` and `print!` panicked there (exit 101, the
/// panic's own message lost with standard error).
#[cfg(all(feature = "sqlite", feature = "postgres"))]
#[test]
fn a_closed_output_does_not_change_the_exit_status() {
    use std::io::{Read, Write};
    use std::process::Stdio;
    let store = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("vectors/stores/sqlite-py-3.1.2/store.sqlite");
    let store = store.to_str().expect("utf-8");
    // `args`' exit status and what it said on standard error (when that stays open).
    // A pipe whose reader is dropped is a closed one; the command starts only once it
    // is (a shell waits for a line first), or it could write before the drop.
    let run = |args: &[&str], input: &[u8], close_out: bool, close_err: bool| {
        let mut child = Command::new("sh")
            .args(["-c", "read -r _ && exec \"$0\" \"$@\"", BIN])
            .args(args)
            // encrypt's dry run reads it; no other command here does.
            .env("LANGGRAPH_AES_KEY", "0123456789abcdef")
            .stdin(Stdio::piped())
            .stdout(if close_out {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stderr(Stdio::piped())
            .spawn()
            .expect("run");
        drop(child.stdout.take());
        let mut stderr = child.stderr.take().expect("stderr");
        if close_err {
            drop(stderr);
            stderr_gone_input(&mut child, input);
            return (child.wait().expect("wait").code(), String::new());
        }
        stderr_gone_input(&mut child, input);
        let mut said = String::new();
        stderr.read_to_string(&mut said).expect("stderr");
        (child.wait().expect("wait").code(), said)
    };
    fn stderr_gone_input(child: &mut std::process::Child, input: &[u8]) {
        let mut stdin = child.stdin.take().expect("stdin");
        // The line the shell waits for, then the command's input (it may stop before
        // reading it all).
        let _ = stdin
            .write_all(b"go\n")
            .and_then(|()| stdin.write_all(input));
    }
    // A thread whose history is longer than the output's buffer: the library's own
    // writes meet the closed pipe, not only the last flush.
    let dir = tempfile::tempdir().expect("tempdir");
    let long = dir.path().join("long.sqlite");
    let shape = crate::support::store_fixture::Shape {
        threads: 1,
        steps: 300,
        ..Default::default()
    };
    crate::support::store_fixture::sqlite_store(&long, &shape, "long");
    let long = long.to_str().expect("utf-8");
    let record = br#"{"type": "msgpack", "data": "AQ=="}
"#;
    let records = record.repeat(20_000);
    // Commands writing to standard output: 141 once its reader is gone.
    let writing: [(&[&str], &[u8]); 13] = [
        (&["store", "audit", store], b""),
        (&["store", "encrypt", store, "--dry-run"], b""),
        (&["store", "inspect", long, "--thread", "long0"], b""),
        (
            &["store", "inspect", long, "--thread", "long0", "--json"],
            b"",
        ),
        (&["store", "stats", store], b""),
        (&["store", "inspect", store], b""),
        (&["store", "inspect", store, "--json"], b""),
        (&["store", "inspect", store, "--thread", "t-main"], b""),
        (
            &["store", "inspect", store, "--thread", "t-main", "--json"],
            b"",
        ),
        (&["store", "audit", store, "--json"], b""),
        (&["decode", "--jsonl"], &records),
        (&["encode"], br#"{"type": "msgpack", "value": 1}"#),
        (&["key", "generate"], b""),
    ];
    // Commands whose report goes to standard error unless `--json`.
    let quiet: [(&[&str], &[u8]); 2] = [
        (
            &["store", "prune", store, "--keep-latest", "1", "--dry-run"],
            b"",
        ),
        (&["store", "upgrade", store, "--dry-run"], b""),
    ];
    for (args, input, writes) in writing
        .iter()
        .map(|(a, i)| (*a, *i, true))
        .chain(quiet.iter().map(|(a, i)| (*a, *i, false)))
    {
        let (open, _) = run(args, input, false, false);
        assert!(matches!(open, Some(0 | 1)), "{args:?}: {open:?}");
        assert_eq!(
            run(args, input, false, true).0,
            open,
            "{args:?}, standard error closed"
        );
        let (closed, said) = run(args, input, true, false);
        let expected = if writes { Some(141) } else { open };
        assert_eq!(closed, expected, "{args:?}, standard output closed: {said}");
        assert!(
            !said.contains("cannot write") && !said.contains("panicked"),
            "{args:?}: {said}"
        );
    }
}
