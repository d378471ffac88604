//! `lgcodec store inspect|stats|export|import|copy|prune --help` examples, and those of
//! docs/store-maintenance.md and docs/store-cli.md, run as pasted, in a directory holding
//! a store Python's SqliteSaver wrote (the committed
//! `vectors/stores/sqlite-py-3.1.2/store.sqlite`, thread `t-main`).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `lgcodec store COMMAND --help`: the text, and its `$ lgcodec …` example lines.
fn help_examples(command: &str) -> (String, Vec<String>) {
    let help = Command::new(env!("CARGO_BIN_EXE_lgcodec"))
        .args(["store", command, "--help"])
        .output()
        .expect("run");
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout).into_owned();
    let examples = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("$ lgcodec "))
        .map(str::to_owned)
        .collect();
    (text, examples)
}

/// Runs each of `lines` (shell lines as a user pastes them, `lgcodec` found on `PATH`),
/// in order, in a new directory holding Python's store as `checkpoints.db` and `files`
/// (name, text), each to exit 0. A line that runs until stopped (`--every`) is sent
/// SIGTERM once its first line of output is out, and must then exit 0; one sent to the
/// background (`… &`) runs while the lines after it do (the next is tried again for up
/// to 10 s while the first starts) and is stopped the same way at the end.
fn run_pasted_in_a_python_store(lines: &[String], files: &[(&str, &str)]) {
    let bin = Path::new(env!("CARGO_BIN_EXE_lgcodec"));
    let tmp = tempfile::Builder::new()
        .prefix("lgcodec-maint-examples-")
        .tempdir()
        .expect("temp dir");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/stores/sqlite-py-3.1.2/store.sqlite"),
        tmp.path().join("checkpoints.db"),
    )
    .expect("copy");
    for (name, text) in files {
        std::fs::write(tmp.path().join(name), text).expect("write");
    }
    // The lines name `lgcodec` as an installed one is named: the build's binary comes
    // first on PATH.
    let mut path = vec![bin.parent().expect("the binary's directory").to_path_buf()];
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let path = std::env::join_paths(path).expect("PATH");
    let sh = |line: &str| {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(line)
            .current_dir(tmp.path())
            .env("PATH", &path)
            .env_remove("LANGGRAPH_AES_KEY");
        c
    };
    let mut background = Background(Vec::new());
    let mut retry_until = None;
    for line in lines {
        if let Some(line) = line.strip_suffix('&') {
            // `exec`: the signal reaches lgcodec, not the shell.
            let child = sh(&format!("exec {line}"))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("sh");
            background.0.push((line.to_owned(), child));
            retry_until = Some(Instant::now() + Duration::from_secs(10));
        } else if line.contains(" --every") {
            let mut child = sh(&format!("exec {line}"))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("sh");
            let out = child.stdout.take().expect("stdout");
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let mut first = String::new();
                let _ = BufReader::new(out).read_line(&mut first);
                let _ = tx.send(first);
            });
            let first = rx.recv_timeout(Duration::from_secs(60)).unwrap_or_default();
            if first.is_empty() {
                let _ = child.kill();
            }
            let (status, err) = finish(child, line);
            assert!(
                first.starts_with('{') && status.success(),
                "`{line}`: {status}, first line {first:?}: {err}"
            );
        } else {
            let out = loop {
                let out = sh(line).output().expect("sh");
                match retry_until {
                    Some(t) if !out.status.success() && Instant::now() < t => {
                        std::thread::sleep(Duration::from_millis(100));
                    }
                    _ => break out,
                }
            };
            retry_until = None;
            assert!(
                out.status.success(),
                "`{line}` failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    for (line, child) in std::mem::take(&mut background.0) {
        let (status, err) = finish(child, &line);
        assert!(status.success(), "`{line} &`: {status}: {err}");
    }
}

/// The lines sent to the background, killed if the test fails before it stops them:
/// none outlives the test, holding its port.
struct Background(Vec<(String, std::process::Child)>);

impl Drop for Background {
    fn drop(&mut self) {
        for (_, child) in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// SIGTERM to `child` (what stops a sweeper), its exit status and standard error, waited
/// for at most 30 s.
fn finish(mut child: std::process::Child, line: &str) -> (std::process::ExitStatus, String) {
    crate::support::signal(&child, "-TERM");
    crate::support::ended_within(&mut child, Duration::from_secs(30), line)
}

/// The lines of `guide`'s `sh` blocks, in order, less a comment after a command
/// (`  # …`; a `#` inside a word stays) and less those naming any of `left_out`.
fn sh_lines(guide: &str, left_out: &[&str]) -> Vec<String> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(guide)).expect("guide");
    let mut lines = Vec::new();
    let mut in_sh = false;
    for line in text.lines() {
        match (in_sh, line.trim_end()) {
            (false, "```sh") => in_sh = true,
            (true, "```") => in_sh = false,
            (true, l) => {
                let command = l.split(" #").next().unwrap_or(l).trim();
                if !command.is_empty() && !left_out.iter().any(|p| command.contains(p)) {
                    lines.push(command.to_owned());
                }
            }
            _ => {}
        }
    }
    lines
}

#[test]
fn maintenance_help_examples_work_when_pasted() {
    let (text, examples) = help_examples("copy");
    assert!(examples.len() >= 12, "{text}");
    let lines: Vec<String> = examples.iter().map(|e| format!("lgcodec {e}")).collect();
    run_pasted_in_a_python_store(&lines, &[]);
}

/// `lgcodec store upgrade`: its `--help` examples (the SQLite ones) as pasted, then the
/// exit statuses and JSON fields docs/store-cli.md promises.
#[test]
fn upgrade_examples_exit_statuses_and_json() {
    let bin = env!("CARGO_BIN_EXE_lgcodec");
    let (text, mut examples) = help_examples("upgrade");
    examples.retain(|l| !l.contains("postgresql://"));
    assert_eq!(examples.len(), 2, "{text}");
    let tmp = tempfile::Builder::new()
        .prefix("lgcodec-upgrade-help-")
        .tempdir()
        .expect("temp dir");
    let dir = tmp.path().to_path_buf();
    let stores = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/stores");
    std::fs::copy(
        stores.join("sqlite-py-2.0.2/store.sqlite"),
        dir.join("old.db"),
    )
    .expect("copy");
    std::fs::copy(
        stores.join("sqlite-lg-0.1.19/store.sqlite"),
        dir.join("v01.db"),
    )
    .expect("copy");
    let run = |args: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("\"{bin}\" {args}"))
            .current_dir(&dir)
            .output()
            .expect("sh")
    };
    let mut outputs = Vec::new();
    for example in &examples {
        let out = run(example);
        assert!(
            out.status.success(),
            "`lgcodec {example}` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        outputs.push(out);
    }
    // The second example (--json) upgraded it.
    let report: serde_json::Value =
        serde_json::from_slice(&outputs[1].stdout).expect("one JSON object");
    assert_eq!(report["operation"], "upgrade");
    assert_eq!(report["dry_run"], false);
    assert_eq!(report["current"], true);
    assert_eq!(report["steps"][0]["name"], "task_path");
    assert_eq!(report["steps"][0]["ran"], true);
    // Again: nothing to do, exit 0.
    let again = run("store upgrade old.db --json");
    assert!(again.status.success());
    let again: serde_json::Value = serde_json::from_slice(&again.stdout).expect("json");
    assert_eq!(again["steps"], serde_json::json!([]));
    // LangGraph 0.1: exit 1, a refusal naming `store copy`, the file untouched.
    let before = std::fs::read(dir.join("v01.db")).expect("read");
    let refused = run("store upgrade v01.db --json");
    assert_eq!(refused.status.code(), Some(1));
    let refusal: serde_json::Value = serde_json::from_slice(&refused.stdout).expect("json");
    assert_eq!(refusal["upgradable"], false);
    assert!(String::from_utf8_lossy(&refused.stderr).contains("store copy"));
    assert_eq!(std::fs::read(dir.join("v01.db")).expect("read"), before);
    // A missing file: exit 2.
    assert_eq!(run("store upgrade missing.db").status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `lgcodec store --help` opens with the list of its commands: every subcommand clap
/// lists under "Commands:" is named in that first paragraph too.
#[test]
fn store_help_names_every_command_in_its_summary() {
    let out = Command::new(env!("CARGO_BIN_EXE_lgcodec"))
        .args(["store", "--help"])
        .output()
        .expect("run");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let summary = text.split("\n\n").next().unwrap_or_default();
    let commands: Vec<&str> = text
        .split("Commands:")
        .nth(1)
        .unwrap_or_default()
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A description wrapped onto more lines goes on further in.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 12, "{text}");
    for command in commands {
        let named = summary
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| w == command);
        assert!(named, "`{command}` is missing from the summary: {summary}");
    }
}

/// docs/store-maintenance.md's examples as pasted, in the order the guide gives them,
/// in a directory holding a copy of Python's store as `checkpoints.db`: every line of
/// its `sh` blocks but those naming a placeholder (`ID`, `old.db`) or a Postgres
/// server (`postgresql://user@host`), each exiting 0.
#[test]
fn maintenance_guide_examples_work_when_pasted() {
    let lines = sh_lines(
        "docs/store-maintenance.md",
        &[" ID", "old.db", "postgresql://user@host"],
    );
    assert!(lines.len() >= 25, "{lines:#?}");
    run_pasted_in_a_python_store(&lines, &[]);
}

/// docs/store-cli.md's examples as pasted, on a copy of Python's store: all but those
/// naming a Postgres server (`postgresql:`), the policy file written by the guide's own
/// `printf` line before the `retain` lines that read it.
#[test]
fn reference_examples_work_when_pasted() {
    let lines = sh_lines("docs/store-cli.md", &["postgresql:"]);
    assert!(
        lines.iter().any(|l| l.starts_with("printf "))
            && lines
                .iter()
                .filter(|l| l.starts_with("lgcodec store retain"))
                .count()
                >= 2,
        "{lines:#?}"
    );
    run_pasted_in_a_python_store(&lines, &[]);
}

/// docs/retention.md's examples as pasted, in a directory holding a copy of Python's
/// store as `checkpoints.db` and the guide's policy (its `toml` block) as
/// `retention.toml`: every line of its `sh` blocks but those naming a Postgres server or
/// systemd, the recipes' `/etc/lgcodec/` and `/usr/local/bin/` read as the directory and
/// `PATH` they stand for. The sweepers the guide starts with `--every` are stopped with
/// SIGTERM and exit 0, as it says.
#[test]
fn retention_guide_examples_work_when_pasted() {
    let guide = "docs/retention.md";
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(guide)).expect("guide");
    let policy = text
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the guide's policy");
    let mut left_out = vec!["postgresql:", "systemctl", "journalctl"];
    if !cfg!(feature = "metrics") {
        left_out.push("metrics");
    }
    let lines: Vec<String> = sh_lines(guide, &left_out)
        .iter()
        .map(|l| {
            l.replace("/usr/local/bin/lgcodec", "lgcodec")
                .replace("/etc/lgcodec/", "")
        })
        .collect();
    assert!(
        lines.iter().any(|l| l.starts_with("sqlite3 "))
            && lines.iter().filter(|l| l.contains(" --every ")).count() >= 2
            && lines.iter().filter(|l| l.contains(" --once")).count() >= 2,
        "{lines:#?}"
    );
    run_pasted_in_a_python_store(&lines, &[("retention.toml", policy)]);
}
