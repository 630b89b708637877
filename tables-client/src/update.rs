//! Changes to stored entities: typed patches ([`Patch`], [`Table::patch`]),
//! read-modify-write with retries ([`Table::update`], [`Table::update_or_insert`]),
//! and the explicit choice of what a merge does with `None` fields ([`OnNone`]).
//!
//! The service's Merge sets the properties it is sent and keeps the others; it has
//! no way to remove one (Azure stores no `null`, Azurite ignores one). So a change
//! that removes properties reads the row and replaces it under the ETag read,
//! keeping every column it does not touch, including columns the type doesn't
//! name. A lost race (another writer changed the row in between) is retried, with
//! backoff, up to [`crate::ClientOptions::max_conflict_retries`] times, unless the
//! caller gave an ETag: then the caller's version is the condition and a change
//! since is [`ErrorKind::PreconditionFailed`].

use futures::future::BoxFuture;
use tables_core::model::{EntitySchema, Operand, SeriesColumn, TypedColumn};
use tables_core::{
    DynamicEntity, EntityKey, Error, ErrorKind, IfMatch, KeyOf, Result, Row, Value, WriteOutcome,
};

use crate::table::Table;
use crate::upkeep::marks::refuse_marked;
use crate::upkeep::{lost_race, ConflictLoop, Item, Mode};

/// What a merge of a whole value does with its `None` fields (and other fields
/// that store nothing): the service's Merge keeps the stored property, which
/// silently keeps an old value the struct says is gone; so every merge states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnNone {
    /// Keep the stored property (the service's Merge, one request).
    KeepStored,
    /// Remove the stored property, so the row reads back as the value (a read and a
    /// replace under the ETag read; columns the type doesn't name are kept).
    Remove,
}

/// A typed partial update: properties to set and properties to remove, named by
/// the derive's columns (`Employee::AGE`), applied by [`Table::patch`].
///
/// Setting writes the value as the field stores it; removing deletes the stored
/// property (for an `Option` field, the row then reads back as `None`).
/// [`Patch::set_or_remove`] makes the `Option` choice explicit: `Some` sets, `None`
/// removes. A patch that only sets is one Merge request (for a type without
/// indexes); one that removes reads the row and replaces it (the service's Merge
/// can't remove).
///
/// ```
/// use tables_client::{Entity, IfMatch, Patch, TableServiceClient};
///
/// #[derive(Entity, Debug, Clone, PartialEq)]
/// #[entity(partition_key = "{department}", row_key = "{id:06}")]
/// pub struct Employee { pub department: String, pub id: u32, pub age: i32, pub nickname: Option<String> }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let employees = TableServiceClient::in_memory().table::<Employee>("Employees");
/// employees.create().await?;
/// let ann = Employee { department: "Sales".into(), id: 7, age: 40, nickname: Some("Annie".into()) };
/// employees.insert(&ann).await?;
///
/// let patch = Patch::new().set(Employee::AGE, 41).remove(Employee::NICKNAME);
/// employees.patch(Employee::key("Sales", 7)?, patch, IfMatch::Any).await?;
/// let got = employees.get(Employee::key("Sales", 7)?).await?.unwrap().value;
/// assert_eq!((got.age, got.nickname), (41, None));
/// # Ok::<(), tables_client::Error>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone, Default)]
#[must_use = "a patch does nothing until passed to `Table::patch`"]
pub struct Patch {
    sets: Vec<(&'static str, Value)>,
    removes: Vec<&'static str>,
    // The first value that has no stored form, reported by `Table::patch`.
    unstorable: Option<&'static str>,
}

impl Patch {
    /// An empty patch.
    pub fn new() -> Patch {
        Patch::default()
    }

    /// Sets `column`'s property to `value` (a later `set` or `remove` of the same
    /// column wins).
    pub fn set<E, V>(mut self, column: TypedColumn<E, V>, value: impl Operand<V>) -> Patch {
        let name = column.name();
        self.forget(name);
        match value.into_operand() {
            Ok(Some(value)) => self.sets.push((name, value)),
            Ok(None) | Err(_) => {
                self.unstorable.get_or_insert(name);
            }
        }
        self
    }

    /// Removes `column`'s property from the stored row.
    pub fn remove<E, V>(mut self, column: TypedColumn<E, V>) -> Patch {
        let name = column.name();
        self.forget(name);
        self.removes.push(name);
        self
    }

    /// Sets `column` to the value in `Some`, removes it for `None`: the explicit
    /// form of an `Option` field's update.
    pub fn set_or_remove<E, V, O: Operand<V>>(
        self,
        column: TypedColumn<E, V>,
        value: Option<O>,
    ) -> Patch {
        match value {
            Some(value) => self.set(column, value),
            None => self.remove(column),
        }
    }

    /// Whether the patch changes nothing.
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty() && self.removes.is_empty() && self.unstorable.is_none()
    }

    fn forget(&mut self, name: &str) {
        self.sets.retain(|(n, _)| *n != name);
        self.removes.retain(|n| *n != name);
    }

    /// Checks every name against `T`'s stored properties, before anything is sent.
    fn check<T: Row>(&self) -> Result<()> {
        let type_name = std::any::type_name::<T>();
        if let Some(name) = self.unstorable {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "the patch sets `{name}` of {type_name} to a value with no stored form (a u64 \
                     above i64::MAX); nothing was sent"
                ),
            ));
        }
        let schemas = T::schemas();
        let names = self
            .sets
            .iter()
            .map(|(n, _)| *n)
            .chain(self.removes.iter().copied());
        for name in names {
            let known = schemas
                .iter()
                .any(|s| s.properties.iter().any(|p| p.name == name));
            if !known {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "the patch names `{name}`, which is not a stored property of {type_name} \
                         (a column of another type?); nothing was sent"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// `row` with the patch applied.
    fn apply(&self, row: &mut DynamicEntity) {
        for name in &self.removes {
            row.remove(name);
        }
        for (name, value) in &self.sets {
            row.insert(*name, value.clone());
        }
    }
}

/// The result of [`Table::update`] and [`Table::update_or_insert`]: the value as
/// written and how the write went.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Updated<T> {
    /// The value written.
    pub value: T,
    /// The write's outcome (new ETag, attempts, pending index upkeep).
    pub outcome: WriteOutcome,
    /// Whether the entity was inserted (only `update_or_insert` inserts).
    pub inserted: bool,
}

impl<T: Row> Table<T> {
    /// Applies `patch` to the entity at `key`, if it matches `if_match`; index rows
    /// follow the patched entity.
    ///
    /// A patch that only sets, of a type without indexes, is sent as one Merge.
    /// Otherwise the row is read and replaced with the patch applied under the
    /// ETag read, keeping every other column, and the index rows follow; under
    /// `IfMatch::Any` a concurrent change in between is retried (see the module
    /// docs), under `IfMatch::Etag` it is [`ErrorKind::PreconditionFailed`].
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] before anything is sent: a column that is not a
    /// stored property of `T`, or a removal that would leave a row `T` can't read
    /// (a field that is neither an `Option` nor `#[entity(default)]`);
    /// [`ErrorKind::EntityNotFound`] if absent; [`ErrorKind::PreconditionFailed`];
    /// the engine's errors.
    pub fn patch(
        &self,
        key: impl KeyOf<T>,
        patch: Patch,
        if_match: IfMatch,
    ) -> BoxFuture<'_, Result<WriteOutcome>> {
        // Boxed so the key's type isn't part of the future's (one compile error for
        // a key of the wrong type).
        Box::pin(self.patch_entity_key(key.into_entity_key(), patch, if_match))
    }

    /// Sets point `index` of a data series (`#[entity(series)]`) alone: one Merge of
    /// one property under `if_match` (for a type without indexes), the guide's way
    /// to update one counter of a series without rewriting the others.
    ///
    /// ```
    /// use tables_client::{Entity, IfMatch, TableServiceClient};
    ///
    /// #[derive(Entity, Debug, Clone, PartialEq)]
    /// #[entity(partition_key = "{page}", row_key = "{day}")]
    /// pub struct Hits { pub page: String, pub day: String, #[entity(series)] pub hourly: [u32; 24] }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let hits = TableServiceClient::in_memory().table::<Hits>("Hits");
    /// hits.create().await?;
    /// let written = hits.insert(&Hits { page: "home".into(), day: "2026-11-24".into(), hourly: [0; 24] }).await?;
    /// let key = Hits::key("home", "2026-11-24")?;
    /// hits.set_point(&key, Hits::HOURLY, 9, 120, IfMatch::Etag(written.etag.unwrap())).await?;
    /// assert_eq!(hits.get(&key).await?.unwrap().value.hourly[9], 120);
    /// # Ok::<(), tables_client::Error>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] before anything is sent for an index past the
    /// series' end or a series of another type; otherwise as [`Table::patch`].
    pub fn set_point<V>(
        &self,
        key: impl KeyOf<T>,
        series: SeriesColumn<T, V>,
        index: usize,
        value: impl Operand<V>,
        if_match: IfMatch,
    ) -> BoxFuture<'_, Result<WriteOutcome>> {
        let Some(column) = series.point(index) else {
            let error = Error::local(
                ErrorKind::InvalidInput,
                format!(
                    "point {index} is past the end of the series {} ({} points); nothing was written",
                    series.names().first().map_or("", |first| first.trim_end_matches(|c: char| c.is_ascii_digit())),
                    series.len()
                ),
            );
            return Box::pin(std::future::ready(Err(error)));
        };
        self.patch(key, Patch::new().set(column, value), if_match)
    }

    async fn patch_entity_key(
        &self,
        key: EntityKey,
        patch: Patch,
        if_match: IfMatch,
    ) -> Result<WriteOutcome> {
        patch.check::<T>()?;
        // Sets alone are one Merge; the upkeep of an indexed type needs the row's
        // kind, which a partial row lacks, so those go through the read.
        if patch.removes.is_empty() && !T::HAS_INDEXES {
            let mut row = DynamicEntity::new(key.partition_key, key.row_key);
            patch.apply(&mut row);
            return self
                .write_item(Item::merge_properties::<T>(if_match, row)?)
                .await;
        }
        let at = key.clone();
        let written = self
            .write_over(key, if_match, |stored| {
                let mut row = stored.ok_or_else(|| not_found(&at, self.name()))?;
                patch.apply(&mut row);
                let value = T::from_entity(row.clone()).map_err(|err| {
                    Error::new(
                        ErrorKind::InvalidInput,
                        format!(
                            "the patch leaves a row {} can't read ({err}); remove only `Option` \
                             or `#[entity(default)]` fields; nothing was written",
                            std::any::type_name::<T>()
                        ),
                    )
                    .with_entity_key(row.key())
                })?;
                Ok((value, row))
            })
            .await?;
        Ok(written.outcome)
    }

    /// Reads the entity at `key`, lets `change` modify it, and replaces it under the
    /// ETag read; index rows follow. When another writer changed the entity in
    /// between, reads again and calls `change` on the new version (so `change` may
    /// run more than once: derive the change from the value, not from outside
    /// state), with backoff, up to [`crate::ClientOptions::max_conflict_retries`]
    /// times. Columns the type doesn't name are kept.
    ///
    /// ```
    /// use tables_client::{Entity, TableServiceClient};
    ///
    /// #[derive(Entity, Debug, Clone, PartialEq)]
    /// #[entity(partition_key = "{account}", row_key = "balance")]
    /// pub struct Balance { pub account: String, pub cents: i64 }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let balances = TableServiceClient::in_memory().table::<Balance>("Balances");
    /// balances.create().await?;
    /// balances.insert(&Balance { account: "a-1".into(), cents: 100 }).await?;
    /// let updated = balances.update(Balance::key("a-1")?, |b| b.cents += 50).await?;
    /// assert_eq!(updated.value.cents, 150);
    /// # Ok::<(), tables_client::Error>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::EntityNotFound`] if absent; [`ErrorKind::InvalidInput`] if
    /// `change` changed a key field (use [`Table::move_to`] to give an entity a new key);
    /// [`ErrorKind::PreconditionFailed`] after too many lost races; the write's
    /// errors ([`Error::may_have_applied`] says when a failed attempt may have
    /// applied: it is then not retried).
    pub fn update<'a, F>(
        &'a self,
        key: impl KeyOf<T>,
        change: F,
    ) -> BoxFuture<'a, Result<Updated<T>>>
    where
        F: FnMut(&mut T) + Send + 'a,
    {
        Box::pin(self.update_entity_key(key.into_entity_key(), change))
    }

    async fn update_entity_key<F>(&self, key: EntityKey, mut change: F) -> Result<Updated<T>>
    where
        F: FnMut(&mut T) + Send,
    {
        let at = key.clone();
        self.write_over(key, IfMatch::Any, |stored| {
            let stored = stored.ok_or_else(|| not_found(&at, self.name()))?;
            let mut value = T::from_entity(stored.clone())?;
            change(&mut value);
            let row = encode_over::<T>(&value, stored)?;
            same_key(&at, &row)?;
            Ok((value, row))
        })
        .await
    }

    /// [`Table::update`], or when there is no entity at `key`, inserts `insert()`
    /// after applying `change` to it (so a counter starts from `insert()`'s value
    /// and counts this change too). A concurrent insert in between is a lost race:
    /// the entity is read again and updated.
    ///
    /// # Errors
    ///
    /// As [`Table::update`]; [`ErrorKind::InvalidInput`] if `insert()`'s key is not
    /// `key`.
    pub fn update_or_insert<'a, I, F>(
        &'a self,
        key: impl KeyOf<T>,
        insert: I,
        change: F,
    ) -> BoxFuture<'a, Result<Updated<T>>>
    where
        I: FnMut() -> T + Send + 'a,
        F: FnMut(&mut T) + Send + 'a,
    {
        Box::pin(self.update_or_insert_entity_key(key.into_entity_key(), insert, change))
    }

    async fn update_or_insert_entity_key<I, F>(
        &self,
        key: EntityKey,
        mut insert: I,
        mut change: F,
    ) -> Result<Updated<T>>
    where
        I: FnMut() -> T + Send,
        F: FnMut(&mut T) + Send,
    {
        let at = key.clone();
        self.write_over(key, IfMatch::Any, |stored| {
            let (mut value, stored) = match stored {
                Some(stored) => (T::from_entity(stored.clone())?, Some(stored)),
                None => (insert(), None),
            };
            change(&mut value);
            let row = match stored {
                Some(stored) => encode_over::<T>(&value, stored)?,
                None => value.to_entity()?,
            };
            same_key(&at, &row)?;
            Ok((value, row))
        })
        .await
    }

    /// A merge of `value` whose `None` fields follow `on_none`; `upsert` inserts
    /// `value` when there is no entity at its key.
    pub(crate) async fn merge_value(
        &self,
        value: &T,
        on_none: OnNone,
        if_match: IfMatch,
        upsert: bool,
    ) -> Result<WriteOutcome> {
        if on_none == OnNone::KeepStored {
            let mode = if upsert {
                Mode::UpsertMerge
            } else {
                Mode::Merge(if_match)
            };
            return self.write_item(Item::write(mode, value)?).await;
        }
        let encoded = value.to_entity()?;
        let key = encoded.key();
        let written = self
            .write_over(key.clone(), if_match, |stored| {
                let row = match stored {
                    Some(stored) => overlay::<T>(&encoded, stored),
                    None if upsert => encoded.clone(),
                    None => return Err(not_found(&key, self.name())),
                };
                Ok((T::from_entity(row.clone())?, row))
            })
            .await?;
        Ok(written.outcome)
    }

    /// The read-write loop every change here shares: reads the row at `key`, builds
    /// the value and row to store from it (`None`: no entity), and replaces it under
    /// `if_match`'s ETag, or under the ETag read for `IfMatch::Any`, or inserts it
    /// when there was none. Under `IfMatch::Any` a lost race (the row changed,
    /// appeared or vanished since the read) reads again, with backoff and a bound.
    async fn write_over(
        &self,
        key: EntityKey,
        if_match: IfMatch,
        mut build: impl FnMut(Option<DynamicEntity>) -> Result<(T, DynamicEntity)> + Send,
    ) -> Result<Updated<T>> {
        let mut rounds = ConflictLoop::new(self.service().options().max_conflict_retries);
        loop {
            let stored = self.engine().get_entity(self.name(), &key, None).await?;
            if let Some(stored) = &stored {
                // A row a move holds: no use reading it again until the move is done.
                refuse_marked(stored)?;
            }
            let mode = match (&stored, &if_match) {
                (None, _) => Mode::Insert,
                (Some(_), IfMatch::Etag(etag)) => Mode::Replace(IfMatch::Etag(etag.clone())),
                (Some(stored), IfMatch::Any) => Mode::Replace(IfMatch::Etag(stored_etag(stored)?)),
            };
            let inserted = stored.is_none();
            let (value, mut row) = build(stored)?;
            row.etag = None;
            row.timestamp = None;
            match self.write_item(Item::write_row(mode, &value, row)?).await {
                Ok(outcome) => {
                    return Ok(Updated {
                        value,
                        outcome: with_attempts(outcome, &mut rounds),
                        inserted,
                    })
                }
                // Under the caller's ETag, a change since is the caller's to handle.
                Err(err) if lost_race(&err) && if_match == IfMatch::Any => {
                    rounds.sent_for(&err);
                    rounds.lost(err).await?;
                }
                Err(err) => return Err(err),
            }
        }
    }
}

fn not_found(key: &EntityKey, table: &str) -> Error {
    Error::new(
        ErrorKind::EntityNotFound,
        format!("no entity at {key} in table `{table}`"),
    )
    // The service's read found nothing: its answer, relayed.
    .with_origin(tables_core::Origin::Service)
    .with_entity_key(key.clone())
}

/// `value`'s row laid over the stored row: `value`'s properties replace the stored
/// ones, its type's properties it doesn't store (`None`) are removed, and columns
/// its type doesn't name are kept (all of them belong to a type with
/// `other_properties`, whose row is then exactly its own).
fn encode_over<T: Row>(value: &T, stored: DynamicEntity) -> Result<DynamicEntity> {
    let encoded = value.to_entity()?;
    Ok(overlay::<T>(&encoded, stored))
}

fn overlay<T: Row>(encoded: &DynamicEntity, mut stored: DynamicEntity) -> DynamicEntity {
    let schemas = T::schemas();
    let schema: Option<&EntitySchema> = tables_core::model::schema_of(&schemas, encoded);
    if schema.is_none_or(|s| s.other_properties) {
        let mut row = encoded.clone();
        row.etag = None;
        row.timestamp = None;
        return row;
    }
    if let Some(schema) = schema {
        for property in schema.properties {
            if !encoded.contains(property.name) {
                stored.remove(property.name);
            }
        }
    }
    for (name, value) in encoded.properties() {
        stored.insert(name, value.clone());
    }
    // The value's keys: a change that moved it is then seen (and refused).
    stored.partition_key.clone_from(&encoded.partition_key);
    stored.row_key.clone_from(&encoded.row_key);
    stored.etag = None;
    stored.timestamp = None;
    stored
}

fn stored_etag(stored: &DynamicEntity) -> Result<tables_core::ETag> {
    stored.etag.clone().ok_or_else(|| {
        Error::new(
            ErrorKind::Decode,
            format!("the engine returned {} without its ETag", stored.key()),
        )
        .with_entity_key(stored.key())
    })
}

fn same_key(key: &EntityKey, row: &DynamicEntity) -> Result<()> {
    if row.partition_key == key.partition_key && row.row_key == key.row_key {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::InvalidInput,
        format!(
            "the update changed the entity's key from {key} to {}: an update keeps its key; \
             to give the entity a new key use Table::move_to (or move_to_table), which moves \
             it with its index rows and unique values; nothing was written",
            row.key()
        ),
    )
    .with_entity_key(key.clone()))
}

/// The outcome with the requests of the lost rounds counted in.
fn with_attempts(mut outcome: WriteOutcome, rounds: &mut ConflictLoop) -> WriteOutcome {
    rounds.sent(outcome.attempts);
    outcome.attempts = rounds.attempts();
    outcome
}
