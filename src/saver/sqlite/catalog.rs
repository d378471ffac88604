//! The one reader of an SQLite database's checkpoint-table catalog: `sqlite_master`
//! and `PRAGMA table_info` of `checkpoints` and `writes`, read without writing
//! anything (it works on a connection opened `SQLITE_OPEN_READ_ONLY`).
//!
//! Three views classify what it read: the saver's strict check
//! ([`inspect_layout`](super::inspect_layout): declared types, `NOT NULL`, defaults,
//! primary key), [`detect_sqlite`](crate::saver::layout::detect_sqlite) (which
//! release of which saver wrote the file), and the store opener's "is this a store"
//! check.

use rusqlite::Connection;

/// One column as `PRAGMA table_info` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CatalogColumn {
    /// The column's name.
    pub(crate) name: String,
    /// The declared type, as written in the `CREATE TABLE` statement.
    pub(crate) decl_type: String,
    /// Declared `NOT NULL`.
    pub(crate) not_null: bool,
    /// The `DEFAULT` expression's text.
    pub(crate) default: Option<String>,
    /// Position in the primary key (0: not part of it).
    pub(crate) pk: i64,
}

/// What the catalog says about the checkpoint tables.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Catalog {
    /// Every table in `sqlite_master` (SQLite's own included), by name, with its
    /// `CREATE TABLE` text.
    tables: Vec<(String, Option<String>)>,
    /// `PRAGMA table_info(checkpoints)` (empty when there is no such table).
    checkpoints: Vec<CatalogColumn>,
    /// `PRAGMA table_info(writes)` (empty when there is no such table).
    writes: Vec<CatalogColumn>,
}

impl Catalog {
    /// Reads the catalog. SQLite's own error is returned as it is, so that each view
    /// reports it in its terms (a store opener tells "not a database" apart).
    pub(crate) fn read(conn: &Connection) -> rusqlite::Result<Self> {
        let mut stmt =
            conn.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name")?;
        let tables = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Catalog {
            tables,
            checkpoints: columns(conn, "checkpoints")?,
            writes: columns(conn, "writes")?,
        })
    }

    /// The names of every table, SQLite's own included, in name order.
    pub(crate) fn table_names(&self) -> impl Iterator<Item = &str> {
        self.tables.iter().map(|(n, _)| n.as_str())
    }

    /// The database's own tables (not SQLite's `sqlite_*` ones), in name order.
    pub(crate) fn user_tables(&self) -> impl Iterator<Item = &str> {
        self.table_names().filter(|n| !n.starts_with("sqlite_"))
    }

    /// The table exists.
    pub(crate) fn has_table(&self, name: &str) -> bool {
        self.table_names().any(|n| n == name)
    }

    /// The stored `CREATE TABLE` text of `name`, when the table exists.
    pub(crate) fn sql(&self, name: &str) -> Option<&str> {
        self.tables
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s.as_deref().unwrap_or_default())
    }

    /// The columns of `checkpoints` or `writes` (empty for any other name, or when
    /// the table does not exist).
    pub(crate) fn columns(&self, table: &str) -> &[CatalogColumn] {
        match table {
            "checkpoints" => &self.checkpoints,
            "writes" => &self.writes,
            _ => &[],
        }
    }

    /// The column names of `checkpoints` or `writes`, in table order.
    pub(crate) fn column_names(&self, table: &str) -> Vec<String> {
        self.columns(table).iter().map(|c| c.name.clone()).collect()
    }
}

fn columns(conn: &Connection, table: &'static str) -> rusqlite::Result<Vec<CatalogColumn>> {
    // `table` is one of two literal names, never input.
    let mut stmt = conn.prepare(&format!("PRAGMA table_info({table})"))?;
    let cols = stmt
        .query_map([], |r| {
            Ok(CatalogColumn {
                name: r.get(1)?,
                decl_type: r.get(2)?,
                not_null: r.get::<_, i64>(3)? != 0,
                default: r.get(4)?,
                pk: r.get(5)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(cols)
}
