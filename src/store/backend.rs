//! What both backends offer the operations: tables of serialized values, paged by
//! primary key, and compare-and-swap rewrites.

/// One part of a row's primary key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum KeyPart {
    Text(String),
    Int(i64),
    /// A SQLite key cell that is not UTF-8 text: a BLOB (`blob`), or TEXT whose bytes
    /// are not UTF-8 (written by something other than Python). Bound back as it was
    /// stored, so keyset paging and compare-and-swap find the row.
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    Bytes {
        blob: bool,
        bytes: Vec<u8>,
    },
}

impl KeyPart {
    /// For reports: the text, the number, or the bytes with what is not UTF-8 replaced
    /// (`U+FFFD`), marked `x'…'` for a BLOB.
    pub(crate) fn text(&self) -> String {
        match self {
            KeyPart::Text(s) => s.clone(),
            KeyPart::Int(i) => i.to_string(),
            KeyPart::Bytes { blob: true, bytes } => {
                format!("x'{}'", String::from_utf8_lossy(bytes))
            }
            KeyPart::Bytes { blob: false, bytes } => String::from_utf8_lossy(bytes).into_owned(),
        }
    }
}

/// A table holding serialized values: its primary key columns (`idx` is the only
/// integer), the type column and the value column.
#[derive(Debug)]
pub(crate) struct Table {
    pub name: &'static str,
    pub key: &'static [&'static str],
    pub type_col: &'static str,
    pub value_col: &'static str,
    /// `table.column`, for reports.
    pub label: &'static str,
}

impl Table {
    pub(crate) fn is_int(column: &str) -> bool {
        column == "idx"
    }
}

/// One stored value.
#[derive(Debug)]
pub(crate) struct Row {
    pub key: Vec<KeyPart>,
    pub tag: Option<String>,
    pub data: Option<Vec<u8>>,
}

impl Row {
    pub(crate) fn thread_id(&self) -> String {
        self.key.first().map(KeyPart::text).unwrap_or_default()
    }
}

/// A compare-and-swap rewrite: applied only if the row still holds `old_*`.
#[derive(Debug)]
pub(crate) struct Update {
    pub key: Vec<KeyPart>,
    pub old_tag: String,
    pub old_data: Vec<u8>,
    pub new_tag: String,
    pub new_data: Vec<u8>,
}

/// `SELECT key…, type, value FROM table [WHERE (key…) > (params…)] ORDER BY key… LIMIT n`
/// with placeholders from `ph` (1-based).
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
pub(crate) fn page_sql(t: &Table, after: bool, ph: impl Fn(usize) -> String) -> String {
    let columns = format!("{}, {}, {}", t.key.join(", "), t.type_col, t.value_col);
    page_of(t, &columns, after, &ph)
}

/// `SELECT {columns} FROM table [WHERE (key…) > (params…)] ORDER BY key… LIMIT n`.
fn page_of(t: &Table, columns: &str, after: bool, ph: &impl Fn(usize) -> String) -> String {
    let keys = t.key.join(", ");
    let mut sql = format!("SELECT {columns} FROM {}", t.name);
    let mut n = 0;
    if after {
        let params: Vec<String> = (1..=t.key.len()).map(ph).collect();
        n = t.key.len();
        sql.push_str(&format!(" WHERE ({keys}) > ({})", params.join(", ")));
    }
    sql.push_str(&format!(" ORDER BY {keys} LIMIT {}", ph(n + 1)));
    sql
}

/// [`page_sql`] that also stops at a byte budget (the parameter after the limit): of
/// the first `n` rows, those whose preceding rows' values hold fewer bytes than the
/// budget, so the first row always and at most the budget plus one row. Postgres
/// answers `octet_length` from a TOASTed value's header without reading the value, and
/// sends no row past the budget.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) fn page_sql_capped(t: &Table, after: bool, ph: impl Fn(usize) -> String) -> String {
    let keys = t.key.join(", ");
    let plain = format!("{keys}, {}, {}", t.type_col, t.value_col);
    let len = format!("coalesce(octet_length({}), 0)", t.value_col);
    let inner = page_of(
        t,
        &format!("{plain}, {len} AS lg_len, sum({len}) OVER (ORDER BY {keys}) AS lg_upto"),
        after,
        &ph,
    );
    let budget = ph(if after { t.key.len() + 2 } else { 2 });
    format!(
        "SELECT {plain} FROM ({inner}) lg_page WHERE lg_upto - lg_len < {budget} ORDER BY {keys}"
    )
}

/// `SELECT key…, type, value FROM table WHERE key = params…`.
pub(crate) fn row_sql(t: &Table, ph: impl Fn(usize) -> String) -> String {
    let keys = t.key.join(", ");
    let cond: Vec<String> = t
        .key
        .iter()
        .enumerate()
        .map(|(i, k)| format!("{k} = {}", ph(i + 1)))
        .collect();
    format!(
        "SELECT {keys}, {}, {} FROM {} WHERE {}",
        t.type_col,
        t.value_col,
        t.name,
        cond.join(" AND ")
    )
}
