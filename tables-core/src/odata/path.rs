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
