//! `lgcodec store upgrade`: a store of an older layout brought to today's in place,
//! with the statements today's Python `setup()` runs.

use std::process::ExitCode;

use clap::Args;
use langgraph_codec::store;
use langgraph_codec::ErrorKind;

use crate::cli::{fatal, FINDINGS};
use crate::output::{emit_json, finish};

pub const UPGRADE_EXAMPLES: &str = "\
Examples (old.db: a store an older Python SqliteSaver wrote, e.g. a copy of the crate's
vectors/stores/sqlite-py-2.0.2/store.sqlite):
  $ lgcodec store upgrade old.db --dry-run
  $ lgcodec store upgrade old.db --json
  $ lgcodec store upgrade postgresql://user@host:5432/db --dry-run
Exit status: 0 upgraded (or already current, or a dry run); 1 the layout cannot be
upgraded in place (LangGraph 0.1, LangGraphJS, shallow): copy it into a fresh store
with `lgcodec store copy OLD NEW`; 2 usage or fatal error.";

#[derive(Args)]
pub struct UpgradeArgs {
    /// sqlite:PATH, a file path, or a postgres:// URL.
    pub store: String,
    /// Say what would run; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(args: UpgradeArgs) -> ExitCode {
    let options = store::UpgradeOptions::new().dry_run(args.dry_run);
    match store::upgrade(&args.store, &options).await {
        Ok(r) => {
            let steps = r.steps.iter().map(|step| {
                format!(
                    "{} {}: {}",
                    if r.dry_run {
                        "would run"
                    } else if step.ran {
                        "ran"
                    } else {
                        "already applied"
                    },
                    step.name,
                    step.sql.split_whitespace().collect::<Vec<_>>().join(" ")
                )
            });
            let summary = format!(
                "lgcodec store upgrade: {} ({}): {} ({:.1} s)",
                r.store,
                r.layout_before,
                if r.steps.is_empty() {
                    "already in today's layout, nothing to do".to_owned()
                } else if r.dry_run {
                    format!("{} step(s) would run", r.steps.len())
                } else {
                    format!(
                        "{} step(s) run, now: {}",
                        r.steps.iter().filter(|s| s.ran).count(),
                        r.layout_after
                    )
                },
                r.elapsed_s
            );
            finish(
                args.json,
                &r,
                |_| {},
                steps.chain(std::iter::once(summary)),
                ExitCode::SUCCESS,
            )
        }
        Err(e) if e.kind() == ErrorKind::CannotUpgrade => {
            let location = e.subject().unwrap_or_default();
            let layout = e.found().unwrap_or_default();
            let reason = e.reason().unwrap_or_default();
            if args.json {
                let refusal = serde_json::json!({
                    "operation": "upgrade",
                    "store": location,
                    "upgradable": false,
                    "layout_before": layout,
                    "reason": reason,
                    "instead": "lgcodec store copy STORE NEW_STORE",
                });
                if let Err(e) = emit_json(&refusal) {
                    return fatal(e);
                }
            }
            note!(
                "lgcodec store upgrade: {location} ({layout}) cannot be upgraded in place: {reason}; copy it into a fresh store instead: lgcodec store copy {location} NEW_STORE"
            );
            ExitCode::from(FINDINGS)
        }
        Err(e) => fatal(e),
    }
}
