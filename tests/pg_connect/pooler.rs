//! Behind a connection pooler (PgBouncer, when installed: `apt-get install pgbouncer`;
//! skipped with a printed line otherwise). In transaction or statement mode each
//! transaction of a client runs on whichever server connection is free, and session
//! state set by one client stays on that server connection for the next: the store
//! commands refuse such a pooler before they set anything, saying what to connect to,
//! and its server connections are left as they were (a client writing through it, as
//! Python's saver does, is not made read-only). In session mode they run as on a
//! direct connection.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::run::{lgcodec, server};
use super::server::{as_pg, free_port, hand_over, Server};

/// The pgbouncer program, if installed.
fn pgbouncer() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("pgbouncer"))
            .find(|p| p.exists())
    });
    on_path.or_else(|| {
        let sbin = PathBuf::from("/usr/sbin/pgbouncer");
        sbin.exists().then_some(sbin)
    })
}

/// A PgBouncer in front of `server`'s database `db`, as `<db>_transaction`,
/// `<db>_statement` and `<db>_session` (each alias's `pool_mode`), on its own port;
/// stopped when dropped.
struct Bouncer {
    port: u16,
    dir: PathBuf,
    pidfile: PathBuf,
}

impl Bouncer {
    fn start(program: &Path, server: &Server, db: &str) -> Bouncer {
        let dir = tempfile::tempdir().expect("tempdir").keep();
        let port = free_port();
        let pidfile = dir.join("pgbouncer.pid");
        let mut databases = String::new();
        for mode in ["transaction", "statement", "session"] {
            databases.push_str(&format!(
                "{db}_{mode} = host=127.0.0.1 port={} dbname={db} pool_mode={mode}\n",
                server.port
            ));
        }
        let ini = dir.join("pgbouncer.ini");
        std::fs::write(
            &ini,
            format!(
            "[databases]\n{databases}\n[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\n\
             auth_type = trust\nauth_file = {users}\nunix_socket_dir =\n\
             pidfile = {pid}\nlogfile = {log}\ndefault_pool_size = 4\n",
            users = dir.join("users.txt").display(),
            pid = pidfile.display(),
            log = dir.join("pgbouncer.log").display(),
        ),
        )
        .expect("ini");
        std::fs::write(dir.join("users.txt"), "\"postgres\" \"\"\n").expect("users");
        hand_over(&dir);
        let out = as_pg(program)
            .arg("-d")
            .arg(&ini)
            .output()
            .expect("run pgbouncer");
        assert!(out.status.success(), "pgbouncer: {out:?}");
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Bouncer { port, dir, pidfile }
    }

    fn url(&self, alias: &str) -> String {
        format!(
            "postgresql://postgres@127.0.0.1:{}/{alias}?sslmode=disable",
            self.port
        )
    }
}

impl Drop for Bouncer {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(&self.pidfile) {
            let _ = Command::new("kill").arg(pid.trim()).status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test]
async fn a_pooler_that_does_not_keep_sessions_is_refused_and_left_as_it_was() {
    let Some(s) = server() else { return };
    let Some(program) = pgbouncer() else {
        println!("skipped: no pgbouncer installed (apt-get install pgbouncer)");
        return;
    };
    // A store, made on a direct connection (`postgres_pooled`).
    let direct = s.url("postgres", "127.0.0.1", "postgres", "");
    let store = crate::support::pg::fresh_set_up(&direct, "pooled").await;
    let db = store.rsplit('/').next().expect("a database");
    let bouncer = Bouncer::start(&program, s, db);
    for mode in ["transaction", "statement"] {
        let url = bouncer.url(&format!("{db}_{mode}"));
        for args in [
            vec!["store", "stats", &url],
            vec!["store", "inspect", &url],
            vec!["store", "audit", &url],
            vec!["store", "prune", &url, "--keep-latest", "1"],
        ] {
            let run = lgcodec(&[], &args);
            assert_eq!(run.code, 2, "{args:?} through {mode} pooling: {}", run.out);
            for words in [
                "connection pooler in transaction or statement mode",
                "Connect to the server directly",
                "session mode",
            ] {
                assert!(run.out.contains(words), "{args:?}: {}", run.out);
            }
        }
    }
    // Every server connection of the transaction pool is as the server made it: a
    // client of the pooler writes (not read-only) and waits for locks as it would.
    let pooled = bouncer.url(&format!("{db}_transaction"));
    for _ in 0..8 {
        let (c, conn) = tokio_postgres::connect(&pooled, tokio_postgres::NoTls)
            .await
            .expect("through the pooler");
        tokio::spawn(conn);
        // The simple protocol: an extended-protocol query prepares a statement on one
        // server connection and may execute it on another, which PgBouncer before 1.21
        // answers with "prepared statement does not exist" in transaction mode.
        let rows = c
            .simple_query(
                "SELECT current_setting('transaction_read_only'), current_setting('lock_timeout')",
            )
            .await
            .expect("settings");
        let row = rows
            .iter()
            .find_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => Some(r),
                _ => None,
            })
            .expect("one row");
        assert_eq!((row.get(0), row.get(1)), (Some("off"), Some("0")));
        c.batch_execute("DELETE FROM checkpoint_writes WHERE thread_id = 'none'")
            .await
            .expect("a write through the pooler");
    }
    // A pool in session mode keeps one server session per client: the commands run.
    let session = bouncer.url(&format!("{db}_session"));
    for args in [
        vec!["store", "stats", &session],
        vec!["store", "prune", &session, "--keep-latest", "1"],
    ] {
        let run = lgcodec(&[], &args);
        assert_eq!(run.code, 0, "{args:?} through session pooling: {}", run.out);
    }
    drop(bouncer);
}
