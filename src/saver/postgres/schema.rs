//! Python's migrations (`checkpoint_migrations` v = 0..9), run under an advisory lock,
//! and the read-only `verify`.

use std::time::{Duration, Instant};

use tokio_postgres::types::Type;

use super::db::{db, Exec, StatementMode};
use super::error::PgFault;
use super::sql::Tables;
use crate::error::Error;
use crate::saver::{Result, SaverFault};

/// The last migration this saver knows (Python `langgraph-checkpoint-postgres` 3.2.0).
pub const LAST_MIGRATION: i32 = 9;

/// First key of the two-key advisory lock `setup` takes (`"lgcm"`); the second is
/// `hashtext(<schema>)`, so setups of different schemas do not wait on each other.
const LOCK_CLASS: i32 = 0x6c67_636d;

/// Python's `MIGRATIONS`, with the table names qualified by the configured schema.
/// Index `v` is migration `v`; 6–8 are `CREATE INDEX CONCURRENTLY` and must run outside
/// a transaction.
pub(crate) fn migrations(t: &Tables) -> [String; 10] {
    [
        format!(
            "CREATE TABLE IF NOT EXISTS {} (\n    v INTEGER PRIMARY KEY\n);",
            t.migrations
        ),
        format!(
            "CREATE TABLE IF NOT EXISTS {} (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type TEXT,
    checkpoint JSONB NOT NULL,
    metadata JSONB NOT NULL DEFAULT '{{}}',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);",
            t.checkpoints
        ),
        format!(
            "CREATE TABLE IF NOT EXISTS {} (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL,
    version TEXT NOT NULL,
    type TEXT NOT NULL,
    blob BYTEA,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);",
            t.blobs
        ),
        format!(
            "CREATE TABLE IF NOT EXISTS {} (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT,
    blob BYTEA NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);",
            t.writes
        ),
        format!(
            "ALTER TABLE {} ALTER COLUMN blob DROP not null;",
            t.blobs
        ),
        "SELECT 1;".to_owned(),
        format!(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoints_thread_id_idx ON {}(thread_id);",
            t.checkpoints
        ),
        format!(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_blobs_thread_id_idx ON {}(thread_id);",
            t.blobs
        ),
        format!(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_writes_thread_id_idx ON {}(thread_id);",
            t.writes
        ),
        format!(
            "ALTER TABLE {} ADD COLUMN IF NOT EXISTS task_path TEXT NOT NULL DEFAULT '';",
            t.writes
        ),
    ]
}

/// A column of [`LAYOUT`]: name, data type, whether it may be missing.
type LayoutColumn = (&'static str, &'static str, bool);

/// Every column Python's migrations give each table, at any migration, with its
/// `information_schema` data type, and whether a complete layout before the last
/// migration may lack it.
const LAYOUT: [(&str, &[LayoutColumn]); 4] = [
    ("checkpoint_migrations", &[("v", "integer", false)]),
    (
        "checkpoints",
        &[
            ("thread_id", "text", false),
            ("checkpoint_ns", "text", false),
            ("checkpoint_id", "text", false),
            ("parent_checkpoint_id", "text", false),
            ("type", "text", false),
            ("checkpoint", "jsonb", false),
            ("metadata", "jsonb", false),
        ],
    ),
    (
        "checkpoint_blobs",
        &[
            ("thread_id", "text", false),
            ("checkpoint_ns", "text", false),
            ("channel", "text", false),
            ("version", "text", false),
            ("type", "text", false),
            ("blob", "bytea", false),
        ],
    ),
    (
        "checkpoint_writes",
        &[
            ("thread_id", "text", false),
            ("checkpoint_ns", "text", false),
            ("checkpoint_id", "text", false),
            ("task_id", "text", false),
            ("idx", "integer", false),
            ("channel", "text", false),
            ("type", "text", false),
            ("blob", "bytea", false),
            // Migration 9.
            ("task_path", "text", true),
        ],
    ),
];

/// A column of one of the four tables: table, column, data type.
type Column = (String, String, String);

/// The schema's name (the configured one, else `current_schema()`), and the columns of
/// the four tables present in it.
async fn inspect<C: Exec + ?Sized>(
    client: &C,
    mode: StatementMode,
    schema: Option<&str>,
    operation: &'static str,
) -> Result<(String, Vec<Column>)> {
    let rows = client
        .rows(
            mode,
            "SELECT coalesce($1, current_schema())::text, table_name::text, column_name::text, \
             data_type::text \
             FROM (SELECT 1) one LEFT JOIN information_schema.columns \
             ON table_schema = coalesce($1, current_schema()) \
             AND table_name IN ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'checkpoint_migrations')",
            &[(&schema, Type::TEXT)],
        )
        .await
        .map_err(db(operation))?;
    let mut name = String::new();
    let mut columns = Vec::new();
    for row in rows {
        // NULL: no schema was configured and none of the search_path exists.
        name = row
            .try_get::<_, Option<String>>(0)
            .map_err(db(operation))?
            .ok_or_else(no_schema)?;
        let table: Option<String> = row.try_get(1).map_err(db(operation))?;
        let column: Option<String> = row.try_get(2).map_err(db(operation))?;
        let ty: Option<String> = row.try_get(3).map_err(db(operation))?;
        if let (Some(t), Some(c)) = (table, column) {
            columns.push((t, c, ty.unwrap_or_default()));
        }
    }
    Ok((name, columns))
}

/// The error for a connection whose `search_path` names no schema that exists, or none
/// the role may use (`current_schema()` is NULL): there is nowhere to read or create
/// the tables. Python's
/// saver fails there too, at its first `CREATE TABLE` ("no schema has been selected to
/// create in"); ours failed on a NULL lock key ("a Postgres value was `NULL`").
pub(crate) fn no_schema() -> Error {
    PgFault::Config {
        reason: "no schema of the connection's search_path exists, or none this role may use (current_schema() is NULL: Postgres passes over a schema the role has no USAGE on), so there is nowhere to read or create the tables: create the schema (CREATE SCHEMA name), GRANT USAGE ON SCHEMA name TO the role (or connect as the role your agents use), or name one that exists (the URL's options=-csearch_path%3Dname, or the role's or database's search_path)".to_owned(),
    }
    .into()
}

/// Python's deprecated `ShallowPostgresSaver` layout: `checkpoints` without
/// `checkpoint_id`, or `checkpoint_blobs` without `version`, and otherwise only
/// columns of our layout (anything else is [`refuse_foreign`]'s).
fn refuse_shallow(schema: &str, columns: &[Column]) -> Result<(), Error> {
    let shallow = |table: &str, key: &str| {
        let Some((_, ours)) = LAYOUT.iter().find(|(t, _)| *t == table) else {
            return false;
        };
        let mut of_table = columns.iter().filter(|(t, _, _)| t == table).peekable();
        of_table.peek().is_some()
            && of_table
                .clone()
                .all(|(_, c, _)| c != key && ours.iter().any(|(o, _, _)| o == c))
    };
    if shallow("checkpoints", "checkpoint_id") || shallow("checkpoint_blobs", "version") {
        return Err(PgFault::ShallowSchema {
            schema: schema.to_owned(),
        }
        .into());
    }
    Ok(())
}

/// Tables of these names with another layout (another application's `checkpoints`):
/// a column Python's migrations never create, one of another type, or one they create
/// missing. Refused with [`ErrorKind::Schema`](crate::ErrorKind::Schema) before `setup` writes anything.
fn refuse_foreign(schema: &str, columns: &[Column]) -> Result<()> {
    let refuse = |reason: String| -> Result<()> {
        Err(SaverFault::Schema {
            reason: format!(
                "{reason} in schema {schema}: these are not LangGraph's checkpoint tables \
                 (use another schema, or the saver's schema option)"
            ),
        }
        .into())
    };
    for (table, column, ty) in columns {
        let Some((_, wanted)) = LAYOUT.iter().find(|(t, _)| t == table) else {
            continue;
        };
        match wanted.iter().find(|(c, _, _)| c == column) {
            None => return refuse(format!("{table} has a column {column:?} ({ty})")),
            Some((_, want, _)) if want != ty => {
                return refuse(format!("{table}.{column} is {ty}, not {want}"))
            }
            Some(_) => {}
        }
    }
    for (table, wanted) in LAYOUT {
        if !columns.iter().any(|(t, _, _)| t == table) {
            continue;
        }
        for (column, _, optional) in wanted {
            if !optional && !columns.iter().any(|(t, c, _)| t == table && c == column) {
                return refuse(format!("{table} has no column {column:?}"));
            }
        }
    }
    Ok(())
}

async fn max_migration<C: Exec + ?Sized>(
    client: &C,
    mode: StatementMode,
    t: &Tables,
    operation: &'static str,
) -> Result<(Option<i32>, i64)> {
    let rows = client
        .rows(
            mode,
            &format!("SELECT max(v), count(*) FROM {}", t.migrations),
            &[],
        )
        .await
        .map_err(db(operation))?;
    let row = rows.first();
    let max = row
        .map(|r| r.try_get::<_, Option<i32>>(0))
        .transpose()
        .map_err(db(operation))?
        .flatten();
    let count = row
        .map(|r| r.try_get::<_, i64>(1))
        .transpose()
        .map_err(db(operation))?
        .unwrap_or(0);
    Ok((max, count))
}

fn refuse_too_new(schema: &str, max: Option<i32>) -> Result<(), Error> {
    match max {
        Some(found) if found > LAST_MIGRATION => Err(PgFault::SchemaTooNew {
            schema: schema.to_owned(),
            found,
            known: LAST_MIGRATION,
        }
        .into()),
        _ => Ok(()),
    }
}

/// `verify`: read-only checks that the schema is exactly Python's, fully migrated.
pub(crate) async fn verify<C: Exec + ?Sized>(
    client: &C,
    mode: StatementMode,
    schema: Option<&str>,
    t: &Tables,
) -> Result<()> {
    let (name, columns) = inspect(client, mode, schema, "verify").await?;
    refuse_shallow(&name, &columns)?;
    refuse_foreign(&name, &columns)?;
    if !columns.iter().any(|(t, _, _)| t == "checkpoint_migrations") {
        return Err(PgFault::SchemaMissing { schema: name }.into());
    }
    let (max, count) = max_migration(client, mode, t, "verify").await?;
    let found = max.unwrap_or(-1);
    if found > LAST_MIGRATION {
        return Err(PgFault::SchemaTooNew {
            schema: name,
            found,
            known: LAST_MIGRATION,
        }
        .into());
    }
    if found < LAST_MIGRATION || count != i64::from(LAST_MIGRATION) + 1 {
        return Err(PgFault::SchemaIncomplete {
            schema: name,
            reason: format!(
                "checkpoint_migrations holds {count} versions up to {found}, expected 0..={LAST_MIGRATION}"
            ),
        }
        .into());
    }
    for (table, wanted) in LAYOUT {
        for (column, _, _) in wanted {
            if !columns.iter().any(|(a, b, _)| a == table && b == column) {
                return Err(PgFault::SchemaIncomplete {
                    schema: name,
                    reason: format!("{table}.{column} is missing"),
                }
                .into());
            }
        }
    }
    Ok(())
}

/// `setup`: Python's migrations, each run once, under a session advisory lock so that
/// replicas can start together. The lock is polled (`pg_try_advisory_lock`) rather than
/// waited on, so a replica waiting for it holds no snapshot that the
/// `CREATE INDEX CONCURRENTLY` migrations of the lock holder would wait for.
pub(crate) async fn setup(
    client: &deadpool_postgres::ClientWrapper,
    mode: StatementMode,
    schema: Option<&str>,
    t: &Tables,
    lock_timeout: Duration,
    whole: Whole,
) -> Result<Vec<i32>> {
    let lock_sql = format!(
        "SELECT pg_try_advisory_lock({LOCK_CLASS}, hashtext(coalesce($1, current_schema())::text))"
    );
    let started = Instant::now();
    loop {
        let rows = client
            .rows(mode, &lock_sql, &[(&schema, Type::TEXT)])
            .await
            .map_err(db("setup"))?;
        // NULL: the lock's key is, no schema of the search_path existing.
        let got = rows
            .first()
            .map(|r| r.try_get::<_, Option<bool>>(0))
            .transpose()
            .map_err(db("setup"))?
            .unwrap_or(Some(false))
            .ok_or_else(no_schema)?;
        if got {
            break;
        }
        if started.elapsed() >= lock_timeout {
            return Err(PgFault::LockTimeout {
                waited_ms: started.elapsed().as_millis(),
            }
            .into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let result = migrate(client, mode, schema, t, whole).await;
    let unlock = client
        .rows(
            mode,
            &format!("SELECT pg_advisory_unlock({LOCK_CLASS}, hashtext(coalesce($1, current_schema())::text))"),
            &[(&schema, Type::TEXT)],
        )
        .await
        .map_err(db("setup"));
    let ran = result?;
    unlock?;
    Ok(ran)
}

/// How [`setup`] creates the tables in a schema that has none of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Whole {
    /// As Python does: migration by migration, the indexes `CONCURRENTLY`.
    Stepwise,
    /// Every migration in one transaction, each version recorded in it: a kill leaves
    /// no table or all of them. The indexes are built with plain `CREATE INDEX` (on
    /// empty tables the same index, at once; `CONCURRENTLY` cannot run in a
    /// transaction).
    OneTransaction,
}

async fn migrate(
    client: &deadpool_postgres::ClientWrapper,
    mode: StatementMode,
    schema: Option<&str>,
    t: &Tables,
    whole: Whole,
) -> Result<Vec<i32>> {
    // Everything that refuses the tables is checked before anything is written.
    let (name, columns) = inspect(client, mode, schema, "setup").await?;
    refuse_shallow(&name, &columns)?;
    refuse_foreign(&name, &columns)?;
    if columns.iter().any(|(t, _, _)| t == "checkpoint_migrations") {
        let (max, _) = max_migration(client, mode, t, "setup").await?;
        refuse_too_new(&name, max)?;
    }
    if let Some(s) = schema {
        client
            .batch_execute(&format!(
                "CREATE SCHEMA IF NOT EXISTS {}",
                super::sql::quote_ident(s)
            ))
            .await
            .map_err(db("setup"))?;
    }
    let all = migrations(t);
    if whole == Whole::OneTransaction && columns.is_empty() {
        let mut sql = String::from("BEGIN;\n");
        for m in &all {
            sql.push_str(&m.replace("CREATE INDEX CONCURRENTLY", "CREATE INDEX"));
            sql.push('\n');
        }
        sql.push_str(&format!(
            "INSERT INTO {} (v) SELECT generate_series(0, {LAST_MIGRATION}) ON CONFLICT (v) DO NOTHING;\nCOMMIT;",
            t.migrations
        ));
        if let Err(e) = client.batch_execute(&sql).await {
            let _ = client.batch_execute("ROLLBACK").await;
            return Err(db("setup")(e));
        }
        return Ok((0..=LAST_MIGRATION).collect());
    }
    if let Some(first) = all.first() {
        client.batch_execute(first).await.map_err(db("setup"))?;
    }
    let (max, _) = max_migration(client, mode, t, "setup").await?;
    refuse_too_new(&name, max)?;
    let current = max.unwrap_or(-1);
    let mut ran = Vec::new();
    for (v, sql) in all
        .iter()
        .enumerate()
        .skip(usize::try_from(current + 1).unwrap_or(0))
    {
        // Python's setup() takes no lock: one running meanwhile may record the same
        // version first (every migration is idempotent); that is not a failure here.
        let record = format!(
            "INSERT INTO {} (v) VALUES ({v}) ON CONFLICT (v) DO NOTHING",
            t.migrations
        );
        if sql.contains("CONCURRENTLY") {
            // Cannot run inside a transaction block: run it, then record it. A crash in
            // between leaves it unrecorded; `IF NOT EXISTS` makes the rerun a no-op.
            // A crash (or a killed session) inside it leaves the index invalid, which
            // `IF NOT EXISTS` would keep: drop it first.
            drop_invalid_index(client, mode, schema, sql).await?;
            client.batch_execute(sql).await.map_err(db("setup"))?;
            client.batch_execute(&record).await.map_err(db("setup"))?;
        } else {
            let done = client
                .batch_execute(&format!("BEGIN;\n{sql}\n{record};\nCOMMIT;"))
                .await;
            if let Err(e) = done {
                // Leave no aborted transaction on the pooled connection.
                let _ = client.batch_execute("ROLLBACK").await;
                return Err(db("setup")(e));
            }
        }
        ran.push(i32::try_from(v).unwrap_or(i32::MAX));
    }
    Ok(ran)
}

/// Drops the index a `CREATE INDEX CONCURRENTLY IF NOT EXISTS <name> ON …` migration
/// creates when it exists but is invalid (left by an interrupted run) — unless it is
/// being built right now (another process's setup, e.g. Python's, which takes no lock).
async fn drop_invalid_index(
    client: &deadpool_postgres::ClientWrapper,
    mode: StatementMode,
    schema: Option<&str>,
    migration: &str,
) -> Result<()> {
    let mut words = migration.split_whitespace();
    let Some(name) = words.by_ref().skip_while(|w| *w != "EXISTS").nth(1) else {
        return Ok(());
    };
    let rows = client
        .rows(
            mode,
            "SELECT format('%I.%I', n.nspname, c.relname) FROM pg_index i \
             JOIN pg_class c ON c.oid = i.indexrelid \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.relname = $1 AND n.nspname = coalesce($2, current_schema()) \
             AND NOT i.indisvalid \
             AND NOT EXISTS (SELECT 1 FROM pg_stat_progress_create_index p \
                 WHERE p.index_relid = i.indexrelid)",
            &[(&name, Type::TEXT), (&schema, Type::TEXT)],
        )
        .await
        .map_err(db("setup"))?;
    for row in rows {
        let qualified: String = row.try_get(0).map_err(db("setup"))?;
        client
            .batch_execute(&format!("DROP INDEX CONCURRENTLY IF EXISTS {qualified}"))
            .await
            .map_err(db("setup"))?;
    }
    Ok(())
}
