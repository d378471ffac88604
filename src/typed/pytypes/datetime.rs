//! Python's `datetime`, `date`, `time`, `timedelta`, `timezone` and `ZoneInfo`.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeTuple, Serializer};

use super::invalid;
use crate::typed::object::{mismatch, read_object, read_simple, write_object, ObjectRead};
use crate::typed::TypedError;
use crate::value::ObjectKind;

const US_PER_SEC: i128 = 1_000_000;
const US_PER_DAY: i128 = 86_400 * US_PER_SEC;

/// Python `datetime.timedelta`, normalised as Python keeps it: `0 <= seconds < 86400`,
/// `0 <= microseconds < 1_000_000`, `|days| <= 999_999_999`.
///
/// Written as `ext 1 ("datetime", "timedelta", (days, seconds, microseconds))`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TimeDelta {
    days: i32,
    seconds: i32,
    microseconds: i32,
}

impl TimeDelta {
    /// The largest `|days|` Python allows.
    pub const MAX_DAYS: i32 = 999_999_999;

    /// A duration of `us` microseconds, if Python can hold it.
    pub fn from_microseconds(us: i128) -> Option<Self> {
        let days = us.div_euclid(US_PER_DAY);
        let rest = us.rem_euclid(US_PER_DAY);
        let days = i32::try_from(days).ok()?;
        if days.unsigned_abs() > Self::MAX_DAYS.unsigned_abs() {
            return None;
        }
        Some(TimeDelta {
            days,
            seconds: i32::try_from(rest / US_PER_SEC).ok()?,
            microseconds: i32::try_from(rest % US_PER_SEC).ok()?,
        })
    }

    /// A duration of whole seconds.
    pub fn from_seconds(seconds: i64) -> Option<Self> {
        Self::from_microseconds(i128::from(seconds) * US_PER_SEC)
    }

    /// `timedelta(days, seconds, microseconds)`, normalised as Python does.
    pub fn new(days: i64, seconds: i64, microseconds: i64) -> Option<Self> {
        Self::from_microseconds(
            i128::from(days) * US_PER_DAY
                + i128::from(seconds) * US_PER_SEC
                + i128::from(microseconds),
        )
    }

    /// Days (may be negative).
    pub fn days(&self) -> i32 {
        self.days
    }
    /// Seconds within the day, `0..86400`.
    pub fn seconds(&self) -> i32 {
        self.seconds
    }
    /// Microseconds within the second, `0..1_000_000`.
    pub fn microseconds(&self) -> i32 {
        self.microseconds
    }
    /// The whole duration in microseconds.
    pub fn total_microseconds(&self) -> i128 {
        i128::from(self.days) * US_PER_DAY
            + i128::from(self.seconds) * US_PER_SEC
            + i128::from(self.microseconds)
    }
}

impl Serialize for TimeDelta {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_object(
            s,
            ObjectKind::ConstructorPosArgs,
            "datetime",
            "timedelta",
            &(self.days, self.seconds, self.microseconds),
            None,
        )
    }
}

impl<'de> Deserialize<'de> for TimeDelta {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (_, (days, seconds, us)): (_, (i64, i64, i64)) = read_simple(
            d,
            ObjectKind::ConstructorPosArgs,
            "datetime",
            &["timedelta"],
        )?;
        TimeDelta::new(days, seconds, us)
            .ok_or_else(|| de::Error::custom("timedelta out of Python's range"))
    }
}

/// Python `datetime.timezone`: a fixed offset (strictly within ±24 h) and an optional
/// name. Written as `ext 1 ("datetime", "timezone", (offset,))` or
/// `(offset, name)`, as `__getinitargs__()` gives.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TimeZone {
    offset: TimeDelta,
    name: Option<String>,
}

fn valid_offset(offset: &TimeDelta) -> bool {
    offset.total_microseconds().abs() < US_PER_DAY
}

impl TimeZone {
    /// `timezone.utc`.
    pub fn utc() -> Self {
        TimeZone {
            offset: TimeDelta::default(),
            name: None,
        }
    }

    /// `timezone(offset)`; `None` unless `-24h < offset < 24h`.
    pub fn new(offset: TimeDelta) -> Option<Self> {
        valid_offset(&offset).then_some(TimeZone { offset, name: None })
    }

    /// `timezone(offset, name)`.
    pub fn with_name(offset: TimeDelta, name: impl Into<String>) -> Option<Self> {
        valid_offset(&offset).then(|| TimeZone {
            offset,
            name: Some(name.into()),
        })
    }

    /// The offset from UTC.
    pub fn offset(&self) -> TimeDelta {
        self.offset
    }

    /// The name, if one was given.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

impl Serialize for TimeZone {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Args<'a>(&'a TimeZone);
        impl Serialize for Args<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut t = s.serialize_tuple(if self.0.name.is_some() { 2 } else { 1 })?;
                t.serialize_element(&self.0.offset)?;
                if let Some(name) = &self.0.name {
                    t.serialize_element(name)?;
                }
                t.end()
            }
        }
        write_object(
            s,
            ObjectKind::ConstructorPosArgs,
            "datetime",
            "timezone",
            &Args(self),
            None,
        )
    }
}

struct TimeZoneArgs(TimeDelta, Option<String>);

impl<'de> Deserialize<'de> for TimeZoneArgs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TimeZoneArgs;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("(offset,) or (offset, name)")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TimeZoneArgs, A::Error> {
                let offset: TimeDelta = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let name: Option<Option<String>> = seq.next_element()?;
                Ok(TimeZoneArgs(offset, name.flatten()))
            }
        }
        d.deserialize_seq(V)
    }
}

impl<'de> Deserialize<'de> for TimeZone {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (_, TimeZoneArgs(offset, name)) =
            read_simple(d, ObjectKind::ConstructorPosArgs, "datetime", &["timezone"])?;
        if !valid_offset(&offset) {
            return Err(de::Error::custom(
                "timezone offset must be within ±24 hours",
            ));
        }
        Ok(TimeZone { offset, name })
    }
}

/// Python `zoneinfo.ZoneInfo(key)`, e.g. `"Europe/Paris"`. Written as
/// `ext 0 ("zoneinfo", "ZoneInfo", key)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ZoneInfo {
    /// The IANA key.
    pub key: String,
}

impl ZoneInfo {
    /// A zone by IANA key.
    pub fn new(key: impl Into<String>) -> Self {
        ZoneInfo { key: key.into() }
    }
}

impl Serialize for ZoneInfo {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_object(
            s,
            ObjectKind::ConstructorSingleArg,
            "zoneinfo",
            "ZoneInfo",
            &self.key,
            None,
        )
    }
}

impl<'de> Deserialize<'de> for ZoneInfo {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (_, key) = read_simple(
            d,
            ObjectKind::ConstructorSingleArg,
            "zoneinfo",
            &["ZoneInfo"],
        )?;
        Ok(ZoneInfo { key })
    }
}

/// A `tzinfo` as Python writes one inside a `time`: a fixed `timezone` or a `ZoneInfo`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TzInfo {
    /// `datetime.timezone`.
    TimeZone(TimeZone),
    /// `zoneinfo.ZoneInfo`.
    ZoneInfo(ZoneInfo),
}

impl Serialize for TzInfo {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            TzInfo::TimeZone(t) => t.serialize(s),
            TzInfo::ZoneInfo(z) => z.serialize(s),
        }
    }
}

struct TzInfoRead;

impl ObjectRead for TzInfoRead {
    type Out = TzInfo;
    fn expected(&self) -> String {
        "class datetime.timezone (ext 1) or zoneinfo.ZoneInfo (ext 0)".to_owned()
    }
    fn accepts(&self, code: i8, module: &str, name: &str) -> bool {
        matches!(
            (code, module, name),
            (1, "datetime", "timezone") | (0, "zoneinfo", "ZoneInfo")
        )
    }
    fn read_arg<'de, A: SeqAccess<'de>>(
        self,
        code: i8,
        module: &str,
        name: &str,
        seq: &mut A,
    ) -> Result<TzInfo, A::Error> {
        let missing = || de::Error::invalid_length(2, &"(module, name, arg)");
        if module == "zoneinfo" {
            let key: String = seq.next_element()?.ok_or_else(missing)?;
            return Ok(TzInfo::ZoneInfo(ZoneInfo { key }));
        }
        let TimeZoneArgs(offset, tzname) = seq.next_element()?.ok_or_else(missing)?;
        if !valid_offset(&offset) {
            return Err(mismatch(&self.expected(), code, module, name));
        }
        Ok(TzInfo::TimeZone(TimeZone {
            offset,
            name: tzname,
        }))
    }
}

impl<'de> Deserialize<'de> for TzInfo {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_object(d, TzInfoRead)
    }
}

fn is_leap(y: i32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i32, m: u8) -> u8 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(y) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Python `datetime.date` (years 1–9999). Written as
/// `ext 1 ("datetime", "date", (year, month, day))`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Date {
    year: i32,
    month: u8,
    day: u8,
}

impl Date {
    /// A date, if valid in Python.
    pub fn new(year: i32, month: u8, day: u8) -> Option<Self> {
        ((1..=9999).contains(&year) && (1..=days_in_month(year, month)).contains(&day))
            .then_some(Date { year, month, day })
    }
    /// The year.
    pub fn year(&self) -> i32 {
        self.year
    }
    /// The month, 1–12.
    pub fn month(&self) -> u8 {
        self.month
    }
    /// The day of the month.
    pub fn day(&self) -> u8 {
        self.day
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl Serialize for Date {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_object(
            s,
            ObjectKind::ConstructorPosArgs,
            "datetime",
            "date",
            &(self.year, self.month, self.day),
            None,
        )
    }
}

impl<'de> Deserialize<'de> for Date {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (_, (y, m, day)): (_, (i32, u8, u8)) =
            read_simple(d, ObjectKind::ConstructorPosArgs, "datetime", &["date"])?;
        Date::new(y, m, day).ok_or_else(|| de::Error::custom(format!("invalid date {y}-{m}-{day}")))
    }
}

/// Python `datetime.time`: hour, minute, second, microsecond, optional tzinfo, fold.
/// Written as `ext 2 ("datetime", "time", {hour, minute, second, microsecond, tzinfo,
/// fold})`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Time {
    hour: u8,
    minute: u8,
    second: u8,
    microsecond: u32,
    /// The tzinfo, `None` for a naive time.
    pub tzinfo: Option<TzInfo>,
    /// PEP 495 fold, 0 or 1.
    fold: u8,
}

impl Time {
    /// A naive time, if valid.
    pub fn new(hour: u8, minute: u8, second: u8, microsecond: u32) -> Option<Self> {
        (hour < 24 && minute < 60 && second < 60 && microsecond < 1_000_000).then_some(Time {
            hour,
            minute,
            second,
            microsecond,
            tzinfo: None,
            fold: 0,
        })
    }
    /// The same time with a tzinfo.
    pub fn with_tzinfo(mut self, tzinfo: TzInfo) -> Self {
        self.tzinfo = Some(tzinfo);
        self
    }
    /// The same time with `fold=1` (`true`) or `fold=0`.
    pub fn with_fold(mut self, fold: bool) -> Self {
        self.fold = u8::from(fold);
        self
    }
    /// The hour.
    pub fn hour(&self) -> u8 {
        self.hour
    }
    /// The minute.
    pub fn minute(&self) -> u8 {
        self.minute
    }
    /// The second.
    pub fn second(&self) -> u8 {
        self.second
    }
    /// The microsecond.
    pub fn microsecond(&self) -> u32 {
        self.microsecond
    }
    /// The fold, 0 or 1.
    pub fn fold(&self) -> u8 {
        self.fold
    }
}

struct TimeKw<'a>(&'a Time);

impl Serialize for TimeKw<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let mut m = s.serialize_map(Some(6))?;
        m.serialize_entry("hour", &t.hour)?;
        m.serialize_entry("minute", &t.minute)?;
        m.serialize_entry("second", &t.second)?;
        m.serialize_entry("microsecond", &t.microsecond)?;
        m.serialize_entry("tzinfo", &t.tzinfo)?;
        m.serialize_entry("fold", &t.fold)?;
        m.end()
    }
}

impl Serialize for Time {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_object(
            s,
            ObjectKind::ConstructorKwArgs,
            "datetime",
            "time",
            &TimeKw(self),
            None,
        )
    }
}

#[derive(serde::Deserialize)]
struct TimeFields {
    #[serde(default)]
    hour: u8,
    #[serde(default)]
    minute: u8,
    #[serde(default)]
    second: u8,
    #[serde(default)]
    microsecond: u32,
    #[serde(default)]
    tzinfo: Option<TzInfo>,
    #[serde(default)]
    fold: u8,
}

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (_, f): (_, TimeFields) =
            read_simple(d, ObjectKind::ConstructorKwArgs, "datetime", &["time"])?;
        let mut t = Time::new(f.hour, f.minute, f.second, f.microsecond)
            .ok_or_else(|| de::Error::custom("invalid time"))?;
        if f.fold > 1 {
            return Err(de::Error::custom("fold must be 0 or 1"));
        }
        t.tzinfo = f.tzinfo;
        t.fold = f.fold;
        Ok(t)
    }
}

/// Python `datetime.datetime`: a date, a time to the microsecond and, when aware, the
/// UTC offset it had. Written as
/// `ext 3 ("datetime", "datetime", isoformat(), "fromisoformat")`.
///
/// Python writes a `ZoneInfo` datetime with its offset at that instant (the zone name
/// is not stored), and no `fold`; so does this type.
///
/// ```
/// use langgraph_codec::typed::pytypes::DateTime;
///
/// let dt: DateTime = "2024-06-01T12:00:00.000005+01:00:15".parse()?;
/// assert_eq!(dt.microsecond(), 5);
/// assert_eq!(dt.to_string(), "2024-06-01T12:00:00.000005+01:00:15");
/// let naive = DateTime::new(2024, 1, 2, 3, 4, 5, 0).unwrap();
/// assert_eq!(naive.to_string(), "2024-01-02T03:04:05");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DateTime {
    date: Date,
    hour: u8,
    minute: u8,
    second: u8,
    microsecond: u32,
    offset: Option<TimeDelta>,
}

impl DateTime {
    /// A naive datetime, if valid.
    pub fn new(
        year: i32,
        month: u8,
        day: u8,
        hour: u8,
        minute: u8,
        second: u8,
        microsecond: u32,
    ) -> Option<Self> {
        let date = Date::new(year, month, day)?;
        Time::new(hour, minute, second, microsecond)?;
        Some(DateTime {
            date,
            hour,
            minute,
            second,
            microsecond,
            offset: None,
        })
    }

    /// The same wall time with a UTC offset (aware); `None` unless within ±24 h.
    pub fn with_offset(mut self, offset: TimeDelta) -> Option<Self> {
        valid_offset(&offset).then(|| {
            self.offset = Some(offset);
            self
        })
    }

    /// The same wall time without an offset (naive).
    pub fn naive(mut self) -> Self {
        self.offset = None;
        self
    }

    /// The date part.
    pub fn date(&self) -> Date {
        self.date
    }
    /// The year.
    pub fn year(&self) -> i32 {
        self.date.year
    }
    /// The month.
    pub fn month(&self) -> u8 {
        self.date.month
    }
    /// The day.
    pub fn day(&self) -> u8 {
        self.date.day
    }
    /// The hour.
    pub fn hour(&self) -> u8 {
        self.hour
    }
    /// The minute.
    pub fn minute(&self) -> u8 {
        self.minute
    }
    /// The second.
    pub fn second(&self) -> u8 {
        self.second
    }
    /// The microsecond.
    pub fn microsecond(&self) -> u32 {
        self.microsecond
    }
    /// The UTC offset, for an aware datetime.
    pub fn offset(&self) -> Option<TimeDelta> {
        self.offset
    }
}

/// Formats an offset as Python's `_format_offset` does.
fn format_offset(f: &mut fmt::Formatter<'_>, offset: &TimeDelta) -> fmt::Result {
    let total = offset.total_microseconds();
    let sign = if total < 0 { '-' } else { '+' };
    let abs = total.unsigned_abs();
    let us = abs % 1_000_000;
    let secs = abs / 1_000_000;
    write!(f, "{sign}{:02}:{:02}", secs / 3600, secs % 3600 / 60)?;
    if secs % 60 != 0 || us != 0 {
        write!(f, ":{:02}", secs % 60)?;
        if us != 0 {
            write!(f, ".{us:06}")?;
        }
    }
    Ok(())
}

impl fmt::Display for DateTime {
    /// Python's `isoformat()`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}T{:02}:{:02}:{:02}",
            self.date, self.hour, self.minute, self.second
        )?;
        if self.microsecond != 0 {
            write!(f, ".{:06}", self.microsecond)?;
        }
        if let Some(off) = &self.offset {
            format_offset(f, off)?;
        }
        Ok(())
    }
}

struct Cursor<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn digits(&mut self, n: usize) -> Option<u32> {
        let part = self.s.get(self.pos..self.pos + n)?;
        let mut v = 0u32;
        for b in part {
            if !b.is_ascii_digit() {
                return None;
            }
            v = v * 10 + u32::from(b - b'0');
        }
        self.pos += n;
        Some(v)
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.s.get(self.pos) == Some(&c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }
    fn done(&self) -> bool {
        self.pos >= self.s.len()
    }
    /// `.ffffff` (any number of digits, the first six used; `,` also accepted).
    fn fraction(&mut self) -> Option<u32> {
        if !(self.eat(b'.') || self.eat(b',')) {
            return Some(0);
        }
        let start = self.pos;
        let mut us = 0u32;
        let mut n = 0;
        while let Some(b) = self.peek().filter(u8::is_ascii_digit) {
            if n < 6 {
                us = us * 10 + u32::from(b - b'0');
            }
            n += 1;
            self.pos += 1;
        }
        if self.pos == start {
            return None;
        }
        for _ in n..6 {
            us *= 10;
        }
        Some(us)
    }
}

fn parse_offset(c: &mut Cursor<'_>) -> Option<Option<TimeDelta>> {
    if c.done() {
        return Some(None);
    }
    if c.eat(b'Z') {
        return c.done().then_some(Some(TimeDelta::default()));
    }
    let sign: i128 = if c.eat(b'+') {
        1
    } else if c.eat(b'-') {
        -1
    } else {
        return None;
    };
    let hh = c.digits(2)?;
    let colon = c.eat(b':');
    let mm = c.digits(2)?;
    let mut ss = 0;
    let mut us = 0;
    if (colon && c.eat(b':')) || (!colon && c.peek().is_some_and(|b| b.is_ascii_digit())) {
        ss = c.digits(2)?;
        us = c.fraction()?;
    }
    if !c.done() || mm >= 60 || ss >= 60 {
        return None;
    }
    let total = i128::from((hh * 3600 + mm * 60 + ss) as u64) * US_PER_SEC + i128::from(us);
    let off = TimeDelta::from_microseconds(sign * total)?;
    valid_offset(&off).then_some(Some(off))
}

impl FromStr for DateTime {
    type Err = TypedError;

    /// Python's `datetime.fromisoformat` for the forms Python writes and the common
    /// others: `YYYY-MM-DD[T]HH[:MM[:SS[.ffffff]]]` with an optional `Z` or `±HH:MM[:SS[.ffffff]]`.
    fn from_str(s: &str) -> Result<Self, TypedError> {
        let bad = || invalid("an ISO 8601 datetime", s);
        let mut c = Cursor {
            s: s.as_bytes(),
            pos: 0,
        };
        let y = c.digits(4).ok_or_else(bad)?;
        let dash = c.eat(b'-');
        let m = c.digits(2).ok_or_else(bad)?;
        if dash && !c.eat(b'-') {
            return Err(bad());
        }
        let d = c.digits(2).ok_or_else(bad)?;
        let (mut hh, mut mi, mut ss, mut us) = (0, 0, 0, 0);
        if !c.done() {
            c.pos += s
                .get(c.pos..)
                .and_then(|r| r.chars().next())
                .map_or(1, char::len_utf8);
            hh = c.digits(2).ok_or_else(bad)?;
            let colon = c.eat(b':');
            let digit = |c: &Cursor<'_>| c.peek().is_some_and(|b| b.is_ascii_digit());
            if colon || digit(&c) {
                mi = c.digits(2).ok_or_else(bad)?;
                if (colon && c.eat(b':')) || (!colon && digit(&c)) {
                    ss = c.digits(2).ok_or_else(bad)?;
                    us = c.fraction().ok_or_else(bad)?;
                }
            }
        }
        let offset = parse_offset(&mut c).ok_or_else(bad)?;
        let dt = DateTime::new(y as i32, m as u8, d as u8, hh as u8, mi as u8, ss as u8, us)
            .ok_or_else(bad)?;
        Ok(DateTime { offset, ..dt })
    }
}

impl Serialize for DateTime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_object(
            s,
            ObjectKind::MethodSingleArg,
            "datetime",
            "datetime",
            &self.to_string(),
            Some("fromisoformat"),
        )
    }
}

impl<'de> Deserialize<'de> for DateTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (_, iso): (_, String) =
            read_simple(d, ObjectKind::MethodSingleArg, "datetime", &["datetime"])?;
        iso.parse().map_err(de::Error::custom)
    }
}

#[cfg(feature = "chrono")]
mod chrono_impls {
    use super::*;
    use chrono::{Datelike, Timelike};

    #[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
    impl From<chrono::NaiveDate> for Date {
        fn from(d: chrono::NaiveDate) -> Self {
            Date {
                year: d.year(),
                month: d.month() as u8,
                day: d.day() as u8,
            }
        }
    }

    #[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
    impl From<Date> for chrono::NaiveDate {
        fn from(d: Date) -> Self {
            chrono::NaiveDate::from_ymd_opt(d.year, u32::from(d.month), u32::from(d.day))
                .unwrap_or_default()
        }
    }

    #[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
    impl TryFrom<chrono::NaiveDateTime> for DateTime {
        type Error = TypedError;
        /// Fails for years outside 1–9999 (Python's range).
        fn try_from(dt: chrono::NaiveDateTime) -> Result<Self, TypedError> {
            let us = dt.nanosecond() / 1000;
            DateTime::new(
                dt.year(),
                dt.month() as u8,
                dt.day() as u8,
                dt.hour() as u8,
                dt.minute() as u8,
                dt.second().min(59) as u8,
                us.min(999_999),
            )
            .ok_or_else(|| invalid("a datetime in years 1-9999", &dt.to_string()))
        }
    }

    impl<Tz: chrono::TimeZone> TryFrom<chrono::DateTime<Tz>> for DateTime {
        type Error = TypedError;
        fn try_from(dt: chrono::DateTime<Tz>) -> Result<Self, TypedError> {
            use chrono::Offset;
            let secs = dt.offset().fix().local_minus_utc();
            let naive = DateTime::try_from(dt.naive_local())?;
            TimeDelta::from_seconds(i64::from(secs))
                .and_then(|off| naive.with_offset(off))
                .ok_or_else(|| invalid("an offset within 24 hours", &secs.to_string()))
        }
    }

    #[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
    impl From<DateTime> for chrono::NaiveDateTime {
        /// The wall time (the offset, if any, is dropped).
        fn from(dt: DateTime) -> Self {
            chrono::NaiveDate::from(dt.date).and_time(
                chrono::NaiveTime::from_hms_micro_opt(
                    u32::from(dt.hour),
                    u32::from(dt.minute),
                    u32::from(dt.second),
                    dt.microsecond,
                )
                .unwrap_or_default(),
            )
        }
    }

    #[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
    impl TryFrom<DateTime> for chrono::DateTime<chrono::FixedOffset> {
        type Error = TypedError;
        /// Fails for naive datetimes and offsets with a sub-second part.
        fn try_from(dt: DateTime) -> Result<Self, TypedError> {
            let off = dt
                .offset
                .ok_or_else(|| TypedError::msg("a naive datetime has no offset"))?;
            let us = off.total_microseconds();
            if us % US_PER_SEC != 0 {
                return Err(TypedError::msg(
                    "chrono offsets cannot hold fractions of a second",
                ));
            }
            let fixed = i32::try_from(us / US_PER_SEC)
                .ok()
                .and_then(chrono::FixedOffset::east_opt)
                .ok_or_else(|| TypedError::msg("offset out of range"))?;
            chrono::NaiveDateTime::from(dt)
                .and_local_timezone(fixed)
                .single()
                .ok_or_else(|| TypedError::msg("datetime out of chrono's range"))
        }
    }

    #[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
    impl TryFrom<chrono::TimeDelta> for TimeDelta {
        type Error = TypedError;
        /// Truncates to microseconds; fails beyond Python's ±999,999,999 days.
        fn try_from(d: chrono::TimeDelta) -> Result<Self, TypedError> {
            let us = i128::from(d.num_seconds()) * US_PER_SEC + i128::from(d.subsec_nanos() / 1000);
            TimeDelta::from_microseconds(us)
                .ok_or_else(|| TypedError::msg("duration out of Python's timedelta range"))
        }
    }

    #[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
    impl TryFrom<TimeDelta> for chrono::TimeDelta {
        type Error = TypedError;
        fn try_from(d: TimeDelta) -> Result<Self, TypedError> {
            i64::try_from(d.total_microseconds())
                .ok()
                .map(chrono::TimeDelta::microseconds)
                .ok_or_else(|| TypedError::msg("duration out of chrono's range"))
        }
    }

    #[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
    impl From<chrono::NaiveTime> for Time {
        fn from(t: chrono::NaiveTime) -> Self {
            Time {
                hour: t.hour() as u8,
                minute: t.minute() as u8,
                second: t.second().min(59) as u8,
                microsecond: (t.nanosecond() / 1000).min(999_999),
                tzinfo: None,
                fold: 0,
            }
        }
    }

    #[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
    impl From<&Time> for chrono::NaiveTime {
        /// The wall time (tzinfo and fold dropped).
        fn from(t: &Time) -> Self {
            chrono::NaiveTime::from_hms_micro_opt(
                u32::from(t.hour),
                u32::from(t.minute),
                u32::from(t.second),
                t.microsecond,
            )
            .unwrap_or_default()
        }
    }
}
