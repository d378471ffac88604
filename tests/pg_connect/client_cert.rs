//! Client certificates (libpq's `sslcert` / `sslkey`, `PGSSLCERT` / `PGSSLKEY`, and
//! `~/.postgresql/postgresql.crt` / `.key`) against a role the server lets in only by
//! a certificate signed by its CA and naming the role (`pg_hba.conf`'s `cert`).
//! psql, given the same settings, connects exactly when lgcodec does.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use tokio::sync::OnceCell;

use super::run::{lgcodec, saver_setup, server, stats_agrees_with_psql};
use super::server::{hand_over, Server, CERT_DB, CERT_ROLE};

/// `host=… port=… dbname=certdb user=cert_user sslmode=require` and `more`.
fn conninfo(s: &Server, more: &str) -> String {
    format!(
        "host=127.0.0.1 port={} dbname={CERT_DB} user={CERT_ROLE} sslmode=require {more}",
        s.port
    )
}

fn files(s: &Server, name: &str) -> String {
    let dir = s.dir.display();
    format!("sslcert={dir}/{name}.crt sslkey={dir}/{name}.key")
}

/// Python's tables in the certificate role's database, made by the saver connecting
/// with the role's certificate in a URL (once).
async fn cert_store(s: &Server) {
    static DONE: OnceCell<()> = OnceCell::const_new();
    DONE.get_or_init(|| async {
        let dir = s.dir.display();
        let url = format!(
            "postgresql://{CERT_ROLE}@127.0.0.1:{}/{CERT_DB}?sslmode=require\
             &sslcert={dir}/client.crt&sslkey={dir}/client.key",
            s.port
        );
        saver_setup(&url, "the role's client certificate").await;
    })
    .await;
}

#[tokio::test]
async fn a_client_certificate_logs_in_where_the_server_asks_for_one() {
    let Some(s) = server() else { return };
    cert_store(s).await;
    // Named in the string, by the environment, or in libpq's default place.
    stats_agrees_with_psql(&[], &conninfo(s, &files(s, "client")), 0);
    let (cert, key) = (
        s.dir.join("client.crt").display().to_string(),
        s.dir.join("client.key").display().to_string(),
    );
    let env = [("PGSSLCERT", cert.as_str()), ("PGSSLKEY", key.as_str())];
    stats_agrees_with_psql(&env, &conninfo(s, ""), 0);
    let home = s.dir.join("cert-home");
    let dot = home.join(".postgresql");
    std::fs::create_dir_all(&dot).expect("dir");
    std::fs::copy(&cert, dot.join("postgresql.crt")).expect("copy");
    std::fs::copy(&key, dot.join("postgresql.key")).expect("copy");
    hand_over(&home);
    let home_text = home.display().to_string();
    stats_agrees_with_psql(&[("HOME", home_text.as_str())], &conninfo(s, ""), 0);

    // Without one: the server's refusal, and what to give.
    let out = stats_agrees_with_psql(&[], &conninfo(s, ""), 2);
    assert!(out.contains("requires a valid client certificate"), "{out}");
    assert!(out.contains("sslcert=FILE"), "{out}");
    // A certificate file that is not there is not sent (as libpq), and said so.
    let out = stats_agrees_with_psql(&[], &conninfo(s, "sslcert=/nonexistent/c.crt"), 2);
    assert!(
        out.contains("/nonexistent/c.crt (sslcert) does not exist"),
        "{out}"
    );
    // Signed by a CA the server does not trust; naming another role.
    let out = stats_agrees_with_psql(&[], &conninfo(s, &files(s, "stranger")), 2);
    assert!(
        out.contains("does not trust the CA that signed the client"),
        "{out}"
    );
    let out = stats_agrees_with_psql(&[], &conninfo(s, &files(s, "other-role")), 2);
    assert!(out.contains("common name (CN) must be the role"), "{out}");
}

/// libpq's checks of the key file, refused before connecting: the key missing beside
/// its certificate, a key others may read (0644; 0640 too when this user owns it), a
/// directory, a key encrypted with a passphrase; sslpassword itself.
#[tokio::test]
async fn a_client_key_is_refused_as_libpq_refuses_it() {
    let Some(s) = server() else { return };
    cert_store(s).await;
    let dir = s.dir.join("keys");
    std::fs::create_dir_all(&dir).expect("dir");
    let key = |name: &str, mode: u32| {
        let path = dir.join(name);
        std::fs::copy(s.dir.join("client.key"), &path).expect("copy");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("mode");
        path.display().to_string()
    };
    let cert = s.dir.join("client.crt").display().to_string();
    let with_key = |k: &str| conninfo(s, &format!("sslcert={cert} sslkey={k}"));
    let open = key("open.key", 0o644);
    let group = key("group.key", 0o640);
    let encrypted = dir.join("encrypted.key");
    let made = std::process::Command::new("openssl")
        .args(["pkey", "-aes256", "-passout", "pass:x", "-in"])
        .arg(s.dir.join("client.key"))
        .arg("-out")
        .arg(&encrypted)
        .status()
        .expect("openssl");
    assert!(made.success());
    std::fs::set_permissions(&encrypted, std::fs::Permissions::from_mode(0o600)).expect("mode");
    hand_over(&dir);
    let encrypted = encrypted.display().to_string();
    let missing = dir.join("missing.key").display().to_string();
    let group_root = owned_by_root(Path::new(&group));
    for (k, said) in [
        (
            missing.as_str(),
            "certificate present, but not private key file",
        ),
        (open.as_str(), "has group or world access"),
        (dir.to_str().unwrap_or_default(), "is not a regular file"),
    ] {
        let out = stats_agrees_with_psql(&[], &with_key(k), 2);
        assert!(out.contains(said), "{k}: {out}");
    }
    // 0640: allowed only when root owns the file, as libpq allows it. The scratch
    // directory is the server's user's; as root, a copy root owns is tried too.
    stats_agrees_with_psql(&[], &with_key(&group), if group_root { 0 } else { 2 });
    let own = tempfile::tempdir().expect("a directory of this user's");
    let mine = own.path().join("group.key");
    std::fs::copy(s.dir.join("client.key"), &mine).expect("copy");
    std::fs::set_permissions(&mine, std::fs::Permissions::from_mode(0o640)).expect("mode");
    let mine_root = owned_by_root(&mine);
    let out = stats_agrees_with_psql(
        &[],
        &with_key(&mine.display().to_string()),
        if mine_root { 0 } else { 2 },
    );
    assert!(
        mine_root || out.contains("has group or world access"),
        "{out}"
    );
    // psql asks for the passphrase (no terminal: refused); lgcodec says to decrypt.
    let out = stats_agrees_with_psql(&[], &with_key(&encrypted), 2);
    assert!(
        out.contains("is encrypted") && out.contains("openssl pkey"),
        "{out}"
    );
    let run = lgcodec(&[], &["store", "stats", &conninfo(s, "sslpassword=x")]);
    assert_eq!(run.code, 2, "{}", run.out);
    assert!(run.out.contains("sslpassword"), "{}", run.out);
}

fn owned_by_root(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).is_ok_and(|m| m.uid() == 0)
}
