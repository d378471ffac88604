//! Numbers in summary lines as people read them: counts with a comma every three
//! digits, sizes in B/KiB/MiB/GiB, rates as whole rows a second. `--json` keeps the
//! exact numbers; these are for the one-line summaries and the text reports.

/// `n` with a comma every three digits: 1234567 → "1,234,567".
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A byte count for people: `512 B`, `1.5 KiB`, `23.4 MiB`, `1.2 GiB` (powers of 1024).
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = u;
    }
    format!("{value:.1} {unit}")
}

/// A rate: whole units a second with commas (`16,213 rows/s`); a non-finite or
/// negative rate (a zero-length run) reads as 0.
pub fn rate(per_second: f64, unit: &str) -> String {
    let whole = if per_second.is_finite() && per_second > 0.0 {
        per_second.round() as u64
    } else {
        0
    };
    format!("{} {unit}/s", count(whole))
}

/// Bytes a second as a size a second (`12.3 MiB/s`).
pub fn byte_rate(bytes_per_second: f64) -> String {
    let whole = if bytes_per_second.is_finite() && bytes_per_second > 0.0 {
        bytes_per_second.round() as u64
    } else {
        0
    };
    format!("{}/s", bytes(whole))
}

/// What a prune or retention sweep deleted (or would), for [`deleted`].
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub struct Deleted {
    pub threads: u64,
    pub dry_run: bool,
    pub checkpoints: u64,
    pub whole_threads: u64,
    pub writes: u64,
    pub blobs: u64,
    pub bytes: u64,
}

/// The clause `prune` and `retain` summaries share: `9 thread(s): deleted 18
/// checkpoint(s) (2 thread(s) whole), 18 write(s), 0 blob(s), 4.0 KiB`.
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub fn deleted(d: &Deleted) -> String {
    format!(
        "{} thread(s): {} {} checkpoint(s) ({} thread(s) whole), {} write(s), {} blob(s), {}",
        count(d.threads),
        if d.dry_run { "would delete" } else { "deleted" },
        count(d.checkpoints),
        count(d.whole_threads),
        count(d.writes),
        count(d.blobs),
        bytes(d.bytes),
    )
}

/// [`deleted`] of a prune or retain report (their fields share these names).
#[cfg(all(feature = "sqlite", feature = "postgres"))]
macro_rules! deleted_of {
    ($r:expr) => {
        $crate::human::deleted(&$crate::human::Deleted {
            threads: $r.threads,
            dry_run: $r.dry_run,
            checkpoints: $r.checkpoints_deleted,
            whole_threads: $r.threads_deleted,
            writes: $r.writes_deleted,
            blobs: $r.blobs_deleted,
            bytes: $r.bytes_freed,
        })
    };
}
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub(crate) use deleted_of;

/// `; N thread(s) left out` for the threads an operation was told to leave out
/// (`--exclude-thread`), nothing when none were.
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub(crate) fn left_out(threads: &[String]) -> String {
    if threads.is_empty() {
        String::new()
    } else {
        format!("; {} thread(s) left out", count(threads.len() as u64))
    }
}

/// The note of a dry run whose store would refuse the run itself (a Postgres role
/// without the privilege it needs), or `None`.
pub(crate) fn would_be_refused(command: &str, refused: Option<&String>) -> Option<String> {
    refused.map(|why| {
        format!(
            "lgcodec store {command}: a run without --dry-run would be refused: {why}; exit \
             status 1"
        )
    })
}

/// `; N more connection(s) refused …` when a Postgres server or role had no slot for
/// the connections a prune or sweep opens to work beside its first; nothing otherwise.
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub(crate) fn fewer_connections(refused: u64) -> String {
    if refused == 0 {
        String::new()
    } else {
        format!(
            "; the server refused {} more connection(s) (no slot free: the role's CONNECTION \
             LIMIT or max_connections), so that work went on the connections open, slower",
            count(refused)
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn count_puts_a_comma_every_three_digits() {
        for (n, text) in [
            (0, "0"),
            (999, "999"),
            (1_000, "1,000"),
            (1_234, "1,234"),
            (12_345, "12,345"),
            (123_456, "123,456"),
            (1_234_567, "1,234,567"),
        ] {
            assert_eq!(super::count(n), text);
        }
    }

    #[test]
    fn bytes_steps_by_1024() {
        for (n, text) in [
            (0, "0 B"),
            (1023, "1023 B"),
            (1024, "1.0 KiB"),
            (1536, "1.5 KiB"),
            (1024 * 1024, "1.0 MiB"),
            (5 * 1024 * 1024 * 1024 + 512 * 1024 * 1024, "5.5 GiB"),
        ] {
            assert_eq!(super::bytes(n), text);
        }
    }

    #[test]
    fn rates_are_whole_and_never_nan() {
        assert_eq!(super::rate(16_213.075, "rows"), "16,213 rows/s");
        assert_eq!(super::rate(f64::NAN, "rows"), "0 rows/s");
        assert_eq!(super::rate(f64::INFINITY, "rows"), "0 rows/s");
        assert_eq!(super::byte_rate(1.5 * 1024.0 * 1024.0), "1.5 MiB/s");
    }
}
