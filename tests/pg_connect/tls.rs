//! `sslmode` and `sslrootcert` against a server with TLS on whose `pg_hba.conf`
//! refuses plain connections of one role and one database (`hostnossl … reject`).
//! What each mode must do is libpq's documented behaviour: `require` encrypts and
//! checks no certificate (unless a root certificate file is named: then the chain, as
//! `verify-ca`), `verify-ca` checks the chain, `verify-full` the chain and the host
//! name, `prefer` uses TLS when the server offers it, `disable` never does.

use langgraph_codec::saver::postgres::PostgresSaver;
use langgraph_codec::saver::{Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver};
use langgraph_codec::{Error, ErrorKind};

use super::run::{lgcodec, psql_connects, server, stats_agrees_with_psql};
use super::server::{TLS_DB, TLS_ROLE};

/// Connects as `url` says (through the saver's pool) and answers whether the
/// connection is encrypted, as the server sees it (`pg_stat_ssl`).
async fn encrypted(url: &str) -> Result<bool, Error> {
    let saver = PostgresSaver::builder_from_url(url)?.build()?;
    // verify() connects first, so a connection failure comes back as the crate's
    // error; a database without checkpoint tables is no failure here.
    if let Err(e) = saver.verify().await {
        if matches!(
            e.kind(),
            ErrorKind::ConnectionUnavailable | ErrorKind::Tls | ErrorKind::InvalidStoreLocation
        ) {
            return Err(e);
        }
    }
    let client = saver.pool().get().await.expect("a pooled connection");
    let row = client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .expect("pg_stat_ssl");
    Ok(row.get(0))
}

/// The URL's connection is refused with `kind`, and the message says so with `words`,
/// names the server tried, and psql (libpq) refuses it too.
async fn refused(url: &str, kind: ErrorKind, words: &[&str]) -> String {
    let e = encrypted(url).await.expect_err("refused");
    let text = e.to_string();
    println!("{url}: {text}");
    assert_eq!(e.kind(), kind, "{text}");
    for w in words {
        assert!(text.contains(w), "{w:?} missing from: {text}");
    }
    if let Some(ok) = psql_connects(&[], url) {
        assert!(!ok, "psql connects with {url}");
    }
    text
}

async fn connects_encrypted(url: &str) {
    match encrypted(url).await {
        Ok(on) => assert!(on, "{url} connected without TLS"),
        Err(e) => panic!("{url}: {e}"),
    }
    if let Some(ok) = psql_connects(&[], url) {
        assert!(ok, "psql does not connect with {url}");
    }
}

#[tokio::test]
async fn require_encrypts_without_checking_the_certificate() {
    let Some(s) = server() else { return };
    // 127.0.0.1 is not a name the certificate has, and no CA is given: require does
    // not look.
    connects_encrypted(&s.url(TLS_ROLE, "127.0.0.1", "postgres", "sslmode=require")).await;
    // With a root certificate file, libpq's require checks the chain (as verify-ca):
    // the right CA passes whatever the host name, another CA does not.
    let ca = s.ca.display().to_string();
    connects_encrypted(&s.url(
        TLS_ROLE,
        "127.0.0.1",
        "postgres",
        &format!("sslmode=require&sslrootcert={ca}"),
    ))
    .await;
    let other = s.other_ca.display().to_string();
    refused(
        &s.url(
            TLS_ROLE,
            "127.0.0.1",
            "postgres",
            &format!("sslmode=require&sslrootcert={other}"),
        ),
        ErrorKind::Tls,
        &[
            "not signed by a certificate authority of sslrootcert",
            "drop sslrootcert",
        ],
    )
    .await;
}

#[tokio::test]
async fn verify_full_with_the_ca_connects_to_the_host_its_certificate_names() {
    let Some(s) = server() else { return };
    let ca = s.ca.display().to_string();
    connects_encrypted(&s.url(
        TLS_ROLE,
        "localhost",
        "postgres",
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    ))
    .await;
    // verify-ca checks the chain only: a host the certificate does not name is fine.
    connects_encrypted(&s.url(
        TLS_ROLE,
        "127.0.0.1",
        "postgres",
        &format!("sslmode=verify-ca&sslrootcert={ca}"),
    ))
    .await;
}

#[tokio::test]
async fn verify_full_refuses_another_ca_and_another_host_name() {
    let Some(s) = server() else { return };
    let port = s.port;
    let (ca, other) = (s.ca.display().to_string(), s.other_ca.display().to_string());
    for mode in ["verify-full", "verify-ca"] {
        refused(
            &s.url(
                TLS_ROLE,
                "localhost",
                "postgres",
                &format!("sslmode={mode}&sslrootcert={other}"),
            ),
            ErrorKind::Tls,
            &[
                "not signed by a trusted certificate authority",
                "sslrootcert=FILE",
                &format!("localhost:{port}"),
                "user \"tls_only\"",
                "database \"postgres\"",
                &format!("sslmode {mode}"),
            ],
        )
        .await;
    }
    // The certificate names localhost, not 127.0.0.1.
    refused(
        &s.url(
            TLS_ROLE,
            "127.0.0.1",
            "postgres",
            &format!("sslmode=verify-full&sslrootcert={ca}"),
        ),
        ErrorKind::Tls,
        &["not issued for 127.0.0.1 (it names localhost)", "verify-ca"],
    )
    .await;
    // A CA file that is not there: said before any connection, by its path.
    let missing = s.dir.join("no-such-ca.crt").display().to_string();
    let e = PostgresSaver::builder_from_url(&s.url(
        TLS_ROLE,
        "localhost",
        "postgres",
        &format!("sslmode=verify-full&sslrootcert={missing}"),
    ))
    .expect_err("no CA file");
    assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
    assert!(e.to_string().contains(&missing), "{e}");
}

#[tokio::test]
async fn disable_is_refused_by_a_tls_only_server_and_prefer_uses_tls() {
    let Some(s) = server() else { return };
    let port = s.port;
    let text = refused(
        &s.url(TLS_ROLE, "127.0.0.1", "postgres", "sslmode=disable"),
        ErrorKind::ConnectionUnavailable,
        &[
            "28000",
            "pg_hba.conf rejects connection",
            "no encryption",
            "only over TLS",
            &format!("127.0.0.1:{port}"),
        ],
    )
    .await;
    assert!(text.contains("sslmode disable"), "{text}");
    // The same for a TLS-only database, any role.
    refused(
        &s.url("postgres", "127.0.0.1", TLS_DB, "sslmode=disable"),
        ErrorKind::ConnectionUnavailable,
        &["no encryption", "database \"tlsdb\""],
    )
    .await;
    // No sslmode: libpq's prefer, TLS since the server offers it.
    connects_encrypted(&s.url(TLS_ROLE, "127.0.0.1", "postgres", "")).await;
}

/// The shared test server has TLS off: prefer (the default) goes on in plain text as
/// before, and require is refused with a reason.
#[tokio::test]
async fn a_server_without_tls_keeps_working_by_default_and_refuses_require() {
    let Some(_) = server() else { return };
    let Some(plain) = super::support::pg::url() else {
        return;
    };
    assert!(!encrypted(&plain)
        .await
        .expect("plain server, default sslmode"));
    let sep = if plain.contains('?') { '&' } else { '?' };
    refused(
        &format!("{plain}{sep}sslmode=require"),
        ErrorKind::Tls,
        &["server does not support TLS", "sslmode=prefer or disable"],
    )
    .await;
}

#[tokio::test]
async fn a_saver_and_the_store_commands_work_over_verified_tls() {
    let Some(s) = server() else { return };
    let ca = s.ca.display().to_string();
    let url = s.url(
        TLS_ROLE,
        "localhost",
        TLS_DB,
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    );
    // The saver: Python's tables, a checkpoint written and read back, over TLS (the
    // database refuses plain connections).
    let saver = PostgresSaver::builder_from_url(&url)
        .expect("url")
        .build()
        .expect("build");
    saver.setup().await.expect("setup over TLS");
    let stored = saver
        .put(
            &CheckpointConfig::new("tls-thread"),
            &Checkpoint::now(1),
            &CheckpointMetadata::new("input", -1),
            &Default::default(),
        )
        .await
        .expect("put over TLS");
    assert!(saver.get_tuple(&stored).await.expect("get").is_some());
    // The store commands through the binary, the URL's settings or libpq's variables.
    let out = stats_agrees_with_psql(&[], &url, 0);
    assert!(out.contains("tls-thread") || out.contains('1'), "{out}");
    let run = lgcodec(&[], &["store", "audit", &url, "--allow-clear"]);
    assert_eq!(run.code, 0, "{}", run.out);
    let bare = format!("postgresql://{TLS_ROLE}@localhost:{}/{TLS_DB}", s.port);
    stats_agrees_with_psql(
        &[("PGSSLMODE", "verify-full"), ("PGSSLROOTCERT", &ca)],
        &bare,
        0,
    );
    // And refused, by both, with another CA.
    let other = s.other_ca.display().to_string();
    let out = stats_agrees_with_psql(
        &[("PGSSLMODE", "verify-full"), ("PGSSLROOTCERT", &other)],
        &bare,
        2,
    );
    assert!(
        out.contains("not signed by a trusted certificate authority"),
        "{out}"
    );
}
