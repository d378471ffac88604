//! `store`: layouts of stores old releases wrote, maintenance (inspect, stats,
//! export/import, copy, upgrade, retain) and the encryption sweeps (audit, encrypt, rekey), on
//! SQLite files and a Postgres server (`LGCODEC_TEST_PG_URL`, skipped without it).

#[path = "../support/mod.rs"]
mod support;

#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod bad_targets;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod beside_python;
#[cfg(all(feature = "cli", feature = "sqlite"))]
mod files;
#[cfg(feature = "sqlite")]
mod layouts;
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
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod sweep;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod upgrade;
