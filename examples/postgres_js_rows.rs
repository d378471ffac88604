//! The Rust half of the LangGraphJS check (`vectors/postgres/js/write_rows.mjs` is the JS
//! half; `.ci/checks.d/postgres_js.sh` runs both): rows written by the real
//! `@langchain/langgraph-checkpoint-postgres` saver (`json` blobs and writes, integer
//! channel versions, `empty` blobs, JS's own migrations 0..4) read with `PostgresSaver`
//! exactly as the JS saver itself read them.
//!
//! ```text
//! postgres_js_rows setup  URL SCHEMA
//! postgres_js_rows check  URL SCHEMA JS_READS.json [--rust-set-up]
//! postgres_js_rows python URL SCHEMA JS_READS.json PY_READS.json
//! ```
//!
//! 1. `verify` refuses the JS-only schema (it stops at migration 4) with a typed error
//!    (with `--rust-set-up`, where `setup` ran before the JS saver's, it accepts it);
//! 2. `setup` brings it to Python's migration 9 (JS's `setup` then finds nothing to do);
//! 3. every `getTuple` and `list` JS made is made again with `PostgresSaver` and its
//!    result compared with what JS returned, value by value;
//! 4. (`python`) the same reads compared byte for byte with what Python's
//!    `PostgresSaver` read of the JS rows (`cross_language.py reads`).
//!
//! The JS side writes its reads in a canonical JSON (`canon()` in `write_rows.mjs`):
//! JS-only types are tagged (`$undefined`, `$set`, `$map`, `$regexp`, `$error`,
//! `$bytes`, `$utf16` for strings with lone surrogates, `$lc` for LangChain objects).
//! The Rust side maps what it read to the same form: Python (whose reading this crate
//! follows) keeps JS's `lc: 2` records of `Set`, `Map`, `RegExp`, `Error`, `Uint8Array`
//! and `undefined` as the raw dicts, so those dicts are compared with what JS rebuilt
//! from them; LangChain messages become Python's message objects, whose fields must
//! carry every keyword JS read and Python's defaults (`None`, `false`, `{}`, `[]`,
//! the `type` tag) for the fields JS leaves out. JSON numbers compare as numbers (JS
//! has no int/float distinction); object keys compare as sets (JS reorders
//! integer-like keys); arrays and list order compare exactly.

use std::process::ExitCode;

use langgraph_codec::saver::postgres::PostgresSaver;
use langgraph_codec::saver::{CheckpointConfig, CheckpointSaver, CheckpointTuple, ListOptions};
use langgraph_codec::Value;
use serde_json::{json, Map, Value as J};

mod pg_common;
use pg_common::{view, Res};

fn utf16_units(points: impl Iterator<Item = u32>) -> Vec<J> {
    let mut out = Vec::new();
    for p in points {
        if p > 0xFFFF {
            let q = p - 0x1_0000;
            out.push(json!(0xD800 + (q >> 10)));
            out.push(json!(0xDC00 + (q & 0x3FF)));
        } else {
            out.push(json!(p));
        }
    }
    out
}

fn entry<'a>(m: &'a [(Value, Value)], key: &str) -> Option<&'a Value> {
    m.iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

/// The JS record a raw `lc: 2` dict stands for, in `canon()`'s tagged form.
fn js_record(m: &[(Value, Value)]) -> Option<J> {
    if entry(m, "lc")?.as_i64()? != 2 {
        return None;
    }
    let ty = entry(m, "type")?.as_str()?;
    if ty == "undefined" && m.len() == 2 {
        return Some(json!({"$undefined": true}));
    }
    if ty != "constructor" {
        return None;
    }
    let id = entry(m, "id")?.as_array()?;
    let args = entry(m, "args")?.as_array()?;
    let tag = match (id.first()?.as_str()?, args) {
        ("Set", [items]) => ("$set", canon(items)),
        ("Map", [pairs]) => ("$map", canon(pairs)),
        ("RegExp", [_, _]) => ("$regexp", J::Array(args.iter().map(canon).collect())),
        ("Error", [msg]) => ("$error", canon(msg)),
        ("Uint8Array", [bytes]) => ("$bytes", canon(bytes)),
        _ => return None,
    };
    Some(json!({ tag.0: tag.1 }))
}

/// What `PostgresSaver` read, in the form `canon()` gives JS's reads.
fn canon(v: &Value) -> J {
    match v {
        Value::Nil => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => i
            .as_i64()
            .map(J::from)
            .or_else(|| i.as_u64().map(J::from))
            .unwrap_or(J::Null),
        Value::F64(f) if f.is_finite() => json!(f),
        Value::F32(f) if f.is_finite() => json!(f64::from(*f)),
        Value::F64(f) => json!({"$float": format!("{f}")}),
        Value::F32(f) => json!({"$float": format!("{f}")}),
        Value::BigInt(b) => {
            json!({"$bigint": format!("{}{}", if b.is_negative() { "-" } else { "" }, b.digits())})
        }
        Value::Str(s) => J::String(s.as_str().to_owned()),
        Value::WStr(w) => json!({"$utf16": utf16_units(w.code_points())}),
        Value::Bin(b) => json!({"$bytes": b.iter().map(|x| json!(x)).collect::<Vec<_>>()}),
        Value::Array(items) => J::Array(items.iter().map(canon).collect()),
        Value::Map(m) => js_record(m).unwrap_or_else(|| {
            J::Object(
                m.iter()
                    .map(|(k, v)| {
                        (
                            k.as_str().map_or_else(|| format!("{k:?}"), str::to_owned),
                            canon(v),
                        )
                    })
                    .collect::<Map<_, _>>(),
            )
        }),
        Value::Object(o) => {
            json!({"$lc": [o.module.as_str(), o.name.as_str()], "kwargs": canon(&o.arg)})
        }
        other => json!({"$rust": format!("{other:?}")}),
    }
}

/// Python's default for a message field JS leaves out.
fn python_default(key: &str, v: &J) -> bool {
    match v {
        J::Null | J::Bool(false) => true,
        J::Array(a) => a.is_empty(),
        J::Object(o) => o.is_empty(),
        // The message's type tag; ToolMessage's `status` default.
        J::String(s) => key == "type" || (key == "status" && s == "success"),
        _ => false,
    }
}

fn num_eq(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
        (Some(x), Some(y), _, _) => x == y,
        (_, _, Some(x), Some(y)) => x == y,
        _ => a.as_f64() == b.as_f64(),
    }
}

/// Which keys only Rust may have in an object.
#[derive(Clone, Copy, PartialEq)]
enum Extra {
    /// None.
    No,
    /// At this level only, keys whose value is `null`: the checkpoint's optional fields
    /// JS does not write (`updated_channels`).
    TopNulls,
    /// At any depth inside a message: the `type` tags Python's validators add
    /// (`"tool_call"` on each tool call dict).
    TypeTags,
}

impl Extra {
    fn allows(self, k: &str, v: &J) -> bool {
        match self {
            Extra::No => false,
            Extra::TopNulls => v.is_null(),
            Extra::TypeTags => k == "type" && v.is_string(),
        }
    }

    /// What nested values allow.
    fn inner(self) -> Extra {
        match self {
            Extra::TopNulls => Extra::No,
            other => other,
        }
    }
}

/// `Ok` when Rust's read `rs` is JS's read `js`; else the first difference and where.
/// `extra` says which keys only Rust may have in an object at this level.
fn same(path: &str, js: &J, rs: &J, extra: Extra) -> Result<(), String> {
    let differ = || Err(format!("{path}: JS read {js}, Rust read {rs}"));
    match (js, rs) {
        (J::Number(a), J::Number(b)) => {
            if num_eq(a, b) {
                Ok(())
            } else {
                differ()
            }
        }
        (J::Array(a), J::Array(b)) => {
            if a.len() != b.len() {
                return Err(format!(
                    "{path}: JS read {} items, Rust {}: JS {js}, Rust {rs}",
                    a.len(),
                    b.len()
                ));
            }
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                same(&format!("{path}[{i}]"), x, y, extra.inner())?;
            }
            Ok(())
        }
        (J::Object(a), J::Object(b)) if a.contains_key("$lc") && b.contains_key("$lc") => {
            let class = |o: &Map<String, J>| o["$lc"].as_array().and_then(|id| id.last()).cloned();
            if class(a) != class(b) {
                return differ();
            }
            let (empty_js, empty_rs) = (Map::new(), Map::new());
            let ka = a["kwargs"].as_object().unwrap_or(&empty_js);
            let kb = b["kwargs"].as_object().unwrap_or(&empty_rs);
            for (k, v) in ka {
                let got = kb.get(k).ok_or_else(|| {
                    format!("{path}.{k}: JS read {v}, Rust has no such field ({rs})")
                })?;
                same(&format!("{path}.{k}"), v, got, Extra::TypeTags)?;
            }
            for (k, v) in kb.iter().filter(|(k, _)| !ka.contains_key(*k)) {
                if !python_default(k, v) {
                    return Err(format!("{path}.{k}: JS has no such field, Rust read {v}"));
                }
            }
            Ok(())
        }
        (J::Object(a), J::Object(b)) => {
            for (k, v) in a {
                match b.get(k) {
                    Some(got) => same(&format!("{path}.{k}"), v, got, extra.inner())?,
                    None => return Err(format!("{path}.{k}: JS read {v}, Rust has no such key")),
                }
            }
            for (k, v) in b.iter().filter(|(k, _)| !a.contains_key(*k)) {
                if !extra.allows(k, v) {
                    return Err(format!("{path}.{k}: JS has no such key, Rust read {v}"));
                }
            }
            Ok(())
        }
        _ if js == rs => Ok(()),
        _ => differ(),
    }
}

fn config_view(c: &CheckpointConfig) -> J {
    json!({
        "thread_id": c.thread_id,
        "checkpoint_ns": c.checkpoint_ns.clone().unwrap_or_default(),
        "checkpoint_id": c.checkpoint_id,
    })
}

fn check_tuple(label: &str, js: &J, t: Option<&CheckpointTuple>) -> Result<(), String> {
    let Some(t) = t else {
        return if js.is_null() {
            Ok(())
        } else {
            Err(format!("{label}: JS read a checkpoint, Rust none"))
        };
    };
    if js.is_null() {
        return Err(format!(
            "{label}: JS read nothing, Rust read {:?}",
            t.config
        ));
    }
    same(
        &format!("{label} config"),
        &js["config"],
        &config_view(&t.config),
        Extra::No,
    )?;
    same(
        &format!("{label} checkpoint"),
        &js["checkpoint"],
        &canon(&t.checkpoint.to_value()),
        Extra::TopNulls,
    )?;
    same(
        &format!("{label} metadata"),
        &js["metadata"],
        &canon(&t.metadata.to_value()),
        Extra::No,
    )?;
    let parent = t.parent_config.as_ref().map_or(J::Null, config_view);
    same(
        &format!("{label} parent_config"),
        &js["parent_config"],
        &parent,
        Extra::No,
    )?;
    let writes: Vec<J> = t
        .pending_writes
        .iter()
        .map(|w| json!([w.task_id, w.channel, canon(&w.value)]))
        .collect();
    same(
        &format!("{label} pending_writes"),
        &js["pending_writes"],
        &J::Array(writes),
        Extra::No,
    )
}

fn config_of(c: &J) -> Res<Option<CheckpointConfig>> {
    if c.is_null() {
        return Ok(None);
    }
    let mut cfg = CheckpointConfig::every_namespace(c["thread_id"].as_str().ok_or("thread_id")?);
    if let Some(ns) = c["checkpoint_ns"].as_str() {
        cfg = cfg.with_ns(ns);
    }
    if let Some(id) = c["checkpoint_id"].as_str() {
        cfg = cfg.with_checkpoint_id(id);
    }
    Ok(Some(cfg))
}

fn options_of(o: &J) -> Res<ListOptions> {
    let mut opts = ListOptions::new();
    if let Some(filter) = o["filter"].as_object() {
        for (k, v) in filter {
            opts = opts.filter(
                k.as_str(),
                Value::from(v.as_str().ok_or("string filters only")?),
            );
        }
    }
    if let Some(id) = o["before"]["configurable"]["checkpoint_id"].as_str() {
        opts = opts.before(CheckpointConfig::default().with_checkpoint_id(id));
    }
    if let Some(n) = o["limit"].as_u64() {
        opts = opts.limit(usize::try_from(n)?);
    }
    Ok(opts)
}

/// Every read JS made, made again with `PostgresSaver`: one list of tuples per read
/// (a `getTuple` gives none or one).
async fn rust_reads(s: &PostgresSaver, reads: &[J]) -> Res<Vec<Vec<CheckpointTuple>>> {
    let mut out = Vec::with_capacity(reads.len());
    for read in reads {
        let cfg = config_of(&read["config"])?;
        out.push(match read["kind"].as_str() {
            Some("get") => s
                .get_tuple(&cfg.ok_or("get without config")?)
                .await?
                .into_iter()
                .collect(),
            Some("list") => s.list(cfg.as_ref(), &options_of(&read["options"])?).await?,
            _ => return Err(format!("unknown read kind in {read}").into()),
        });
    }
    Ok(out)
}

fn js_reads(file: &str) -> Res<Vec<J>> {
    let doc: J = serde_json::from_str(&std::fs::read_to_string(file)?)?;
    Ok(doc["reads"].as_array().ok_or("no reads")?.clone())
}

fn saver(url: &str, schema: &str) -> Res<PostgresSaver> {
    Ok(PostgresSaver::builder_from_url(url)?
        .schema(schema)
        .build()?)
}

async fn check_js(url: &str, schema: &str, file: &str, rust_set_up: bool) -> Res<()> {
    let reads = js_reads(file)?;
    let s = saver(url, schema)?;
    match s.verify().await {
        Ok(()) if rust_set_up => {}
        Ok(()) => return Err("verify accepted the JS-only schema (migrations 0..4)".into()),
        Err(e) if rust_set_up => return Err(e.into()),
        Err(e) => println!("rust: verify refuses the JS-only schema: {e}"),
    }
    s.setup().await?;
    s.verify().await?;
    let (mut gets, mut listed, mut writes) = (0, 0, 0);
    for (read, got) in reads.iter().zip(rust_reads(&s, &reads).await?) {
        let label = read["label"].as_str().unwrap_or("?");
        writes += got.iter().map(|t| t.pending_writes.len()).sum::<usize>();
        if read["kind"] == "get" {
            check_tuple(label, &read["tuple"], got.first())?;
            gets += 1;
            continue;
        }
        let js = read["tuples"].as_array().ok_or("tuples")?;
        if js.len() != got.len() {
            return Err(format!(
                "{label}: JS listed {} checkpoints, Rust {}: JS {:?}, Rust {:?}",
                js.len(),
                got.len(),
                js.iter()
                    .map(|t| t["config"]["checkpoint_id"].to_string())
                    .collect::<Vec<_>>(),
                got.iter()
                    .map(|t| t.config.checkpoint_id.clone())
                    .collect::<Vec<_>>()
            )
            .into());
        }
        for (i, (j, t)) in js.iter().zip(&got).enumerate() {
            check_tuple(&format!("{label} #{i}"), j, Some(t))?;
        }
        listed += got.len();
    }
    println!("rust: {gets} getTuple reads and {listed} listed checkpoints ({writes} pending writes) read as LangGraphJS read them");
    Ok(())
}

/// What Python's packer writes for a value: ormsgpack's `OPT_REPLACE_SURROGATES`
/// (in JsonPlusSerializer's options) writes `?` for each lone surrogate, where this
/// crate's packer refuses the string (it has no msgpack form).
fn as_python_packs(v: &Value) -> Value {
    match v {
        Value::WStr(w) => Value::from(w.map_surrogates('?')),
        Value::Array(items) => Value::Array(items.iter().map(as_python_packs).collect()),
        Value::Map(m) => Value::Map(
            m.iter()
                .map(|(k, v)| (as_python_packs(k), as_python_packs(v)))
                .collect(),
        ),
        Value::Object(o) => {
            let mut o = o.clone();
            o.arg = as_python_packs(&o.arg);
            Value::Object(o)
        }
        other => other.clone(),
    }
}

/// The same reads against what Python's `PostgresSaver` read (`cross_language.py
/// reads`): byte-for-byte equal once both are packed with the JsonPlusSerializer.
async fn python(url: &str, schema: &str, file: &str, py_file: &str) -> Res<()> {
    let reads = js_reads(file)?;
    let doc: J = serde_json::from_str(&std::fs::read_to_string(py_file)?)?;
    let py = doc["reads"].as_array().ok_or("no Python reads")?;
    if py.len() != reads.len() {
        return Err("Python made a different number of reads".into());
    }
    let mut n = 0;
    for ((read, got), py) in reads
        .iter()
        .zip(rust_reads(&saver(url, schema)?, &reads).await?)
        .zip(py)
    {
        let label = read["label"].as_str().unwrap_or("?");
        let py = py.as_array().ok_or("Python read")?;
        if py.len() != got.len() {
            return Err(format!(
                "{label}: Python read {} tuples, Rust {}",
                py.len(),
                got.len()
            )
            .into());
        }
        for (i, (p, t)) in py.iter().zip(&got).enumerate() {
            pg_common::check(
                &format!("{label} #{i}"),
                p.as_str().ok_or("packed")?,
                &as_python_packs(&view(t)),
            )?;
            n += 1;
        }
    }
    println!("rust: the {n} tuples of the same reads are byte-for-byte what Python's PostgresSaver read of the JS rows");
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let res = match args.as_slice() {
        [cmd, url, schema] if cmd == "setup" => match saver(url, schema) {
            Ok(s) => s.setup().await.map_err(Into::into),
            Err(e) => Err(e),
        },
        [cmd, url, schema, file] if cmd == "check" => check_js(url, schema, file, false).await,
        [cmd, url, schema, file, flag] if cmd == "check" && flag == "--rust-set-up" => {
            check_js(url, schema, file, true).await
        }
        [cmd, url, schema, file, py] if cmd == "python" => python(url, schema, file, py).await,
        _ => Err("usage: postgres_js_rows setup URL SCHEMA | check URL SCHEMA JS_READS.json [--rust-set-up] | python URL SCHEMA JS_READS.json PY_READS.json".into()),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("postgres_js_rows: {e}");
            ExitCode::FAILURE
        }
    }
}
