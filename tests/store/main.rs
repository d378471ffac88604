//! `store`: layouts of stores old releases wrote, maintenance (inspect, stats,
//! export/import, copy, upgrade, retain) and the encryption sweeps (audit, encrypt, rekey), on
//! SQLite files and a Postgres server (`LGCODEC_TEST_PG_URL`, skipped without it).

#[path = "../support/mod.rs"]
mod support;

/// `lgcodec ARGS` with `env` set, and none of the key variables this process may hold
/// (`LANGGRAPH_AES_KEY`, `_PREVIOUS`, `_FALLBACK_KEYS`): its exit status (-1 for a
/// signal), standard output and standard error.
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
pub(crate) fn lgcodec(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_lgcodec"));
    cmd.args(args)
        .env_remove("LANGGRAPH_AES_KEY")
        .env_remove("LANGGRAPH_AES_KEY_PREVIOUS")
        .env_remove("LANGGRAPH_AES_FALLBACK_KEYS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("lgcodec runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod bad_targets;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod beside_python;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod corrupt;
#[cfg(all(feature = "cli", feature = "sqlite"))]
mod files;
#[cfg(feature = "sqlite")]
mod layouts;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod long_threads;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod maint;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod old_layouts;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod operator;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod reconnect;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod refusals;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod retain;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod sends;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod setup_kill;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod split;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod stop;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod sweep;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod threads;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod upgrade;
