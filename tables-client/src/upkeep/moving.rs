//! Moving an entity to another key (`Table::move_to`, `Table::move_to_table`): its
//! key fields change, and so its partition or table, without a moment where it is
//! lost or where a third entity can take its `unique_index` values.
//!
//! Within one partition of one table a move is one entity group transaction: the
//! delete of the old row and the insert of the new, with their index rows (a value
//! the old row gives up passes to the new in that transaction).
//!
//! Across partitions or tables no transaction spans both rows, so a move goes in
//! steps, each conditional, each finished by `reconcile()` after a crash:
//!
//! 1. **Lock**: in the old row's partition, one transaction inserts the move's row
//!    (`$move_<id>`: where to, and the fence's key) and marks the old row
//!    ([`MOVING_TO_PROPERTY`]), If-Match the version read (the caller's
//!    condition). Typed writes refuse a marked row until the move finishes.
//! 2. **Copy**: in the new row's partition, one transaction inserts the new row
//!    (marked [`MOVED_FROM_PROPERTY`]) with its index rows there, and the move's
//!    *fence* row (`$movefence_<id>`, "committed"): the move's commit point. Its
//!    `unique_index` values in other partitions stay with the old row; the new row's
//!    upkeep then passes each on, If-Match, while both rows exist, so no value is
//!    ever free.
//! 3. **Delete** the old row (If-Match its marked version) with its index rows, then
//!    unmark the new row, and leave the move's row as a tombstone.
//!
//! `reconcile()` of the old row's table finds the move's row: with the fence
//! "committed" it rolls the move forward (step 3); without a fence, once the move is
//! older than [`crate::ClientOptions::intent_retention`], it writes the fence
//! "fenced" (so a late copy can never commit) and unlocks the old row. A tombstone
//! and its fence go after the retention period.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tables_core::model::{ENTITY_TYPE_PROPERTY, MOVED_FROM_PROPERTY, MOVING_TO_PROPERTY};
use tables_core::{
    DateTime, DynamicEntity, ETag, Engine, EntityKey, Error, ErrorKind, IfMatch, KeyOf, Origin,
    Result, Row, Value, WriteOp,
};

use super::conflict::ConflictLoop;
use super::marks::refuse_marked;
use super::{run, run_fenced, Item, Mode, Moving, Shape};
use crate::table::{Table, Versioned};
use crate::write::versioned;

/// The `EntityType` of a move's row.
pub(crate) const MOVE_TYPE: &str = "$move";
/// The property holding a move's JSON.
const MOVE_PROPERTY: &str = "Move";
/// The `EntityType` of a move's fence.
const FENCE_TYPE: &str = "$movefence";
/// The property holding a fence's state.
const FENCE_PROPERTY: &str = "Fence";
/// A fence the move's copy wrote: the move committed.
const COMMITTED: &str = "committed";
/// A fence `reconcile()` wrote: the move never commits.
const FENCED: &str = "fenced";
const FORMAT_VERSION: u32 = 1;

/// Where a move stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum MoveState {
    /// The old row is marked; the move may or may not have committed.
    Locked,
    /// Finished: a tombstone (kept with its fence for the retention period).
    Done,
    /// Stopped before it committed: a tombstone.
    Aborted,
}

/// A move's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct MoveDoc {
    v: u32,
    state: MoveState,
    /// The kind of the entity moved.
    kind: String,
    /// The old row's RowKey (its partition is the move row's).
    from_rk: String,
    to_table: String,
    to_pk: String,
    to_rk: String,
    /// The fence's RowKey, in the new row's partition.
    fence_rk: String,
}

impl MoveDoc {
    fn to(&self) -> EntityKey {
        EntityKey::new(self.to_pk.clone(), self.to_rk.clone())
    }

    fn fence(&self) -> EntityKey {
        EntityKey::new(self.to_pk.clone(), self.fence_rk.clone())
    }
}

fn move_row(key: &EntityKey, doc: &MoveDoc) -> Result<DynamicEntity> {
    let text = serde_json::to_string(doc).map_err(|e| {
        Error::new(
            ErrorKind::InvalidValue,
            format!("can't encode the move {key}: {e}"),
        )
    })?;
    let mut row = DynamicEntity::new(key.partition_key.clone(), key.row_key.clone());
    row.insert(ENTITY_TYPE_PROPERTY, MOVE_TYPE);
    row.insert(MOVE_PROPERTY, text);
    Ok(row)
}

fn parse_move(row: &DynamicEntity) -> Result<MoveDoc> {
    super::intents::read_doc(row, "move row", MOVE_PROPERTY, |doc: &MoveDoc| doc.v)
}

fn fence_row(key: &EntityKey, state: &str) -> DynamicEntity {
    DynamicEntity::new(key.partition_key.clone(), key.row_key.clone())
        .with(ENTITY_TYPE_PROPERTY, FENCE_TYPE)
        .with(FENCE_PROPERTY, state)
}

/// The mark a move's new row carries: `<old table>/<move row's RowKey>`.
fn moved_from_mark(table: &str, move_key: &EntityKey) -> String {
    format!("{table}/{}", move_key.row_key)
}

/// `row` without the move's marks, ready to be written back.
fn unmarked(mut row: DynamicEntity) -> DynamicEntity {
    row.remove(MOVING_TO_PROPERTY);
    row.remove(MOVED_FROM_PROPERTY);
    row.etag = None;
    row.timestamp = None;
    row
}

fn has_mark(row: &DynamicEntity, property: &str, mark: &str) -> bool {
    row.get(property).and_then(Value::as_str) == Some(mark)
}

fn age_of(row: &DynamicEntity) -> Duration {
    let Some(written) = row.timestamp else {
        return Duration::ZERO;
    };
    let ticks = DateTime::now().ticks().saturating_sub(written.ticks());
    Duration::from_nanos(u64::try_from(ticks).unwrap_or(0).saturating_mul(100))
}

impl<T: Row> Table<T> {
    /// Moves the entity at `from` to `to` in this table: its key fields change (a
    /// ticket to another project, an order to another customer). The stored row is
    /// rewritten under the new key with every property it holds, and its index rows
    /// follow; `unique_index` values pass from the old row to the new without a
    /// moment where a third entity could take them. Conditional on `if_match` (the
    /// version of the old row).
    ///
    /// Within one partition this is one entity group transaction. Across partitions
    /// it goes in steps (see [`Table::move_to_table`]): while it runs, typed writes
    /// of either row are refused with [`ErrorKind::PreconditionFailed`], and a query
    /// may see the entity at both keys; a move a crash interrupted is finished (or,
    /// if it had not committed, undone) by [`Table::reconcile`] of this table. The
    /// entity is never absent from both keys.
    ///
    /// ```
    /// use tables_client::{Entity, IfMatch, TableServiceClient};
    ///
    /// #[derive(Entity, Debug, Clone, PartialEq)]
    /// #[entity(partition_key = "{project}", row_key = "t{id:05}")]
    /// #[entity(unique_index(name = "number", table = "TicketNumbers",
    ///                       partition_key = "{number}", row_key = "ticket"))]
    /// pub struct Ticket { pub project: String, pub id: u32, pub number: String, pub title: String }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let tickets = TableServiceClient::in_memory().table::<Ticket>("Tickets");
    /// tickets.create_if_not_exists().await?;
    /// let ticket = Ticket { project: "web".into(), id: 7, number: "T-7".into(), title: "Fix".into() };
    /// tickets.insert(&ticket).await?;
    ///
    /// let moved = tickets
    ///     .move_to(Ticket::key("web", 7)?, Ticket::key("api", 7)?, IfMatch::Any)
    ///     .await?;
    /// assert_eq!(moved.value.project, "api");
    /// assert!(tickets.get(Ticket::key("web", 7)?).await?.is_none());
    /// // Its unique number went with it.
    /// let by_number = tickets.get_by_index(Ticket::number_key("T-7")?).await?;
    /// assert_eq!(by_number.map(|t| t.value.project), Some("api".to_owned()));
    /// # Ok::<(), tables_client::Error>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// Before anything is written: [`ErrorKind::InvalidInput`] when `to` is `from`
    /// or not a key of `T`'s key design; [`ErrorKind::EntityNotFound`] when nothing
    /// is at `from`; [`ErrorKind::PreconditionFailed`] when the row changed since
    /// the version `if_match` names, or a move of it is under way;
    /// [`ErrorKind::EntityAlreadyExists`] when `to` is taken;
    /// [`ErrorKind::UniqueViolation`] when the new key gives the entity an index
    /// value another entity holds. A failure after the move committed says so and
    /// [`Error::may_have_applied`]; `reconcile()` then finishes it.
    pub async fn move_to(
        &self,
        from: impl KeyOf<T>,
        to: impl KeyOf<T>,
        if_match: IfMatch,
    ) -> Result<Versioned<T>> {
        self.move_entity(from.into_entity_key(), self, to.into_entity_key(), if_match)
            .await
    }

    /// As [`Table::move_to`], to the key `to` in another table of the same type
    /// (an archive, a table per period): always in steps, since no transaction spans
    /// two tables.
    ///
    /// # Errors
    ///
    /// As [`Table::move_to`].
    pub async fn move_to_table(
        &self,
        from: impl KeyOf<T>,
        to_table: &Table<T>,
        to: impl KeyOf<T>,
        if_match: IfMatch,
    ) -> Result<Versioned<T>> {
        self.move_entity(
            from.into_entity_key(),
            to_table,
            to.into_entity_key(),
            if_match,
        )
        .await
    }

    async fn move_entity(
        &self,
        from: EntityKey,
        to_table: &Table<T>,
        to: EntityKey,
        if_match: IfMatch,
    ) -> Result<Versioned<T>> {
        let same_table = self.name().eq_ignore_ascii_case(to_table.name());
        if same_table && from == to {
            return Err(Error::local(
                ErrorKind::InvalidInput,
                format!("the move's new key {to} is its old key; nothing was written"),
            ));
        }
        if from == to && T::HAS_INDEXES {
            // Index rows name their entity by its key, not its table: the old and the
            // new row would own the same rows, and the old row's delete would take
            // them from the new.
            return Err(Error::local(
                ErrorKind::InvalidInput,
                format!(
                    "{} has index rows, which name their entity by its key alone: a move \
                     from table {} to table {} under the same key {to} would leave both rows \
                     owning them; move it under another key, or copy it and delete the old \
                     row; nothing was written",
                    std::any::type_name::<T>(),
                    self.name(),
                    to_table.name()
                ),
            ));
        }
        let mut rounds = ConflictLoop::new(self.service().options().max_conflict_retries);
        loop {
            match self.move_once(&from, to_table, &to, &if_match).await? {
                Attempt::Moved(moved) => return Ok(moved),
                // The row changed between the read and the lock: with no condition of
                // the caller's, read it again and move what is there now.
                Attempt::Changed(err) if if_match == IfMatch::Any => rounds.lost(err).await?,
                Attempt::Changed(_) => return Err(changed_since_read(&from)),
            }
        }
    }

    /// One read-and-move of the row at `from`.
    async fn move_once(
        &self,
        from: &EntityKey,
        to_table: &Table<T>,
        to: &EntityKey,
        if_match: &IfMatch,
    ) -> Result<Attempt<T>> {
        let from = from.clone();
        let to = to.clone();
        let engine = self.engine();
        let Some(stored) = engine.get_entity(self.name(), &from, None).await? else {
            return Err(Error::new(
                ErrorKind::EntityNotFound,
                format!(
                    "there is no entity {from} in table {} to move; nothing was written",
                    self.name()
                ),
            )
            .with_origin(Origin::Service)
            .with_entity_key(from));
        };
        refuse_marked(&stored)?;
        if let IfMatch::Etag(wanted) = if_match {
            if stored.etag.as_ref() != Some(wanted) {
                return Err(changed_since_read(&from));
            }
        }
        let mut new_row = unmarked(stored.clone());
        new_row.partition_key.clone_from(&to.partition_key);
        new_row.row_key.clone_from(&to.row_key);
        // The new key must be one the type writes: its fields read back from it.
        let not_written = |why: String| {
            Error::local(
                ErrorKind::InvalidInput,
                format!(
                    "{to} is not a key {} writes: {why}; build it with the type's key \
                     builder; nothing was written",
                    std::any::type_name::<T>()
                ),
            )
        };
        let value = T::from_entity(new_row.clone())
            .map_err(|e| not_written(format!("its fields don't read back from it ({e})")))?;
        let written_key = value.entity_key()?.into_entity_key();
        if written_key != to {
            return Err(not_written(format!(
                "its fields read back as the key {written_key}"
            )));
        }
        let condition = stored.etag.clone().map_or(IfMatch::Any, IfMatch::Etag);
        if self.name().eq_ignore_ascii_case(to_table.name())
            && from.partition_key == to.partition_key
        {
            return self.move_within(from, &value, new_row, condition).await;
        }
        self.move_across(MoveStart {
            from,
            stored,
            to_table,
            to,
            value,
            new_row,
        })
        .await
    }

    /// A move within one partition: one transaction.
    async fn move_within(
        &self,
        from: EntityKey,
        value: &T,
        new_row: DynamicEntity,
        condition: IfMatch,
    ) -> Result<Attempt<T>> {
        let items = vec![
            Item::delete::<T>(from.clone(), condition)?.moving(Moving::Out),
            Item::write_row(Mode::Insert, value, new_row)?.moving(Moving::In { from }),
        ];
        match run(self.service(), self.name(), items, Shape::Single).await {
            Ok(_) => {}
            Err(err) if err.kind() == ErrorKind::PreconditionFailed && !err.may_have_applied() => {
                return Ok(Attempt::Changed(err));
            }
            Err(err) => return Err(err),
        }
        let to = value.entity_key()?.into_entity_key();
        self.read_moved(self, &to).await.map(Attempt::Moved)
    }

    /// A move across partitions or tables, in steps (see the module's docs).
    async fn move_across(&self, start: MoveStart<'_, T>) -> Result<Attempt<T>> {
        let MoveStart {
            from,
            stored,
            to_table,
            to,
            value,
            new_row,
        } = start;
        let engine = self.engine();
        let id = uuid::Uuid::new_v4().simple().to_string();
        let move_key = EntityKey::new(from.partition_key.clone(), format!("$move_{id}"));
        let doc = MoveDoc {
            v: FORMAT_VERSION,
            state: MoveState::Locked,
            kind: new_row
                .get(ENTITY_TYPE_PROPERTY)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            from_rk: from.row_key.clone(),
            to_table: to_table.name().to_owned(),
            to_pk: to.partition_key.clone(),
            to_rk: to.row_key.clone(),
            fence_rk: format!("$movefence_{id}"),
        };

        // 1. Lock the old row, with the move's row, under the version read.
        let mut locked = unmarked(stored.clone());
        locked.insert(MOVING_TO_PROPERTY, move_key.row_key.clone());
        let lock = [
            WriteOp::Insert(move_row(&move_key, &doc)?),
            WriteOp::Replace {
                entity: locked,
                if_match: stored.etag.clone().map_or(IfMatch::Any, IfMatch::Etag),
            },
        ];
        let mut locked_version = None;
        match engine.submit_batch(self.name(), &lock).await {
            Ok(outcomes) => locked_version = outcomes.get(1).and_then(|o| o.etag.clone()),
            Err(err) if err.kind() == ErrorKind::PreconditionFailed && !err.may_have_applied() => {
                return Ok(Attempt::Changed(err));
            }
            Err(err) if err.may_have_applied() => {
                // The lock's own row says whether it committed. If it lands late, it
                // only locks: reconcile() unlocks it.
                if engine
                    .get_entity(self.name(), &move_key, None)
                    .await?
                    .is_none()
                {
                    return Err(err.settled_not_applied());
                }
            }
            Err(err) => return Err(err),
        }

        // 2. The new row, with its fence: the move's commit point.
        let mut marked = new_row;
        marked.insert(MOVED_FROM_PROPERTY, moved_from_mark(self.name(), &move_key));
        let item = Item::write_row(Mode::Insert, &value, marked)?
            .moving(Moving::In { from: from.clone() });
        let fence_key = doc.fence();
        let committed = run_fenced(
            self.service(),
            to_table.name(),
            item,
            fence_row(&fence_key, COMMITTED),
        )
        .await;
        let pending = match committed {
            Ok(outcome) => outcome.pending_upkeep.is_some(),
            Err(err) => {
                let undone = if err.may_have_applied() {
                    // Whether it committed is the fence's to say; if nothing is there
                    // yet, fence it so it never can.
                    match self.fence_or_read(to_table, &fence_key).await {
                        Ok(true) => None,
                        Ok(false) => Some(err.settled_not_applied()),
                        Err(_) => return Err(err),
                    }
                } else if self.fenced_by_reconcile(to_table, &fence_key).await {
                    Some(stopped_by_reconcile(err, &from, to_table.name()))
                } else {
                    Some(err)
                };
                match undone {
                    None => true,
                    Some(err) => {
                        // Not committed: unlock the old row and close the move.
                        return Err(match self.abort_move(&move_key, &doc, &from).await {
                            Ok(()) => err,
                            Err(abort) => left_locked(err, &abort, &from),
                        });
                    }
                }
            }
        };

        // 3. The old row goes (after the new one holds every value it passes on).
        let finished = self
            .finish_move(&move_key, doc, pending, locked_version)
            .await
            .map_err(|err| committed_but(err, &from, &to))?;
        finished.map(Attempt::Moved).ok_or_else(|| {
            Error::new(
                ErrorKind::EntityNotFound,
                format!(
                    "the move of {from} to {to} in table {} finished, but another writer \
                     deleted the entity at {to} before it could be read back",
                    to_table.name()
                ),
            )
            .with_origin(Origin::Service)
            .with_entity_key(to.clone())
        })
    }

    /// Reads the moved entity at `to` in `table` back, with its version.
    async fn read_moved(&self, table: &Table<T>, to: &EntityKey) -> Result<Versioned<T>> {
        match table.engine().get_entity(table.name(), to, None).await? {
            Some(row) => versioned(unmarked_for_read(row)),
            None => Err(Error::new(
                ErrorKind::EntityNotFound,
                format!(
                    "the move to {to} in table {} committed, but another writer deleted the \
                     entity there before it could be read back",
                    table.name()
                ),
            )
            .with_origin(Origin::Service)
            .with_entity_key(to.clone())),
        }
    }

    /// Writes the fence `fenced` unless it is there: `Ok(true)` when the move
    /// committed (its own fence is there), `Ok(false)` when it is now fenced.
    async fn fence_or_read(&self, to_table: &Table<T>, fence: &EntityKey) -> Result<bool> {
        let engine = to_table.engine();
        loop {
            if let Some(row) = engine.get_entity(to_table.name(), fence, None).await? {
                return Ok(row.get(FENCE_PROPERTY).and_then(Value::as_str) == Some(COMMITTED));
            }
            match engine
                .write(to_table.name(), &WriteOp::Insert(fence_row(fence, FENCED)))
                .await
            {
                Ok(_) => return Ok(false),
                // Written meanwhile: read what it says.
                Err(err) if err.kind() == ErrorKind::EntityAlreadyExists => continue,
                Err(err) => return Err(err),
            }
        }
    }

    /// Whether `reconcile()` wrote the move's fence (it ran past the retention
    /// period), which is why its copy could not commit.
    async fn fenced_by_reconcile(&self, to_table: &Table<T>, fence: &EntityKey) -> bool {
        matches!(
            to_table.engine().get_entity(to_table.name(), fence, None).await,
            Ok(Some(row)) if has_mark(&row, FENCE_PROPERTY, FENCED)
        )
    }

    /// Unlocks the old row (if the move still holds it) and leaves the move's row as
    /// an `aborted` tombstone.
    async fn abort_move(
        &self,
        move_key: &EntityKey,
        doc: &MoveDoc,
        from: &EntityKey,
    ) -> Result<()> {
        let engine = self.engine();
        let mark = move_key.row_key.as_str();
        if let Some(row) = engine.get_entity(self.name(), from, None).await? {
            if has_mark(&row, MOVING_TO_PROPERTY, mark) {
                let op = WriteOp::Replace {
                    if_match: row.etag.clone().map_or(IfMatch::Any, IfMatch::Etag),
                    entity: unmarked(row),
                };
                engine.write(self.name(), &op).await?;
            }
        }
        let tombstone = MoveDoc {
            state: MoveState::Aborted,
            ..doc.clone()
        };
        let op = WriteOp::UpsertReplace(move_row(move_key, &tombstone)?);
        engine.write(self.name(), &op).await?;
        Ok(())
    }

    /// Rolls a committed move forward: the new row's upkeep (which passes the old
    /// row's values on), the old row's delete, the new row's unmarking, the move's
    /// tombstone. Every step is conditional and can be done again. `locked` is the
    /// version the lock gave the old row, when known: the delete is conditional on
    /// it, so a change of the old row while the move ran (by a writer that ignores
    /// the mark) is never deleted. Returns the moved entity, when it is where the
    /// move put it.
    async fn finish_move(
        &self,
        move_key: &EntityKey,
        doc: MoveDoc,
        pending: bool,
        locked: Option<ETag>,
    ) -> Result<Option<Versioned<T>>> {
        let engine = self.engine();
        let to_table = self.service().table::<T>(&doc.to_table);
        let to = doc.to();
        let from = EntityKey::new(move_key.partition_key.clone(), doc.from_rk.clone());
        if pending {
            // The new row's upkeep did not finish: finish it before the old row goes,
            // so every value has passed on while the old row still holds it.
            to_table.reconcile_intents(&to.partition_key).await?;
        }
        if let Some(old) = engine.get_entity(self.name(), &from, None).await? {
            let as_locked = match &locked {
                Some(locked) => old.etag.as_ref() == Some(locked),
                None => has_mark(&old, MOVING_TO_PROPERTY, &move_key.row_key),
            };
            if !as_locked {
                let mark = moved_from_mark(self.name(), move_key);
                let new = to_table
                    .engine()
                    .get_entity(to_table.name(), &to, None)
                    .await?;
                if !new.is_some_and(|new| has_mark(&new, MOVED_FROM_PROPERTY, &mark)) {
                    // The new row was deleted (the resolution the error below asks
                    // for): the old row is the entity; the move is over.
                    return self.abort_move(move_key, &doc, &from).await.map(|()| None);
                }
                return Err(Error::new(
                    ErrorKind::PreconditionFailed,
                    format!(
                        "the old row {from} of the move {move_key} was rewritten while the \
                         move ran, and the new row {to} in table {} exists too: both stay for \
                         you to resolve; delete the one that is wrong (the new row carries \
                         {MOVED_FROM_PROPERTY}, the old {MOVING_TO_PROPERTY} if it kept it), \
                         then reconcile()",
                        doc.to_table
                    ),
                )
                .with_origin(Origin::Service)
                .with_entity_key(from));
            }
            let condition = old.etag.clone().map_or(IfMatch::Any, IfMatch::Etag);
            let item = Item::delete::<T>(from.clone(), condition)?.moving(Moving::Out);
            run(self.service(), self.name(), vec![item], Shape::Single).await?;
        }
        let mark = moved_from_mark(self.name(), move_key);
        let mut moved = None;
        if let Some(new) = to_table
            .engine()
            .get_entity(to_table.name(), &to, None)
            .await?
        {
            if has_mark(&new, MOVED_FROM_PROPERTY, &mark) {
                let op = WriteOp::Replace {
                    if_match: new.etag.clone().map_or(IfMatch::Any, IfMatch::Etag),
                    entity: unmarked(new),
                };
                to_table.engine().write(to_table.name(), &op).await?;
            }
            moved = to_table
                .engine()
                .get_entity(to_table.name(), &to, None)
                .await?
                .map(versioned)
                .transpose()?;
        }
        let tombstone = MoveDoc {
            state: MoveState::Done,
            ..doc
        };
        let op = WriteOp::UpsertReplace(move_row(move_key, &tombstone)?);
        engine.write(self.name(), &op).await?;
        Ok(moved)
    }
}

/// What `reconcile()` did with a move's row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reconciled {
    /// A committed move, finished.
    RolledForward,
    /// A move that never committed, fenced and undone.
    Undone,
    /// A move younger than the retention period, not committed: its mover may still
    /// be at work.
    Left,
    /// A finished move's tombstone, kept for the retention period.
    TombstoneKept,
    /// A tombstone older than the retention period, removed.
    TombstoneRemoved,
}

impl<T: Row> Table<T> {
    /// Finishes or undoes the move whose row is `row` (see the module's docs).
    pub(crate) async fn reconcile_move(
        &self,
        row: DynamicEntity,
        retention: Duration,
    ) -> Result<Reconciled> {
        let doc = parse_move(&row)?;
        let move_key = row.key();
        let to_table = self.service().table::<T>(&doc.to_table);
        let fence = doc.fence();
        match doc.state {
            MoveState::Done | MoveState::Aborted => {
                if age_of(&row) <= retention {
                    return Ok(Reconciled::TombstoneKept);
                }
                // The fence first: a move row without it would look uncommitted.
                let engine = to_table.engine();
                if engine
                    .get_entity(to_table.name(), &fence, None)
                    .await?
                    .is_some()
                {
                    let op = WriteOp::Delete {
                        key: fence,
                        if_match: IfMatch::Any,
                    };
                    engine.write(to_table.name(), &op).await?;
                }
                let op = WriteOp::Delete {
                    key: move_key,
                    if_match: row.etag.clone().map_or(IfMatch::Any, IfMatch::Etag),
                };
                match self.engine().write(self.name(), &op).await {
                    // Removed, by this call or a concurrent one.
                    Ok(_) => Ok(Reconciled::TombstoneRemoved),
                    Err(err) if err.is_not_found() => Ok(Reconciled::TombstoneRemoved),
                    Err(err) => Err(err),
                }
            }
            MoveState::Locked => {
                let from = EntityKey::new(move_key.partition_key.clone(), doc.from_rk.clone());
                let committed = match to_table
                    .engine()
                    .get_entity(to_table.name(), &fence, None)
                    .await?
                {
                    Some(fence) => {
                        fence.get(FENCE_PROPERTY).and_then(Value::as_str) == Some(COMMITTED)
                    }
                    // Its mover may still be at work: leave it for the retention period.
                    None if age_of(&row) <= retention => return Ok(Reconciled::Left),
                    None => self.fence_or_read(&to_table, &fence).await?,
                };
                if committed {
                    self.finish_move(&move_key, doc, true, None).await?;
                    Ok(Reconciled::RolledForward)
                } else {
                    self.abort_move(&move_key, &doc, &from).await?;
                    Ok(Reconciled::Undone)
                }
            }
        }
    }
}

/// One attempt of a move.
enum Attempt<T> {
    Moved(Versioned<T>),
    /// The old row changed between the read and the write; nothing was written.
    Changed(Error),
}

/// The start of a move across partitions or tables.
struct MoveStart<'t, T> {
    from: EntityKey,
    stored: DynamicEntity,
    to_table: &'t Table<T>,
    to: EntityKey,
    value: T,
    new_row: DynamicEntity,
}

/// A stored row read back for the caller: the move's marks are not the entity's.
fn unmarked_for_read(mut row: DynamicEntity) -> DynamicEntity {
    row.remove(MOVING_TO_PROPERTY);
    row.remove(MOVED_FROM_PROPERTY);
    row
}

fn changed_since_read(from: &EntityKey) -> Error {
    Error::new(
        ErrorKind::PreconditionFailed,
        format!(
            "the entity {from} changed since the version the move was asked for (If-Match); \
             nothing was moved: read it again and move that version"
        ),
    )
    .with_origin(Origin::Service)
    .with_entity_key(from.clone())
}

/// The move's failure when unlocking the old row failed too.
fn left_locked(err: Error, abort: &Error, from: &EntityKey) -> Error {
    let message = format!(
        "{}; nothing was moved, but the old row {from} stays locked by the move until \
         reconcile() undoes it (unlocking it failed: {abort})",
        err.message()
    );
    err.with_message(message)
}

/// The copy's failure when `reconcile()` had fenced the move.
fn stopped_by_reconcile(err: Error, from: &EntityKey, to_table: &str) -> Error {
    let message = format!(
        "the move of {from} was stopped by reconcile(), which found it older than \
         ClientOptions::intent_retention and fenced it before its new row in table {to_table} \
         was written; nothing was moved: move it again"
    );
    Error::new(ErrorKind::PreconditionFailed, message)
        .with_origin(Origin::Service)
        .with_entity_key(from.clone())
        .with_source(err)
}

/// An error met after the move committed: the entity is at its new key, and
/// `reconcile()` finishes what is left.
fn committed_but(err: Error, from: &EntityKey, to: &EntityKey) -> Error {
    let message = format!(
        "the move of {from} to {to} committed (the entity is at its new key), but finishing it \
         failed: {}; reconcile() on the table it moved from finishes it",
        err.message()
    );
    err.with_message(message).with_may_have_applied()
}
