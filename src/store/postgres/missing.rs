//! Why a Postgres database holds no store this command can use, said from the catalog:
//! the schemas of it that do hold the saver's tables, or a role that may not read them.

use tokio_postgres::Client;

use super::super::error::StoreFault;
use crate::error::Error;
use crate::saver::layout::StoreLayout;

/// Schemas [`not_here`] names at most.
const SCHEMAS_NAMED: i64 = 10;

/// A database whose schema (`schema`, the connection's `current_schema()`) holds none of
/// the savers' tables, as [`StoreFault::NotAStore`], with what to do: the schemas of
/// the same database that hold a `checkpoints` table (a URL without the
/// `search_path` its agents use finds nothing in `public`), or, when none does, to
/// check the database's name. Only the catalog is read.
pub(crate) async fn not_here(client: &Client, schema: &str, location: &str) -> Error {
    // The catalog itself (`pg_class`), not `information_schema`, which shows a role only
    // the tables it holds a privilege on: to a role without one the store looked like
    // an empty database. The first schemas by name, and how many: a database of a
    // schema per tenant may hold thousands (a message of each was as long as they were).
    let found = match client
        .query(
            "WITH t AS (SELECT n.nspname::text AS name, \
             has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT') AS readable \
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.relname = 'checkpoints' AND c.relkind IN ('r', 'p')), \
             s AS (SELECT name, readable FROM t WHERE name <> $1) \
             SELECT current_database()::text, \
             coalesce((SELECT array_agg(name) FROM (SELECT name FROM s ORDER BY name LIMIT $2) f), '{}'), \
             (SELECT count(*) FROM s), \
             coalesce((SELECT NOT readable FROM t WHERE name = $1), false), \
             coalesce((SELECT array_agg(name) FROM (SELECT name FROM s WHERE NOT readable ORDER BY name LIMIT $2) f), '{}'), \
             current_user::text",
            &[&schema, &SCHEMAS_NAMED],
        )
        .await
    {
        Ok(rows) => {
            let row = rows.first();
            let db: String = row.and_then(|r| r.try_get(0).ok()).unwrap_or_default();
            let first: Vec<String> = row.and_then(|r| r.try_get(1).ok()).unwrap_or_default();
            let total: i64 = row.and_then(|r| r.try_get(2).ok()).unwrap_or_default();
            let hidden_here: bool = row.and_then(|r| r.try_get(3).ok()).unwrap_or_default();
            let hidden: Vec<String> = row.and_then(|r| r.try_get(4).ok()).unwrap_or_default();
            let role: String = row.and_then(|r| r.try_get(5).ok()).unwrap_or_default();
            if hidden_here {
                return not_readable(location, &role, schema, &db);
            }
            let total = usize::try_from(total).unwrap_or(first.len()).max(first.len());
            let mut found = match first.as_slice() {
                [] => format!(
                    "no checkpoint tables in schema {schema} of database {db:?}, nor in any \
                     other schema of it: check the database's name (a store's tables are \
                     made by Python's setup(), or by lgcodec store copy or import into it)"
                ),
                [one, ..] => format!(
                    "no checkpoint tables in schema {schema} of database {db:?}; schema{} {} \
                     of it hold{} a checkpoints table: name the one your agents use in the \
                     {}",
                    if total > 1 { "s" } else { "" },
                    match total - first.len() {
                        0 => first.join(", "),
                        more => format!("{}, and {more} more", first.join(", ")),
                    },
                    if total > 1 { "" } else { "s" },
                    // As the location is written: a URL's query, or a `key=value` word.
                    if location.contains("://") {
                        format!("URL (options=-csearch_path%3D{one})")
                    } else {
                        format!("connection string (options='-csearch_path={one}')")
                    },
                ),
            };
            if !hidden.is_empty() {
                found.push_str(&format!(
                    "; role {role:?} may not read the one in {}: {}",
                    hidden.join(", "),
                    GRANT_OR_ROLE
                ));
            }
            found
        }
        // The catalog unreadable: what was found, as before.
        Err(_) => StoreLayout::Empty.to_string(),
    };
    StoreFault::NotAStore {
        location: location.to_owned(),
        found,
    }
    .into()
}

/// What a role that may not read the saver's tables is to do.
const GRANT_OR_ROLE: &str = "connect as the role your agents use (it owns the tables), or \
     GRANT this one USAGE on the schema and SELECT on its tables (and INSERT, UPDATE, \
     DELETE for the commands that write)";

/// The saver's tables are in `schema`, and `role` may not read them (no `SELECT` on
/// `checkpoints`, or no `USAGE` on the schema).
fn not_readable(location: &str, role: &str, schema: &str, db: &str) -> Error {
    Error::new(
        crate::ErrorKind::Storage,
        format!(
            "{location}: role {role:?} may not read the checkpoint tables in schema \
             {schema} of database {db:?} (permission denied): {GRANT_OR_ROLE}"
        ),
    )
    .with_subject(location)
}

/// What this session's role lacks of `needs` (privileges, each on tables of the
/// session's schema), said with the `GRANT`s that give it (`None`: nothing). Only the
/// catalog is read (`has_table_privilege`: granted to the role, to a role it is a
/// member of, or to `PUBLIC`, or owned).
pub(crate) async fn lacking(
    client: &Client,
    needs: &[(&str, &[&str])],
) -> Result<Option<String>, Error> {
    let (mut privileges, mut tables) = (Vec::new(), Vec::new());
    for (privilege, of) in needs {
        for table in *of {
            privileges.push((*privilege).to_owned());
            tables.push((*table).to_owned());
        }
    }
    let rows = client
        .query(
            "SELECT quote_ident(current_user::text), p, q FROM ( \
             SELECT p, quote_ident(current_schema()) || '.' || quote_ident(t) AS q, o \
             FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(p, t, o)) named \
             WHERE NOT has_table_privilege(q, p) ORDER BY o",
            &[&privileges, &tables],
        )
        .await
        .map_err(super::pg("privileges"))?;
    let mut role = String::new();
    let mut lacked: Vec<(String, Vec<String>)> = Vec::new();
    for row in &rows {
        role = row.try_get(0).map_err(super::pg("privileges"))?;
        let privilege: String = row.try_get(1).map_err(super::pg("privileges"))?;
        let table: String = row.try_get(2).map_err(super::pg("privileges"))?;
        match lacked.iter_mut().find(|(p, _)| *p == privilege) {
            Some((_, of)) => of.push(table),
            None => lacked.push((privilege, vec![table])),
        }
    }
    if lacked.is_empty() {
        return Ok(None);
    }
    let what: Vec<String> = lacked
        .iter()
        .map(|(p, of)| format!("{p} on {}", of.join(", ")))
        .collect();
    let grants: Vec<String> = lacked
        .iter()
        .map(|(p, of)| format!("GRANT {p} ON {} TO {role}", of.join(", ")))
        .collect();
    Ok(Some(format!(
        "role {role} lacks {}: {}; or connect as the role that owns them (the one your \
         agents use)",
        what.join(" and "),
        grants.join("; ")
    )))
}

/// Why this session's role could not make the saver's tables in its schema (no
/// `CREATE` on it: since PostgreSQL 15 only the database's owner has it on `public` by
/// default), with what to do; `None` when it could.
pub(crate) async fn may_not_create(client: &Client) -> Result<Option<String>, Error> {
    let row = client
        .query_one(
            "SELECT quote_ident(current_user::text), quote_ident(current_schema()), \
             current_database()::text, has_schema_privilege(current_schema(), 'CREATE')",
            &[],
        )
        .await
        .map_err(super::pg("privileges"))?;
    let get = |i| row.try_get::<_, String>(i).map_err(super::pg("privileges"));
    let (role, schema, db) = (get(0)?, get(1)?, get(2)?);
    let may: bool = row.try_get(3).map_err(super::pg("privileges"))?;
    Ok((!may).then(|| {
        format!(
            "the saver's tables are not there yet, and role {role} may not create tables in \
             schema {schema} of database {db:?} (no CREATE on it; since PostgreSQL 15 only \
             the database's owner has it on public by default): GRANT CREATE ON SCHEMA \
             {schema} TO {role}; or make the tables as a role that may (Python's \
             PostgresSaver.setup(), or this command run as the database's owner)"
        )
    }))
}
