//! Who answers at a server's address, asked after a connection failed the way a
//! server that is not PostgreSQL makes it fail. The driver then says only "other
//! error; (bytes remaining on stream)" (an HTTP server's reply read as PostgreSQL's
//! messages) or, with `sslmode=require`, "server does not support TLS" for any first
//! byte but `S` — which reads as a PostgreSQL server with `ssl = off`. `psql` says
//! "received invalid response to SSL negotiation: H".
//!
//! The probe sends PostgreSQL's first message (an `SSLRequest`, 8 bytes) once more on
//! a connection of its own and reads the first bytes of the answer, for a second at
//! most: a PostgreSQL server (or pooler) answers with the one byte `S` or `N`, or an
//! error message (`E`); anything else is named.

use std::future::Future;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::conninfo::Target;

/// `SSLRequest`: length 8, code 80877103.
const SSL_REQUEST: [u8; 8] = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];
/// How long the probe waits to connect, and then for the answer.
const WAIT: Duration = Duration::from_secs(1);
/// How much of the answer is read and how much is shown.
const READ: usize = 64;
const SHOWN: usize = 40;

/// How long a connection may take before the probe asks who answers: a PostgreSQL
/// server answers the driver's first messages in milliseconds, and a server of another
/// kind that waits for more input (an SMTP server after its greeting) would otherwise
/// keep the driver waiting for ever (it has no time limit past the TCP connection).
const ASK_AFTER: Duration = Duration::from_secs(2);

/// `connecting`'s output, within the target's `connect_timeout` (libpq's limit on the
/// whole connection, where the driver's covers the TCP connection alone); when it has
/// not come after [`ASK_AFTER`], who answers at `target`'s servers is asked, and a
/// server that is not PostgreSQL ends the wait with what it answered. A PostgreSQL
/// server that is slow to finish (an authentication backend, a loaded machine) is
/// waited for as before. `Err`: why there is no connection, in words.
pub(crate) async fn establish<F: Future>(
    connecting: F,
    target: &Target,
) -> Result<F::Output, String> {
    let Some(limit) = target.connect_limit else {
        return unless_not_postgres(connecting, target).await;
    };
    match tokio::time::timeout(limit, unless_not_postgres(connecting, target)).await {
        Ok(done) => done,
        Err(_) => Err(format!(
            "no connection within {} s (connect_timeout, for each host): the server did not \
             finish PostgreSQL's start-up in time (a server that waits for more input, an \
             address that drops packets, or an overloaded server); check the host and \
             port, or give a longer connect_timeout",
            limit.as_secs()
        )),
    }
}

async fn unless_not_postgres<F: Future>(
    connecting: F,
    target: &Target,
) -> Result<F::Output, String> {
    let mut connecting = std::pin::pin!(connecting);
    match tokio::time::timeout(ASK_AFTER, &mut connecting).await {
        Ok(out) => Ok(out),
        Err(_) => match not_postgres(target).await {
            Some(answered) => Err(answered),
            None => Ok(connecting.await),
        },
    }
}

/// Whether the driver's error is one a server that is not PostgreSQL causes: the
/// conversation went wrong after the connection was made (no server error, no TLS
/// error of a handshake begun, no address that could not be reached).
pub(crate) fn worth_asking(e: &tokio_postgres::Error) -> bool {
    use std::io::ErrorKind as K;
    if e.as_db_error().is_some() || matches!(super::error::tls_failure(e), Some(Some(_))) {
        return false;
    }
    let mut cur = std::error::Error::source(e);
    while let Some(c) = cur {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            return !matches!(
                io.kind(),
                K::ConnectionRefused
                    | K::TimedOut
                    | K::NotFound
                    | K::AddrNotAvailable
                    | K::HostUnreachable
                    | K::NetworkUnreachable
                    | K::PermissionDenied
            );
        }
        cur = c.source();
    }
    true
}

/// What the first of `target`'s TCP servers that is not PostgreSQL answered, in
/// words (`None`: each answered as PostgreSQL does, or could not be asked).
pub(crate) async fn not_postgres(target: &Target) -> Option<String> {
    for (host, port) in target.tcp.iter().take(3) {
        let Ok(Ok(mut stream)) =
            tokio::time::timeout(WAIT, tokio::net::TcpStream::connect((host.as_str(), *port)))
                .await
        else {
            continue;
        };
        if stream.write_all(&SSL_REQUEST).await.is_err() {
            continue;
        }
        let mut answer = Vec::with_capacity(READ);
        let closed = loop {
            let mut buf = [0u8; READ];
            match tokio::time::timeout(WAIT, stream.read(&mut buf)).await {
                Ok(Ok(0)) => break true,
                Ok(Ok(n)) => {
                    answer.extend_from_slice(buf.get(..n).unwrap_or_default());
                    if answer.len() >= READ || answer == b"S" || answer == b"N" {
                        break false;
                    }
                }
                Ok(Err(_)) => break true,
                Err(_) => break false,
            }
        };
        if let Some(what) = named(&answer, closed) {
            let shown = if host.contains(':') {
                format!("[{host}]:{port}")
            } else {
                format!("{host}:{port}")
            };
            return Some(format!(
                "{shown} {what}; check the host and port (PostgreSQL listens on 5432 \
                 unless its server is set otherwise)"
            ));
        }
    }
    None
}

/// The answer to an `SSLRequest` in words when it is not PostgreSQL's (`closed`: the
/// server closed the connection after it).
fn named(answer: &[u8], closed: bool) -> Option<String> {
    let Some(&first) = answer.first() else {
        // Not "is not PostgreSQL": a pooler at its client limit may close too.
        return closed.then(|| {
            "closed the connection without answering PostgreSQL's first message (another \
             kind of server, a proxy whose server is down, or a pooler at its client limit)"
                .to_owned()
        });
    };
    if (answer == b"S" || answer == b"N") || first == b'E' {
        return None;
    }
    let what = if answer.starts_with(b"HTTP/") {
        " (an HTTP server)"
    } else if answer.starts_with(b"SSH-") {
        " (an SSH server)"
    } else if matches!(first, 0x15 | 0x16) && answer.get(1) == Some(&0x03) {
        return Some(
            "is not a PostgreSQL server: it answered with a TLS record, as a server that \
             expects TLS from the first byte does (an HTTPS port or a TLS proxy; for \
             PostgreSQL 17 or later behind one, add sslnegotiation=direct)"
                .to_owned(),
        );
    } else if matches!(first, b'-' | b'+') {
        " (a Redis server?)"
    } else {
        ""
    };
    Some(format!(
        "is not a PostgreSQL server: it answered PostgreSQL's first message with \"{}\"{what}",
        printable(answer)
    ))
}

/// The first line of `answer` when it begins with a line of text, else its first
/// bytes; at most [`SHOWN`] characters, bytes outside printable ASCII as `\xNN`.
fn printable(answer: &[u8]) -> String {
    let text = |b: &u8| b.is_ascii_graphic() || *b == b' ';
    let line = match answer.iter().position(|b| *b == b'\r' || *b == b'\n') {
        Some(end) if answer.get(..end).is_some_and(|l| l.iter().all(text)) => {
            answer.get(..end).unwrap_or_default()
        }
        _ => answer,
    };
    let mut out = String::new();
    for b in line.iter().take(SHOWN) {
        if text(b) {
            out.push(char::from(*b));
        } else {
            out.push_str(&format!("\\x{:02x}", *b));
        }
    }
    if line.len() > SHOWN {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // What servers send first, from their protocols: PostgreSQL answers an SSLRequest
    // with `S`, `N` or an ErrorResponse (`E`); HTTP/1.1 with a status line (RFC 9112);
    // SSH with its version string (RFC 4253 §4.2); a TLS server with a record whose
    // first byte is its content type (21 alert, 22 handshake) and second the major
    // version 3 (RFC 8446 §5.1); Redis with `-ERR …` (RESP).
    #[test]
    fn answers_are_named_and_postgres_answers_are_not() {
        for pg in [&b"S"[..], b"N", b"E\0\0\0\x54SFATAL"] {
            assert_eq!(named(pg, false), None, "{pg:?}");
            assert_eq!(named(pg, true), None, "{pg:?}");
        }
        assert_eq!(named(b"", false), None);
        let said = |a: &[u8]| named(a, true).unwrap_or_default();
        assert!(said(b"").contains("closed the connection"));
        let http = said(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
        assert!(
            http.contains("\"HTTP/1.1 400 Bad Request\" (an HTTP server)"),
            "{http}"
        );
        assert!(said(b"SSH-2.0-OpenSSH_9.2\r\n").contains("(an SSH server)"));
        assert!(said(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x32]).contains("sslnegotiation=direct"));
        assert!(said(b"-ERR unknown command\r\n").contains("Redis"));
        let odd = said(&[b'J', 0, 0, 0, 0x0a, b'8', b'.']);
        assert!(odd.contains("\"J\\x00\\x00\\x00\\x0a8.\""), "{odd}");
        assert!(said(&[b'x'; 64]).ends_with("…\""));
    }
}
