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
/// standard output's reader gone (`| head`), a report is dropped or the command stops
/// saying it cannot write (exit 2). `eprintln!` and `print!` panicked there (exit 101,
/// the panic's own message lost with standard error).
#[cfg(all(feature = "sqlite", feature = "postgres"))]
#[test]
fn a_closed_output_does_not_change_the_exit_status() {
    use std::process::Stdio;
    let store = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("vectors/stores/sqlite-py-3.1.2/store.sqlite");
    let store = store.to_str().expect("utf-8");
    // `args`' exit status with standard output and standard error as given; a pipe
    // whose reader is dropped as soon as the process starts is a closed one.
    let run = |args: &[&str], close_out: bool, close_err: bool| -> Option<i32> {
        let pipe_or_null = |closed: bool| {
            if closed {
                Stdio::piped()
            } else {
                Stdio::null()
            }
        };
        let mut child = Command::new(BIN)
            .args(args)
            // encrypt's dry run reads it; no other command here does.
            .env("LANGGRAPH_AES_KEY", "0123456789abcdef")
            .stdin(Stdio::null())
            .stdout(pipe_or_null(close_out))
            .stderr(pipe_or_null(close_err))
            .spawn()
            .expect("run");
        drop(child.stdout.take());
        drop(child.stderr.take());
        child.wait().expect("wait").code()
    };
    for args in [
        &["store", "stats", store][..],
        &["store", "audit", store],
        &["store", "inspect", store],
        &["store", "inspect", store, "--thread", "t-main"],
        &["store", "prune", store, "--keep-latest", "1", "--dry-run"],
        &["store", "encrypt", store, "--dry-run"],
    ] {
        let open = run(args, false, false);
        assert!(matches!(open, Some(0 | 1)), "{args:?}: {open:?}");
        assert_eq!(
            run(args, false, true),
            open,
            "{args:?}, standard error closed"
        );
        let closed = run(args, true, false);
        assert!(
            closed == open || closed == Some(2),
            "{args:?}, standard output closed: {closed:?}"
        );
    }
}
