//! Resource paths, relative to the account URL, and the method and path of each
//! write (docs/protocol.md §1, §5): the remote engine and the `$batch` writer build
//! their requests from these.

use percent_encoding::utf8_percent_encode;

use super::url::{push_literal, TABLE_NAME, UNRESERVED};
use crate::entity::EntityKey;
use crate::write::{WriteMode, WriteOp};

/// The table list: Query Tables (`GET`) and Create Table (`POST`).
pub const TABLES: &str = "Tables";

/// Entity group transactions (`POST`).
pub const BATCH: &str = "$batch";

/// The entities of a table, for Query Entities: `<table>()`.
pub fn entities_path(table: &str) -> String {
    format!("{table}()")
}

/// The path of one entity: `<table>(PartitionKey='<pk>',RowKey='<rk>')`.
///
/// Inside each key literal a `'` is doubled (`''`, sent literally) and every byte
/// outside ALPHA / DIGIT / `-._~` is percent-encoded (`%` as `%25`, space as `%20`,
/// non-ASCII as its UTF-8 `%XX`); the structural `'(),=` stay literal.
///
/// ```
/// use tables_core::{odata, EntityKey};
///
/// let key = EntityKey::new("o'hara", "a b%c");
/// assert_eq!(
///     odata::entity_path("probe1", &key),
///     "probe1(PartitionKey='o''hara',RowKey='a%20b%25c')"
/// );
/// ```
pub fn entity_path(table: &str, key: &EntityKey) -> String {
    let mut out =
        String::with_capacity(table.len() + 3 * (key.partition_key.len() + key.row_key.len()) + 32);
    out.extend(utf8_percent_encode(table, TABLE_NAME));
    out.push_str("(PartitionKey=");
    push_literal(&mut out, &key.partition_key, UNRESERVED);
    out.push_str(",RowKey=");
    push_literal(&mut out, &key.row_key, UNRESERVED);
    out.push(')');
    out
}

/// The path of a table as a resource of the table list: `Tables('<table>')`, for
/// Delete Table.
///
/// ```
/// assert_eq!(tables_core::odata::table_resource_path("mytable"), "Tables('mytable')");
/// ```
pub fn table_resource_path(table: &str) -> String {
    let mut out = String::with_capacity(table.len() + 10);
    out.push_str("Tables(");
    push_literal(&mut out, table, TABLE_NAME);
    out.push(')');
    out
}

/// The HTTP method and path of a write in `table`, the same for a request of its own
/// and inside a `$batch` changeset: Insert `POST <table>`; Update and Insert Or Replace
/// `PUT`, Merge and Insert Or Merge `MERGE`, Delete `DELETE`, each on the entity's path.
///
/// ```
/// use tables_core::{odata, DynamicEntity, IfMatch, WriteOp};
///
/// let row = DynamicEntity::new("p", "r");
/// assert_eq!(odata::path::write_target("t", &WriteOp::Insert(row.clone())), ("POST", "t".to_owned()));
/// let merge = WriteOp::Merge { entity: row, if_match: IfMatch::Any };
/// assert_eq!(odata::path::write_target("t", &merge).0, "MERGE");
/// ```
pub fn write_target(table: &str, op: &WriteOp) -> (&'static str, String) {
    match op.mode() {
        WriteMode::Insert => ("POST", table.to_owned()),
        WriteMode::Replace | WriteMode::UpsertReplace => ("PUT", entity_path(table, &op.key())),
        WriteMode::Merge | WriteMode::UpsertMerge => ("MERGE", entity_path(table, &op.key())),
        WriteMode::Delete => ("DELETE", entity_path(table, &op.key())),
    }
}

/// The service's name of the operation a write mode is (`InsertEntity`,
/// `UpdateEntity`, ...), as logs and traces name it.
pub fn operation_name(mode: WriteMode) -> &'static str {
    match mode {
        WriteMode::Insert => "InsertEntity",
        WriteMode::Replace => "UpdateEntity",
        WriteMode::Merge => "MergeEntity",
        WriteMode::UpsertReplace => "InsertOrReplaceEntity",
        WriteMode::UpsertMerge => "InsertOrMergeEntity",
        WriteMode::Delete => "DeleteEntity",
    }
}
/// A resource of the Table service, as a server reads it from a request path
/// relative to the account ([`ResourcePath::parse`]): the inverse of the paths above.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourcePath {
    /// The account itself (`/`): service properties and stats (`?restype=service`).
    Service,
    /// The table list: `Tables` or `Tables()`.
    Tables,
    /// One table of the list: `Tables('<name>')`.
    Table(String),
    /// A table's entities, or its ACL with `?comp=acl`: `<table>` or `<table>()`.
    Entities(String),
    /// One entity: `<table>(PartitionKey='<pk>',RowKey='<rk>')`.
    Entity(String, EntityKey),
    /// Entity group transactions: `$batch`.
    Batch,
}

impl ResourcePath {
    /// Reads a path relative to the account, as sent (percent-encoded; decoded here,
    /// then the `'..'` literals are read with `''` standing for `'`).
    ///
    /// ```
    /// use tables_core::odata::path::ResourcePath;
    /// use tables_core::EntityKey;
    ///
    /// assert_eq!(ResourcePath::parse("Tables()"), Some(ResourcePath::Tables));
    /// assert_eq!(
    ///     ResourcePath::parse("probe1(PartitionKey=%27o%27%27hara%27,RowKey='a%20b%25c')"),
    ///     Some(ResourcePath::Entity("probe1".into(), EntityKey::new("o'hara", "a b%c")))
    /// );
    /// assert_eq!(ResourcePath::parse("a/b"), None);
    /// // One trailing slash is the same resource, as on the service (REST clients
    /// // such as the legacy .NET storage library send `Tables/` and `$batch/`).
    /// assert_eq!(ResourcePath::parse("Tables/"), Some(ResourcePath::Tables));
    /// assert_eq!(ResourcePath::parse("$batch/"), Some(ResourcePath::Batch));
    /// assert_eq!(ResourcePath::parse("Tables//"), None);
    /// ```
    ///
    /// `None` when the path names no resource of the service (or is not UTF-8 once
    /// decoded).
    pub fn parse(path: &str) -> Option<ResourcePath> {
        let decoded = percent_encoding::percent_decode_str(path)
            .decode_utf8()
            .ok()?;
        let path = decoded.trim_start_matches('/');
        let path = path.strip_suffix('/').unwrap_or(path);
        if path.is_empty() {
            return Some(ResourcePath::Service);
        }
        if path == BATCH {
            return Some(ResourcePath::Batch);
        }
        let (name, args) = match path.find('(') {
            Some(open) => {
                let args = path[open..].strip_prefix('(')?.strip_suffix(')')?;
                (&path[..open], Some(args))
            }
            None => (path, None),
        };
        if name.is_empty() || name.contains(['/', '(', ')', '\'', '?', '#']) {
            return None;
        }
        let is_tables = name == TABLES;
        match args {
            None | Some("") if is_tables => Some(ResourcePath::Tables),
            None | Some("") => Some(ResourcePath::Entities(name.to_owned())),
            Some(args) if is_tables => {
                let (table, rest) = read_literal(args)?;
                rest.is_empty().then_some(ResourcePath::Table(table))
            }
            Some(args) => {
                let rest = args.strip_prefix("PartitionKey=")?;
                let (partition_key, rest) = read_literal(rest)?;
                let rest = rest.strip_prefix(",RowKey=")?;
                let (row_key, rest) = read_literal(rest)?;
                rest.is_empty().then(|| {
                    ResourcePath::Entity(name.to_owned(), EntityKey::new(partition_key, row_key))
                })
            }
        }
    }
}

/// Reads `'<text>'` (a `''` inside stands for `'`) at the start of `text`: the
/// text and what follows the closing quote.
fn read_literal(text: &str) -> Option<(String, &str)> {
    let body = text.strip_prefix('\'')?;
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    loop {
        let quote = rest.find('\'')?;
        out.push_str(&rest[..quote]);
        rest = &rest[quote + 1..];
        match rest.strip_prefix('\'') {
            Some(after) => {
                out.push('\'');
                rest = after;
            }
            None => return Some((out, rest)),
        }
    }
}
