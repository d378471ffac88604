//! Postgres connections as people deploy them, against a server these tests start
//! (`server.rs`: TLS on, a TLS-only role and database, a role with a password, a role
//! let in by client certificate): `sslmode` and `sslrootcert` (`tls.rs`), client
//! certificates (`client_cert.rs`), libpq's environment variables, service file and
//! password file (`env.rs`), and connection errors that name what was tried and the
//! server's reason, never the password (`errors.rs`); the names sessions show in
//! `pg_stat_activity` (`names.rs`); poolers that do not keep a
//! session refused, those that do used (`pooler.rs`). The `lgcodec` runs get exactly the
//! environment a test gives them, and `psql`, where installed, is run with the same
//! settings: the two must agree on what connects.
//!
//! Run when `LGCODEC_TEST_PG_URL` is set (as for the other Postgres tests; CI's
//! `.ci/checks.d/postgres_connect.sh` sets it), skipped with a printed line otherwise.

#[path = "../support/mod.rs"]
mod support;

#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod client_cert;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod env;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod errors;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod names;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod pooler;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod server;
#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod tls;

#[cfg(all(feature = "cli", feature = "sqlite", feature = "postgres"))]
mod run {
    use std::path::PathBuf;
    use std::process::Command;

    use super::server::{self, Server};

    /// The test server, or `None` (a skip line printed) without `LGCODEC_TEST_PG_URL`.
    pub fn server() -> Option<&'static Server> {
        super::support::pg::url()?;
        Some(server::server())
    }

    pub struct Run {
        pub code: i32,
        pub out: String,
    }

    /// `lgcodec ARGS` with exactly `env` (nothing of this process's environment).
    pub fn lgcodec(env: &[(&str, &str)], args: &[&str]) -> Run {
        let out = Command::new(env!("CARGO_BIN_EXE_lgcodec"))
            .env_clear()
            .envs(env.iter().copied())
            .args(args)
            .output()
            .expect("run lgcodec");
        Run {
            code: out.status.code().unwrap_or(-1),
            out: format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }

    fn psql_path() -> Option<PathBuf> {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|p| p.join("psql"))
                .find(|p| p.is_file())
        })
    }

    /// Whether `psql CONNINFO` with exactly `env` connects (`None`, with a printed line,
    /// when there is no psql).
    pub fn psql_connects(env: &[(&str, &str)], conninfo: &str) -> Option<bool> {
        let Some(psql) = psql_path() else {
            println!("psql not found: the comparison with libpq is skipped");
            return None;
        };
        let out = Command::new(psql)
            .env_clear()
            .envs(env.iter().copied())
            .args(["-X", "-w", "-At", "-c", "select 1", conninfo])
            .output()
            .expect("run psql");
        if !out.status.success() {
            println!("psql: {}", String::from_utf8_lossy(&out.stderr).trim());
        }
        Some(out.status.success())
    }

    /// `lgcodec store stats URL` with `env` exits `code`, and psql connects with the
    /// same settings exactly when lgcodec does; the output.
    pub fn stats_agrees_with_psql(env: &[(&str, &str)], url: &str, code: i32) -> String {
        let run = lgcodec(env, &["store", "stats", url]);
        assert_eq!(
            run.code, code,
            "lgcodec store stats {url} with {env:?}:\n{}",
            run.out
        );
        if let Some(psql) = psql_connects(env, url) {
            assert_eq!(
                psql,
                code == 0,
                "psql and lgcodec disagree on {url} with {env:?}"
            );
        }
        run.out
    }

    /// Python's tables made by the saver connecting with `url` (`what` says how).
    pub async fn saver_setup(url: &str, what: &str) {
        let saver = langgraph_codec::saver::postgres::PostgresSaver::builder_from_url(url)
            .expect("url")
            .build()
            .expect("build");
        saver
            .setup()
            .await
            .unwrap_or_else(|e| panic!("setup with {what}: {e}"));
    }

    /// `text` holds none of the forms a password could be printed in.
    pub fn no_password(text: &str, password: &str) {
        let encoded = url_encoded(password);
        for form in [password, encoded.as_str(), "S3cret"] {
            assert!(
                !text.contains(form),
                "the password ({form}) is shown: {text}"
            );
        }
    }

    /// `password` percent-encoded for a URL's user info.
    pub fn url_encoded(password: &str) -> String {
        password
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b == b'-' {
                    char::from(b).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    }
}
