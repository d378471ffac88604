//! libpq's environment variables and password file, as psql reads them, through
//! `lgcodec store stats` with exactly the environment each case gives (and psql, run
//! with the same environment, connecting exactly when lgcodec does).

use std::path::PathBuf;

use tokio::sync::OnceCell;

use super::run::{lgcodec, no_password, saver_setup, server, stats_agrees_with_psql, url_encoded};
use super::server::{hand_over, Server, PW, PW_DB, PW_ROLE};

/// Python's tables in the password role's database (once), so `store stats` has a
/// store to read.
async fn pw_store(s: &Server) {
    static DONE: OnceCell<()> = OnceCell::const_new();
    DONE.get_or_init(|| async {
        let url = format!(
            "postgresql://{PW_ROLE}:{}@127.0.0.1:{}/{PW_DB}?sslmode=disable",
            url_encoded(PW),
            s.port
        );
        saver_setup(&url, "the password in the URL").await;
    })
    .await;
}

/// `host:port:database:user:password` with libpq's escapes (`\:`, `\\`).
fn escaped(field: &str) -> String {
    field.replace('\\', "\\\\").replace(':', "\\:")
}

/// A password file in the scratch directory with `mode`: a line for another user
/// first, then the line for the password role, then a catch-all with a wrong password
/// (the first match wins).
fn passfile(s: &Server, name: &str, mode: u32) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = s.dir.join(name);
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(".pgpass");
    std::fs::write(
        &path,
        format!(
            "# comment\n127.0.0.1:{port}:*:someone_else:wrong\n\
             127.0.0.1:{port}:{PW_DB}:{PW_ROLE}:{pw}\n*:*:*:*:wrong\n",
            port = s.port,
            pw = escaped(PW)
        ),
    )
    .expect("write the password file");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("mode");
    // Owned by postgres, the file is still this (root) process's to read only when
    // root; libpq's check is of the mode, as here.
    hand_over(&dir);
    path
}

#[tokio::test]
async fn libpq_variables_complete_a_url_without_host_user_or_database() {
    let Some(s) = server() else { return };
    pw_store(s).await;
    let port = s.port.to_string();
    let base = [
        ("PGHOST", "127.0.0.1"),
        ("PGPORT", port.as_str()),
        ("PGUSER", PW_ROLE),
        ("PGPASSWORD", PW),
        ("PGSSLMODE", "disable"),
    ];
    // postgresql:///DB: the database from the URL, the rest from the environment.
    let out = stats_agrees_with_psql(&base, &format!("postgresql:///{PW_DB}"), 0);
    no_password(&out, PW);
    // postgresql://: the database too.
    let mut all = base.to_vec();
    all.push(("PGDATABASE", PW_DB));
    stats_agrees_with_psql(&all, "postgresql://", 0);
    // Without PGPASSWORD, the server's refusal says no password was given.
    let out = stats_agrees_with_psql(&base[..3], &format!("postgresql:///{PW_DB}"), 2);
    assert!(
        out.contains("asks for a password and none was given"),
        "{out}"
    );
    assert!(out.contains(&format!("user \"{PW_ROLE}\"")), "{out}");
}

#[tokio::test]
async fn the_url_wins_over_the_environment() {
    let Some(s) = server() else { return };
    pw_store(s).await;
    // Every variable points elsewhere; the URL names the right server, role and
    // database, so they must not be used.
    let env = [
        ("PGHOST", "/nonexistent-socket-dir"),
        ("PGPORT", "1"),
        ("PGUSER", "nobody"),
        ("PGDATABASE", "nosuchdb"),
        ("PGPASSWORD", PW),
        ("PGSSLMODE", "disable"),
    ];
    let url = format!("postgresql://{PW_ROLE}@127.0.0.1:{}/{PW_DB}", s.port);
    stats_agrees_with_psql(&env, &url, 0);
    // A password in the URL wins over PGPASSWORD.
    let env = [("PGPASSWORD", "wrong"), ("PGSSLMODE", "disable")];
    let url = format!(
        "postgresql://{PW_ROLE}:{}@127.0.0.1:{}/{PW_DB}",
        url_encoded(PW),
        s.port
    );
    let out = stats_agrees_with_psql(&env, &url, 0);
    no_password(&out, PW);
}

#[tokio::test]
async fn a_0600_password_file_gives_the_password() {
    let Some(s) = server() else { return };
    pw_store(s).await;
    let file = passfile(s, "pgpass-0600", 0o600);
    let port = s.port.to_string();
    let url = format!("postgresql:///{PW_DB}");
    let common = [
        ("PGHOST", "127.0.0.1"),
        ("PGPORT", port.as_str()),
        ("PGUSER", PW_ROLE),
        ("PGSSLMODE", "disable"),
    ];
    let file_text = file.display().to_string();
    let mut env = common.to_vec();
    env.push(("PGPASSFILE", &file_text));
    let out = stats_agrees_with_psql(&env, &url, 0);
    no_password(&out, PW);
    // The default place: ~/.pgpass.
    let home = file.parent().expect("dir").display().to_string();
    let mut env = common.to_vec();
    env.push(("HOME", &home));
    stats_agrees_with_psql(&env, &url, 0);
}

#[tokio::test]
async fn a_password_file_others_can_read_is_ignored() {
    let Some(s) = server() else { return };
    pw_store(s).await;
    let file = passfile(s, "pgpass-0644", 0o644);
    let port = s.port.to_string();
    let file_text = file.display().to_string();
    let env = [
        ("PGHOST", "127.0.0.1"),
        ("PGPORT", port.as_str()),
        ("PGUSER", PW_ROLE),
        ("PGSSLMODE", "disable"),
        ("PGPASSFILE", file_text.as_str()),
    ];
    let out = stats_agrees_with_psql(&env, &format!("postgresql:///{PW_DB}"), 2);
    assert!(out.contains("group or world access"), "{out}");
    assert!(out.contains(&file_text), "{out}");
    no_password(&out, PW);
    // The same file made private again is read.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("mode");
    let run = lgcodec(&env, &["store", "stats", &format!("postgresql:///{PW_DB}")]);
    assert_eq!(run.code, 0, "{}", run.out);
}

/// libpq's `key=value` form, as psql and psycopg take it: the store is read with the
/// password it gives (quoted, with `\` escapes), psql connecting exactly when lgcodec
/// does, a wrong one refused; the report names the store with its password as `***`,
/// and no output shows it. Taken for a file path, the string was said missing with the
/// password in the message.
#[tokio::test]
async fn a_keyword_connection_string_is_read_as_psql_reads_it() {
    let Some(s) = server() else { return };
    pw_store(s).await;
    let conninfo = |pw: &str| {
        format!(
            "host=127.0.0.1 port={} dbname={PW_DB} user={PW_ROLE} password='{}' sslmode=disable",
            s.port,
            pw.replace('\\', "\\\\").replace('\'', "\\'")
        )
    };
    let out = stats_agrees_with_psql(&[], &conninfo(PW), 0);
    no_password(&out, PW);
    let out = stats_agrees_with_psql(&[], &conninfo("Wrong-S3cret"), 2);
    assert!(out.contains("password authentication failed"), "{out}");
    no_password(&out, "Wrong-S3cret");
    let run = lgcodec(&[], &["store", "stats", &conninfo(PW), "--json"]);
    assert_eq!(run.code, 0, "{}", run.out);
    let shown = format!(
        "\"store\":\"host=127.0.0.1 port={} dbname={PW_DB} user={PW_ROLE} password=*** sslmode=disable\"",
        s.port
    );
    assert!(run.out.contains(&shown), "{}", run.out);
    no_password(&run.out, PW);
}

/// libpq's service file (`service=NAME`, `PGSERVICE`): the per-user file
/// (`PGSERVICEFILE`) before the system-wide one (`PGSYSCONFDIR`), the string's own
/// keywords over the group's and the group's over the environment, a name in neither
/// file and a line libpq refuses refused; psql, given the same files and environment,
/// connects exactly when lgcodec does. Before, `service=` was an unknown option.
#[tokio::test]
async fn a_service_file_is_read_as_psql_reads_it() {
    let Some(s) = server() else { return };
    pw_store(s).await;
    let dir = s.dir.join("service");
    let system = dir.join("etc");
    std::fs::create_dir_all(&system).expect("dir");
    let group = |name: &str, password: &str| {
        format!(
            "[{name}]\nhost=127.0.0.1\nport={}\ndbname={PW_DB}\nuser={PW_ROLE}\n\
             password={password}\nsslmode=disable\n",
            s.port
        )
    };
    let user_file = dir.join("user.conf");
    std::fs::write(
        &user_file,
        format!(
            "# the store's services\n[other]\nhost=/nonexistent\n{}{}[spaced]\nhost = 127.0.0.1\n",
            group("store", PW),
            group("wrongpw", "Wrong-S3cret")
        ),
    )
    .expect("write the service file");
    std::fs::write(
        system.join("pg_service.conf"),
        format!("{}{}", group("store", "Wrong-S3cret"), group("system", PW)),
    )
    .expect("write the system service file");
    hand_over(&dir);
    let (user_file, system) = (
        user_file.display().to_string(),
        system.display().to_string(),
    );
    let files = [
        ("PGSERVICEFILE", user_file.as_str()),
        ("PGSYSCONFDIR", system.as_str()),
    ];
    let with = |more: &[(&'static str, &'static str)]| {
        let mut env = files.to_vec();
        env.extend_from_slice(more);
        env
    };
    // The group of the per-user file, named in either form or by PGSERVICE; the
    // system file's group of the same name (a wrong password) is not read.
    for (env, given) in [
        (with(&[]), "service=store"),
        (with(&[]), "postgresql://?service=store"),
        (with(&[("PGSERVICE", "store")]), "postgresql://"),
        // Over the environment.
        (
            with(&[("PGPORT", "1"), ("PGPASSWORD", "wrong")]),
            "service=store",
        ),
        // Only in the system-wide file.
        (with(&[]), "service=system"),
    ] {
        let out = stats_agrees_with_psql(&env, given, 0);
        no_password(&out, PW);
    }
    // The string's own keyword over the group's.
    stats_agrees_with_psql(&with(&[]), "service=store port=1", 2);
    // A wrong password says where it came from, and shows neither.
    let out = stats_agrees_with_psql(&with(&[]), "service=wrongpw", 2);
    assert!(out.contains("password authentication failed"), "{out}");
    assert!(
        out.contains(&format!(
            "service \"wrongpw\" of the service file {user_file}"
        )),
        "{out}"
    );
    no_password(&out, PW);
    // No such group; a line libpq refuses too.
    let out = stats_agrees_with_psql(&with(&[]), "service=missing", 2);
    assert!(
        out.contains("definition of service \"missing\" not found"),
        "{out}"
    );
    assert!(out.contains(&user_file) && out.contains(&system), "{out}");
    let out = stats_agrees_with_psql(&with(&[]), "service=spaced", 2);
    assert!(
        out.contains("line 19") && out.contains("no spaces before"),
        "{out}"
    );
}
