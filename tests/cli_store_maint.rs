//! `lgcodec store inspect|stats|export|import|copy|prune --help` examples run as pasted,
//! in a directory holding a store Python's SqliteSaver wrote (the committed
//! `vectors/stores/sqlite-py-3.1.2/store.sqlite`, thread `t-main`).

use std::path::Path;
use std::process::Command;

#[test]
fn maintenance_help_examples_work_when_pasted() {
    let bin = env!("CARGO_BIN_EXE_lgcodec");
    let help = Command::new(bin)
        .args(["store", "copy", "--help"])
        .output()
        .expect("run");
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout).into_owned();
    let examples: Vec<String> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("$ lgcodec "))
        .map(str::to_owned)
        .collect();
    assert!(examples.len() >= 12, "{text}");
    let dir = std::env::temp_dir().join(format!("lgcodec-maint-help-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/stores/sqlite-py-3.1.2/store.sqlite"),
        dir.join("checkpoints.db"),
    )
    .expect("copy");
    for example in &examples {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("\"{bin}\" {example}"))
            .current_dir(&dir)
            .env_remove("LANGGRAPH_AES_KEY")
            .output()
            .expect("sh");
        assert!(
            out.status.success(),
            "`lgcodec {example}` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
