//! `lgcodec store inspect|stats|export|import|copy|prune --help` examples run as pasted,
//! in a directory holding a store Python's SqliteSaver wrote (the committed
//! `vectors/stores/sqlite-py-3.1.2/store.sqlite`, thread `t-main`).

use std::path::Path;
use std::process::Command;

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

/// Runs each of `examples` (`lgcodec` arguments as a shell line), in order, in a new
/// directory holding Python's store as `checkpoints.db`, each to exit 0.
fn run_pasted_in_a_python_store(examples: &[String]) {
    let bin = env!("CARGO_BIN_EXE_lgcodec");
    let tmp = tempfile::Builder::new()
        .prefix("lgcodec-maint-examples-")
        .tempdir()
        .expect("temp dir");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/stores/sqlite-py-3.1.2/store.sqlite"),
        tmp.path().join("checkpoints.db"),
    )
    .expect("copy");
    for example in examples {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("\"{bin}\" {example}"))
            .current_dir(tmp.path())
            .env_remove("LANGGRAPH_AES_KEY")
            .output()
            .expect("sh");
        assert!(
            out.status.success(),
            "`lgcodec {example}` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn maintenance_help_examples_work_when_pasted() {
    let (text, examples) = help_examples("copy");
    assert!(examples.len() >= 12, "{text}");
    run_pasted_in_a_python_store(&examples);
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
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let guide = std::fs::read_to_string(root.join("docs/store-maintenance.md")).expect("guide");
    let mut examples = Vec::new();
    let mut in_sh = false;
    for line in guide.lines() {
        match (in_sh, line.trim_end()) {
            (false, "```sh") => in_sh = true,
            (true, "```") => in_sh = false,
            (true, l) => {
                // A comment after the command goes (`  # …`); a `#` inside a word stays.
                let command = l.split(" #").next().unwrap_or(l).trim();
                let placeholder = [" ID", "old.db", "postgresql://user@host"]
                    .iter()
                    .any(|p| command.contains(p));
                if let (Some(args), false) = (command.strip_prefix("lgcodec "), placeholder) {
                    examples.push(args.to_owned());
                }
            }
            _ => {}
        }
    }
    assert!(examples.len() >= 25, "{examples:#?}");
    run_pasted_in_a_python_store(&examples);
}
