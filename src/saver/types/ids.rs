//! Checkpoint ids (uuid6), timestamps, and the non-cryptographic randomness behind
//! version tie-breakers.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// 64 random bits from a per-process randomly keyed SipHash over a counter: a
/// non-cryptographic source, enough for version tie-breakers and uuid6 node bits.
pub(crate) fn random_u64() -> u64 {
    static STATE: OnceLock<RandomState> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = STATE.get_or_init(RandomState::new).build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.finish()
}

/// A float in `[0, 1)` with 53 random bits, like Python's `random.random()`.
pub(crate) fn random_f64() -> f64 {
    (random_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A time-ordered checkpoint id, as `langgraph.checkpoint.base.id.uuid6(clock_seq=…)`
/// makes it: 100-ns timestamp since 1582 (strictly increasing within this process),
/// the low 14 bits of `clock_seq`, and a random 48-bit node. Ids made later compare
/// greater as strings.
pub fn uuid6(clock_seq: i64) -> String {
    static LAST: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let now = gregorian_100ns(nanos);
    let mut last = LAST.load(Ordering::Relaxed);
    let timestamp = loop {
        let ts = if now <= last {
            last.saturating_add(1)
        } else {
            now
        };
        match LAST.compare_exchange_weak(last, ts, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => break ts,
            Err(actual) => last = actual,
        }
    };
    format_uuid6(timestamp, clock_seq)
}

/// The checkpoint id [`uuid6`] would have made at `unix_nanos` (nanoseconds since
/// 1970), as Python's `uuid6(clock_seq=…)` does with its clock set there: for stores
/// written with the times a real one had (fixtures of idle threads, a backfill), where
/// the id is the checkpoint's time for retention and for `list(before=…)`. It does not
/// take part in `uuid6`'s rising-id guard: two calls with the same time differ only in
/// their random node.
pub fn uuid6_at(unix_nanos: u128, clock_seq: i64) -> String {
    format_uuid6(gregorian_100ns(unix_nanos), clock_seq)
}

/// Nanoseconds since 1970 as 100-ns intervals since 1582-10-15 (uuid's epoch).
fn gregorian_100ns(unix_nanos: u128) -> u64 {
    u64::try_from(unix_nanos / 100)
        .unwrap_or(u64::MAX)
        .saturating_add(0x01B2_1DD2_1381_4000)
}

fn format_uuid6(timestamp: u64, clock_seq: i64) -> String {
    let ts = u128::from(timestamp);
    let seq = u128::from((clock_seq & 0x3FFF) as u64);
    let node = u128::from(random_u64() & 0xFFFF_FFFF_FFFF);
    let mut n: u128 = ((ts >> 12) & 0xFFFF_FFFF_FFFF) << 80;
    n |= (ts & 0x0FFF) << 64;
    n |= seq << 48;
    n |= node;
    n &= !(0xC000u128 << 48);
    n |= 0x8000u128 << 48;
    n &= !(0xF000u128 << 64);
    n |= 6u128 << 76;
    let hex = format!("{n:032x}");
    let part = |a: usize, b: usize| hex.get(a..b).unwrap_or("");
    format!(
        "{}-{}-{}-{}-{}",
        part(0, 8),
        part(8, 12),
        part(12, 16),
        part(16, 20),
        part(20, 32)
    )
}

/// `datetime.now(timezone.utc).isoformat()`: `YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00`.
pub fn now_isoformat() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    isoformat_at(nanos)
}

/// `datetime.fromtimestamp(t, timezone.utc).isoformat()` for `unix_nanos`
/// nanoseconds since 1970, truncated to the microsecond: the checkpoint `ts` that goes
/// with [`uuid6_at`].
pub fn isoformat_at(unix_nanos: u128) -> String {
    let secs = i64::try_from(unix_nanos / 1_000_000_000).unwrap_or(i64::MAX);
    let micros = (unix_nanos % 1_000_000_000 / 1_000) as u32;
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, day) = civil_from_days(days);
    let mut out = format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}",
        sod / 3600,
        (sod % 3600) / 60,
        sod % 60
    );
    if micros != 0 {
        out.push_str(&format!(".{micros:06}"));
    }
    out.push_str("+00:00");
    out
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian.
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}
