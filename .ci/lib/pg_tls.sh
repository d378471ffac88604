# Sourced after pg_check.sh: makes the throwaway server what managed Postgres is — TLS
# on, with a certificate for `localhost` from a CA made here (openssl), and a role that
# connects only over TLS and only with its password (scram-sha-256):
#   pg_tls_role ROLE PASSWORD
# sets TLS_CA (the CA file a client checks the server with) and leaves the other roles
# as they were (the admin URL keeps working for the checks' own set-up).
pg_tls_role() {
    local role="$1" password="$2" tls="$PG_DIR/tls"
    if ! command -v openssl >/dev/null; then
        echo "$STEP_PREFIX: installing openssl (to make the test certificates)"
        apt-get update -qq && apt-get install -y -qq --no-install-recommends openssl >/dev/null
    fi
    mkdir -p "$tls"
    (
        cd "$tls"
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=lgcodec test CA" \
            -keyout ca.key -out ca.crt 2>/dev/null
        openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
            -keyout server.key -out server.csr 2>/dev/null
        printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n' > ext.cnf
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
            -days 2 -extfile ext.cnf -out server.crt 2>/dev/null
        chmod 600 server.key
    )
    chown -R postgres "$tls" 2>/dev/null || true
    # TLS-only, password-only for ROLE; the lines before the default ones win.
    local hba="$PG_DIR/data/pg_hba.conf"
    { printf 'hostnossl all %s 127.0.0.1/32 reject\nhostssl all %s 127.0.0.1/32 scram-sha-256\n' "$role" "$role"
      cat "$hba"; } > "$hba.new" && mv "$hba.new" "$hba"
    chown postgres "$hba" 2>/dev/null || true
    "$PY" - "$URL" "$role" "$password" "$tls" <<'PYEOF'
import sys, psycopg
url, role, password, tls = sys.argv[1:]
with psycopg.connect(url, autocommit=True) as c:
    c.execute("SET password_encryption = 'scram-sha-256'")
    c.execute(f'DROP ROLE IF EXISTS "{role}"')
    c.execute(f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{password}'")
    c.execute(f"ALTER SYSTEM SET ssl_cert_file = '{tls}/server.crt'")
    c.execute(f"ALTER SYSTEM SET ssl_key_file = '{tls}/server.key'")
    c.execute("ALTER SYSTEM SET ssl = on")
    c.execute("SELECT pg_reload_conf()")
PYEOF
    TLS_CA="$tls/ca.crt"
    # The reload is asynchronous: wait until a TLS connection is accepted.
    local i
    for i in $(seq 1 50); do
        if PGPASSWORD="$password" "$PY" -c 'import sys, psycopg; psycopg.connect(sys.argv[1]).close()' \
            "postgresql://$role@localhost:$PG_PORT/postgres?sslmode=verify-full&sslrootcert=$TLS_CA" 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    echo "$STEP_PREFIX: the server did not take TLS for $role"; return 1
}
