//! Retention policies for [`retain`](super::retain): what a policy file says, checked
//! before anything is read from the store.
//!
//! A policy is a small document (the `lgcodec` command reads it from TOML; the library
//! takes it as the JSON value a TOML or JSON parser gives) with four sections, every
//! key optional but at least one rule:
//!
//! ```toml
//! [rules]
//! keep_latest = 20        # the latest 20 checkpoints of each thread and namespace stay
//! max_age = "30d"         # checkpoints older go (the latest of each namespace stays)
//! idle_ttl = "90d"        # threads without a new checkpoint for 90 days go whole
//! idle_action = "delete"  # or "keep_latest": idle threads keep their latest checkpoints
//! hard_ttl = "365d"       # threads whose oldest checkpoint is older go whole
//!
//! [keep]
//! labels = ["label"]            # a checkpoint whose metadata holds one of these stays
//! pinned_metadata = ["pinned"]  # a thread whose latest metadata holds one is untouched
//! pinned_threads = ["vip-*"]    # thread ids matching a pattern (* and ?) are untouched
//! interrupted = "keep"          # or "delete": expired threads waiting at an interrupt
//!
//! [overrides]
//! metadata_key = "retention"    # {"retention": {"keep_latest": 100}} in a thread's metadata
//!
//! [sweep]
//! every = "15m"       # with --every and no value, or in a sidecar
//! batch_size = 200    # threads per transaction
//! pause = "200ms"     # between batches
//! max_threads = 1000  # threads changed per sweep at most
//! ```
//!
//! Durations are a number and a unit, or several (`"1h30m"`): `ms`, `s`, `m`, `h`,
//! `d`, `w`. A duration that is zero or negative, a number without a unit, a key no
//! section knows, or a policy without a rule is refused with
//! [`ErrorKind::InvalidPolicy`](crate::ErrorKind::InvalidPolicy) naming it.
//!
//! [`RetentionPolicy::from_langgraph_json`] reads the `checkpointer.ttl` section of a
//! LangGraph Agent Server `langgraph.json` with the server's meaning: `default_ttl`
//! minutes without activity expire a thread; `strategy` `"delete"` (the default) deletes
//! it whole, `"keep_latest"` keeps the thread and the latest checkpoint of each
//! namespace; `sweep_interval_minutes` (default 5) and `sweep_limit` (threads per sweep,
//! default 1000) pace the sweeps.

use std::time::Duration;

use serde_json::Value as Json;

use super::error::StoreFault;
use crate::error::Error;

type Result<T, E = Error> = std::result::Result<T, E>;

/// The rules of `[rules]` (and of a thread's metadata override), durations in seconds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RuleSet {
    pub(crate) keep_latest: Option<u64>,
    pub(crate) max_age: Option<u64>,
    pub(crate) idle_ttl: Option<u64>,
    /// `Some(true)`: `idle_action = "keep_latest"`.
    pub(crate) idle_keep_latest: Option<bool>,
    pub(crate) hard_ttl: Option<u64>,
}

const RULES: &[&str] = &[
    "keep_latest",
    "max_age",
    "idle_ttl",
    "idle_action",
    "hard_ttl",
];

impl RuleSet {
    fn is_empty(&self) -> bool {
        self.keep_latest.is_none()
            && self.max_age.is_none()
            && self.idle_ttl.is_none()
            && self.hard_ttl.is_none()
    }

    /// A `[rules]` table (or an override object): every key known, every value valid.
    fn parse(table: &Json, section: &str) -> std::result::Result<RuleSet, String> {
        let map = object(table, section)?;
        let mut set = RuleSet::default();
        for (key, value) in map {
            let at = format!("{section}.{key}");
            match key.as_str() {
                "keep_latest" => set.keep_latest = Some(count(value, &at)?),
                "max_age" => set.max_age = Some(duration_value(value, &at)?),
                "idle_ttl" => set.idle_ttl = Some(duration_value(value, &at)?),
                "hard_ttl" => set.hard_ttl = Some(duration_value(value, &at)?),
                "idle_action" => {
                    set.idle_keep_latest = Some(match value.as_str() {
                        Some("delete") => false,
                        Some("keep_latest") => true,
                        _ => {
                            return Err(format!(
                                "{at} = {value}: expected \"delete\" or \"keep_latest\""
                            ))
                        }
                    })
                }
                other => return Err(unknown(other, section, RULES)),
            }
        }
        Ok(set)
    }

    /// A thread's override, from its metadata: the same keys as `[rules]`.
    pub(crate) fn from_override(value: &Json) -> std::result::Result<RuleSet, String> {
        Self::parse(value, "override")
    }
}

/// Where and how often sweeps run (`[sweep]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SweepSettings {
    pub(crate) every: Option<Duration>,
    pub(crate) batch_size: Option<usize>,
    pub(crate) pause: Option<Duration>,
    pub(crate) max_threads: Option<u64>,
}

/// A retention policy, checked: the format is `docs/retention.md`'s (a TOML file
/// with `[rules]`, `[keep]`, `[overrides]` and `[sweep]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetentionPolicy {
    pub(crate) rules: RuleSet,
    pub(crate) labels: Vec<String>,
    pub(crate) pinned_metadata: Vec<String>,
    pub(crate) pinned_threads: Vec<String>,
    pub(crate) keep_interrupted: bool,
    pub(crate) override_key: Option<String>,
    pub(crate) sweep: SweepSettings,
    pub(crate) origin: String,
}

fn object<'a>(
    value: &'a Json,
    section: &str,
) -> std::result::Result<&'a serde_json::Map<String, Json>, String> {
    value
        .as_object()
        .ok_or_else(|| format!("[{section}] must be a table of keys, not {value}"))
}

fn unknown(key: &str, section: &str, known: &[&str]) -> String {
    format!(
        "unknown rule {key:?} in [{section}]; the known ones are {}",
        known.join(", ")
    )
}

fn count(value: &Json, at: &str) -> std::result::Result<u64, String> {
    match value.as_i64() {
        Some(n) if n >= 1 => Ok(n.unsigned_abs()),
        _ => Err(format!(
            "{at} = {value}: expected a whole number, 1 or more"
        )),
    }
}

fn strings(value: &Json, at: &str) -> std::result::Result<Vec<String>, String> {
    value
        .as_array()
        .and_then(|a| {
            a.iter()
                .map(|v| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| format!("{at} = {value}: expected a list of non-empty strings"))
}

fn duration_value(value: &Json, at: &str) -> std::result::Result<u64, String> {
    let Some(text) = value.as_str() else {
        return Err(format!(
            "{at} = {value}: expected a duration with its unit, e.g. \"30d\", \"12h\" or \"90m\""
        ));
    };
    parse_duration(text)
        .map(|d| d.as_secs().max(1))
        .map_err(|e| format!("{at}: {e}"))
}

/// Why [`parse_duration`] refused a text; its `Display` says what to write instead.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DurationError {
    /// Nothing given.
    Empty,
    /// Below zero (`"-5m"`).
    Negative {
        /// The text given.
        text: String,
    },
    /// Zero (`"0s"`, `"0"`, `"0h0m"`).
    Zero {
        /// The text given.
        text: String,
    },
    /// A fraction (`"1.5h"`): whole numbers of several units add up instead.
    Fraction {
        /// The text given.
        text: String,
    },
    /// A number without its unit (`"30"`).
    NoUnit {
        /// The text given.
        text: String,
        /// The number.
        number: u128,
    },
    /// A unit this parser does not know (`"5y"`, or a word: `"30 days"`).
    UnknownUnit {
        /// The text given.
        text: String,
        /// The unit as written.
        unit: String,
        /// The number and the letter to write for a unit's word (`"30d"`).
        instead: Option<String>,
    },
    /// Not a number and a unit (`"d"`).
    Malformed {
        /// The text given.
        text: String,
    },
}

impl std::fmt::Display for DurationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DurationError::Empty => f.write_str("an empty duration: write e.g. \"30d\""),
            DurationError::Negative { text } => {
                write!(f, "{text:?} is negative: a duration is more than zero")
            }
            DurationError::Zero { text } => {
                write!(f, "{text:?} is zero: a duration is more than zero")
            }
            DurationError::Fraction { text } => write!(
                f,
                "{text:?}: whole numbers only: add up units instead, e.g. \"1h30m\" for an hour and a half"
            ),
            DurationError::NoUnit { text, number } => write!(
                f,
                "{text:?} has no unit: write it with one (ms, s, m, h, d, w), e.g. \"{number}s\" or \"{number}m\""
            ),
            DurationError::UnknownUnit {
                text,
                unit,
                instead: Some(instead),
            } => write!(
                f,
                "{text:?}: unknown unit {unit:?}: write \"{instead}\" (the units are ms, s, m, h, d and w)"
            ),
            DurationError::UnknownUnit { text, unit, .. } => {
                write!(f, "{text:?}: unknown unit {unit:?} (use ms, s, m, h, d or w)")
            }
            DurationError::Malformed { text } => {
                write!(f, "{text:?}: expected a number and a unit, e.g. \"30d\"")
            }
        }
    }
}

impl std::error::Error for DurationError {}

/// A duration refused where a policy or a flag gives one: kind
/// [`ErrorKind::InvalidPolicy`](crate::ErrorKind::InvalidPolicy), the reason as its
/// `source()`.
impl From<DurationError> for Error {
    #[cold]
    fn from(e: DurationError) -> Self {
        Error::with_source(crate::ErrorKind::InvalidPolicy, e.to_string(), e)
    }
}

/// A duration such as `"30d"`, `"12h"`, `"1h30m"`, `"500ms"` (units `ms`, `s`, `m`,
/// `h`, `d`, `w`; several add up; a space may stand between a number and its unit).
///
/// ```
/// use langgraph_codec::store::{parse_duration, DurationError};
/// use std::time::Duration;
/// assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5_400)));
/// assert!(matches!(parse_duration("0s"), Err(DurationError::Zero { .. })));
/// assert_eq!(
///     parse_duration("30 days").unwrap_err().to_string(),
///     r#""30 days": unknown unit "days": write "30d" (the units are ms, s, m, h, d and w)"#
/// );
/// ```
///
/// # Errors
/// [`DurationError`]: zero, negative, a number without a unit, a fraction, or an
/// unknown unit, said so that it can be fixed (a unit's word, `"30 days"`, with its
/// letter: `"30d"`).
pub fn parse_duration(text: &str) -> std::result::Result<Duration, DurationError> {
    let t = text.trim();
    let given = || text.to_owned();
    if t.starts_with('-') {
        return Err(DurationError::Negative { text: given() });
    }
    if t.is_empty() {
        return Err(DurationError::Empty);
    }
    let mut total: u128 = 0;
    let mut rest = t;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (number, tail) = rest.split_at(digits);
        if digits > 0 && (tail.starts_with('.') || tail.starts_with(',')) {
            return Err(DurationError::Fraction { text: given() });
        }
        // "30 d" as "30d".
        let tail = tail.trim_start();
        let unit_len = tail.bytes().take_while(u8::is_ascii_alphabetic).count();
        let (unit, tail) = tail.split_at(unit_len);
        let n: u128 = number
            .parse()
            .map_err(|_| DurationError::Malformed { text: given() })?;
        let millis: u128 = match unit {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            "w" => 604_800_000,
            // A bare zero is refused as zero, not sent to "0s" (refused in turn).
            "" if n == 0 && total == 0 && tail.trim().is_empty() => break,
            "" => {
                return Err(DurationError::NoUnit {
                    text: given(),
                    number: n,
                })
            }
            other => {
                // A unit's word ("30 days") is named with its letter.
                let short = match other.to_ascii_lowercase().as_str() {
                    "msec" | "msecs" | "millisecond" | "milliseconds" => Some("ms"),
                    "sec" | "secs" | "second" | "seconds" => Some("s"),
                    "min" | "mins" | "minute" | "minutes" => Some("m"),
                    "hr" | "hrs" | "hour" | "hours" => Some("h"),
                    "day" | "days" => Some("d"),
                    "week" | "weeks" => Some("w"),
                    _ => None,
                };
                return Err(DurationError::UnknownUnit {
                    text: given(),
                    unit: other.to_owned(),
                    instead: short.map(|short| format!("{n}{short}")),
                });
            }
        };
        total = total.saturating_add(n.saturating_mul(millis));
        rest = tail.trim_start();
    }
    if total == 0 {
        return Err(DurationError::Zero { text: given() });
    }
    Ok(Duration::from_millis(
        u64::try_from(total).unwrap_or(u64::MAX),
    ))
}

fn invalid(origin: &str, reason: String) -> crate::Error {
    StoreFault::InvalidPolicy {
        origin: origin.to_owned(),
        reason,
    }
    .into()
}

const SECTIONS: &[&str] = &["rules", "keep", "overrides", "sweep"];
const KEEP: &[&str] = &["labels", "pinned_metadata", "pinned_threads", "interrupted"];
const SWEEP: &[&str] = &["every", "batch_size", "pause", "max_threads"];
const TTL: &[&str] = &[
    "strategy",
    "default_ttl",
    "sweep_interval_minutes",
    "sweep_limit",
];

impl RetentionPolicy {
    /// A policy of these rules alone (no labels, pins or overrides; interrupted threads
    /// kept). Durations are checked by [`retain`](super::retain).
    pub fn new() -> Self {
        RetentionPolicy {
            rules: RuleSet::default(),
            labels: Vec::new(),
            pinned_metadata: Vec::new(),
            pinned_threads: Vec::new(),
            keep_interrupted: true,
            override_key: None,
            sweep: SweepSettings::default(),
            origin: "policy".to_owned(),
        }
    }

    /// The latest `n` checkpoints of each thread and namespace stay.
    pub fn keep_latest(mut self, n: u64) -> Self {
        self.rules.keep_latest = Some(n);
        self
    }

    /// Checkpoints older than `age` go; the latest of each namespace stays.
    pub fn max_age(mut self, age: Duration) -> Self {
        self.rules.max_age = Some(age.as_secs());
        self
    }

    /// Threads without a new checkpoint for `ttl` go whole (or, with
    /// `keep_latest_instead`, keep only the latest checkpoint of each namespace).
    pub fn idle_ttl(mut self, ttl: Duration, keep_latest_instead: bool) -> Self {
        self.rules.idle_ttl = Some(ttl.as_secs());
        self.rules.idle_keep_latest = Some(keep_latest_instead);
        self
    }

    /// Threads whose oldest checkpoint is older than `ttl` go whole.
    pub fn hard_ttl(mut self, ttl: Duration) -> Self {
        self.rules.hard_ttl = Some(ttl.as_secs());
        self
    }

    /// Checkpoints whose metadata holds `key` (not `false` or `null`) stay.
    pub fn label(mut self, key: impl Into<String>) -> Self {
        self.labels.push(key.into());
        self
    }

    /// Threads whose latest metadata holds `key` (not `false` or `null`) are untouched.
    pub fn pin_metadata(mut self, key: impl Into<String>) -> Self {
        self.pinned_metadata.push(key.into());
        self
    }

    /// Threads whose id matches `pattern` (`*`, `?`) are untouched.
    pub fn pin_threads(mut self, pattern: impl Into<String>) -> Self {
        self.pinned_threads.push(pattern.into());
        self
    }

    /// Whether expired threads waiting at an interrupt stay (the default).
    pub fn keep_interrupted(mut self, keep: bool) -> Self {
        self.keep_interrupted = keep;
        self
    }

    /// A thread's latest metadata under `key` (an object of `[rules]` keys) overrides
    /// the rules for that thread.
    pub fn override_key(mut self, key: impl Into<String>) -> Self {
        self.override_key = Some(key.into());
        self
    }

    /// The time between sweeps the policy asks for (`[sweep] every`, or
    /// `sweep_interval_minutes`).
    pub fn every(&self) -> Option<Duration> {
        self.sweep.every
    }

    /// Threads per transaction the policy asks for.
    pub fn batch_size(&self) -> Option<usize> {
        self.sweep.batch_size
    }

    /// The pause between batches the policy asks for.
    pub fn pause(&self) -> Option<Duration> {
        self.sweep.pause
    }

    /// Threads changed per sweep at most, as the policy asks.
    pub fn max_threads(&self) -> Option<u64> {
        self.sweep.max_threads
    }

    /// Checks the rules: at least one, durations above zero.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidPolicy`](crate::ErrorKind::InvalidPolicy).
    pub fn validate(&self) -> Result<()> {
        let r = &self.rules;
        if r.is_empty() {
            return Err(invalid(
                &self.origin,
                "no rule: give at least one of keep_latest, max_age, idle_ttl, hard_ttl".to_owned(),
            ));
        }
        if r.keep_latest == Some(0) {
            return Err(invalid(
                &self.origin,
                "keep_latest is 0: keep at least 1".to_owned(),
            ));
        }
        for (name, v) in [
            ("max_age", r.max_age),
            ("idle_ttl", r.idle_ttl),
            ("hard_ttl", r.hard_ttl),
        ] {
            if v == Some(0) {
                return Err(invalid(
                    &self.origin,
                    format!("{name} is zero (under a second): a duration is more than zero"),
                ));
            }
        }
        Ok(())
    }

    /// A policy document (TOML or JSON, parsed) from `origin` (a file name, for errors).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidPolicy`](crate::ErrorKind::InvalidPolicy) naming the key.
    pub fn from_value(value: &Json, origin: &str) -> Result<Self> {
        let bad = |reason: String| invalid(origin, reason);
        let top = value
            .as_object()
            .ok_or_else(|| bad("expected a table of sections".to_owned()))?;
        let mut policy = RetentionPolicy::new();
        policy.origin = origin.to_owned();
        for (section, table) in top {
            match section.as_str() {
                "rules" => policy.rules = RuleSet::parse(table, "rules").map_err(bad)?,
                "keep" => {
                    for (key, v) in object(table, "keep").map_err(bad)? {
                        let at = format!("keep.{key}");
                        match key.as_str() {
                            "labels" => policy.labels = strings(v, &at).map_err(bad)?,
                            "pinned_metadata" => {
                                policy.pinned_metadata = strings(v, &at).map_err(bad)?
                            }
                            "pinned_threads" => {
                                policy.pinned_threads = strings(v, &at).map_err(bad)?
                            }
                            "interrupted" => {
                                policy.keep_interrupted = match v.as_str() {
                                    Some("keep") => true,
                                    Some("delete") => false,
                                    _ => {
                                        return Err(bad(format!(
                                            "{at} = {v}: expected \"keep\" or \"delete\""
                                        )))
                                    }
                                }
                            }
                            other => return Err(bad(unknown(other, "keep", KEEP))),
                        }
                    }
                }
                "overrides" => {
                    for (key, v) in object(table, "overrides").map_err(bad)? {
                        match (key.as_str(), v.as_str()) {
                            ("metadata_key", Some(k)) if !k.is_empty() => {
                                policy.override_key = Some(k.to_owned())
                            }
                            ("metadata_key", _) => {
                                return Err(bad(format!(
                                    "overrides.metadata_key = {v}: expected a metadata key"
                                )))
                            }
                            (other, _) => {
                                return Err(bad(unknown(other, "overrides", &["metadata_key"])))
                            }
                        }
                    }
                }
                "sweep" => {
                    for (key, v) in object(table, "sweep").map_err(bad)? {
                        let at = format!("sweep.{key}");
                        let secs = |v: &Json| duration_value(v, &at).map_err(bad);
                        match key.as_str() {
                            "every" => policy.sweep.every = Some(Duration::from_secs(secs(v)?)),
                            "pause" => {
                                let text = v.as_str().unwrap_or_default();
                                policy.sweep.pause = Some(
                                    parse_duration(text).map_err(|e| bad(format!("{at}: {e}")))?,
                                )
                            }
                            "batch_size" => {
                                let n = count(v, &at).map_err(bad)?;
                                policy.sweep.batch_size =
                                    Some(usize::try_from(n).unwrap_or(usize::MAX))
                            }
                            "max_threads" => {
                                policy.sweep.max_threads = Some(count(v, &at).map_err(bad)?)
                            }
                            other => return Err(bad(unknown(other, "sweep", SWEEP))),
                        }
                    }
                }
                // `keep_latest = 2` above every header: a key of no section.
                other if !table.is_object() => {
                    let home = [("rules", RULES), ("keep", KEEP), ("sweep", SWEEP)]
                        .into_iter()
                        .find(|(_, keys)| keys.contains(&other));
                    return Err(bad(match home {
                        Some((section, _)) => format!(
                            "{other} is outside any section: put it under [{section}] (a line `[{section}]` above it)"
                        ),
                        None => format!(
                            "{other} is outside any section, and no section has such a key: the sections are {}",
                            SECTIONS.join(", ")
                        ),
                    }));
                }
                other => {
                    return Err(bad(format!(
                        "unknown section [{other}]; the known ones are {}",
                        SECTIONS.join(", ")
                    )))
                }
            }
        }
        policy.validate()?;
        Ok(policy)
    }

    /// The `checkpointer.ttl` section of a LangGraph Agent Server `langgraph.json`
    /// (its text), with the server's meaning (`docs/retention.md`).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidPolicy`](crate::ErrorKind::InvalidPolicy): not JSON, no
    /// `checkpointer.ttl`, no `default_ttl`, a value out of range, an unknown key.
    pub fn from_langgraph_json(text: &str, origin: &str) -> Result<Self> {
        let bad = |reason: String| invalid(origin, reason);
        let doc: Json = serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
        let Some(ttl) = doc.get("checkpointer").and_then(|c| c.get("ttl")) else {
            return Err(bad(
                "has no checkpointer.ttl section, so it sets no retention: add \"checkpointer\": \
                 {\"ttl\": {\"strategy\": \"delete\", \"default_ttl\": 43200}} (minutes), or give \
                 a policy file with --policy"
                    .to_owned(),
            ));
        };
        let map = object(ttl, "checkpointer.ttl").map_err(bad)?;
        let mut policy = RetentionPolicy::new();
        policy.origin = origin.to_owned();
        let minutes = |v: &Json, at: &str| -> std::result::Result<f64, String> {
            match v.as_f64() {
                Some(m) if m > 0.0 && m.is_finite() => Ok(m),
                _ => Err(format!(
                    "{at} = {v}: expected a number of minutes above zero"
                )),
            }
        };
        let mut keep_latest = false;
        let mut every_minutes = 5.0;
        policy.sweep.max_threads = Some(1000);
        for (key, v) in map {
            let at = format!("checkpointer.ttl.{key}");
            match key.as_str() {
                "strategy" => {
                    keep_latest = match v.as_str() {
                        Some("delete") => false,
                        Some("keep_latest") => true,
                        _ => {
                            return Err(bad(format!(
                                "{at} = {v}: expected \"delete\" or \"keep_latest\""
                            )))
                        }
                    }
                }
                "default_ttl" if v.is_null() => {}
                "default_ttl" => {
                    let m = minutes(v, &at).map_err(bad)?;
                    policy.rules.idle_ttl = Some(((m * 60.0).round() as u64).max(1));
                }
                "sweep_interval_minutes" if v.is_null() => {}
                "sweep_interval_minutes" => every_minutes = minutes(v, &at).map_err(bad)?,
                "sweep_limit" if v.is_null() => {}
                "sweep_limit" => policy.sweep.max_threads = Some(count(v, &at).map_err(bad)?),
                other => return Err(bad(unknown(other, "checkpointer.ttl", TTL))),
            }
        }
        if policy.rules.idle_ttl.is_none() {
            return Err(bad(
                "checkpointer.ttl has no default_ttl, so nothing expires: set it in minutes \
                 (43200 is 30 days)"
                    .to_owned(),
            ));
        }
        policy.rules.idle_keep_latest = Some(keep_latest);
        policy.sweep.every = Some(Duration::from_millis(
            (every_minutes * 60_000.0).round() as u64
        ));
        Ok(policy)
    }
}

impl Default for RetentionPolicy {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations_need_a_unit_and_more_than_zero() {
        assert_eq!(parse_duration("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5_400)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2w"), Ok(Duration::from_secs(14 * 86_400)));
        assert_eq!(parse_duration("30 d"), Ok(Duration::from_secs(30 * 86_400)));
        for bad in ["0s", "-5d", "30", "", "5y", "d", "0h0m", "1.5h", "30 days"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        // What to write instead, where it is known.
        let said = |text| parse_duration(text).expect_err(text).to_string();
        assert!(
            said("30 days").contains("write \"30d\""),
            "{}",
            said("30 days")
        );
        assert!(
            said("2Weeks").contains("write \"2w\""),
            "{}",
            said("2Weeks")
        );
        assert!(said("1.5h").contains("\"1h30m\""), "{}", said("1.5h"));
        assert!(said("30").contains("has no unit"), "{}", said("30"));
        // "0" is zero, whatever its unit: no "0s" suggested that is refused in turn.
        assert_eq!(said("0"), "\"0\" is zero: a duration is more than zero");
        assert!(said("1h0").contains("has no unit"), "{}", said("1h0"));
    }
}
