//! libpq's connection service file (`pg_service.conf`): a named group of connection
//! keywords, asked for with `service=NAME` (or `PGSERVICE`), read the way libpq 15–18
//! reads it (checked against `psql` on 2026-12-07):
//!
//! - The per-user file (`PGSERVICEFILE`, default `~/.pg_service.conf`) is read first;
//!   when it has no group of that name, the system-wide one (`PGSYSCONFDIR/
//!   pg_service.conf`, default `/etc/postgresql-common/pg_service.conf`, Debian's
//!   libpq and psycopg's wheels alike). A name in neither is an error.
//! - Lines are trimmed; empty ones and `#` comments are skipped. `[NAME]` opens a group
//!   (the text after `]` is ignored, names compare case-sensitively); the first group
//!   of that name is read, up to the next `[`.
//! - In that group each line is `keyword=value`, split at the first `=` with nothing
//!   trimmed around it (`host = db` is refused, as libpq refuses it), the value taken
//!   as written (no quotes, no escapes). The first line of a keyword wins; a keyword
//!   not read, `service=` itself or an LDAP look-up is an error naming the line.
//!
//! The values fill in only what the connection string leaves out, and win over the
//! environment (`PGHOST`, …), as in libpq. Nothing here prints a value: a line may
//! hold a password.

use std::path::{Path, PathBuf};

/// The largest service file read (a group is a few hundred bytes).
const MAX_SERVICE_FILE_BYTES: u64 = 1 << 20;

/// Where libpq looks for the system-wide file when `PGSYSCONFDIR` is not set: the
/// directory Debian's and Ubuntu's libpq are built with (`pg_config --sysconfdir`),
/// which the libpq of psycopg's binary wheels reads too.
const SYSCONFDIR: &str = "/etc/postgresql-common";

/// A service's keywords, in the order of the file, and the file they came from.
pub(super) struct Service {
    pub(super) keys: Vec<(String, String)>,
    pub(super) file: PathBuf,
}

/// The group `name` of the per-user service file, else of the system-wide one.
///
/// `known` says whether a keyword is one the connection reads. `env` stands for the
/// environment (`PGSERVICEFILE`, `PGSYSCONFDIR`), `home` for the home directory.
pub(super) fn lookup(
    name: &str,
    env: &dyn Fn(&str) -> Option<String>,
    home: Option<&Path>,
    known: &dyn Fn(&str) -> bool,
) -> Result<Service, String> {
    let user_file = env("PGSERVICEFILE")
        .filter(|f| !f.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".pg_service.conf")));
    let system_dir = env("PGSYSCONFDIR")
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| SYSCONFDIR.to_owned());
    let system_file = Path::new(&system_dir).join("pg_service.conf");
    let mut looked = Vec::new();
    for file in user_file.into_iter().chain([system_file]) {
        // As libpq: a file that is not there is passed over, one that cannot be read
        // is an error.
        if std::fs::metadata(&file).is_err() {
            looked.push(format!("{} (no such file)", file.display()));
            continue;
        }
        if let Some(keys) = read_group(&file, name, known)? {
            return Ok(Service { keys, file });
        }
        looked.push(file.display().to_string());
    }
    Err(format!(
        "definition of service {name:?} not found (looked in {}): add a [{name}] group \
         of keyword=value lines to one of them, or name the file with PGSERVICEFILE",
        looked.join(", ")
    ))
}

/// The keywords of the first group `name` in `file` (`None`: no such group).
fn read_group(
    file: &Path,
    name: &str,
    known: &dyn Fn(&str) -> bool,
) -> Result<Option<Vec<(String, String)>>, String> {
    let shown = file.display();
    let bytes = super::tls::read_setting_file(
        file,
        "service file",
        MAX_SERVICE_FILE_BYTES,
        "is it the right file?",
    )?;
    let mut found = false;
    let mut keys: Vec<(String, String)> = Vec::new();
    for (index, raw) in bytes.split(|b| *b == b'\n').enumerate() {
        let number = index + 1;
        let line = raw.trim_ascii();
        if line.is_empty() || line.first() == Some(&b'#') {
            continue;
        }
        if let Some(rest) = line.strip_prefix(b"[") {
            if found {
                break;
            }
            found = rest
                .strip_prefix(name.as_bytes())
                .map(|after| after.first())
                == Some(Some(&b']'));
            continue;
        }
        if !found {
            continue;
        }
        let at = |what: &str| format!("service file {shown}, line {number}: {what}");
        let line = std::str::from_utf8(line).map_err(|_| at("the line is not UTF-8"))?;
        if line.starts_with("ldap") {
            return Err(at(
                "LDAP look-ups are not supported: write the connection keywords into the \
                 group",
            ));
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(at("syntax error: expected keyword=value"));
        };
        if key == "service" {
            return Err(at("nested service specifications are not supported"));
        }
        if !known(key) {
            let spaced = if key != key.trim_end() {
                " (no spaces before `=`: libpq refuses them too)"
            } else {
                " (a libpq keyword this driver does not take, or a slip)"
            };
            return Err(at(&format!("unknown connection option {key:?}{spaced}")));
        }
        if !keys.iter().any(|(k, _)| k == key) {
            keys.push((key.to_owned(), value.to_owned()));
        }
    }
    Ok(found.then_some(keys))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(text: &str, name: &str) -> Result<Option<Vec<(String, String)>>, String> {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let file = dir.path().join("pg_service.conf");
        std::fs::write(&file, text).expect("the file is written");
        read_group(&file, name, &|k| {
            ["host", "port", "user", "dbname", "password"].contains(&k)
        })
    }

    fn pairs(list: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(
            list.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    // Each case's outcome is what psql 15.18 (Debian's libpq) did with the same file
    // on 2026-12-07: connected with those settings, or refused the line.
    #[test]
    fn a_group_is_read_as_libpq_reads_it() {
        let read = |text: &str| group(text, "a");
        assert_eq!(
            read("# c\n[b]\nfoo=1\n[a]  \r\n  host=db   \r\n # x\nport= 5433\nport=1\n[a]\nuser=no\n"),
            Ok(pairs(&[("host", "db"), ("port", " 5433")]))
        );
        assert_eq!(
            read("[a] trailing text\nhost=db\n"),
            Ok(pairs(&[("host", "db")]))
        );
        assert_eq!(
            read("[a]\ndbname='x'\npassword=\n"),
            Ok(pairs(&[("dbname", "'x'"), ("password", "")]))
        );
        assert_eq!(read("[ab]\nhost=db\n"), Ok(None));
        assert_eq!(read("[A]\nhost=db\n"), Ok(None));
        assert_eq!(read("host=db\n"), Ok(None));
        for (text, said) in [
            (
                "[a]\nhost = db\n",
                "line 2: unknown connection option \"host \" (no spaces",
            ),
            ("[a]\nhost\n", "line 2: syntax error"),
            ("[a]\nservice=b\n", "line 2: nested service"),
            (
                "[a]\nhost=db\nfoo=1\n",
                "line 3: unknown connection option \"foo\"",
            ),
            ("[a]\nldap://x\n", "line 2: LDAP"),
        ] {
            let e = read(text).expect_err(text);
            assert!(e.contains(said), "{text:?}: {e}");
        }
    }

    #[test]
    fn the_per_user_file_goes_before_the_system_file() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let user = dir.path().join("user.conf");
        std::fs::write(&user, "[a]\nhost=mine\n").expect("written");
        std::fs::write(
            dir.path().join("pg_service.conf"),
            "[a]\nhost=system\n[b]\nport=2\n",
        )
        .expect("written");
        let (user_s, dir_s) = (user.display().to_string(), dir.path().display().to_string());
        let env = |k: &str| match k {
            "PGSERVICEFILE" => Some(user_s.clone()),
            "PGSYSCONFDIR" => Some(dir_s.clone()),
            _ => None,
        };
        let known = |_: &str| true;
        let a = lookup("a", &env, None, &known).expect("a");
        assert_eq!(
            (a.keys, a.file),
            (pairs(&[("host", "mine")]).unwrap_or_default(), user)
        );
        let b = lookup("b", &env, None, &known).expect("b");
        assert_eq!(b.keys, pairs(&[("port", "2")]).unwrap_or_default());
        let e = lookup("c", &env, None, &known).err().unwrap_or_default();
        assert!(
            e.starts_with("definition of service \"c\" not found"),
            "{e}"
        );
        assert!(
            e.contains("user.conf") && e.contains("PGSERVICEFILE"),
            "{e}"
        );
    }
}
