//! Connection errors name what was tried (host, port, database, role, TLS mode) and
//! give the server's own reason (or the operating system's, for a closed port) with
//! what to do, through the saver and through `lgcodec store`; the password never
//! appears in a message, a report or a `Debug` rendering. The server's words are
//! PostgreSQL's own messages for each case (SQLSTATE 3D000, 28000, 28P01, 53300).

use langgraph_codec::saver::postgres::PostgresSaver;
use langgraph_codec::ErrorKind;

use super::run::{lgcodec, no_password, psql_connects, server, url_encoded};
use super::server::{free_port, NO_SLOT_ROLE, PW, PW_DB, PW_ROLE};

/// The URL with the password role's (right) password, over plain TCP.
fn url_with_password(user: &str, port: u16, db: &str) -> String {
    format!(
        "postgresql://{user}:{}@127.0.0.1:{port}/{db}?sslmode=disable",
        url_encoded(PW)
    )
}

/// The saver's error (from `setup`) and `lgcodec store stats`'s message for `url`,
/// each holding every one of `words` and not the password; the saver's kind.
async fn both_say(url: &str, words: &[&str]) -> ErrorKind {
    let builder = PostgresSaver::builder_from_url(url).expect("url");
    no_password(&format!("{builder:?}"), PW);
    let saver = builder.build().expect("build");
    no_password(&format!("{saver:?}"), PW);
    // Bounded: a connection that never ends is a failure here, not a hang.
    let e = tokio::time::timeout(std::time::Duration::from_secs(30), saver.setup())
        .await
        .expect("the saver gave up within 30 s")
        .expect_err("no connection");
    let text = e.to_string();
    println!("saver: {text}");
    no_password(&format!("{text}\n{e:?}"), PW);
    let run = lgcodec(&[], &["store", "stats", url]);
    println!("lgcodec: {}", run.out);
    assert_eq!(run.code, 2, "{}", run.out);
    no_password(&run.out, PW);
    for w in words {
        assert!(text.contains(w), "the saver's error lacks {w:?}: {text}");
        assert!(
            run.out.contains(w),
            "lgcodec's error lacks {w:?}: {}",
            run.out
        );
    }
    // --json too: the report is the same message.
    let run = lgcodec(&[], &["store", "stats", url, "--json"]);
    no_password(&run.out, PW);
    e.kind()
}

#[tokio::test]
async fn a_missing_database_names_what_was_tried_and_the_servers_reason() {
    let Some(s) = server() else { return };
    let port = s.port;
    let url = url_with_password(PW_ROLE, port, "nosuchdb");
    let kind = both_say(
        &url,
        &[
            &format!("127.0.0.1:{port}"),
            "database \"nosuchdb\"",
            "user \"pw_user\"",
            "sslmode disable",
            "3D000",
            "database \"nosuchdb\" does not exist",
            "createdb",
        ],
    )
    .await;
    assert_eq!(kind, ErrorKind::ConnectionUnavailable);
}

#[tokio::test]
async fn an_unknown_role_names_what_was_tried_and_the_servers_reason() {
    let Some(s) = server() else { return };
    let port = s.port;
    let url = url_with_password("nobody", port, PW_DB);
    both_say(
        &url,
        &[
            &format!("127.0.0.1:{port}"),
            "database \"pwdb\"",
            "user \"nobody\"",
            "28000",
            "role \"nobody\" does not exist",
            "check the role name",
        ],
    )
    .await;
}

#[tokio::test]
async fn a_wrong_password_says_where_the_password_came_from() {
    let Some(s) = server() else { return };
    let port = s.port;
    let url = format!(
        "postgresql://{PW_ROLE}:not-{}@127.0.0.1:{port}/{PW_DB}?sslmode=disable",
        url_encoded(PW)
    );
    both_say(
        &url,
        &[
            "28P01",
            "password authentication failed for user \"pw_user\"",
            "it came from the connection string",
        ],
    )
    .await;
}

/// A role whose `CONNECTION LIMIT` is reached is told so, with what to do about that
/// limit: the server's slots are not the matter (it said "retry later", which does not
/// help while the role's other sessions stay).
#[tokio::test]
async fn a_role_at_its_connection_limit_is_told_which_limit() {
    let Some(s) = server() else { return };
    let url = format!(
        "postgresql://{NO_SLOT_ROLE}@127.0.0.1:{}/{PW_DB}?sslmode=disable",
        s.port
    );
    let kind = both_say(
        &url,
        &[
            "user \"no_slot\"",
            "53300",
            "too many connections for role \"no_slot\"",
            "the role's CONNECTION LIMIT is reached",
            "ALTER ROLE",
        ],
    )
    .await;
    assert_eq!(kind, ErrorKind::ConnectionUnavailable);
}

#[tokio::test]
async fn a_closed_port_says_connection_refused_and_what_to_check() {
    let Some(_) = server() else { return };
    // A port nothing listens on: bound, read, released.
    let closed = free_port();
    let url = url_with_password(PW_ROLE, closed, PW_DB);
    let kind = both_say(
        &url,
        &[
            &format!("127.0.0.1:{closed}"),
            "database \"pwdb\"",
            "user \"pw_user\"",
            "connection refused",
            "is the server running on that host",
        ],
    )
    .await;
    assert_eq!(kind, ErrorKind::ConnectionUnavailable);
}

/// A `search_path` that names no schema that exists (a mistyped `options=-csearch_path`):
/// `current_schema()` is NULL and there is nowhere to read or create the tables. The
/// saver's `setup` and `lgcodec store` say so and what to do; they failed on a NULL lock
/// key ("a Postgres value was `NULL`"), and `store stats` took the schema for `public`.
#[tokio::test]
async fn a_search_path_of_no_schema_that_exists_says_what_to_do() {
    let Some(s) = server() else { return };
    let url = format!(
        "{}&options=-csearch_path%3Dnosuchschema",
        url_with_password(PW_ROLE, s.port, PW_DB)
    );
    let kind = both_say(
        &url,
        &[
            "no schema of the connection's search_path exists",
            "CREATE SCHEMA",
            "options=-csearch_path",
        ],
    )
    .await;
    assert_eq!(kind, ErrorKind::InvalidStoreLocation);
}

/// A server listening on `port` (started with `cmd`, ended when dropped).
struct Listening(std::process::Child);

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn listening(cmd: &mut std::process::Command, port: u16) -> Listening {
    let child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the server");
    let up = Listening(child);
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return up;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!(
        "nothing listens on {port} after starting {cmd:?} (Python's smtpd is in 3.11, not 3.12)"
    );
}

/// A host and port where another kind of server listens: Python's SMTP server, which
/// greets first (`220 …`), and OpenSSL's TLS server, which closes on bytes that are not
/// TLS. The driver said "other error; (bytes remaining on stream)", "unexpected
/// message", or with `sslmode=require` "server does not support TLS" and lgcodec then
/// blamed `ssl = off`; now both the saver and lgcodec name what answered, in every TLS
/// mode, and psql refuses the address too.
#[tokio::test]
async fn a_server_that_is_not_postgres_is_named() {
    let Some(s) = server() else { return };
    let python = std::env::var("LGCODEC_PYTHON").unwrap_or_else(|_| "python3".into());
    let smtp_port = free_port();
    let _smtp = listening(
        std::process::Command::new(&python).args([
            "-W",
            "ignore",
            "-m",
            "smtpd",
            "-n",
            "-c",
            "DebuggingServer",
            &format!("127.0.0.1:{smtp_port}"),
        ]),
        smtp_port,
    );
    let tls_port = free_port();
    let _tls = listening(
        std::process::Command::new("openssl")
            .args(["s_server", "-quiet", "-accept"])
            .arg(tls_port.to_string())
            .arg("-cert")
            .arg(s.dir.join("server.crt"))
            .arg("-key")
            .arg(s.dir.join("server.key")),
        tls_port,
    );
    for mode in ["disable", "prefer", "require"] {
        let url = url_with_password(PW_ROLE, smtp_port, PW_DB).replace("disable", mode);
        let kind = both_say(
            &url,
            &[
                &format!("127.0.0.1:{smtp_port} is not a PostgreSQL server"),
                "PostgreSQL's first message with \"220 ",
                "check the host and port",
            ],
        )
        .await;
        assert_eq!(kind, ErrorKind::ConnectionUnavailable, "{mode}");
        if let Some(ok) = psql_connects(&[], &url) {
            assert!(!ok, "psql connects to {url}");
        }
        let url = url_with_password(PW_ROLE, tls_port, PW_DB).replace("disable", mode);
        both_say(
            &url,
            &[&format!(
                "127.0.0.1:{tls_port} closed the connection without answering"
            )],
        )
        .await;
    }
}

/// libpq's `connect_timeout` bounds the whole connection, not the TCP connection alone
/// (the driver's): a server that accepts and then waits for more input (Python's HTTP
/// server, waiting for a line PostgreSQL never sends) ends the saver's and lgcodec's
/// attempt after it, as psql's; before, both waited for ever.
#[tokio::test]
async fn connect_timeout_bounds_a_server_that_never_answers() {
    let Some(_) = server() else { return };
    let port = free_port();
    let python = std::env::var("LGCODEC_PYTHON").unwrap_or_else(|_| "python3".into());
    let _http = listening(
        std::process::Command::new(&python).args([
            "-m",
            "http.server",
            "--bind",
            "127.0.0.1",
            &port.to_string(),
        ]),
        port,
    );
    let url = format!(
        "{}&connect_timeout=3",
        url_with_password(PW_ROLE, port, PW_DB)
    );
    let started = std::time::Instant::now();
    let kind = both_say(&url, &["no connection within 3 s (connect_timeout"]).await;
    assert_eq!(kind, ErrorKind::ConnectionUnavailable);
    // The saver, lgcodec and lgcodec --json: three attempts of 3 s each.
    assert!(started.elapsed() < std::time::Duration::from_secs(25));
    if let Some(ok) = psql_connects(&[], &url) {
        assert!(!ok, "psql connects to {url}");
    }
}
