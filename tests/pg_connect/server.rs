//! A PostgreSQL server of these tests' own, started once per test binary: TLS on (a
//! certificate for `localhost` signed by a CA made here with the `openssl` command,
//! which client certificates must chain to as well), and a `pg_hba.conf` with a
//! TLS-only role and database, a role that must give a password and one let in only by
//! a client certificate. It stops, and its directory goes, when the test binary exits: the server
//! runs under a shell that waits for its standard input to close (the test process's
//! end of the pipe closes when that process ends, however it ends).

use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The role that connects only over TLS (`hostnossl … reject`).
pub const TLS_ROLE: &str = "tls_only";
/// The database reached only over TLS, by any role.
pub const TLS_DB: &str = "tlsdb";
/// The role that must give a password (`scram-sha-256`), and its password.
pub const PW_ROLE: &str = "pw_user";
pub const PW: &str = "Pw-S3cret:with\\colon";
/// A role the server lets open no connection (`CONNECTION LIMIT 0`).
pub const NO_SLOT_ROLE: &str = "no_slot";
/// A database `PW_ROLE` owns.
pub const PW_DB: &str = "pwdb";
/// The role that logs in with a client certificate (`cert`, over TLS only), and the
/// database it owns.
pub const CERT_ROLE: &str = "cert_user";
pub const CERT_DB: &str = "certdb";

pub struct Server {
    pub port: u16,
    /// Scratch directory (certificates, the data directory, password files).
    pub dir: PathBuf,
    /// The CA that signed the server's certificate.
    pub ca: PathBuf,
    /// A CA that signed nothing the server has.
    pub other_ca: PathBuf,
    /// Keeps the server's shell alive: closing it stops the server.
    _stdin: Mutex<ChildStdin>,
    _child: Mutex<Child>,
}

impl Server {
    /// `postgresql://USER@HOST:PORT/DB?QUERY` (no password).
    pub fn url(&self, user: &str, host: &str, db: &str, query: &str) -> String {
        let q = if query.is_empty() {
            String::new()
        } else {
            format!("?{query}")
        };
        format!("postgresql://{user}@{host}:{}/{db}{q}", self.port)
    }
}

/// The PostgreSQL server binaries (`initdb`, `postgres`).
fn bin_dir() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path().join("bin"))
                .filter(|b| b.join("initdb").exists())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found.pop().expect(
        "no PostgreSQL server binaries under /usr/lib/postgresql (.ci/lib/pg_check.sh installs them)",
    )
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false)
}

/// `cmd` as the `postgres` user when running as root (the server refuses root).
pub fn as_pg(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

/// Gives `path` (and what is under it) to the `postgres` user when running as root, so
/// the server's shell can remove the scratch directory at the end.
pub fn hand_over(path: &Path) {
    if is_root() {
        run(
            Command::new("chown").args(["-R", "postgres"]).arg(path),
            "chown to postgres",
        );
    }
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn openssl(dir: &Path, args: &[&str]) {
    run(
        Command::new("openssl").current_dir(dir).args(args),
        &format!("openssl {}", args.first().copied().unwrap_or("")),
    );
}

/// A CA (`NAME.crt`, `NAME.key`): P-256, self-signed, valid for two days.
fn make_ca(dir: &Path, name: &str) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            &format!("/CN=lgcodec test {name}"),
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.crt"),
        ],
    );
}

/// `NAME.crt`/`NAME.key` (mode 0600) for common name `cn`, signed by the CA `ca`
/// (`CA.crt`, `CA.key`), with the X.509 extensions `ext`.
fn make_cert(dir: &Path, name: &str, cn: &str, ca: &str, ext: &str) {
    let (key, csr, crt, ext_file) = (
        format!("{name}.key"),
        format!("{name}.csr"),
        format!("{name}.crt"),
        format!("{name}.ext"),
    );
    std::fs::write(dir.join(&ext_file), ext).expect("ext");
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-subj",
            &format!("/CN={cn}"),
            "-keyout",
            &key,
            "-out",
            &csr,
        ],
    );
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &format!("{ca}.crt"),
            "-CAkey",
            &format!("{ca}.key"),
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            &ext_file,
            "-out",
            &crt,
        ],
    );
    std::fs::set_permissions(
        dir.join(&key),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .expect("key mode");
}

/// `server.crt`/`server.key`, signed by `ca`, naming only `localhost`: a connection
/// to `127.0.0.1` gets a certificate that does not name the host it asked for.
fn make_server_cert(dir: &Path) {
    make_cert(
        dir,
        "server",
        "localhost",
        "ca",
        "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n\
         keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n",
    );
}

/// A client certificate `NAME.crt`/`NAME.key` for common name `cn`, signed by `ca`.
fn make_client_cert(dir: &Path, name: &str, cn: &str, ca: &str) {
    make_cert(
        dir,
        name,
        cn,
        ca,
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n\
         extendedKeyUsage=clientAuth\n",
    );
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

const HBA: &str = "\
local     all       all                   trust
hostnossl all       tls_only 127.0.0.1/32 reject
hostssl   all       tls_only 127.0.0.1/32 trust
hostnossl tlsdb     all      127.0.0.1/32 reject
hostssl   tlsdb     all      127.0.0.1/32 trust
hostnossl all       cert_user 127.0.0.1/32 reject
hostssl   all       cert_user 127.0.0.1/32 cert
host      all       pw_user  127.0.0.1/32 scram-sha-256
host      all       all      127.0.0.1/32 trust
";

static SERVER: OnceLock<Server> = OnceLock::new();

/// The server, started at the first call.
pub fn server() -> &'static Server {
    SERVER.get_or_init(start)
}

fn start() -> Server {
    assert!(
        Command::new("openssl")
            .arg("version")
            .output()
            .is_ok_and(|o| o.status.success()),
        "the openssl command is needed to make the test certificates (apt-get install openssl)"
    );
    let bin = bin_dir();
    let dir = tempfile::Builder::new()
        .prefix("lgcodec-pg-connect-")
        .tempdir()
        .expect("scratch dir")
        .keep();
    make_ca(&dir, "ca");
    make_ca(&dir, "other-ca");
    make_server_cert(&dir);
    // The role's own certificate; one of a CA the server does not trust; one naming
    // another role.
    make_client_cert(&dir, "client", CERT_ROLE, "ca");
    make_client_cert(&dir, "stranger", CERT_ROLE, "other-ca");
    make_client_cert(&dir, "other-role", PW_ROLE, "ca");
    std::fs::write(dir.join("pg_hba.conf"), HBA).expect("hba");
    hand_over(&dir);
    let data = dir.join("data");
    run(
        as_pg(&bin.join("initdb"))
            .args(["-N", "-A", "trust", "-U", "postgres", "-E", "UTF8", "-D"])
            .arg(&data),
        "initdb",
    );
    let port = free_port();
    let script = format!(
        "'{postgres}' -D '{data}' -p {port} -k '{dir}' -c listen_addresses=127.0.0.1 \
         -c fsync=off -c ssl=on -c ssl_cert_file='{dir}/server.crt' \
         -c ssl_key_file='{dir}/server.key' -c ssl_ca_file='{dir}/ca.crt' \
         -c hba_file='{dir}/pg_hba.conf' \
         -c password_encryption=scram-sha-256 >'{dir}/log' 2>&1 &
         pid=$!
         cat >/dev/null
         kill -INT $pid
         wait $pid
         rm -rf '{dir}'",
        postgres = bin.join("postgres").display(),
        data = data.display(),
        dir = dir.display(),
    );
    let mut child = as_pg(Path::new("/bin/sh"))
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .spawn()
        .expect("start postgres");
    let stdin = child.stdin.take().expect("stdin");
    let server = Server {
        port,
        ca: dir.join("ca.crt"),
        other_ca: dir.join("other-ca.crt"),
        dir,
        _stdin: Mutex::new(stdin),
        _child: Mutex::new(child),
    };
    wait_ready(&server);
    setup_roles(&server);
    server
}

fn wait_ready(server: &Server) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let socket = server.dir.join(format!(".s.PGSQL.{}", server.port));
    while !socket.exists() {
        assert!(
            Instant::now() < deadline,
            "postgres did not start: {}",
            std::fs::read_to_string(server.dir.join("log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Runs on a thread of its own: the first caller may be inside a Tokio runtime.
fn setup_roles(server: &Server) {
    std::thread::scope(|s| {
        s.spawn(|| setup_roles_blocking(server))
            .join()
            .expect("set up the roles");
    });
}

fn setup_roles_blocking(server: &Server) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let deadline = Instant::now() + Duration::from_secs(30);
        let admin = loop {
            // The socket appears before the server accepts connections.
            match tokio_postgres::Config::new()
                .host_path(&server.dir)
                .port(server.port)
                .user("postgres")
                .dbname("postgres")
                .connect(tokio_postgres::NoTls)
                .await
            {
                Ok((c, conn)) => {
                    tokio::spawn(conn);
                    break c;
                }
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("postgres does not accept connections: {e}"),
            }
        };
        let pw = PW.replace('\'', "''");
        for sql in [
            format!("CREATE ROLE {TLS_ROLE} LOGIN"),
            format!("CREATE ROLE {PW_ROLE} LOGIN PASSWORD '{pw}'"),
            format!("CREATE ROLE {NO_SLOT_ROLE} LOGIN CONNECTION LIMIT 0"),
            format!("CREATE ROLE {CERT_ROLE} LOGIN"),
            format!("CREATE DATABASE {CERT_DB} OWNER {CERT_ROLE}"),
            format!("CREATE DATABASE {TLS_DB} OWNER {TLS_ROLE}"),
            format!("CREATE DATABASE {PW_DB} OWNER {PW_ROLE}"),
        ] {
            admin.batch_execute(&sql).await.expect(&sql);
        }
        // Python's tables go into public: each role owns its database's schema.
        for (db, owner) in [(TLS_DB, TLS_ROLE), (PW_DB, PW_ROLE), (CERT_DB, CERT_ROLE)] {
            let (client, conn) = tokio_postgres::Config::new()
                .host_path(&server.dir)
                .port(server.port)
                .user("postgres")
                .dbname(db)
                .connect(tokio_postgres::NoTls)
                .await
                .expect("the database over the socket");
            tokio::spawn(conn);
            client
                .batch_execute(&format!("ALTER SCHEMA public OWNER TO {owner}"))
                .await
                .expect("schema owner");
        }
    });
}
