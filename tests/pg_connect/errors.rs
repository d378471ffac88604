//! Connection errors name what was tried (host, port, database, role, TLS mode) and
//! give the server's own reason (or the operating system's, for a closed port) with
//! what to do, through the saver and through `lgcodec store`; the password never
//! appears in a message, a report or a `Debug` rendering. The server's words are
//! PostgreSQL's own messages for each case (SQLSTATE 3D000, 28000, 28P01, 53300).

use langgraph_codec::saver::postgres::PostgresSaver;
use langgraph_codec::ErrorKind;

use super::run::{lgcodec, no_password, server, url_encoded};
use super::server::{NO_SLOT_ROLE, PW, PW_DB, PW_ROLE};

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
    let e = saver.setup().await.expect_err("no connection");
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
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
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
