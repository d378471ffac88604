//! The SQL the saver runs, with table names qualified by the configured schema.

use super::error::PgFault;
use crate::error::Error;

/// `"name"`, with embedded quotes doubled.
pub(crate) fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Checks a schema name: a plain identifier of at most 63 bytes.
pub(crate) fn check_schema_name(name: &str) -> Result<(), Error> {
    let bad = |reason| -> Error {
        PgFault::InvalidSchemaName {
            name: name.to_owned(),
            reason,
        }
        .into()
    };
    let mut chars = name.chars();
    match chars.next() {
        None => return Err(bad("empty")),
        Some(c) if !(c.is_ascii_alphabetic() || c == '_') => {
            return Err(bad("must start with a letter or '_'"))
        }
        _ => {}
    }
    if !chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
        return Err(bad("only ASCII letters, digits, '_' and '$' are allowed"));
    }
    if name.len() > 63 {
        return Err(bad("longer than 63 bytes"));
    }
    Ok(())
}

/// The four table names, qualified when a schema is configured.
#[derive(Clone, Debug)]
pub(crate) struct Tables {
    pub(crate) migrations: String,
    pub(crate) checkpoints: String,
    pub(crate) blobs: String,
    pub(crate) writes: String,
}

impl Tables {
    pub(crate) fn new(schema: Option<&str>) -> Self {
        let q = |table: &str| match schema {
            Some(s) => format!("{}.{table}", quote_ident(s)),
            None => table.to_owned(),
        };
        Tables {
            migrations: q("checkpoint_migrations"),
            checkpoints: q("checkpoints"),
            blobs: q("checkpoint_blobs"),
            writes: q("checkpoint_writes"),
        }
    }
}

/// Where a page's blobs come from (see [`Statements::select`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PageBlobs {
    /// In the same statement, by primary-key lookups: one round trip.
    Inline,
    /// From a second statement, each shared blob once.
    Separate,
}

impl PageBlobs {
    /// The largest page read with [`PageBlobs::Inline`]: 50 rows × the planner's 100
    /// guessed channels stays below `jit_above_cost` (100,000) at about 8 per lookup.
    pub(crate) const INLINE_MAX_ROWS: usize = 50;

    /// Inline for a page known to hold at most [`INLINE_MAX_ROWS`](Self::INLINE_MAX_ROWS).
    pub(crate) fn for_page(max_rows: Option<usize>) -> Self {
        match max_rows {
            Some(n) if n <= Self::INLINE_MAX_ROWS => PageBlobs::Inline,
            _ => PageBlobs::Separate,
        }
    }
}

/// Asks for lz4 TOAST compression for the rest of the statement's (implicit)
/// transaction. A statement that selects its rows `FROM z` evaluates it before it
/// writes its first row (TOAST reads the setting when it compresses a value).
const LZ4_CTE: &str =
    "z AS MATERIALIZED (SELECT set_config('default_toast_compression', 'lz4', true))";

/// Whether the server can compress with lz4 (PostgreSQL 14+ built with lz4) and its
/// configuration left the choice open (`default_toast_compression` at its default:
/// a DBA's, database's, role's or connection's choice is kept). One row, one `bool`.
pub(crate) const LZ4_USABLE: &str =
    "SELECT coalesce(bool_or('lz4' = ANY(enumvals) AND source = 'default'), false)
FROM pg_settings WHERE name = 'default_toast_compression'";

/// Whether the blobs table `$1` (as the statements name it) orders its `version`
/// column bytewise, so that a range of versions is every version between its bounds
/// byte for byte ([`Statements::blob_ranges`]): its collation is `C`, `POSIX` or
/// `ucs_basic`, or the database's default and that is libc's `C`, `POSIX` or
/// `C.UTF-8` (code point order, which for UTF-8 is byte order). Any other collation
/// (glibc's `en_US`, ICU) may order versions otherwise. One row, one `bool`; none if
/// the table is not there.
pub(crate) const VERSIONS_BYTEWISE: &str = "SELECT CASE
    WHEN c.collname IN ('C', 'POSIX', 'ucs_basic') THEN true
    WHEN c.collname = 'default' THEN d.datcollate IN ('C', 'POSIX', 'C.UTF-8', 'C.utf8')
        AND coalesce(to_jsonb(d) ->> 'datlocprovider', 'c') = 'c'
    ELSE false END
FROM pg_attribute a JOIN pg_collation c ON c.oid = a.attcollation, pg_database d
WHERE a.attrelid = to_regclass($1) AND a.attname = 'version' AND d.datname = current_database()";

/// A write statement as is and with [`LZ4_CTE`]: values large enough for TOAST (over
/// about 2 kB, as most blobs are) are compressed with lz4 instead of the default pglz,
/// which costs several times the CPU (a 10 kB 20-message blob: about 50 µs of the
/// server's time with pglz, a few with lz4). Readers, Python's saver included, see
/// the same bytes: decompression is the server's.
#[derive(Clone, Debug)]
pub(crate) struct WriteSql {
    pub(crate) plain: String,
    pub(crate) lz4: String,
}

impl WriteSql {
    fn new(build: impl Fn(bool) -> String) -> Self {
        WriteSql {
            plain: build(false),
            lz4: build(true),
        }
    }

    pub(crate) fn pick(&self, lz4: bool) -> &str {
        if lz4 {
            &self.lz4
        } else {
            &self.plain
        }
    }
}

/// Statements built once per saver.
#[derive(Clone, Debug)]
pub(crate) struct Statements {
    pub(crate) tables: Tables,
    /// The task path expression of the reads ([`TASK_PATH_COLUMN`], or `''` for
    /// tables before migration 9).
    task_path: &'static str,
    /// The relations the reads select checkpoints and blobs from: the tables, or
    /// today's columns over the shallow saver's tables ([`Statements::shallow_reads`]).
    read_checkpoints: String,
    read_blobs: String,
    /// `$1..$6`: thread, ns, id, parent, checkpoint, metadata (text → jsonb);
    /// `$7..$10`: blob channels, versions, types, bytes.
    pub(crate) put: WriteSql,
    /// `$1..$5`: thread, ns, checkpoint id, task id, task path; `$6..$9`: idx, channel,
    /// type, blob arrays. Upsert (all writes special) and insert-or-ignore.
    pub(crate) put_writes_upsert: WriteSql,
    pub(crate) put_writes_ignore: WriteSql,
    /// `$1`: thread.
    pub(crate) delete_thread: String,
    /// `$1..$3`: parallel arrays of (thread, ns, parent id).
    pub(crate) pending_sends: String,
    /// `get_tuple`'s two statements, made once: `$1..$3` thread, ns, checkpoint id;
    /// `$1..$2` thread, ns for the latest checkpoint. (Formatting a ~1.3 kB select on
    /// every call cost about 5,600 instructions, 3% of a `get_tuple`.)
    pub(crate) get_tuple_by_id: String,
    pub(crate) get_tuple_latest: String,
    /// `$1..$4`: parallel arrays of (thread, ns, channel, version): the blobs a page of
    /// checkpoints references, each shared blob read once. (Looked up by primary key
    /// from keys the client sends: `jsonb_each_text` in the query made the planner
    /// expect 100 channels per checkpoint, pick hash joins and switch JIT on.)
    pub(crate) blobs: String,
    /// `$1..$6`: parallel arrays of (thread, ns, channel, lowest version, highest
    /// version, count): per range, its first `count` blob rows in version order, as
    /// `blobs` gives them. For a page's blobs when versions order bytewise
    /// ([`VERSIONS_BYTEWISE`]): an index range scan per channel of a thread instead of
    /// a lookup per key. A page of 256 checkpoints of the 100,000-checkpoint bench
    /// store asks for 768 keys, of which 256 are stored (the others are values kept
    /// inline); as 78 ranges the statement took 3.3–4.1 ms to its last row, by key
    /// 8.9–10.9 ms (psql, 2026-11-29). `None` for the shallow saver's tables, whose
    /// versions are not a column.
    pub(crate) blob_ranges: Option<String>,
    /// `$1..$4`: parallel arrays of (thread, ns, channel, version): the 1-based
    /// positions of those keys the blobs table holds.
    // Read by the store copy only (both backends).
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) blobs_present: String,
    /// `COPY` of blob rows (thread, ns, channel, version, type, blob) and of checkpoint
    /// rows (thread, ns, id, parent, checkpoint, metadata), binary format.
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) copy_blobs: String,
    /// Whether the blobs table has a trigger of its own (one that may change a row as
    /// it goes in), read in the transaction of a `COPY` into it, after it.
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) blob_triggers: String,
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) copy_checkpoints: String,
    /// `$1..$4`: parallel arrays of (thread, ns, lowest id, highest id): the rows in
    /// those ranges (thread, ns, id, parent, checkpoint and metadata as JSON text).
    /// Ranges, not keys: an index range scan per thread instead of a lookup per
    /// checkpoint (a third of the server's time, measured 2026-11-29).
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) stored_checkpoints: String,
    /// `$1..$4`: as `stored_checkpoints`: the write rows in those ranges (thread, ns,
    /// id, task id, task path, index, channel, type, bytes).
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) stored_writes: String,
    /// `$1..$4`: as `stored_writes`: how many write rows those ranges hold, and whether
    /// the writes table has a trigger of its own.
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) writes_counted: String,
    /// `$1..$5`: parallel arrays of (thread, ns, channel, lowest version, highest
    /// version): the blob rows in those ranges (thread, ns, channel, version, type,
    /// bytes).
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) stored_blobs: String,
}

/// Orders writes as Python's `writes_sort_key`: `(task_path, task_id, idx)`, strings by
/// code point (`COLLATE "C"` on UTF-8). `path` is the task path column's expression.
fn writes_order(path: &str) -> String {
    format!(r#"{path} COLLATE "C", task_id COLLATE "C", idx"#)
}

/// The task path of a write as the reads select it: the column, or — in tables from
/// before Python's migration 9 (`checkpoint_writes` without `task_path`) — the `''`
/// that migration's `DEFAULT ''` gives every existing row.
const TASK_PATH_COLUMN: &str = "task_path";
const TASK_PATH_BEFORE_MIGRATION_9: &str = "''::text";

impl Statements {
    pub(crate) fn new(schema: Option<&str>) -> Self {
        Self::reading(schema, true, false)
    }

    /// As [`new`](Self::new); with `task_path` false the reads (`get_tuple`, `list`,
    /// pending sends) select `''` for the task path, for tables Python's migration 9
    /// has not reached (the writes still name the column and fail on such tables).
    /// With `shallow` the reads select
    /// from Python's `ShallowPostgresSaver` tables (one checkpoint per thread and
    /// namespace, its id only in the JSONB; blobs keyed by channel without a version)
    /// viewed as today's: `checkpoint_id` is the JSONB's `id`, the parent is NULL (the
    /// shallow saver keeps none and returns none), and each blob's version is the one
    /// its checkpoint's `channel_versions` gives the channel (the shallow reader joins
    /// blobs by channel alone, to that checkpoint's channels; a blob of a channel the
    /// checkpoint does not list is read by neither). The writes table is the same.
    pub(crate) fn reading(schema: Option<&str>, task_path: bool, shallow: bool) -> Self {
        let t = Tables::new(schema);
        let (read_checkpoints, read_blobs) = if shallow {
            Self::shallow_reads(&t)
        } else {
            (t.checkpoints.clone(), t.blobs.clone())
        };
        let path = if task_path {
            TASK_PATH_COLUMN
        } else {
            TASK_PATH_BEFORE_MIGRATION_9
        };
        let put = WriteSql::new(|lz4| {
            let (with, from_z) = if lz4 {
                (format!("WITH {LZ4_CTE},\n"), "z, ")
            } else {
                ("WITH ".to_owned(), "")
            };
            let row = if lz4 {
                "SELECT $1, $2, $3, $4, $5::jsonb, $6::jsonb FROM z"
            } else {
                "VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb)"
            };
            format!(
                "{with}b AS (
    INSERT INTO {blobs} (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT $1, $2, u.channel, u.version, u.type, u.blob
    FROM {from_z}unnest($7::text[], $8::text[], $9::text[], $10::bytea[]) AS u(channel, version, type, blob)
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
)
INSERT INTO {cp} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
{row}
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata",
                blobs = t.blobs,
                cp = t.checkpoints
            )
        });
        let writes_insert = |lz4: bool, on_conflict: &str| {
            let (with, from_z) = if lz4 {
                (format!("WITH {LZ4_CTE}\n"), "z, ")
            } else {
                (String::new(), "")
            };
            format!(
                "{with}INSERT INTO {w} (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT $1, $2, $3, $4, $5, u.idx, u.channel, u.type, u.blob
FROM {from_z}unnest($6::int4[], $7::text[], $8::text[], $9::bytea[]) AS u(idx, channel, type, blob)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) {on_conflict}",
                w = t.writes
            )
        };
        let delete_thread = format!(
            "WITH c AS (DELETE FROM {cp} WHERE thread_id = $1),
b AS (DELETE FROM {blobs} WHERE thread_id = $1)
DELETE FROM {w} WHERE thread_id = $1",
            cp = t.checkpoints,
            blobs = t.blobs,
            w = t.writes
        );
        // The shallow saver reads every `__pregel_tasks` write of the namespace (the
        // parent id `$3` is empty there: it keeps none), keyed by an empty id.
        let pending_sends = if shallow {
            format!(
                "SELECT thread_id, checkpoint_ns, ''::text,
    array_agg(type ORDER BY {order}), array_agg(blob ORDER BY {order})
FROM {w}
WHERE (thread_id, checkpoint_ns) IN (
    SELECT t, n FROM unnest($1::text[], $2::text[], $3::text[]) AS u(t, n, p))
AND channel = '__pregel_tasks'
GROUP BY thread_id, checkpoint_ns",
                w = t.writes,
                order = writes_order(path),
            )
        } else {
            format!(
                "SELECT thread_id, checkpoint_ns, checkpoint_id,
    array_agg(type ORDER BY {order}), array_agg(blob ORDER BY {order})
FROM {w}
WHERE (thread_id, checkpoint_ns, checkpoint_id) IN (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))
AND channel = '__pregel_tasks'
GROUP BY thread_id, checkpoint_ns, checkpoint_id",
                w = t.writes,
                order = writes_order(path),
            )
        };
        let blobs = format!(
            "SELECT thread_id, checkpoint_ns, channel, version, type, blob FROM {b} b
WHERE (thread_id, checkpoint_ns, channel, version) IN (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]))",
            b = read_blobs
        );
        let blob_ranges = (!shallow).then(|| {
            format!(
                "SELECT b.thread_id, b.checkpoint_ns, b.channel, b.version, b.type, b.blob
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int8[]) AS r(t, ns, ch, lo, hi, n)
CROSS JOIN LATERAL (
    SELECT * FROM {b} b
    WHERE b.thread_id = r.t AND b.checkpoint_ns = r.ns AND b.channel = r.ch AND b.version BETWEEN r.lo AND r.hi
    ORDER BY b.version LIMIT r.n) b",
                b = t.blobs
            )
        });
        let blobs_present = format!(
            "SELECT k.n FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS k(t, ns, ch, v, n)
WHERE EXISTS (SELECT 1 FROM {b} b WHERE b.thread_id = k.t AND b.checkpoint_ns = k.ns AND b.channel = k.ch AND b.version = k.v)",
            b = t.blobs
        );
        let copy_blobs = format!(
            "COPY {} (thread_id, checkpoint_ns, channel, version, type, blob) FROM STDIN (FORMAT binary)",
            t.blobs
        );
        // Whether `table` has a trigger of its own (one that may change a row as it
        // goes in): a condition on the catalog, for a copy's checks.
        let has_trigger = |table: &str| {
            format!(
                "EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass('{}') AND NOT tgisinternal)",
                table.replace('\'', "''")
            )
        };
        let blob_triggers = format!("SELECT {}", has_trigger(&t.blobs));
        let copy_checkpoints = format!(
            "COPY {} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) FROM STDIN (FORMAT binary)",
            t.checkpoints
        );
        let ranges = "unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS r(t, ns, lo, hi)";
        let stored_checkpoints = format!(
            "SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint::text, c.metadata::text
FROM {ranges} JOIN {c} c ON c.thread_id = r.t AND c.checkpoint_ns = r.ns AND c.checkpoint_id BETWEEN r.lo AND r.hi",
            c = t.checkpoints
        );
        let stored_writes = format!(
            "SELECT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, w.type, w.blob
FROM {ranges} JOIN {w} w ON w.thread_id = r.t AND w.checkpoint_ns = r.ns AND w.checkpoint_id BETWEEN r.lo AND r.hi",
            w = t.writes
        );
        let writes_counted = format!(
            "SELECT (SELECT count(*) FROM {ranges} JOIN {w} w ON w.thread_id = r.t AND w.checkpoint_ns = r.ns
    AND w.checkpoint_id BETWEEN r.lo AND r.hi),
  {trigger}",
            w = t.writes,
            trigger = has_trigger(&t.writes)
        );
        let stored_blobs = format!(
            "SELECT b.thread_id, b.checkpoint_ns, b.channel, b.version, b.type, b.blob
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS r(t, ns, ch, lo, hi)
JOIN {b} b ON b.thread_id = r.t AND b.checkpoint_ns = r.ns AND b.channel = r.ch AND b.version BETWEEN r.lo AND r.hi",
            b = read_blobs
        );
        let mut statements = Statements {
            blobs,
            blob_ranges,
            blobs_present,
            copy_blobs,
            blob_triggers,
            copy_checkpoints,
            stored_checkpoints,
            stored_writes,
            writes_counted,
            stored_blobs,
            put,
            put_writes_upsert: WriteSql::new(|lz4| {
                writes_insert(
                    lz4,
                    "DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob",
                )
            }),
            put_writes_ignore: WriteSql::new(|lz4| writes_insert(lz4, "DO NOTHING")),
            delete_thread,
            pending_sends,
            get_tuple_by_id: String::new(),
            get_tuple_latest: String::new(),
            tables: t,
            task_path: path,
            read_checkpoints,
            read_blobs,
        };
        statements.get_tuple_by_id = statements.select(
            "WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3",
            None,
            PageBlobs::Inline,
        );
        statements.get_tuple_latest = statements.select(
            "WHERE thread_id = $1 AND checkpoint_ns = $2",
            Some("1"),
            PageBlobs::Inline,
        );
        statements
    }

    /// The shallow saver's tables as today's columns: `(checkpoints, blobs)`, each a
    /// parenthesized `SELECT` (callers alias it).
    fn shallow_reads(t: &Tables) -> (String, String) {
        (
            format!(
                "(SELECT thread_id, checkpoint_ns, checkpoint ->> 'id' AS checkpoint_id,
        NULL::text AS parent_checkpoint_id, checkpoint, metadata FROM {cp})",
                cp = t.checkpoints
            ),
            format!(
                "(SELECT sb.thread_id, sb.checkpoint_ns, sb.channel,
        sc.checkpoint -> 'channel_versions' ->> sb.channel AS version, sb.type, sb.blob
    FROM {b} sb JOIN {cp} sc
        ON sc.thread_id = sb.thread_id AND sc.checkpoint_ns = sb.checkpoint_ns
    WHERE sc.checkpoint -> 'channel_versions' ? sb.channel)",
                b = t.blobs,
                cp = t.checkpoints
            ),
        )
    }

    /// Python's `SELECT_SQL`, set-based: the page of checkpoint rows (`where` over
    /// table alias-free columns, newest first, `limit` if given), each with its writes
    /// aggregated into parallel arrays, in no particular order: as Python does, the
    /// reader sorts them by `(task_path, task_id, idx)`. (An `ORDER BY` in each of the
    /// six aggregates set up six sorts per checkpoint row even when it had no writes:
    /// EXPLAIN ANALYZE measured 28 µs of a `get_tuple`'s 112 µs and 321 µs of a
    /// `list(limit=10)`'s 548 µs.)
    ///
    /// Columns: 0 thread, 1 ns, 2 id, 3 parent, 4 checkpoint text, 5 metadata text,
    /// 6..11 write task_id/channel/type/blob/task_path/idx.
    ///
    /// Blobs: with [`PageBlobs::Separate`] they come from [`blobs`](Self::blobs), once
    /// per page (a second round trip). With [`PageBlobs::Inline`] the row carries them
    /// too, columns 12..15 channel/version/type/blob: for each `channel_versions` entry
    /// one primary-key lookup (the `OFFSET 0` fence keeps it a parameterized index scan,
    /// never a hash join over the thread's blobs). Meant for small pages: the planner
    /// guesses 100 channels per checkpoint, so a large page's estimated cost would
    /// switch JIT compilation on.
    pub(crate) fn select(
        &self,
        where_clause: &str,
        limit: Option<&str>,
        blobs: PageBlobs,
    ) -> String {
        self.select_rows(where_clause, limit, blobs, true)
    }

    /// [`select`](Self::select), with the pending writes (columns 6..11) only when
    /// `writes`: without them those columns are NULL and the tuples read have none. A
    /// store copy reads a source's writes as rows, apart: aggregating and decoding them
    /// here too took about a fifth of the server's and the reader's time
    /// (2026-11-29, 100,000 checkpoints Postgres → SQLite).
    pub(crate) fn select_rows(
        &self,
        where_clause: &str,
        limit: Option<&str>,
        blobs: PageBlobs,
        writes: bool,
    ) -> String {
        let t = &self.tables;
        let limit = limit.map(|l| format!(" LIMIT {l}")).unwrap_or_default();
        let (blob_cols, blob_join) = match blobs {
            PageBlobs::Separate => (String::new(), String::new()),
            PageBlobs::Inline => (
                ",\n    bl.channels, bl.versions, bl.types, bl.blobs".to_owned(),
                format!(
                    "
LEFT JOIN LATERAL (
    SELECT array_agg(b.channel) AS channels, array_agg(b.version) AS versions,
        array_agg(b.type) AS types, array_agg(b.blob) AS blobs
    FROM jsonb_each_text(CASE WHEN jsonb_typeof(c.checkpoint -> 'channel_versions') = 'object'
        THEN c.checkpoint -> 'channel_versions' END) v
    CROSS JOIN LATERAL (
        SELECT channel, version, type, blob FROM {b} b
        WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
            AND b.channel = v.key AND b.version = v.value
        OFFSET 0
    ) b
) bl ON true",
                    b = self.read_blobs
                ),
            ),
        };
        let writes_join = if writes {
            format!(
                "LEFT JOIN LATERAL (
    SELECT array_agg(task_id) AS task_ids, array_agg(channel) AS channels,
        array_agg(type) AS types, array_agg(blob) AS blobs,
        array_agg({path}) AS task_paths, array_agg(idx) AS idxs
    FROM {w} cw
    WHERE cw.thread_id = c.thread_id AND cw.checkpoint_ns = c.checkpoint_ns
        AND cw.checkpoint_id = c.checkpoint_id
) w ON true",
                w = t.writes,
                path = self.task_path,
            )
        } else {
            "CROSS JOIN (
    SELECT NULL::text[] AS task_ids, NULL::text[] AS channels, NULL::text[] AS types,
        NULL::bytea[] AS blobs, NULL::text[] AS task_paths, NULL::int[] AS idxs
) w"
            .to_owned()
        };
        format!(
            "SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id,
    c.checkpoint::text, c.metadata::text,
    w.task_ids, w.channels, w.types, w.blobs, w.task_paths, w.idxs{blob_cols}
FROM (
    SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata
    FROM {cp} cp {where_clause}
    ORDER BY checkpoint_id DESC{limit}
) c
{writes_join}{blob_join}
ORDER BY c.checkpoint_id DESC",
            cp = self.read_checkpoints,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_are_plain_identifiers() {
        assert!(check_schema_name("lg_1").is_ok());
        for bad in ["", "1x", "a-b", "a\"b", "a.b", &"x".repeat(64)] {
            assert!(check_schema_name(bad).is_err(), "{bad:?}");
        }
        assert_eq!(Tables::new(Some("s")).blobs, "\"s\".checkpoint_blobs");
        assert_eq!(Tables::new(None).writes, "checkpoint_writes");
    }

    #[test]
    fn only_small_pages_read_their_blobs_inline() {
        assert_eq!(PageBlobs::for_page(Some(1)), PageBlobs::Inline);
        assert_eq!(PageBlobs::for_page(Some(50)), PageBlobs::Inline);
        assert_eq!(PageBlobs::for_page(Some(51)), PageBlobs::Separate);
        assert_eq!(PageBlobs::for_page(None), PageBlobs::Separate);
        let s = Statements::new(Some("s"));
        let inline = s.select("WHERE thread_id = $1", Some("1"), PageBlobs::Inline);
        assert!(
            inline.contains("bl.blobs") && inline.contains("OFFSET 0"),
            "{inline}"
        );
        let separate = s.select("WHERE thread_id = $1", None, PageBlobs::Separate);
        assert!(!separate.contains("checkpoint_blobs"), "{separate}");
    }
}
