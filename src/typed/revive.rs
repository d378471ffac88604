//! `json` rows: the `lc` envelopes Python `langgraph-checkpoint==4.3.2` rebuilds
//! (`JsonPlusSerializer._reviver`, then langchain-core's `Reviver(allowed_objects="core")`)
//! become the [`Value::Object`] that Python's msgpack writer gives the rebuilt object,
//! so a `json` row reads like the `msgpack` row Python would write for the same value.
//!
//! Like Python's `json.loads(object_hook=…)`, envelopes are rebuilt innermost first.
//! What Python leaves alone stays exactly as written. Where Python gives `None` or
//! refuses the whole row (constructors that fail, `lc: 1` secrets and
//! `not_implemented` markers, classes outside its allowlist, shapes this module does not
//! rebuild), the envelope map is kept unchanged: nothing is lost.
//!
//! Rebuilt:
//! - `lc: 2` constructor envelopes (Python's pre-msgpack `JsonPlusSerializer` and its
//!   later `json` fallback) of `uuid.UUID`, `decimal.Decimal`, `builtins.set`/`frozenset`,
//!   `collections.deque`, `datetime.date`/`time`/`timedelta`/`timezone`, `ipaddress`
//!   addresses/networks/interfaces, `pathlib.Path`, `zoneinfo.ZoneInfo`, `re.compile`
//!   and `langgraph.types.Send`, and `datetime.datetime` with `method: "fromisoformat"`,
//!   which the release that wrote it rebuilt (today's Python gives `None`: here the
//!   writer's reading wins, nothing is lost);
//! - `lc: 1` constructor envelopes of LangChain messages and `Document` (ids under
//!   `langchain_core`, and the legacy `langchain.schema…` ids), as LangChain Python and
//!   LangGraphJS write them: the model's fields in declaration order with their
//!   defaults, then any extra keyword arguments.
//!
//! Kept as written (Python 4.3.2's result in brackets): enums, dataclasses, pydantic models
//! and other classes outside the allowlist [the dict unchanged], LangGraphJS's `Set`, `Map`,
//! `RegExp`, `Error`, `Uint8Array` records and `{"lc": 2, "type": "undefined"}` [the dict
//! unchanged], `lc: 1` secrets [`None`], `not_implemented` and non-message classes [an
//! error], messages whose arguments Python's validators would reject or rewrite in ways
//! not reproduced here (see [`message`]).

use crate::json::JsonError;
use crate::typed::pytypes::{
    Ipv4Address, Ipv4Interface, Ipv4Network, Ipv6Address, Ipv6Interface, Ipv6Network,
};
use crate::value::{ObjectKind, PyObject, PyStr, Value};

/// Reads a `json` row: Python's `json.loads(data, object_hook=self._reviver)`, the
/// crate's one JSON reader ([`json`](crate::json)) with every envelope Python rebuilds
/// rebuilt as it closes, innermost first.
///
/// # Errors
/// As [`json::parse`](crate::json::parse): text that is not JSON, or nesting deeper
/// than `max_depth`.
pub(crate) fn read_json_row(data: &[u8], max_depth: usize) -> Result<Value, JsonError> {
    crate::json::parse_with_object_hook(data, max_depth, revive_object)
}

/// One object of a `json` row, its values already revived: the object Python rebuilds
/// from it, or the map unchanged.
fn revive_object(entries: Vec<(Value, Value)>) -> Value {
    revive_envelope(&entries).unwrap_or(Value::Map(entries))
}

/// Python's `==` between a JSON value and a small int (`True == 1`, `2.0 == 2`).
fn py_eq_int(v: &Value, n: i64) -> bool {
    match v {
        Value::Int(i) => i.as_i64() == Some(n),
        Value::Bool(b) => i64::from(*b) == n,
        Value::F64(f) => *f == n as f64,
        _ => false,
    }
}

/// `dict.get(key)`: the last entry with that key wins, as in a Python dict.
fn get<'a>(entries: &'a [(Value, Value)], key: &str) -> Option<&'a Value> {
    entries
        .iter()
        .rev()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

fn revive_envelope(entries: &[(Value, Value)]) -> Option<Value> {
    let lc = get(entries, "lc")?;
    if get(entries, "type")?.as_str()? != "constructor" {
        return None;
    }
    let id = get(entries, "id").filter(|id| !id.is_nil())?;
    let id: Vec<&str> = id
        .as_array()?
        .iter()
        .map(Value::as_str)
        .collect::<Option<_>>()?;
    if py_eq_int(lc, 2) {
        lc2(&id, entries)
    } else if py_eq_int(lc, 1) {
        message::lc1(&id, get(entries, "kwargs"))
    } else {
        None
    }
}

fn obj(kind: ObjectKind, module: &str, name: &str, arg: Value) -> Value {
    Value::object(PyObject::new(kind, module, name, arg))
}

fn str_arg(args: &[Value]) -> Option<&str> {
    match args {
        [Value::Str(s)] => Some(s),
        _ => None,
    }
}

fn int_args<const N: usize>(args: &[Value]) -> Option<[i128; N]> {
    let mut out = [0i128; N];
    if args.len() != N {
        return None;
    }
    for (o, a) in out.iter_mut().zip(args) {
        match a {
            Value::Int(i) => *o = i.as_i128(),
            _ => return None,
        }
    }
    Some(out)
}

/// `lc: 2` constructor envelopes: Python rebuilds `cls(*args, **kwargs)` for ids in
/// its safe-type list and writes the object with its msgpack envelope.
fn lc2(id: &[&str], entries: &[(Value, Value)]) -> Option<Value> {
    let (name, module) = id.split_last()?;
    let module = module.join(".");
    let args: &[Value] = match get(entries, "args") {
        None | Some(Value::Nil) => &[],
        Some(Value::Array(a)) => a,
        Some(_) => return None,
    };
    let kwargs: &[(Value, Value)] = match get(entries, "kwargs") {
        None | Some(Value::Nil) => &[],
        Some(Value::Map(m)) => m,
        Some(_) => return None,
    };
    use ObjectKind::*;
    match (module.as_str(), *name, kwargs.is_empty()) {
        ("uuid", "UUID", true) => {
            let u: crate::typed::pytypes::Uuid = str_arg(args)?.parse().ok()?;
            Some(obj(
                ConstructorSingleArg,
                "uuid",
                "UUID",
                Value::from(u.hex()),
            ))
        }
        ("decimal", "Decimal", true) => {
            let s = py_decimal_str(str_arg(args)?)?;
            Some(obj(
                ConstructorSingleArg,
                "decimal",
                "Decimal",
                Value::from(s),
            ))
        }
        ("builtins", "set" | "frozenset", true) => {
            let [Value::Array(items)] = args else {
                return None;
            };
            let mut unique: Vec<Value> = Vec::with_capacity(items.len());
            for item in items {
                // Unhashable elements make Python's constructor fail.
                if matches!(item, Value::Array(_) | Value::Map(_)) {
                    return None;
                }
                if !unique.contains(item) {
                    unique.push(item.clone());
                }
            }
            Some(obj(
                ConstructorSingleArg,
                "builtins",
                name,
                Value::Array(unique),
            ))
        }
        ("collections", "deque", true) => {
            let [Value::Array(items)] = args else {
                return None;
            };
            Some(obj(
                ConstructorSingleArg,
                "collections",
                "deque",
                Value::Array(items.clone()),
            ))
        }
        ("ipaddress", _, true) => {
            let s = str_arg(args)?;
            let canonical = match *name {
                "IPv4Address" => s.parse::<Ipv4Address>().ok()?.to_string(),
                "IPv6Address" => s.parse::<Ipv6Address>().ok()?.to_string(),
                "IPv4Interface" => s.parse::<Ipv4Interface>().ok()?.to_string(),
                "IPv6Interface" => s.parse::<Ipv6Interface>().ok()?.to_string(),
                "IPv4Network" => {
                    let n = s.parse::<Ipv4Network>().ok()?;
                    let host = u32::from(n.addr) & u32::MAX.checked_shr(u32::from(n.prefix))?;
                    (n.prefix == 32 || host == 0).then(|| n.to_string())?
                }
                "IPv6Network" => {
                    let n = s.parse::<Ipv6Network>().ok()?;
                    let host = u128::from(n.addr) & u128::MAX.checked_shr(u32::from(n.prefix))?;
                    (n.prefix == 128 || host == 0).then(|| n.to_string())?
                }
                _ => return None,
            };
            // Python accepts forms we do not normalise identically (IPv4-mapped
            // IPv6 tails, zone ids): keep those envelopes.
            (canonical == s).then(|| obj(ConstructorSingleArg, "ipaddress", name, Value::from(s)))
        }
        ("pathlib" | "pathlib._local", "Path" | "PosixPath", true) => {
            let mut parts: Vec<Value> = Vec::new();
            for (i, a) in args.iter().enumerate() {
                let s = a.as_str()?;
                // Only arguments that are already Path.parts (what Python wrote).
                let ok = if i == 0 && s == "/" {
                    true
                } else {
                    !s.is_empty() && s != "." && !s.contains('/')
                };
                if !ok {
                    return None;
                }
                parts.push(Value::from(s));
            }
            if parts.is_empty() {
                return None;
            }
            Some(obj(
                ConstructorPosArgs,
                "pathlib",
                "PosixPath",
                Value::Array(parts),
            ))
        }
        ("zoneinfo", "ZoneInfo", true) => {
            let key = str_arg(args)?;
            let plausible = !key.is_empty()
                && !key.starts_with('/')
                && !key
                    .split('/')
                    .any(|p| p.is_empty() || p == "." || p == "..")
                && key
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"/_+-".contains(&b));
            plausible.then(|| {
                obj(
                    ConstructorSingleArg,
                    "zoneinfo",
                    "ZoneInfo",
                    Value::from(key),
                )
            })
        }
        ("re", "compile", true) => {
            let [Value::Str(pattern), Value::Int(flags)] = args else {
                return None;
            };
            // re.compile adds re.UNICODE (32) to a str pattern without re.ASCII (256).
            let mut flags = flags.as_u64()?;
            if flags & 256 == 0 {
                flags |= 32;
            }
            Some(obj(
                ConstructorPosArgs,
                "re",
                "compile",
                Value::Array(vec![Value::Str(pattern.clone()), Value::from(flags)]),
            ))
        }
        ("datetime", "timedelta", true) => {
            let [d, s, us] = int_args::<3>(args)?;
            Some(timedelta(d, s, us)?)
        }
        ("datetime", "date", true) => {
            let [y, m, d] = int_args::<3>(args)?;
            valid_date(y, m, d).then(|| {
                obj(
                    ConstructorPosArgs,
                    "datetime",
                    "date",
                    Value::Array(vec![
                        Value::from(y as i64),
                        Value::from(m as i64),
                        Value::from(d as i64),
                    ]),
                )
            })
        }
        ("datetime", "time", _) => time(args, kwargs),
        ("datetime", "timezone", true) => {
            let (offset, tz_name) = match args {
                [o] => (o, None),
                [o, Value::Str(n)] => (o, Some(n.clone())),
                _ => return None,
            };
            let o = offset.as_object()?;
            if !o.is("datetime", "timedelta") {
                return None;
            }
            let [Value::Int(d), Value::Int(s), Value::Int(us)] = o.arg.as_array()? else {
                return None;
            };
            // Strictly between -24h and 24h.
            let total = (d.as_i128() * 86_400 + s.as_i128()) * 1_000_000 + us.as_i128();
            if total.abs() >= 86_400 * 1_000_000 {
                return None;
            }
            let mut a = vec![offset.clone()];
            a.extend(tz_name.map(Value::Str));
            Some(obj(
                ConstructorPosArgs,
                "datetime",
                "timezone",
                Value::Array(a),
            ))
        }
        // The release that wrote it (`JsonPlusSerializer` before msgpack) rebuilt it with
        // `datetime.fromisoformat(*args)`; today's Python gives `None`. Rebuilt here as
        // the writer read it, in the envelope Python's msgpack writer gives a datetime:
        // `("datetime", "datetime", isoformat(), "fromisoformat")`.
        ("datetime", "datetime", true)
            if get(entries, "method").and_then(Value::as_str) == Some("fromisoformat") =>
        {
            let dt: crate::typed::pytypes::DateTime = str_arg(args)?.parse().ok()?;
            Some(Value::object(
                PyObject::new(
                    ObjectKind::MethodSingleArg,
                    "datetime",
                    "datetime",
                    Value::from(dt.to_string()),
                )
                .with_method("fromisoformat"),
            ))
        }
        ("langgraph.types", "Send", _) => {
            // Send(node, arg) from kwargs {"node", "arg"} or two positional args.
            let (node, arg) = match (args, kwargs) {
                ([n, a], []) => (n, a),
                ([], kw) if kw.len() == 2 => (get(kw, "node")?, get(kw, "arg")?),
                _ => return None,
            };
            node.as_str()?;
            Some(obj(
                ConstructorPosArgs,
                "langgraph.types",
                "Send",
                Value::Array(vec![node.clone(), arg.clone()]),
            ))
        }
        _ => None,
    }
}

/// `timedelta(days, seconds, microseconds)`, normalised as Python does.
fn timedelta(d: i128, s: i128, us: i128) -> Option<Value> {
    let total = (d * 86_400 + s) * 1_000_000 + us;
    let us = total.rem_euclid(1_000_000);
    let secs = total.div_euclid(1_000_000);
    let s = secs.rem_euclid(86_400);
    let d = secs.div_euclid(86_400);
    if d.abs() > 999_999_999 {
        return None;
    }
    Some(obj(
        ObjectKind::ConstructorPosArgs,
        "datetime",
        "timedelta",
        Value::Array(vec![
            Value::from(i64::try_from(d).ok()?),
            Value::from(i64::try_from(s).ok()?),
            Value::from(i64::try_from(us).ok()?),
        ]),
    ))
}

fn valid_date(y: i128, m: i128, d: i128) -> bool {
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=9999).contains(&y) && (1..=days).contains(&d)
}

/// `time(hour, minute, second, microsecond, tzinfo, fold=…)` → Python's kwargs envelope.
fn time(args: &[Value], kwargs: &[(Value, Value)]) -> Option<Value> {
    let names = ["hour", "minute", "second", "microsecond", "tzinfo", "fold"];
    let mut slots: [Option<Value>; 6] = Default::default();
    if args.len() > 5 {
        return None;
    }
    for (slot, a) in slots.iter_mut().zip(args) {
        *slot = Some(a.clone());
    }
    for (k, v) in kwargs {
        let i = names.iter().position(|n| k.as_str() == Some(n))?;
        let slot = slots.get_mut(i)?;
        if slot.is_some() {
            return None;
        }
        *slot = Some(v.clone());
    }
    let limits = [24, 60, 60, 1_000_000];
    let mut out = Vec::with_capacity(6);
    for (i, name) in names.iter().enumerate() {
        let v = slots.get_mut(i)?.take().unwrap_or_else(|| {
            if i == 4 {
                Value::Nil
            } else {
                Value::from(0i64)
            }
        });
        let ok = match (i, &v) {
            (0..=3, Value::Int(n)) => {
                (0..limits.get(i).copied().unwrap_or(0)).contains(&n.as_i128())
            }
            (4, Value::Nil) => true,
            (4, Value::Object(o)) => o.is("datetime", "timezone"),
            (5, Value::Int(n)) => n.as_i128() == 0 || n.as_i128() == 1,
            _ => false,
        };
        if !ok {
            return None;
        }
        out.push((Value::from(*name), v));
    }
    Some(obj(
        ObjectKind::ConstructorKwArgs,
        "datetime",
        "time",
        Value::Map(out),
    ))
}

/// `str(Decimal(s))`: Python's canonical (to-scientific-string) form, or `None` if
/// `Decimal(s)` raises.
fn py_decimal_str(s: &str) -> Option<String> {
    let t = s.trim();
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, t.get(1..)?),
        Some(b'+') => (false, t.get(1..)?),
        _ => (false, t),
    };
    let sign = if neg { "-" } else { "" };
    let lower = body.replace('_', "").to_ascii_lowercase();
    if body.contains('_') && (body.starts_with('_') || body.ends_with('_') || body.contains("__")) {
        return None;
    }
    if lower == "inf" || lower == "infinity" {
        return Some(format!("{sign}Infinity"));
    }
    for (prefix, word) in [("snan", "sNaN"), ("nan", "NaN")] {
        if let Some(payload) = lower.strip_prefix(prefix) {
            if !payload.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let payload = payload.trim_start_matches('0');
            return Some(format!("{sign}{word}{payload}"));
        }
    }
    let (mantissa, exp) = match lower.split_once('e') {
        Some((m, e)) => (m, e.parse::<i64>().ok()?),
        None => (lower.as_str(), 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let digits = format!("{int}{frac}");
    let coeff = digits.trim_start_matches('0');
    let coeff = if coeff.is_empty() { "0" } else { coeff };
    let exp = exp.checked_sub(i64::try_from(frac.len()).ok()?)?;
    let len = i64::try_from(coeff.len()).ok()?;
    let adjusted = exp + len - 1;
    let out = if exp <= 0 && adjusted >= -6 {
        if exp == 0 {
            coeff.to_owned()
        } else {
            let point = len + exp;
            if point > 0 {
                let (a, b) = coeff.split_at(usize::try_from(point).ok()?);
                format!("{a}.{b}")
            } else {
                format!("0.{}{coeff}", "0".repeat(usize::try_from(-point).ok()?))
            }
        }
    } else {
        let (first, rest) = coeff.split_at(1);
        let dot = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if adjusted >= 0 { "+" } else { "-" };
        format!("{first}{dot}E{esign}{}", adjusted.unsigned_abs())
    };
    Some(format!("{sign}{out}"))
}

pub(crate) mod message {
    //! `lc: 1` constructor envelopes of LangChain messages and documents.
    //!
    //! Python calls `cls(**kwargs)` and writes `model_dump()`: the declared fields in
    //! order, defaults filled in, extra keyword arguments after them. Rebuilt only when
    //! the arguments are ones langchain-core's validators keep as they are; otherwise
    //! the envelope stays a map: an `AIMessage` whose `tool_calls` are absent but whose
    //! `additional_kwargs` hold raw OpenAI tool calls (Python parses them into
    //! `tool_calls` and `invalid_tool_calls`), an `AIMessage` whose `content` is neither
    //! a str nor a list of str / dict blocks (Python refuses it), list `content` of an
    //! `AIMessageChunk`, a `content_blocks` keyword, invalid-tool-call or
    //! tool-call-chunk lists, a `tool_calls` list with an entry Python cannot
    //! validate (Python refuses the row: the envelope is kept whole, every tool call
    //! in it), a non-nil `usage_metadata`, a `RemoveMessage` with truthy `content`
    //! (Python raises), and missing required fields. An `AIMessage` with a list of
    //! content blocks is rebuilt as it is (LangGraphJS and older Python write them), as
    //! is a `RemoveMessage` with falsy `content` (which Python drops for `""`).

    use super::*;

    /// (legacy or current id, module, class).
    const CLASSES: &[(&str, &str, &str)] = &[
        (
            "langchain.schema.AIMessage",
            "langchain_core.messages.ai",
            "AIMessage",
        ),
        (
            "langchain.schema.ChatMessage",
            "langchain_core.messages.chat",
            "ChatMessage",
        ),
        (
            "langchain.schema.FunctionMessage",
            "langchain_core.messages.function",
            "FunctionMessage",
        ),
        (
            "langchain.schema.HumanMessage",
            "langchain_core.messages.human",
            "HumanMessage",
        ),
        (
            "langchain.schema.SystemMessage",
            "langchain_core.messages.system",
            "SystemMessage",
        ),
        (
            "langchain.schema.document.Document",
            "langchain_core.documents.base",
            "Document",
        ),
        (
            "langchain.schema.messages.AIMessage",
            "langchain_core.messages.ai",
            "AIMessage",
        ),
        (
            "langchain.schema.messages.AIMessageChunk",
            "langchain_core.messages.ai",
            "AIMessageChunk",
        ),
        (
            "langchain.schema.messages.ChatMessage",
            "langchain_core.messages.chat",
            "ChatMessage",
        ),
        (
            "langchain.schema.messages.ChatMessageChunk",
            "langchain_core.messages.chat",
            "ChatMessageChunk",
        ),
        (
            "langchain.schema.messages.FunctionMessage",
            "langchain_core.messages.function",
            "FunctionMessage",
        ),
        (
            "langchain.schema.messages.FunctionMessageChunk",
            "langchain_core.messages.function",
            "FunctionMessageChunk",
        ),
        (
            "langchain.schema.messages.HumanMessage",
            "langchain_core.messages.human",
            "HumanMessage",
        ),
        (
            "langchain.schema.messages.HumanMessageChunk",
            "langchain_core.messages.human",
            "HumanMessageChunk",
        ),
        (
            "langchain.schema.messages.RemoveMessage",
            "langchain_core.messages.modifier",
            "RemoveMessage",
        ),
        (
            "langchain.schema.messages.SystemMessage",
            "langchain_core.messages.system",
            "SystemMessage",
        ),
        (
            "langchain.schema.messages.SystemMessageChunk",
            "langchain_core.messages.system",
            "SystemMessageChunk",
        ),
        (
            "langchain.schema.messages.ToolMessage",
            "langchain_core.messages.tool",
            "ToolMessage",
        ),
        (
            "langchain.schema.messages.ToolMessageChunk",
            "langchain_core.messages.tool",
            "ToolMessageChunk",
        ),
        (
            "langchain_core.documents.base.Document",
            "langchain_core.documents.base",
            "Document",
        ),
        (
            "langchain_core.messages.AIMessage",
            "langchain_core.messages.ai",
            "AIMessage",
        ),
        (
            "langchain_core.messages.AIMessageChunk",
            "langchain_core.messages.ai",
            "AIMessageChunk",
        ),
        (
            "langchain_core.messages.ChatMessage",
            "langchain_core.messages.chat",
            "ChatMessage",
        ),
        (
            "langchain_core.messages.ChatMessageChunk",
            "langchain_core.messages.chat",
            "ChatMessageChunk",
        ),
        (
            "langchain_core.messages.FunctionMessage",
            "langchain_core.messages.function",
            "FunctionMessage",
        ),
        (
            "langchain_core.messages.FunctionMessageChunk",
            "langchain_core.messages.function",
            "FunctionMessageChunk",
        ),
        (
            "langchain_core.messages.HumanMessage",
            "langchain_core.messages.human",
            "HumanMessage",
        ),
        (
            "langchain_core.messages.HumanMessageChunk",
            "langchain_core.messages.human",
            "HumanMessageChunk",
        ),
        (
            "langchain_core.messages.SystemMessage",
            "langchain_core.messages.system",
            "SystemMessage",
        ),
        (
            "langchain_core.messages.SystemMessageChunk",
            "langchain_core.messages.system",
            "SystemMessageChunk",
        ),
        (
            "langchain_core.messages.ToolMessage",
            "langchain_core.messages.tool",
            "ToolMessage",
        ),
        (
            "langchain_core.messages.ToolMessageChunk",
            "langchain_core.messages.tool",
            "ToolMessageChunk",
        ),
        (
            "langchain_core.messages.ai.AIMessage",
            "langchain_core.messages.ai",
            "AIMessage",
        ),
        (
            "langchain_core.messages.ai.AIMessageChunk",
            "langchain_core.messages.ai",
            "AIMessageChunk",
        ),
        (
            "langchain_core.messages.chat.ChatMessage",
            "langchain_core.messages.chat",
            "ChatMessage",
        ),
        (
            "langchain_core.messages.chat.ChatMessageChunk",
            "langchain_core.messages.chat",
            "ChatMessageChunk",
        ),
        (
            "langchain_core.messages.function.FunctionMessage",
            "langchain_core.messages.function",
            "FunctionMessage",
        ),
        (
            "langchain_core.messages.function.FunctionMessageChunk",
            "langchain_core.messages.function",
            "FunctionMessageChunk",
        ),
        (
            "langchain_core.messages.human.HumanMessage",
            "langchain_core.messages.human",
            "HumanMessage",
        ),
        (
            "langchain_core.messages.human.HumanMessageChunk",
            "langchain_core.messages.human",
            "HumanMessageChunk",
        ),
        (
            "langchain_core.messages.modifier.RemoveMessage",
            "langchain_core.messages.modifier",
            "RemoveMessage",
        ),
        (
            "langchain_core.messages.system.SystemMessage",
            "langchain_core.messages.system",
            "SystemMessage",
        ),
        (
            "langchain_core.messages.system.SystemMessageChunk",
            "langchain_core.messages.system",
            "SystemMessageChunk",
        ),
        (
            "langchain_core.messages.tool.ToolMessage",
            "langchain_core.messages.tool",
            "ToolMessage",
        ),
        (
            "langchain_core.messages.tool.ToolMessageChunk",
            "langchain_core.messages.tool",
            "ToolMessageChunk",
        ),
    ];

    /// A field and its default (`None` = required).
    type Field = (&'static str, Option<fn() -> Value>);

    fn empty_map() -> Value {
        Value::Map(Vec::new())
    }
    fn empty_list() -> Value {
        Value::Array(Vec::new())
    }
    fn success() -> Value {
        Value::from("success")
    }

    /// `model_dump()` field order of langchain-core 1.x (the release langgraph 4.3.2
    /// is tested with); `type` is filled in from the class.
    fn fields(name: &str) -> Option<Vec<Field>> {
        let base: [Field; 6] = [
            ("content", None),
            ("additional_kwargs", Some(empty_map)),
            ("response_metadata", Some(empty_map)),
            ("type", Some(Value::default)),
            ("name", Some(Value::default)),
            ("id", Some(Value::default)),
        ];
        let ai: [Field; 3] = [
            ("tool_calls", Some(empty_list)),
            ("invalid_tool_calls", Some(empty_list)),
            ("usage_metadata", Some(Value::default)),
        ];
        let tool: [Field; 3] = [
            ("tool_call_id", None),
            ("artifact", Some(Value::default)),
            ("status", Some(success)),
        ];
        let mut f: Vec<Field> = base.to_vec();
        match name {
            "HumanMessage"
            | "SystemMessage"
            | "FunctionMessage"
            | "HumanMessageChunk"
            | "SystemMessageChunk"
            | "FunctionMessageChunk" => {}
            "ChatMessage" | "ChatMessageChunk" => f.push(("role", None)),
            "AIMessage" => f.extend(ai),
            "AIMessageChunk" => {
                f.extend(ai);
                f.push(("tool_call_chunks", Some(empty_list)));
                f.push(("chunk_position", Some(Value::default)));
            }
            "ToolMessage" | "ToolMessageChunk" => f.extend(tool),
            "RemoveMessage" => {
                f = base.to_vec();
                if let Some(c) = f.first_mut() {
                    *c = ("content", Some(|| Value::from("")));
                }
                if let Some(i) = f.last_mut() {
                    *i = ("id", None);
                }
            }
            "Document" => {
                return Some(vec![
                    ("id", Some(Value::default)),
                    ("metadata", Some(empty_map)),
                    ("page_content", None),
                    ("type", Some(|| Value::from("Document"))),
                ])
            }
            _ => return None,
        }
        Some(f)
    }

    fn type_default(name: &str) -> &'static str {
        match name {
            "HumanMessage" => "human",
            "AIMessage" => "ai",
            "SystemMessage" => "system",
            "ChatMessage" => "chat",
            "FunctionMessage" => "function",
            "ToolMessage" => "tool",
            "RemoveMessage" => "remove",
            "AIMessageChunk" => "AIMessageChunk",
            "HumanMessageChunk" => "HumanMessageChunk",
            "SystemMessageChunk" => "SystemMessageChunk",
            "ChatMessageChunk" => "ChatMessageChunk",
            "FunctionMessageChunk" => "FunctionMessageChunk",
            "ToolMessageChunk" => "ToolMessageChunk",
            _ => "",
        }
    }

    /// `create_tool_call(name=…, args=…, id=…)`: `{name, args, id, type: "tool_call"}`.
    fn tool_call(tc: &Value) -> Option<Value> {
        let entries = tc.as_map()?;
        let mut name = None;
        let mut args = None;
        let mut id = None;
        for (k, v) in entries {
            match k.as_str()? {
                "name" => name = Some(v),
                "args" => args = Some(v),
                "id" => id = Some(v),
                "type" => {}
                _ => return None,
            }
        }
        let (name, args, id) = (name?, args?, id?);
        name.as_str()?;
        args.as_map()?;
        if !(id.is_nil() || id.as_str().is_some()) {
            return None;
        }
        Some(Value::map([
            ("name", name.clone()),
            ("args", args.clone()),
            ("id", id.clone()),
            ("type", Value::from("tool_call")),
        ]))
    }

    fn truthy(v: Option<&Value>) -> bool {
        match v {
            None | Some(Value::Nil) | Some(Value::Bool(false)) => false,
            Some(Value::Array(a)) => !a.is_empty(),
            Some(Value::Map(m)) => !m.is_empty(),
            Some(Value::Str(s)) => !s.is_empty(),
            Some(Value::Int(i)) => i.as_i128() != 0,
            Some(_) => true,
        }
    }

    pub(super) fn lc1(id: &[&str], kwargs: Option<&Value>) -> Option<Value> {
        let dotted = id.join(".");
        let &(_, module, name) = CLASSES.iter().find(|(k, _, _)| *k == dotted)?;
        let kwargs: &[(Value, Value)] = match kwargs {
            None => &[],
            Some(Value::Map(m)) => m,
            Some(_) => return None,
        };
        // Keyword arguments must be unique strings.
        let mut seen: Vec<&str> = Vec::with_capacity(kwargs.len());
        for (k, _) in kwargs {
            let k = k.as_str()?;
            if seen.contains(&k) {
                return None;
            }
            seen.push(k);
        }
        let kw = |key: &str| get(kwargs, key);
        let is_ai = name.starts_with("AIMessage");
        if is_ai {
            // A list of content blocks (str or dict items: what pydantic accepts) is
            // kept as it is by `AIMessage`; chunks run more validators over it.
            let content_ok = match kw("content") {
                Some(Value::Str(_)) => true,
                Some(Value::Array(items)) => {
                    name == "AIMessage"
                        && items
                            .iter()
                            .all(|b| matches!(b, Value::Str(_) | Value::Map(_)))
                }
                _ => false,
            };
            let raw_calls = kw("additional_kwargs").and_then(|a| a.get("tool_calls"));
            if !content_ok
                || (truthy(raw_calls) && !truthy(kw("tool_calls")))
                || truthy(kw("invalid_tool_calls"))
                || truthy(kw("tool_call_chunks"))
                || !kw("usage_metadata").is_none_or(Value::is_nil)
            {
                return None;
            }
        }
        // `RemoveMessage.__init__` pops `content` and raises only when it is truthy;
        // a falsy one (`""`, `[]`, `None`) is dropped and the message gets `""`.
        let remove = name == "RemoveMessage";
        if remove && truthy(kw("content")) {
            return None;
        }
        if name.starts_with("ToolMessage") {
            // Python coerces a non-string tool_call_id and non-string/list content.
            let id_ok = matches!(kw("tool_call_id"), Some(Value::Str(_)));
            let content_ok = matches!(kw("content"), Some(Value::Str(_) | Value::Array(_)));
            if !id_ok || !content_ok {
                return None;
            }
        }
        let mut out: Vec<(Value, Value)> = Vec::new();
        let declared = fields(name)?;
        for (field, default) in &declared {
            let v = match (kw(field), default) {
                (_, Some(d)) if remove && *field == "content" => d(),
                (Some(v), _) => v.clone(),
                (None, Some(_)) if *field == "type" => Value::from(type_default(name)),
                (None, Some(d)) => d(),
                (None, None) => return None,
            };
            let v = match *field {
                "content" if !matches!(v, Value::Str(_) | Value::Array(_)) => return None,
                "page_content" if v.as_str().is_none() => return None,
                "additional_kwargs" | "response_metadata" | "metadata" if v.as_map().is_none() => {
                    return None
                }
                "tool_calls" => Value::Array(
                    v.as_array()?
                        .iter()
                        .map(tool_call)
                        .collect::<Option<Vec<_>>>()?,
                ),
                _ => v,
            };
            out.push((Value::from(*field), v));
        }
        for (k, v) in kwargs {
            let k = k.as_str()?;
            if !declared.iter().any(|(f, _)| *f == k) {
                out.push((Value::from(k), v.clone()));
            }
        }
        Some(Value::object(
            PyObject::new(ObjectKind::PydanticV2, module, name, Value::Map(out))
                .with_method(PyStr::from("model_validate_json")),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_strings_follow_python_str() {
        // Expected values: Python 3.11 `str(Decimal(s))`.
        for (input, expected) in [
            ("-12.3400", Some("-12.3400")),
            ("1E+30", Some("1E+30")),
            ("1e3", Some("1E+3")),
            ("15E+2", Some("1.5E+3")),
            ("0.0000001", Some("1E-7")),
            ("0.000001", Some("0.000001")),
            ("00012", Some("12")),
            ("-0", Some("-0")),
            ("0E-3", Some("0.000")),
            ("1_000", Some("1000")),
            ("inf", Some("Infinity")),
            ("-nan", Some("-NaN")),
            ("snan012", Some("sNaN12")),
            ("abc", None),
            ("1..2", None),
            ("", None),
        ] {
            assert_eq!(py_decimal_str(input).as_deref(), expected, "{input}");
        }
    }

    #[test]
    fn timedelta_normalises_like_python() {
        // timedelta(0, -1, 0) == timedelta(days=-1, seconds=86399)
        let v = timedelta(0, -1, 0).expect("in range");
        let arg = &v.as_object().expect("object").arg;
        assert_eq!(
            arg,
            &Value::Array(vec![
                Value::from(-1i64),
                Value::from(86_399i64),
                Value::from(0i64)
            ])
        );
        assert!(timedelta(1_000_000_000, 0, 0).is_none());
    }

    #[test]
    fn int_is_compared_like_python() {
        assert!(py_eq_int(&Value::Bool(true), 1));
        assert!(py_eq_int(&Value::F64(2.0), 2));
        assert!(!py_eq_int(&Value::from("2"), 2));
    }
}
