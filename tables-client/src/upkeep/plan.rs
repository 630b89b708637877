//! Planning one entity group transaction: the caller's primary writes, the index
//! copies and index entities in their partition, and the intent for the rest.
//!
//! The operations come in this order: the primaries (operation `i` is caller item
//! `i`), deletes of copies no longer implied, upserts of implied copies, index
//! entity rows, then the intent. Each operation remembers the caller item it
//! serves, so an error names the caller's item.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use tables_core::model::{index_entry_type, ENTITY_TYPE_PROPERTY};
use tables_core::{DynamicEntity, EntityKey, Error, ErrorKind, IfMatch, Result, Value, WriteOp};

use super::index_entities::{encode_member, entry_op, members_of};
use super::intents::{new_intent_op, remote_rows, IntentDoc, PrimaryIntent};
use super::{lost_race, Codec, Implied, Item, Mode};

/// What to do after the transaction failed.
#[derive(Debug)]
pub(super) enum Retry {
    /// Report the error.
    No,
    /// A condition of the client's own lost a race: read again and retry.
    Conflict,
    /// A copy to delete is already gone: retry without it.
    Absent(EntityKey),
}

/// What an operation is for.
#[derive(Debug)]
enum Role {
    /// The caller's write; `caller_condition` when its precondition is the
    /// caller's own (so a failure is the caller's answer, not a lost race).
    Primary {
        caller_condition: bool,
    },
    CopyDelete(EntityKey),
    CopyUpsert,
    Entry,
    Intent,
}

/// One item, after reading its current primary.
#[derive(Debug, Default)]
struct State {
    /// The `EntityType` of the primary.
    kind: String,
    old: Implied,
    new: Implied,
}

/// A change to one index entity row in the transaction's partition.
#[derive(Debug)]
struct EntryChange {
    item: usize,
    entry_type: String,
    adds: BTreeSet<String>,
    removes: BTreeSet<String>,
}

/// The items with their primary writes decided; the index entity rows to read
/// next.
#[derive(Debug)]
pub(super) struct Prepared<'a> {
    items: &'a [Item],
    primaries: Vec<(WriteOp, bool)>,
    states: Vec<State>,
    entries: BTreeMap<EntityKey, EntryChange>,
}

/// The planned transaction.
#[derive(Debug)]
pub(super) struct Built {
    pub(super) ops: Vec<WriteOp>,
    /// Per operation: the caller item and the role.
    roles: Vec<(usize, Role)>,
    /// The intent's operation index and content.
    pub(super) intent: Option<(usize, IntentDoc)>,
    /// The codec of every kind the intent covers.
    pub(super) codecs: Vec<(String, Codec)>,
}

/// Decides each item's primary write from its current row (`olds`, aligned with
/// `items`), and the index rows the old and new rows imply.
///
/// # Errors
///
/// [`ErrorKind::EntityNotFound`] / [`ErrorKind::PreconditionFailed`] when an item's
/// precondition already fails; decode and encode errors. Each carries the item's
/// index.
pub(super) fn prepare(items: &[Item], olds: Vec<Option<DynamicEntity>>) -> Result<Prepared<'_>> {
    let mut primaries = Vec::with_capacity(items.len());
    let mut states = Vec::with_capacity(items.len());
    for (index, (item, old)) in items.iter().zip(olds).enumerate() {
        let (op, caller_condition, state) =
            prepare_item(item, old).map_err(|e| e.with_batch_index(index))?;
        primaries.push((op, caller_condition));
        states.push(state);
    }
    let mut entries: BTreeMap<EntityKey, EntryChange> = BTreeMap::new();
    for (index, state) in states.iter().enumerate() {
        let near = |implied: &Implied| -> BTreeSet<EntityKey> {
            implied
                .entries
                .iter()
                .filter(|e| e.same_partition())
                .map(|e| e.key().clone())
                .collect()
        };
        let (old_keys, new_keys) = (near(&state.old), near(&state.new));
        let changes = [
            (&state.new, &old_keys, true),
            (&state.old, &new_keys, false),
        ];
        for (implied, other, add) in changes {
            for entry in implied.entries.iter().filter(|e| e.same_partition()) {
                if other.contains(entry.key()) {
                    continue;
                }
                let change = entries
                    .entry(entry.key().clone())
                    .or_insert_with(|| EntryChange {
                        item: index,
                        entry_type: index_entry_type(&state.kind, entry.name()),
                        adds: BTreeSet::new(),
                        removes: BTreeSet::new(),
                    });
                let member = encode_member(entry.member(), true);
                if add {
                    change.adds.insert(member);
                } else {
                    change.removes.insert(member);
                }
            }
        }
    }
    Ok(Prepared {
        items,
        primaries,
        states,
        entries,
    })
}

fn prepare_item(item: &Item, old: Option<DynamicEntity>) -> Result<(WriteOp, bool, State)> {
    if !item.codec.indexed {
        return Ok((item.plain_op(), true, State::default()));
    }
    let row = || item.row.clone().unwrap_or_default();
    let implied = |row: &DynamicEntity| (item.codec.implied)(row);
    let old_implied = old.as_ref().map(implied).transpose()?.unwrap_or_default();
    let known = || item.implied.clone();
    let (op, caller_condition, new) = match &item.mode {
        Mode::Insert => (WriteOp::Insert(row()), true, known().unwrap_or_default()),
        Mode::Replace(if_match) | Mode::Merge(if_match) | Mode::Delete(if_match) => {
            let old = current(item, old.as_ref(), if_match)?;
            let condition = old.etag.clone().map_or(IfMatch::Any, IfMatch::Etag);
            let caller_condition = matches!(if_match, IfMatch::Etag(_));
            match &item.mode {
                Mode::Replace(_) => {
                    let new = known().map_or_else(|| implied(&row()), Ok)?;
                    let op = WriteOp::Replace {
                        entity: row(),
                        if_match: condition,
                    };
                    (op, caller_condition, new)
                }
                Mode::Merge(_) => {
                    let new = implied(&merged(old, &row()))?;
                    let op = WriteOp::Merge {
                        entity: row(),
                        if_match: condition,
                    };
                    (op, caller_condition, new)
                }
                _ => {
                    let op = WriteOp::Delete {
                        key: item.key.clone(),
                        if_match: condition,
                    };
                    (op, caller_condition, Implied::default())
                }
            }
        }
        Mode::UpsertReplace | Mode::UpsertMerge => {
            let merges = matches!(item.mode, Mode::UpsertMerge);
            match &old {
                None => {
                    let new = match known() {
                        Some(new) => new,
                        None => implied(&row())?,
                    };
                    (WriteOp::Insert(row()), false, new)
                }
                Some(old) => {
                    let condition = old.etag.clone().map_or(IfMatch::Any, IfMatch::Etag);
                    if merges {
                        let new = implied(&merged(old, &row()))?;
                        let op = WriteOp::Merge {
                            entity: row(),
                            if_match: condition,
                        };
                        (op, false, new)
                    } else {
                        let new = known().map_or_else(|| implied(&row()), Ok)?;
                        let op = WriteOp::Replace {
                            entity: row(),
                            if_match: condition,
                        };
                        (op, false, new)
                    }
                }
            }
        }
    };
    let kind = item
        .row
        .as_ref()
        .or(old.as_ref())
        .and_then(|r| r.get(ENTITY_TYPE_PROPERTY))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    Ok((
        op,
        caller_condition,
        State {
            kind,
            old: old_implied,
            new,
        },
    ))
}

/// The stored row an update applies to, checked against the caller's precondition.
fn current<'a>(
    item: &Item,
    old: Option<&'a DynamicEntity>,
    if_match: &IfMatch,
) -> Result<&'a DynamicEntity> {
    let Some(old) = old else {
        return Err(Error::new(
            ErrorKind::EntityNotFound,
            format!(
                "no entity with key {}; insert it first or use an upsert",
                item.key
            ),
        )
        .with_entity_key(item.key.clone()));
    };
    if let IfMatch::Etag(etag) = if_match {
        if old.etag.as_ref() != Some(etag) {
            return Err(Error::new(
                ErrorKind::PreconditionFailed,
                format!(
                    "the entity {} changed since it was read (If-Match {etag}); read it again and retry, or use IfMatch::Any",
                    item.key
                ),
            )
            .with_entity_key(item.key.clone()));
        }
    }
    Ok(old)
}

/// The row a merge of `update` into `stored` leaves.
fn merged(stored: &DynamicEntity, update: &DynamicEntity) -> DynamicEntity {
    let mut row = stored.clone();
    for (name, value) in update.properties() {
        row.insert(name, value.clone());
    }
    row
}

impl Prepared<'_> {
    /// The index entity rows in the partition the transaction changes (read them
    /// and pass them to [`Prepared::build`]).
    pub(super) fn entry_keys(&self) -> Vec<EntityKey> {
        self.entries.keys().cloned().collect()
    }

    /// Plans the transaction, given the current index entity rows and the copies
    /// known to be gone.
    ///
    /// # Errors
    ///
    /// An index entity that can't be read or would grow too large; an intent that
    /// can't be encoded. Each carries the item's index.
    pub(super) fn build(
        self,
        table: &str,
        entry_rows: Vec<(EntityKey, Option<DynamicEntity>)>,
        absent: &HashSet<EntityKey>,
    ) -> Result<Built> {
        let mut built = Built {
            ops: Vec::new(),
            roles: Vec::new(),
            intent: None,
            codecs: Vec::new(),
        };
        for (index, (op, caller_condition)) in self.primaries.into_iter().enumerate() {
            built.push(op, index, Role::Primary { caller_condition });
        }
        let near_copies = |implied: &Implied| {
            implied
                .copies
                .iter()
                .filter(|c| c.same_partition())
                .cloned()
                .collect::<Vec<_>>()
        };
        let new_keys: HashSet<EntityKey> = self
            .states
            .iter()
            .flat_map(|s| near_copies(&s.new))
            .map(|c| c.key())
            .collect();
        let mut deleting = HashSet::new();
        for (index, state) in self.states.iter().enumerate() {
            for copy in near_copies(&state.old) {
                let key = copy.key();
                if !new_keys.contains(&key)
                    && !absent.contains(&key)
                    && deleting.insert(key.clone())
                {
                    let op = WriteOp::Delete {
                        key: key.clone(),
                        if_match: IfMatch::Any,
                    };
                    built.push(op, index, Role::CopyDelete(key));
                }
            }
        }
        for (index, state) in self.states.iter().enumerate() {
            for copy in near_copies(&state.new) {
                built.push(
                    WriteOp::UpsertReplace(copy.into_entity()),
                    index,
                    Role::CopyUpsert,
                );
            }
        }
        let rows: HashMap<EntityKey, Option<DynamicEntity>> = entry_rows.into_iter().collect();
        for (key, change) in &self.entries {
            let current = rows.get(key).and_then(Option::as_ref);
            let planned = (|| {
                let members = current.map(members_of).transpose()?.unwrap_or_default();
                let mut next = members.clone();
                for member in &change.removes {
                    next.remove(member);
                }
                next.extend(change.adds.iter().cloned());
                if next == members {
                    return Ok(None);
                }
                entry_op(key, current, &change.entry_type, &next)
            })();
            if let Some(op) = planned.map_err(|e: Error| e.with_batch_index(change.item))? {
                built.push(op, change.item, Role::Entry);
            }
        }
        let mut primaries = Vec::new();
        let mut first = None;
        for (index, state) in self.states.iter().enumerate() {
            let mut rows: BTreeSet<_> = remote_rows(&state.old, table).into_keys().collect();
            rows.extend(remote_rows(&state.new, table).into_keys());
            if rows.is_empty() {
                continue;
            }
            let item = &self.items[index];
            first.get_or_insert(index);
            primaries.push(PrimaryIntent::new(
                state.kind.clone(),
                item.key.row_key.clone(),
                rows,
            ));
            if !built.codecs.iter().any(|(kind, _)| *kind == state.kind) {
                built.codecs.push((state.kind.clone(), item.codec));
            }
        }
        if let Some(first) = first {
            let doc = IntentDoc::new(primaries);
            let partition = &self.items[first].key.partition_key;
            let op = new_intent_op(partition, &doc).map_err(|e| e.with_batch_index(first))?;
            built.intent = Some((built.ops.len(), doc));
            built.push(op, first, Role::Intent);
        }
        Ok(built)
    }
}

impl Built {
    fn push(&mut self, op: WriteOp, item: usize, role: Role) {
        self.ops.push(op);
        self.roles.push((item, role));
    }

    /// The operation an engine error is about: its batch index, or the only one.
    fn failed_op(&self, err: &Error) -> Option<usize> {
        match err.batch_index() {
            Some(index) => Some(index),
            None if self.ops.len() == 1 => Some(0),
            None => None,
        }
    }

    /// The error with the batch index of the caller's item.
    pub(super) fn map_error(&self, err: Error) -> Error {
        match self.failed_op(&err).and_then(|i| self.roles.get(i)) {
            Some((item, _)) => err.with_batch_index(*item),
            None => err,
        }
    }

    /// Whether the failure is a race the client lost on its own condition.
    pub(super) fn on_error(&self, err: &Error) -> Retry {
        let Some((_, role)) = self.failed_op(err).and_then(|i| self.roles.get(i)) else {
            return Retry::No;
        };
        match role {
            Role::CopyDelete(key) if err.kind() == ErrorKind::EntityNotFound => {
                Retry::Absent(key.clone())
            }
            Role::Primary {
                caller_condition: false,
            }
            | Role::Entry
            | Role::Intent
                if lost_race(err) =>
            {
                Retry::Conflict
            }
            _ => Retry::No,
        }
    }
}
