//! Planning one entity group transaction: the caller's primary writes, the index
//! copies and index entities in their partition, the claims of `unique_index`
//! values in other partitions, and the intent for the rest.
//!
//! The operations come in this order: the primaries (operation `i` is caller item
//! `i`), the copies in the partition (each conditional on what was read: an insert
//! where none is stored, a replace or delete If-Match where the item's primary holds
//! it), index entity rows, then the intent. Each operation remembers the caller item
//! it serves, so an error names the caller's item.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use tables_core::model::{index_entry_type, IndexCopy};
use tables_core::{DynamicEntity, EntityKey, Error, ErrorKind, IfMatch, Origin, Result, WriteOp};

use super::conflict::lost_race;
use super::index_entities::{encode_member, entry_op, members_of};
use super::intents::{new_intent_key, rows_of, IntentDoc, IntentState, PrimaryIntent};
use super::rows::{
    claim_mark, put_copy, release_copy, replace_over, taken, Holder, IndexOf, CLAIM_PROPERTY,
};
use super::{Codec, Implied, Item, Mode};

/// What to do after the transaction failed.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Retry {
    /// Report the error.
    No,
    /// A condition of the client's own lost a race: read again and retry.
    Conflict,
}

/// What an operation is for.
#[derive(Debug)]
enum Role {
    /// The caller's write; `caller_condition` when its precondition is the
    /// caller's own (so a failure is the caller's answer, not a lost race).
    Primary {
        caller_condition: bool,
    },
    Copy,
    Entry,
    Intent,
    /// A row the transaction inserts to be fenced by (a move's commit marker).
    Fence,
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

/// The items whose new rows imply a copy key, and those whose old rows did.
type Holders<'a> = (Vec<(usize, &'a IndexCopy)>, Vec<(usize, &'a IndexCopy)>);

/// A row read for planning: where, and what is stored (`None`: nothing).
pub(super) type Reads = HashMap<(String, EntityKey), Option<DynamicEntity>>;

/// The key of a row in [`Reads`] (table names compare case-insensitively).
pub(super) fn read_key(table: &str, key: &EntityKey) -> (String, EntityKey) {
    (table.to_ascii_lowercase(), key.clone())
}

/// A row to read before planning, and for claimed copies in other partitions the
/// codec that tells whether another entity's claim there is stale.
#[derive(Debug)]
pub(super) struct ToRead {
    pub(super) table: String,
    pub(super) key: EntityKey,
    pub(super) claim: Option<(Codec, String, String)>,
}

/// A `unique_index` value in another partition, claimed before the primary commits.
#[derive(Debug, Clone)]
pub(super) struct Claim {
    pub(super) item: usize,
    pub(super) kind: String,
    pub(super) index: &'static str,
    pub(super) table: String,
    /// The copy to write, with its claim mark.
    pub(super) row: DynamicEntity,
    /// Insert (nothing stored), or replace If-Match a stale claim.
    pub(super) op: WriteOp,
    pub(super) codec: Codec,
}

/// The items with their primary writes decided; the rows to read next.
#[derive(Debug)]
pub(super) struct Prepared<'a> {
    items: &'a [Item],
    primaries: Vec<(WriteOp, bool)>,
    states: Vec<State>,
    entries: BTreeMap<EntityKey, EntryChange>,
}

/// The intent a transaction writes.
#[derive(Debug)]
pub(super) struct PlannedIntent {
    pub(super) key: EntityKey,
    /// Its content once the transaction commits (`pending`).
    pub(super) doc: IntentDoc,
    /// Its operation in the transaction.
    pub(super) op_index: usize,
    /// Values to claim before the transaction (then the intent is written first, in
    /// the `claiming` state, and the transaction turns it `pending`).
    pub(super) claims: Vec<Claim>,
}

/// The planned transaction.
#[derive(Debug)]
pub(super) struct Built {
    pub(super) ops: Vec<WriteOp>,
    /// Per operation: the caller item and the role.
    roles: Vec<(usize, Role)>,
    pub(super) intent: Option<PlannedIntent>,
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
    // A row a move has marked is the move's until it finishes.
    if item.moving.is_none() {
        if let Some(old) = &old {
            super::marks::refuse_marked(old)?;
        }
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
        .and_then(item.codec.kind_of)
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
        .with_entity_key(item.key.clone())
        // Decided on the service's answer to the read, as the service would.
        .with_origin(Origin::Service));
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
            .with_entity_key(item.key.clone())
            .with_origin(Origin::Service));
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

/// The copies of `implied` in the primary's partition.
fn near_copies(implied: &Implied) -> impl Iterator<Item = &IndexCopy> {
    implied.copies.iter().filter(|c| c.same_partition())
}

/// The `unique_index` copies of `implied` in other partitions or tables.
fn far_unique_copies(implied: &Implied) -> impl Iterator<Item = &IndexCopy> {
    implied
        .copies
        .iter()
        .filter(|c| !c.same_partition() && c.index().unique)
}

impl Prepared<'_> {
    /// The rows to read before [`Prepared::build`]: the index entity rows and every
    /// copy (old or new) in the partition, and the `unique_index` values in other
    /// partitions the items take.
    pub(super) fn to_read(&self, table: &str) -> Vec<ToRead> {
        let mut wanted: Vec<ToRead> = Vec::new();
        let mut seen: HashSet<(String, EntityKey)> = HashSet::new();
        let mut want = |table: &str, key: EntityKey, claim: Option<(Codec, String, String)>| {
            if seen.insert(read_key(table, &key)) {
                wanted.push(ToRead {
                    table: table.to_owned(),
                    key,
                    claim,
                });
            }
        };
        for key in self.entries.keys() {
            want(table, key.clone(), None);
        }
        for state in &self.states {
            for copy in near_copies(&state.old).chain(near_copies(&state.new)) {
                want(table, copy.key(), None);
            }
        }
        for (item, state) in self.items.iter().zip(&self.states) {
            for copy in far_unique_copies(&state.new) {
                let claim = Some((item.codec, state.kind.clone(), copy.name().to_owned()));
                want(copy.table().unwrap_or(table), copy.key(), claim);
            }
        }
        wanted
    }

    /// Plans the transaction, given the rows [`Prepared::to_read`] named (`reads`)
    /// and the claims among them whose writes were abandoned (`stale`).
    ///
    /// # Errors
    ///
    /// A [`ErrorKind::UniqueViolation`] when a value an item takes is held by another
    /// entity; an index entity that can't be read or would grow too large; an intent
    /// that can't be encoded. Each carries the item's index.
    pub(super) fn build(
        self,
        table: &str,
        reads: &Reads,
        stale: &HashSet<(String, EntityKey)>,
    ) -> Result<Built> {
        let mut built = Built {
            ops: Vec::new(),
            roles: Vec::new(),
            intent: None,
            codecs: Vec::new(),
        };
        for (index, (op, caller_condition)) in self.primaries.iter().cloned().enumerate() {
            built.push(op, index, Role::Primary { caller_condition });
        }
        let stored = |table: &str, key: &EntityKey| -> Option<&DynamicEntity> {
            reads.get(&read_key(table, key)).and_then(Option::as_ref)
        };
        self.plan_near_copies(table, &stored, &mut built)?;
        self.plan_entries(table, &stored, &mut built)?;
        self.plan_intent(table, &stored, stale, &mut built)?;
        Ok(built)
    }

    /// The conditional writes of the copies in the partition.
    fn plan_near_copies<'r>(
        &self,
        table: &str,
        stored: &dyn Fn(&str, &EntityKey) -> Option<&'r DynamicEntity>,
        built: &mut Built,
    ) -> Result<()> {
        // Per key: the items whose new rows imply it, and whose old rows did.
        let mut by_key: BTreeMap<EntityKey, Holders<'_>> = BTreeMap::new();
        for (index, state) in self.states.iter().enumerate() {
            for copy in near_copies(&state.new) {
                by_key.entry(copy.key()).or_default().0.push((index, copy));
            }
            for copy in near_copies(&state.old) {
                by_key.entry(copy.key()).or_default().1.push((index, copy));
            }
        }
        for (key, (news, olds)) in &by_key {
            let row = stored(table, key);
            match news.as_slice() {
                [] => {
                    for (index, copy) in olds {
                        let of = self.index_of(*index, copy);
                        if let Some(op) = release_copy(row, of, &self.items[*index].key) {
                            built.push(op, *index, Role::Copy);
                        }
                    }
                }
                [(index, copy)] => {
                    let primary = &self.items[*index].key;
                    let of = self.index_of(*index, copy);
                    let op = match put_copy(row, copy.entity(), of, table, primary) {
                        // As for index entities: an insert relies on the copy it
                        // found only under the copy's ETag.
                        Ok(None) if self.inserts(*index) => {
                            row.map(|row| replace_over(row, copy.entity()))
                        }
                        Ok(op) => op,
                        // An item of this transaction gives the value up: take it over.
                        Err(taken_err) => match (Holder::of(row, of, primary), row) {
                            (Holder::Other { owner, .. }, Some(row))
                                if self.gives_up(&owner, table, copy.name(), key) =>
                            {
                                Some(replace_over(row, copy.entity()))
                            }
                            _ => return Err(taken_err.with_batch_index(*index)),
                        },
                    };
                    if let Some(op) = op {
                        built.push(op, *index, Role::Copy);
                    }
                }
                [(first, copy), (second, _), ..] => {
                    let of = self.index_of(*second, copy);
                    let err = taken(
                        of,
                        table,
                        key.clone(),
                        self.items[*first].key.clone(),
                        &self.items[*second].key,
                    );
                    return Err(err.with_batch_index(*second));
                }
            }
        }
        Ok(())
    }

    /// Whether item `item`'s primary write is an insert: conditional on the row's
    /// absence only, so it can't tell whether the index rows it read belonged to a
    /// previous row with its key that is being deleted.
    fn inserts(&self, item: usize) -> bool {
        matches!(self.primaries.get(item), Some((WriteOp::Insert(_), _)))
    }

    /// Whether the item whose primary is `owner` held the copy of index `index` at
    /// `key` in `table` and no longer implies it: another item may take it over.
    fn gives_up(&self, owner: &EntityKey, table: &str, index: &str, key: &EntityKey) -> bool {
        let here = |copy: &&IndexCopy| {
            copy.name() == index
                && copy.key() == *key
                && copy.table().unwrap_or(table).eq_ignore_ascii_case(table)
        };
        self.items.iter().zip(&self.states).any(|(item, state)| {
            item.key == *owner
                && state.old.copies.iter().any(|c| here(&c))
                && !state.new.copies.iter().any(|c| here(&c))
        })
    }

    fn index_of<'s>(&'s self, item: usize, copy: &IndexCopy) -> IndexOf<'s> {
        IndexOf {
            kind: &self.states[item].kind,
            index: copy.name(),
        }
    }

    /// The index entity rows of the partition.
    fn plan_entries<'r>(
        &self,
        table: &str,
        stored: &dyn Fn(&str, &EntityKey) -> Option<&'r DynamicEntity>,
        built: &mut Built,
    ) -> Result<()> {
        for (key, change) in &self.entries {
            let current = stored(table, key);
            let planned = (|| {
                let members = current.map(members_of).transpose()?.unwrap_or_default();
                let mut next = members.clone();
                for member in &change.removes {
                    next.remove(member);
                }
                next.extend(change.adds.iter().cloned());
                if next == members && !self.inserts(change.item) {
                    return Ok(None);
                }
                // An insert that finds its membership already listed read a list
                // that a concurrent delete of the previous row with this key may be
                // about to change: the list is rewritten as read, under its ETag, so
                // the transaction fails (and is planned again) if it did.
                entry_op(key, current, &change.entry_type, &next)
            })();
            if let Some(op) = planned.map_err(|e: Error| e.with_batch_index(change.item))? {
                built.push(op, change.item, Role::Entry);
            }
        }
        Ok(())
    }

    /// The intent (rows in other partitions or tables, old and new) and the claims of
    /// `unique_index` values there.
    fn plan_intent<'r>(
        &self,
        table: &str,
        stored: &dyn Fn(&str, &EntityKey) -> Option<&'r DynamicEntity>,
        stale: &HashSet<(String, EntityKey)>,
        built: &mut Built,
    ) -> Result<()> {
        let mut primaries = Vec::new();
        let mut first = None;
        let mut wanted_claims: Vec<(usize, &IndexCopy, &str)> = Vec::new();
        for (index, state) in self.states.iter().enumerate() {
            let mut rows: BTreeSet<_> = rows_of(&state.old, table, false).into_keys().collect();
            rows.extend(rows_of(&state.new, table, false).into_keys());
            if rows.is_empty() {
                continue;
            }
            let item = &self.items[index];
            first.get_or_insert(index);
            primaries.push(
                PrimaryIntent::new(state.kind.clone(), item.key.row_key.clone(), rows)
                    .moved_from(item.heir_of()),
            );
            if !built.codecs.iter().any(|(kind, _)| *kind == state.kind) {
                built.codecs.push((state.kind.clone(), item.codec));
            }
            for copy in far_unique_copies(&state.new) {
                wanted_claims.push((index, copy, copy.table().unwrap_or(table)));
            }
        }
        let Some(first) = first else {
            return Ok(());
        };
        let key = new_intent_key(&self.items[first].key.partition_key);
        let mut claims = Vec::new();
        for (index, copy, copy_table) in wanted_claims {
            let primary = &self.items[index].key;
            let of = self.index_of(index, copy);
            let row = stored(copy_table, &copy.key());
            let mut claimed = copy.entity().clone();
            claimed.insert(CLAIM_PROPERTY, claim_mark(table, &key));
            let op = match Holder::of(row, of, primary) {
                // Held already: the upkeep after the commit refreshes it.
                Holder::Mine(_) => continue,
                // Held by the row a move takes over from: the upkeep after the commit
                // passes it on, while both rows exist, so it is never free.
                Holder::Other { owner, .. } if Some(&owner) == self.items[index].heir_of() => {
                    continue
                }
                Holder::Absent => WriteOp::Insert(claimed.clone()),
                Holder::Other { row, .. } | Holder::Foreign(row)
                    if stale.contains(&read_key(copy_table, &copy.key())) =>
                {
                    replace_over(row, &claimed)
                }
                // Another item of this transaction gives the value up: take it over
                // (if the transaction fails, releasing the claims gives it back).
                Holder::Other { owner, row }
                    if self.gives_up(&owner, copy_table, copy.name(), &copy.key()) =>
                {
                    replace_over(row, &claimed)
                }
                Holder::Other { owner, .. } => {
                    return Err(
                        taken(of, copy_table, copy.key(), owner, primary).with_batch_index(index)
                    );
                }
                Holder::Foreign(row) => {
                    return Err(taken(of, copy_table, copy.key(), row.key(), primary)
                        .with_batch_index(index));
                }
            };
            claims.push(Claim {
                item: index,
                kind: self.states[index].kind.clone(),
                index: copy.name(),
                table: copy_table.to_owned(),
                row: claimed,
                op,
                codec: self.items[index].codec,
            });
        }
        let doc = IntentDoc::new(IntentState::Pending, false, primaries);
        let row = super::intents::intent_row(&key, &doc).map_err(|e| e.with_batch_index(first))?;
        let op_index = built.ops.len();
        // Claims first: the transaction then turns the `claiming` intent `pending`,
        // If-Match its version (filled in once it is written).
        let op = if claims.is_empty() {
            WriteOp::Insert(row)
        } else {
            WriteOp::Replace {
                entity: row,
                if_match: IfMatch::Any,
            }
        };
        built.push(op, first, Role::Intent);
        built.intent = Some(PlannedIntent {
            key,
            doc,
            op_index,
            claims,
        });
        Ok(())
    }
}

impl Built {
    fn push(&mut self, op: WriteOp, item: usize, role: Role) {
        self.ops.push(op);
        self.roles.push((item, role));
    }

    /// Adds the insert of a fence row: the transaction commits only while nobody has
    /// written it (a move's commit marker, which `reconcile` writes to stop a move).
    pub(super) fn fence(&mut self, op: WriteOp) {
        self.push(op, 0, Role::Fence);
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

    /// Whether the failure is a race the client lost on its own condition, and
    /// certainly wrote nothing.
    pub(super) fn on_error(&self, err: &Error) -> Retry {
        let Some((_, role)) = self.failed_op(err).and_then(|i| self.roles.get(i)) else {
            return Retry::No;
        };
        match role {
            Role::Primary {
                caller_condition: true,
            }
            | Role::Fence => Retry::No,
            _ if lost_race(err) => Retry::Conflict,
            _ => Retry::No,
        }
    }
}
