//! Settling an intent: bringing the index rows of each primary it covers in line
//! with the *current* primary, then finishing the intent.
//!
//! For each primary: read it and derive the rows it implies (never replaying a
//! stored payload); record any implied row the intent doesn't list yet (If-Match the
//! intent's version) before writing it; write the implied copies conditionally (an
//! insert where none is stored, a replace If-Match where the primary holds it; never
//! over another entity's copy) and add the primary to its index entities; delete
//! the listed copies it no longer implies (only its own, If-Match) and remove it
//! from the index entities it left; then read the primary again, and repeat if it
//! changed. Every step derives from what it reads, so settling late, twice, or
//! concurrently with writers and other workers is harmless.
//!
//! # Known gap
//!
//! A copy write delivered late (after its worker moved on and the intent was
//! finished) can leave a copy no intent lists; `Table::repair_indexes` finds and
//! removes it, and `Table::get_by_index` never returns it (it checks the primary).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use tables_core::model::index_entry_type;
use tables_core::{DynamicEntity, Engine, EntityKey, Error, ErrorKind, Origin, Result, WriteOp};

use super::conflict::ConflictLoop;
use super::index_entities::{encode_member, update_members, MemberChanges};
use super::intents::{rows_of, IntentDoc, IntentState, LiveIntent, PrimaryIntent, RowRef};
use super::rows::{is_stale_claim, put_copy, release_copy, replace_over, Holder, IndexOf};
use super::touched::{RowChange, TouchedRow};
use super::Codec;
use crate::service::TableServiceClient;

/// Who finishes an intent, and so how.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Finish {
    /// The write that made the intent. `clean` when no attempt of the write is in
    /// doubt: nothing can land late, so the intent is deleted at once; otherwise a
    /// tombstone stays for the retention period.
    Owner { clean: bool },
    /// `reconcile()`: a writer may still be waiting to learn whether its write
    /// committed, so a tombstone stays until `retention` after the intent was last
    /// written.
    Worker { retention: Duration },
    /// An index repair's own intent (no write waits on it): deleted once settled,
    /// also when some implied copy is held by another entity (reported, not retried).
    Repair,
}

/// What settling an intent did.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    /// The intent has no work left (deleted or a tombstone).
    pub(crate) finished: bool,
    /// It was a claiming intent this worker fenced (its write never commits).
    pub(crate) aborted: bool,
    /// Every index row written or removed.
    pub(crate) touched: Vec<TouchedRow>,
    /// Implied copies another entity holds (unique violations met while settling).
    pub(crate) conflicts: Vec<Error>,
}

impl Applied {
    fn touch(&mut self, table: &str, key: EntityKey, change: RowChange) {
        self.touched.push(TouchedRow {
            table: table.to_owned(),
            key,
            change,
        });
    }
}

/// Settles an intent of table `table` (every primary whose kind `codec_for` knows)
/// and finishes it as `finish` says; an intent that also covers kinds `codec_for`
/// doesn't know is rewritten with just those.
///
/// # Errors
///
/// The engine's errors; a [`ErrorKind::UniqueViolation`] when an implied copy is held
/// by another entity; [`ErrorKind::PreconditionFailed`] when writers keep changing a
/// primary (or the intent) for more than
/// [`crate::ClientOptions::max_conflict_retries`] rounds. The intent then stays for
/// a later `reconcile()`.
pub(crate) async fn apply(
    service: &TableServiceClient,
    table: &str,
    mut live: LiveIntent,
    codec_for: &(dyn Fn(&str) -> Option<Codec> + Sync),
    finish: Finish,
) -> Result<Applied> {
    let engine = service.engine().as_ref();
    let retries = service.options().max_conflict_retries;
    let mut applied = Applied::default();
    let mut rounds = ConflictLoop::new(retries);
    loop {
        if live.doc.state() == IntentState::Claiming {
            // Its writer may still be claiming: fence it, so the write can't commit
            // while its claims are released.
            match live.fence(engine, table, retries).await? {
                None => {
                    applied.finished = true;
                    return Ok(applied);
                }
                Some(IntentState::Aborted) => applied.aborted = true,
                Some(_) => {}
            }
        }
        if live.doc.has_work() {
            // Settle each primary once; a reload may reorder or add primaries, so
            // look them up by identity rather than position.
            let mut settled: Vec<(String, String)> = Vec::new();
            // Several primaries (a batch, a repair's page) first settle together, so
            // an index entity listing many of them is written once, not once each.
            let known: Vec<(String, String, Codec)> = live
                .doc
                .primaries()
                .iter()
                .filter_map(|p| Some((p.kind.clone(), p.rk.clone(), codec_for(&p.kind)?)))
                .collect();
            if known.len() > 1 {
                let mut together: Vec<Settling> = known
                    .iter()
                    .map(|(kind, row_key, codec)| Settling::new(&mut live, kind, row_key, *codec))
                    .collect();
                let mut rounds = ConflictLoop::new(retries);
                let changed = settle_round(
                    engine,
                    table,
                    &mut live,
                    &mut together,
                    retries,
                    &mut rounds,
                    &mut applied,
                )
                .await?;
                for (position, primary) in together.into_iter().enumerate() {
                    settled.push(primary.id());
                    // Changed meanwhile: its own rounds until it holds still.
                    if changed.contains(&position) {
                        settle(engine, table, &mut live, primary, retries, &mut applied).await?;
                    }
                }
            }
            loop {
                let next = live.doc.primaries().iter().find_map(|p| {
                    let id = (p.kind.clone(), p.rk.clone());
                    let codec = codec_for(&p.kind)?;
                    (!settled.contains(&id)).then_some((id, codec))
                });
                let Some((id, codec)) = next else {
                    break;
                };
                let primary = Settling::new(&mut live, &id.0, &id.1, codec);
                settle(engine, table, &mut live, primary, retries, &mut applied).await?;
                settled.push(id);
            }
        }
        // A value another entity holds: a normal intent stays (reconcile() reports it
        // until the data is fixed); a repair's intent goes, the conflict reported.
        if !matches!(finish, Finish::Repair) && !applied.conflicts.is_empty() {
            return Err(applied.conflicts.swap_remove(0));
        }
        if live.etag.is_none() {
            applied.finished = true;
            return Ok(applied);
        }
        let left: Vec<PrimaryIntent> = live
            .doc
            .primaries()
            .iter()
            .filter(|p| codec_for(&p.kind).is_none())
            .cloned()
            .collect();
        let done = if !left.is_empty() {
            let doc = IntentDoc::new(live.doc.state(), live.doc.covers_all_rows(), left)
                .only(live.doc.only_indexes());
            if live.store(engine, table, doc).await? {
                return Ok(applied);
            }
            false
        } else {
            match finish_step(&live, finish) {
                Step::Keep => true,
                Step::Delete => live.delete(engine, table).await?,
                Step::Tombstone => {
                    let tombstone = IntentDoc::new(IntentState::Done, false, Vec::new());
                    live.store(engine, table, tombstone).await?
                }
            }
        };
        if done || live.etag.is_none() {
            applied.finished = true;
            return Ok(applied);
        }
        rounds
            .lost(
                Error::new(
                    ErrorKind::PreconditionFailed,
                    format!(
                        "the intent {} kept changing while it was finished",
                        live.key
                    ),
                )
                .with_origin(Origin::Service),
            )
            .await?;
    }
}

/// What finishing a settled intent takes.
enum Step {
    /// Nothing: it is a tombstone to keep.
    Keep,
    Delete,
    /// Replace a live intent (neither done nor aborted: `finish_step` keeps those)
    /// with a `done` tombstone.
    Tombstone,
}

fn finish_step(live: &LiveIntent, finish: Finish) -> Step {
    let state = live.doc.state();
    // An aborted intent that listed claims fenced its write through its version: once
    // the claims are released, it can go.
    if state == IntentState::Aborted && !live.doc.primaries().is_empty() {
        return Step::Delete;
    }
    let tombstone = matches!(state, IntentState::Done | IntentState::Aborted);
    match finish {
        Finish::Owner { clean: true } | Finish::Repair => Step::Delete,
        Finish::Owner { clean: false } if tombstone => Step::Keep,
        Finish::Owner { clean: false } => Step::Tombstone,
        Finish::Worker { retention } if live.age() > retention => Step::Delete,
        Finish::Worker { .. } if tombstone => Step::Keep,
        Finish::Worker { .. } => Step::Tombstone,
    }
}

/// One primary of an intent being settled, and the rows this worker settles for it:
/// those listed, and every one it finds implied. Kept here too, because another
/// worker may finish the intent meanwhile: this one still undoes what it wrote from
/// a primary that changed since.
struct Settling {
    kind: String,
    key: EntityKey,
    codec: Codec,
    rows: BTreeSet<RowRef>,
    /// For the new row of a move: the row it comes from, whose copies it takes over.
    heir_of: Option<EntityKey>,
}

impl Settling {
    fn new(live: &mut LiveIntent, kind: &str, row_key: &str, codec: Codec) -> Settling {
        Settling {
            kind: kind.to_owned(),
            key: EntityKey::new(live.key.partition_key.clone(), row_key.to_owned()),
            codec,
            heir_of: live.moved_from(kind, row_key),
            rows: live.rows_of(kind, row_key).clone(),
        }
    }

    fn id(&self) -> (String, String) {
        (self.kind.clone(), self.key.row_key.clone())
    }
}

/// Brings the index rows of one primary in line with the current primary, until a
/// round sees the primary unchanged from start to end.
async fn settle(
    engine: &dyn Engine,
    table: &str,
    live: &mut LiveIntent,
    primary: Settling,
    retries: u32,
    applied: &mut Applied,
) -> Result<()> {
    let mut primaries = [primary];
    let mut rounds = ConflictLoop::new(retries);
    loop {
        let changed = settle_round(
            engine,
            table,
            live,
            &mut primaries,
            retries,
            &mut rounds,
            applied,
        )
        .await?;
        if changed.is_empty() {
            return Ok(());
        }
        let key = &primaries[0].key;
        rounds
            .lost(
                Error::new(
                    ErrorKind::PreconditionFailed,
                    format!("the index rows of {key} changed in every round of their upkeep"),
                )
                .with_entity_key(key.clone())
                .with_origin(Origin::Service),
            )
            .await?;
    }
}

/// One round of upkeep for `primaries` together: read each; record the rows they
/// imply in the intent (one write for all) before writing any; write or remove each
/// copy; change each index entity once for all the members it gains and loses
/// (one read and one write, however many of the primaries it lists); then read
/// each primary again. Returns the positions of those that changed meanwhile: a
/// further round brings their rows in line with what they hold now.
async fn settle_round(
    engine: &dyn Engine,
    table: &str,
    live: &mut LiveIntent,
    primaries: &mut [Settling],
    retries: u32,
    rounds: &mut ConflictLoop,
    applied: &mut Applied,
) -> Result<Vec<usize>> {
    let all = live.doc.covers_all_rows();
    let (before, desired) = loop {
        let mut before = Vec::with_capacity(primaries.len());
        let mut desired = Vec::with_capacity(primaries.len());
        for primary in primaries.iter_mut() {
            let row = engine.get_entity(table, &primary.key, None).await?;
            // An aborted write's primary is whatever committed without it: its rows too.
            let mut implied = match &row {
                Some(row) => rows_of(&(primary.codec.implied)(row)?, table, all),
                None => BTreeMap::new(),
            };
            implied.retain(|reference, _| live.doc.settles(&reference.index));
            primary.rows.extend(implied.keys().cloned());
            // Record every row about to be written before writing it, so a crash
            // can't leave a row no intent mentions (while the intent is still at
            // work), and take on the rows other workers listed.
            if live.is_at_work() {
                let listed = live.rows_of(&primary.kind, &primary.key.row_key);
                primary.rows.extend(listed.iter().cloned());
                let before_len = listed.len();
                listed.extend(implied.keys().cloned());
                if listed.len() != before_len {
                    live.dirty = true;
                }
            }
            before.push(row);
            desired.push(implied);
        }
        let stored = !live.dirty || !live.is_at_work() || live.persist(engine, table).await?;
        if stored || !live.is_at_work() {
            break (before, desired);
        }
        // Not stored while still at work: another worker extended it; read again.
        rounds
            .lost(
                Error::new(
                    ErrorKind::PreconditionFailed,
                    format!("another worker kept extending the intent {}", live.key),
                )
                .with_origin(Origin::Service),
            )
            .await?;
    };
    // The index entities' changes, gathered over the primaries: (table, key, type).
    let mut lists: BTreeMap<(String, EntityKey, String), MemberChanges> = BTreeMap::new();
    for (primary, desired) in primaries.iter().zip(&desired) {
        let kind = primary.kind.as_str();
        for reference in &primary.rows {
            let key = reference.key();
            let wanted = desired.get(reference);
            // A membership the entity has (add it) or no longer has (remove it).
            let membership = match wanted {
                Some(None) => Some(true),
                None if reference.entry => Some(false),
                _ => None,
            };
            if let Some(add) = membership {
                let member = encode_member(&primary.key, reference.near);
                let list = (
                    reference.table.clone(),
                    key,
                    index_entry_type(kind, &reference.index),
                );
                let changes = lists.entry(list).or_default();
                if add {
                    changes.add.insert(member);
                } else {
                    changes.remove.insert(member);
                }
                continue;
            }
            let of = IndexOf {
                kind,
                index: &reference.index,
            };
            match wanted {
                Some(Some(copy)) => {
                    let written = ensure_copy(
                        engine,
                        &reference.table,
                        copy,
                        of,
                        (&primary.key, primary.heir_of.as_ref()),
                        primary.codec,
                        retries,
                    )
                    .await;
                    match written {
                        Ok(true) => applied.touch(&reference.table, key, RowChange::CopyWritten),
                        Ok(false) => {}
                        // Another entity holds the value: the other rows still settle.
                        Err(err) if err.kind() == ErrorKind::UniqueViolation => {
                            applied.conflicts.push(err);
                        }
                        Err(err) => return Err(err),
                    }
                }
                Some(None) | None => {
                    if remove_copy(engine, &reference.table, &key, of, &primary.key, retries)
                        .await?
                    {
                        applied.touch(&reference.table, key, RowChange::CopyRemoved);
                    }
                }
            }
        }
    }
    for ((list_table, key, entry_type), changes) in lists {
        let done =
            update_members(engine, &list_table, &key, &entry_type, &changes, retries).await?;
        for (members, change) in [
            (done.add, RowChange::MemberAdded),
            (done.remove, RowChange::MemberRemoved),
        ] {
            for _ in members {
                applied.touch(&list_table, key.clone(), change);
            }
        }
    }
    let mut changed = Vec::new();
    for (position, (primary, before)) in primaries.iter().zip(&before).enumerate() {
        let after = engine.get_entity(table, &primary.key, None).await?;
        let version = |row: &Option<DynamicEntity>| row.as_ref().map(|r| r.etag.clone());
        if version(before) != version(&after) {
            changed.push(position);
        }
    }
    Ok(changed)
}

/// Writes `copy` (a copy of `primary` for `of`) to `table` unless it is stored
/// already; takes over a stale claim, and (the new row of a move) a copy the row it
/// comes from holds. `primary` is `(its key, the key of the row it comes from)`.
/// Returns whether it wrote.
///
/// # Errors
///
/// A [`ErrorKind::UniqueViolation`] when another entity holds the key; the engine's
/// errors; [`ErrorKind::PreconditionFailed`] after too many lost races.
pub(crate) async fn ensure_copy(
    engine: &dyn Engine,
    table: &str,
    copy: &DynamicEntity,
    of: IndexOf<'_>,
    (primary, heir_of): (&EntityKey, Option<&EntityKey>),
    codec: Codec,
    retries: u32,
) -> Result<bool> {
    let key = copy.key();
    let mut rounds = ConflictLoop::new(retries);
    loop {
        let stored = engine.get_entity(table, &key, None).await?;
        let op = match put_copy(stored.as_ref(), copy, of, table, primary) {
            Ok(None) => return Ok(false),
            Ok(Some(op)) => op,
            Err(taken) => match &stored {
                // A move passes the copy on, If-Match, from its old row to its new.
                Some(row)
                    if matches!(
                        Holder::of(Some(row), of, primary),
                        Holder::Other { owner, .. } if Some(&owner) == heir_of
                    ) =>
                {
                    replace_over(row, copy)
                }
                Some(row) if is_stale_claim(engine, row, of, codec).await? => {
                    replace_over(row, copy)
                }
                _ => return Err(taken),
            },
        };
        if rounds.write_planned(engine, table, &op).await? {
            return Ok(true);
        }
    }
}

/// Deletes the copy at `key` in `table` if it is still `primary`'s, If-Match its
/// version. Returns whether it deleted one.
pub(crate) async fn remove_copy(
    engine: &dyn Engine,
    table: &str,
    key: &EntityKey,
    of: IndexOf<'_>,
    primary: &EntityKey,
    retries: u32,
) -> Result<bool> {
    let mut rounds = ConflictLoop::new(retries);
    loop {
        let stored = engine.get_entity(table, key, None).await?;
        let Some(op) = release_copy(stored.as_ref(), of, primary) else {
            return Ok(false);
        };
        if rounds.write_planned(engine, table, &op).await? {
            return Ok(true);
        }
    }
}

/// The fence of a write whose intent was to be inserted by its transaction: an
/// `aborted` tombstone at the intent's key, so a late delivery of the transaction
/// fails. `Ok(true)` when placed; `Ok(false)` when the intent is there after all.
pub(crate) async fn fence_absent(
    engine: &dyn Engine,
    table: &str,
    key: &EntityKey,
) -> Result<bool> {
    let tombstone = IntentDoc::new(IntentState::Aborted, false, Vec::new());
    let op = WriteOp::Insert(super::intents::intent_row(key, &tombstone)?);
    match engine.write(table, &op).await {
        Ok(_) => Ok(true),
        Err(err) if err.kind() == ErrorKind::EntityAlreadyExists => Ok(false),
        Err(err) => Err(err),
    }
}
