//! The index checker: do the index rows of a table equal exactly what its
//! primaries imply?

use std::collections::{BTreeMap, BTreeSet};

use tables_client::model::{row_role, RowRole, MOVED_FROM_PROPERTY, MOVING_TO_PROPERTY};
use tables_client::{DynamicEntity, Engine, EntityKey, IfMatch, Result, Row, Value, WriteOp};

use crate::read::all_rows;

/// The tables `T`'s index rows may live in, besides `table`.
fn tables_of<T: Row>(table: &str) -> Vec<String> {
    let mut tables = vec![table.to_owned()];
    for schema in T::schemas() {
        for index in schema.indexes {
            if let Some(t) = index.table {
                if !tables.iter().any(|x| x == t) {
                    tables.push(t.to_owned());
                }
            }
        }
    }
    tables
}

/// A row's properties, by name.
fn properties(row: &DynamicEntity) -> BTreeMap<String, Value> {
    row.properties()
        .map(|(n, v)| (n.to_owned(), v.clone()))
        .collect()
}

type Located = (String, EntityKey);

/// What the index tables hold, or should hold.
#[derive(Debug, Default, PartialEq)]
struct IndexState {
    /// Copies by (table, key): their properties.
    copies: BTreeMap<Located, BTreeMap<String, Value>>,
    /// Index entities by (table, key): their members, sorted.
    entries: BTreeMap<Located, Vec<String>>,
}

/// Checks that the index rows of `T` in `table` (and its index tables) are exactly
/// those its primaries imply: no orphan, no missing copy, no stale content, no
/// duplicate member, no intent or move left, no primary marked by a move. Returns
/// the primaries.
pub async fn check<T: Row>(engine: &dyn Engine, table: &str) -> Result<Vec<DynamicEntity>> {
    let mut primaries = Vec::new();
    let mut actual = IndexState::default();
    for name in tables_of::<T>(table) {
        for row in all_rows(engine, &name).await? {
            let located = (name.clone(), row.key());
            match row_role(&row) {
                RowRole::Primary { .. } if name == table => {
                    for mark in [MOVING_TO_PROPERTY, MOVED_FROM_PROPERTY] {
                        assert!(
                            !row.contains(mark),
                            "{located:?} still carries a move's mark {mark} after reconcile"
                        );
                    }
                    primaries.push(row);
                }
                RowRole::IndexCopy { .. } => {
                    actual.copies.insert(located, properties(&row));
                }
                RowRole::IndexEntry { .. } => {
                    let members = tables_client::model::index_entity_members(&row)
                        .expect("the member list is JSON");
                    let unique: BTreeSet<_> = members.iter().collect();
                    assert_eq!(
                        unique.len(),
                        members.len(),
                        "duplicate member in {located:?}"
                    );
                    assert!(
                        !members.is_empty(),
                        "empty index entity left at {located:?}"
                    );
                    actual.entries.insert(located, members);
                }
                // A finished intent kept for a while (see ClientOptions::intent_retention).
                RowRole::System(_) if name == table && is_tombstone(&row) => {}
                role => panic!(
                    "unexpected row {located:?} ({role:?}) after reconcile: {:?}",
                    row.get("Intent")
                ),
            }
        }
    }
    let mut expected = IndexState::default();
    for primary in &primaries {
        let value = T::from_entity(primary.clone())?;
        for copy in value.index_copies(primary)? {
            let located = (copy.table().unwrap_or(table).to_owned(), copy.key());
            let previous = expected
                .copies
                .insert(located.clone(), properties(copy.entity()));
            assert!(
                previous.is_none(),
                "two primaries imply the copy {located:?}"
            );
        }
        for entry in value.index_entries()? {
            let located = (
                entry.table().unwrap_or(table).to_owned(),
                entry.key().clone(),
            );
            let member = entry.member();
            let encoded = if entry.same_partition() {
                member.row_key.clone()
            } else {
                format!("{}\u{1f}{}", member.partition_key, member.row_key)
            };
            expected.entries.entry(located).or_default().push(encoded);
        }
    }
    for members in expected.entries.values_mut() {
        members.sort();
    }
    let missing: Vec<_> = expected
        .copies
        .keys()
        .filter(|k| !actual.copies.contains_key(*k))
        .collect();
    let orphans: Vec<_> = actual
        .copies
        .keys()
        .filter(|k| !expected.copies.contains_key(*k))
        .collect();
    assert!(
        missing.is_empty() && orphans.is_empty(),
        "missing copies {missing:?}, orphan copies {orphans:?}"
    );
    assert_eq!(
        actual, expected,
        "index rows differ from what the primaries imply"
    );
    Ok(primaries)
}

/// Whether `row` is an intent's tombstone: finished (`done`) or fenced (`aborted`),
/// with nothing left to do; or a move's (`Table::move_to`): its row once finished or
/// undone, or its fence.
pub fn is_tombstone(row: &DynamicEntity) -> bool {
    if row.contains("Fence") {
        return true;
    }
    if let Some(text) = row.get("Move").and_then(Value::as_str) {
        let doc: serde_json::Value = serde_json::from_str(text).expect("Move is JSON");
        let state = doc.get("state").and_then(serde_json::Value::as_str);
        return matches!(state, Some("done" | "aborted"));
    }
    let Some(text) = row.get("Intent").and_then(Value::as_str) else {
        return false;
    };
    let doc: serde_json::Value = serde_json::from_str(text).expect("Intent is JSON");
    let state = doc.get("state").and_then(serde_json::Value::as_str);
    let empty = doc
        .get("primaries")
        .and_then(serde_json::Value::as_array)
        .is_none_or(Vec::is_empty);
    matches!(state, Some("done" | "aborted")) && empty
}

/// Intent rows in `table` with work left (tombstones don't count).
pub async fn intents(engine: &dyn Engine, table: &str) -> Result<usize> {
    Ok(all_rows(engine, table)
        .await?
        .iter()
        .filter(|r| matches!(row_role(r), RowRole::System(_)) && !is_tombstone(r))
        .count())
}

/// Deletes the row at `key` in `table` past the client (no upkeep, any version):
/// an index row lost, for a check or a repair to find.
///
/// # Errors
///
/// The engine's, e.g. when the row is absent.
pub async fn lose_row(engine: &dyn Engine, table: &str, key: EntityKey) -> Result<()> {
    let delete = WriteOp::Delete {
        key,
        if_match: IfMatch::Any,
    };
    engine.write(table, &delete).await.map(drop)
}
