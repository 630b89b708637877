//! Typed writes in the service's six modes, and point reads.
//!
//! Every write keeps the type's indexes in step (see the `upkeep` module): copies
//! and index entities in the primary's partition change in the same entity group
//! transaction as the primary; those elsewhere follow through an intent, applied
//! right after the commit (and by [`Table::reconcile`] after a crash).

use std::borrow::Cow;

use futures::future::BoxFuture;
use tables_core::{
    DynamicEntity, EntityKey, Error, ErrorKind, IfMatch, KeyOf, Result, Row, WriteOutcome,
};

use crate::table::{Table, Versioned};
use crate::update::OnNone;
use crate::upkeep::{self, Item, Mode};

impl<T: Row> Table<T> {
    /// Inserts `value`, with its index rows.
    ///
    /// Index copies and index entities in `value`'s partition are written in the
    /// same entity group transaction (all or nothing). Those in other partitions or
    /// tables are written right after it commits, through an intent row stored in
    /// that transaction (a `unique_index` value there is claimed before it); if that
    /// step fails (a crash, a transient error), the write still succeeds, its
    /// [`WriteOutcome::pending_upkeep`] says what is left and why, and
    /// [`Table::reconcile`] finishes the intent. The same holds for every write mode
    /// below.
    ///
    /// A write applies at most once. When an answer is lost, the client learns from
    /// the intent (the transaction's commit marker) whether the transaction
    /// committed; an error that can't rule it out says so
    /// ([`Error::may_have_applied`]). [`WriteOutcome::attempts`] and
    /// [`WriteOutcome::client_request_id`] tell how the call went (see
    /// [`crate::ClientRequestId`] to choose the id).
    ///
    /// ```
    /// use tables_client::{Entity, ErrorKind, TableServiceClient};
    ///
    /// #[derive(Entity, Debug, Clone, PartialEq)]
    /// #[entity(partition_key = "{department}", row_key = "empid_{id:06}")]
    /// #[entity(unique_index(name = "email", row_key = "email_{email}"))]
    /// pub struct Employee { pub department: String, pub id: u32, pub email: String }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let service = TableServiceClient::in_memory();
    /// let employees = service.table::<Employee>("Employees");
    /// employees.create().await?;
    /// let ann = Employee { department: "Sales".into(), id: 7, email: "ann@x.com".into() };
    /// employees.insert(&ann).await?;
    /// let err = employees.insert(&ann).await.unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
    /// let found = employees.get_by_index(Employee::email_key("Sales", "ann@x.com")?).await?;
    /// assert_eq!(found.map(|v| v.value), Some(ann));
    /// # Ok::<(), tables_client::Error>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::EntityAlreadyExists`] if the key is taken;
    /// [`ErrorKind::UniqueViolation`] if a `unique_index` value belongs to another
    /// entity ([`Error::unique_violation`] names it; nothing is written);
    /// [`ErrorKind::InvalidInput`] when written through a type that lacks indexes
    /// its kind declares (it names the type to write through); encoding and
    /// validation errors before anything is sent; the engine's errors.
    pub async fn insert(&self, value: &T) -> Result<WriteOutcome> {
        self.write_item(Item::write(Mode::Insert, value)?).await
    }

    /// Replaces the stored entity with `value` (properties `value` doesn't store
    /// are removed), if it matches `if_match`. Index rows the old value implied and
    /// the new one doesn't are removed.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::EntityNotFound`] if absent; [`ErrorKind::PreconditionFailed`] if
    /// the ETag differs; the engine's errors.
    pub async fn replace(&self, value: &T, if_match: IfMatch) -> Result<WriteOutcome> {
        self.write_item(Item::write(Mode::Replace(if_match), value)?)
            .await
    }

    /// Merges `value` into the stored entity, if it matches `if_match`: its
    /// properties replace the stored ones, and `on_none` says what happens to a
    /// stored property `value` has no value for (a `None` field):
    /// [`OnNone::KeepStored`] keeps it (the service's Merge, one request),
    /// [`OnNone::Remove`] removes it (a read and a replace, so the row reads back as
    /// `value`; columns the type doesn't name are kept either way). The index rows
    /// follow the merged row. To change chosen properties only, see [`Table::patch`].
    ///
    /// # Errors
    ///
    /// As [`Table::replace`].
    pub async fn merge(
        &self,
        value: &T,
        on_none: OnNone,
        if_match: IfMatch,
    ) -> Result<WriteOutcome> {
        self.merge_value(value, on_none, if_match, false).await
    }

    /// Inserts `value`, or replaces whatever is stored under its key.
    ///
    /// # Errors
    ///
    /// Encoding and validation errors; the engine's errors;
    /// [`ErrorKind::PreconditionFailed`] if index upkeep loses more than
    /// [`crate::ClientOptions::max_conflict_retries`] races in a row.
    pub async fn upsert(&self, value: &T) -> Result<WriteOutcome> {
        self.write_item(Item::write(Mode::UpsertReplace, value)?)
            .await
    }

    /// Inserts `value`, or merges it into whatever is stored under its key, its
    /// `None` fields following `on_none` (see [`Table::merge`]).
    ///
    /// # Errors
    ///
    /// As [`Table::upsert`].
    pub async fn upsert_merge(&self, value: &T, on_none: OnNone) -> Result<WriteOutcome> {
        self.merge_value(value, on_none, IfMatch::Any, true).await
    }

    /// Deletes the entity at `key` (a [`tables_core::Key`] of a type the table holds,
    /// or a reference to one) if it matches `if_match`, with its index copies and its
    /// memberships in index entities.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::EntityNotFound`] if absent; [`ErrorKind::PreconditionFailed`] if
    /// the ETag differs; the engine's errors.
    pub fn delete(&self, key: impl KeyOf<T>, if_match: IfMatch) -> BoxFuture<'_, Result<()>> {
        // Boxed so the key's type isn't part of the future's: a key of the wrong
        // type is then one compile error, not three.
        Box::pin(self.delete_entity_key(key.into_entity_key(), if_match))
    }

    async fn delete_entity_key(&self, key: EntityKey, if_match: IfMatch) -> Result<()> {
        self.write_item(Item::delete::<T>(key, if_match)?)
            .await
            .map(drop)
    }

    /// Deletes the entity at `key` (any version) if there is one. Returns whether
    /// there was.
    ///
    /// # Errors
    ///
    /// As [`Table::delete`], except that an entity that certainly wasn't there is
    /// not an error. An absent entity met after a doubtful attempt (a lost answer) is
    /// one: the entity is gone, but whether this call deleted it can't be told, so
    /// the error says the delete may have applied ([`Error::may_have_applied`]).
    pub fn delete_if_exists(&self, key: impl KeyOf<T>) -> BoxFuture<'_, Result<bool>> {
        Box::pin(self.delete_entity_key_if_exists(key.into_entity_key()))
    }

    async fn delete_entity_key_if_exists(&self, key: EntityKey) -> Result<bool> {
        match self.delete_entity_key(key, IfMatch::Any).await {
            Ok(()) => Ok(true),
            Err(err) if err.kind() == ErrorKind::EntityNotFound && !err.may_have_applied() => {
                Ok(false)
            }
            Err(err) => Err(err),
        }
    }

    /// Reads the entity at `key` (a [`tables_core::Key`] of a type the table holds, or
    /// a reference to one: `T::key(..)`, `value.entity_key()?`) with its ETag and
    /// timestamp; `None` if absent. A key of another type does not compile; a key
    /// from elsewhere becomes one with [`tables_core::Key::from_entity_key`].
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Decode`] if the row is not a `T` (another kind, an index row);
    /// the engine's errors.
    pub fn get<'a>(
        &'a self,
        key: impl KeyOf<T> + 'a,
    ) -> BoxFuture<'a, Result<Option<Versioned<T>>>> {
        // Boxed so the key's type isn't part of the future's (see `delete`). A
        // borrowed key is read in place, not copied.
        Box::pin(self.get_entity_key(key.into_key_cow()))
    }

    async fn get_entity_key(&self, key: Cow<'_, EntityKey>) -> Result<Option<Versioned<T>>> {
        self.engine()
            .get_entity(self.name(), &key, None)
            .await?
            .map(versioned)
            .transpose()
    }

    pub(crate) async fn write_item(&self, item: Item) -> Result<WriteOutcome> {
        let outcomes = upkeep::run(
            self.service(),
            self.name(),
            vec![item],
            upkeep::Shape::Single,
        )
        .await?;
        outcomes.into_iter().next().ok_or_else(|| {
            Error::new(
                ErrorKind::Server,
                "the engine answered a write with no outcome",
            )
            .with_origin(tables_core::Origin::Response)
        })
    }
}

/// Decodes a stored row with its version.
///
/// # Errors
///
/// [`ErrorKind::Decode`] if the row has no ETag or timestamp, or is not a `T`.
pub(crate) fn versioned<T: Row>(mut row: DynamicEntity) -> Result<Versioned<T>> {
    let (Some(etag), Some(timestamp)) = (row.etag.take(), row.timestamp.take()) else {
        return Err(Error::new(
            ErrorKind::Decode,
            format!(
                "the engine returned {} without its ETag and timestamp",
                row.key()
            ),
        )
        .with_entity_key(row.key()));
    };
    Ok(Versioned {
        value: T::from_entity(row)?,
        etag,
        timestamp,
    })
}
