//! [`Transaction`]: several writes to one partition, of any entity types and modes,
//! committed together as one entity group transaction.

use tables_core::key::validate_table_name;
use tables_core::model::PartitionOf;
use tables_core::{
    validate_batch_before_layout, Error, ErrorKind, IfMatch, Key, Result, Row, WriteOp,
    WriteOutcome, MAX_BATCH_OPERATIONS,
};

use crate::service::TableServiceClient;
use crate::table::Table;
use crate::update::OnNone;
use crate::upkeep::{self, Item, Mode};

impl TableServiceClient {
    /// A transaction over partition `partition_key` of table `table`: add writes
    /// with the builder methods, then [`Transaction::submit`]. (With a typed
    /// table, [`Table::transaction`] takes the partition from a value or a key.)
    pub fn transaction(&self, table: &str, partition_key: &str) -> Transaction {
        Transaction {
            service: self.clone(),
            table: table.to_owned(),
            partition_key: Ok(partition_key.to_owned()),
            items: Vec::new(),
        }
    }
}

impl<T: Row> Table<T> {
    /// A transaction over this table, in the partition of `partition`: a value the
    /// table holds (`&ann`) or its key (`Employee::key(..)?`), so no PartitionKey is
    /// written twice. Add writes (of any types) with the builder methods, then
    /// [`Transaction::submit`]; a key that can't be encoded fails at `submit`, before
    /// anything is sent.
    ///
    /// ```
    /// use tables_client::{Entity, TableServiceClient};
    ///
    /// #[derive(Entity, Debug, Clone, PartialEq)]
    /// #[entity(partition_key = "{department}", row_key = "empid_{id:06}")]
    /// pub struct Employee { pub department: String, pub id: u32 }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let employees = TableServiceClient::in_memory().table::<Employee>("Employees");
    /// employees.create().await?;
    /// let hires: Vec<Employee> =
    ///     (1..=3).map(|id| Employee { department: "Sales".into(), id }).collect();
    /// let outcomes = employees.transaction(&hires[0]).insert_all(&hires).submit().await?;
    /// assert_eq!(outcomes.len(), 3);
    /// let keys = (1..=3).map(|id| Employee::key("Sales", id)).collect::<Result<Vec<_>, _>>()?;
    /// employees.transaction(&keys[0]).delete_all(keys.clone()).submit().await?;
    /// # Ok::<(), tables_client::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn transaction(&self, partition: impl PartitionOf<T>) -> Transaction {
        Transaction {
            service: self.service().clone(),
            table: self.name().to_owned(),
            partition_key: partition.into_partition_key(),
            items: Vec::new(),
        }
    }
}

/// Writes to one partition, of any entity types and modes, committed all or none
/// as one entity group transaction, with the index copies and index entities the
/// written types keep in that partition. Index rows in other partitions or tables
/// follow through one intent, as for single writes.
///
/// The service's limits apply to the whole transaction *including* the index rows:
/// 1 to 100 operations, one partition, each row once, 4 MiB. They are checked
/// before anything is written, and every error names the caller's item
/// ([`Error::batch_index`]: the position of the builder call, from 0).
///
/// ```
/// use tables_client::{Entity, IfMatch, OnNone, TableServiceClient};
///
/// #[derive(Entity, Debug, Clone, PartialEq)]
/// #[entity(partition_key = "{name}", row_key = "department")]
/// pub struct Department { pub name: String, pub employee_count: i32 }
///
/// #[derive(Entity, Debug, Clone, PartialEq)]
/// #[entity(partition_key = "{department}", row_key = "empid_{id:06}")]
/// pub struct Employee { pub department: String, pub id: u32, pub name: String }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let service = TableServiceClient::in_memory();
/// service.create_table("Staff").await?;
/// let sales = Department { name: "Sales".into(), employee_count: 1 };
/// let ann = Employee { department: "Sales".into(), id: 1, name: "Ann".into() };
/// let outcomes = service
///     .transaction("Staff", "Sales")
///     .upsert(&sales)
///     .insert(&ann)
///     .submit()
///     .await?;
/// assert_eq!(outcomes.len(), 2);
///
/// // A failing item names itself; nothing of the transaction is written.
/// let bob = Employee { department: "Sales".into(), id: 2, name: "Bob".into() };
/// let err = service
///     .transaction("Staff", "Sales")
///     .merge(&Department { employee_count: 2, ..sales }, OnNone::KeepStored, IfMatch::Any)
///     .insert(&bob)
///     .insert(&ann)
///     .submit()
///     .await
///     .unwrap_err();
/// assert_eq!(err.batch_index(), Some(2));
/// let bob_key = Employee::key("Sales", 2)?;
/// assert!(service.table::<Employee>("Staff").get(bob_key).await?.is_none());
/// # Ok::<(), tables_client::Error>(())
/// # }).unwrap();
/// ```
#[derive(Debug)]
#[must_use = "a transaction does nothing until it is submitted"]
pub struct Transaction {
    service: TableServiceClient,
    table: String,
    /// The partition, or the error encoding the key that named it.
    partition_key: Result<String>,
    items: Vec<Result<Item>>,
}

impl Transaction {
    /// Adds an insert of `value` (fails if its key is taken).
    pub fn insert<T: Row>(self, value: &T) -> Transaction {
        self.push(Item::write(Mode::Insert, value))
    }

    /// Adds a replace of the stored entity with `value`, if it matches `if_match`.
    pub fn replace<T: Row>(self, value: &T, if_match: IfMatch) -> Transaction {
        self.push(Item::write(Mode::Replace(if_match), value))
    }

    /// Adds a merge of `value` into the stored entity, if it matches `if_match`.
    /// A transaction can only keep the stored properties of `None` fields
    /// ([`OnNone::KeepStored`]): removing them needs a read before the write (use
    /// `replace` here, or [`crate::Table::merge`]); [`OnNone::Remove`] makes
    /// `submit` fail naming the item, before anything is sent.
    pub fn merge<T: Row>(self, value: &T, on_none: OnNone, if_match: IfMatch) -> Transaction {
        let item = keeping_nones(on_none).and_then(|()| Item::write(Mode::Merge(if_match), value));
        self.push(item)
    }

    /// Adds an insert-or-replace of `value`.
    pub fn upsert<T: Row>(self, value: &T) -> Transaction {
        self.push(Item::write(Mode::UpsertReplace, value))
    }

    /// Adds an insert-or-merge of `value` (`on_none` as in [`Transaction::merge`]).
    pub fn upsert_merge<T: Row>(self, value: &T, on_none: OnNone) -> Transaction {
        let item = keeping_nones(on_none).and_then(|()| Item::write(Mode::UpsertMerge, value));
        self.push(item)
    }

    /// Adds a delete of the `T` at `key`, if it matches `if_match`, with its index
    /// rows.
    pub fn delete<T: Row>(self, key: Key<T>, if_match: IfMatch) -> Transaction {
        self.push(Item::delete::<T>(key.into_entity_key(), if_match))
    }

    /// Adds an insert of each of `values`, in order.
    pub fn insert_all<'a, T: Row>(self, values: impl IntoIterator<Item = &'a T>) -> Transaction {
        values.into_iter().fold(self, Transaction::insert)
    }

    /// Adds an insert-or-replace of each of `values`, in order.
    pub fn upsert_all<'a, T: Row>(self, values: impl IntoIterator<Item = &'a T>) -> Transaction {
        values.into_iter().fold(self, Transaction::upsert)
    }

    /// Adds a replace of each of `values` (any version), in order.
    pub fn replace_all<'a, T: Row>(self, values: impl IntoIterator<Item = &'a T>) -> Transaction {
        values
            .into_iter()
            .fold(self, |tx, value| tx.replace(value, IfMatch::Any))
    }

    /// Adds a delete of the entity at each of `keys` (any version), in order.
    pub fn delete_all<T: Row>(self, keys: impl IntoIterator<Item = Key<T>>) -> Transaction {
        keys.into_iter()
            .fold(self, |tx, key| tx.delete(key, IfMatch::Any))
    }

    /// How many items were added.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether no item was added.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    fn push(mut self, item: Result<Item>) -> Transaction {
        self.items.push(item);
        self
    }

    /// Validates the transaction, then commits it. Returns one outcome per item, in
    /// the order they were added.
    ///
    /// # Errors
    ///
    /// Before anything is sent: [`ErrorKind::InvalidTableName`];
    /// [`ErrorKind::InvalidBatch`] for no item, more than 100 operations (counting
    /// index rows), an item in another partition, or a row written twice; an item's
    /// encoding or validation error. Then the failing item's error
    /// ([`ErrorKind::EntityAlreadyExists`], [`ErrorKind::EntityNotFound`],
    /// [`ErrorKind::PreconditionFailed`]...). Every item error carries the item's
    /// index ([`Error::batch_index`]).
    pub async fn submit(self) -> Result<Vec<WriteOutcome>> {
        validate_table_name(&self.table)?;
        let partition_key = self.partition_key?;
        if self.items.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidBatch,
                "the transaction has no item; add at least one write before submitting",
            ));
        }
        let mut items = Vec::with_capacity(self.items.len());
        for (index, item) in self.items.into_iter().enumerate() {
            let item = item.map_err(|e| e.with_batch_index(index))?;
            if item.key().partition_key != partition_key {
                return Err(Error::new(
                    ErrorKind::InvalidBatch,
                    format!(
                        "item {index} writes {} but the transaction is for PartitionKey {:?}; \
                         a transaction covers one partition",
                        item.key(),
                        partition_key
                    ),
                )
                .with_service_code("CommandsInBatchActOnDifferentPartitions")
                .with_batch_index(index)
                .with_entity_key(item.key().clone()));
            }
            items.push(item);
        }
        let ops: Vec<WriteOp> = items.iter().map(Item::plain_op).collect();
        validate_batch_before_layout(&ops)?;
        check_known_count(&items)?;
        upkeep::run(&self.service, &self.table, items, upkeep::Shape::Batch).await
    }
}

/// Fails when the operations known before reading (the items, their copies in the
/// partition, the intent) already exceed the limit, naming the item that crosses it.
fn check_known_count(items: &[Item]) -> Result<()> {
    let mut count = usize::from(items.iter().any(Item::known_intent));
    for (index, item) in items.iter().enumerate() {
        count += 1 + item.known_partition_copies();
        if count > MAX_BATCH_OPERATIONS {
            return Err(Error::new(
                ErrorKind::InvalidBatch,
                format!(
                    "with the index rows it keeps in the partition, item {index} takes the \
                     transaction to {count} operations; an entity group transaction holds at \
                     most {MAX_BATCH_OPERATIONS} (split it into several transactions)"
                ),
            )
            .with_service_code(tables_core::error_code::INVALID_INPUT)
            .with_batch_index(index));
        }
    }
    Ok(())
}

/// A transaction's merges keep the stored properties of `None` fields: a removal
/// needs a read the transaction can't make.
fn keeping_nones(on_none: OnNone) -> Result<()> {
    match on_none {
        OnNone::KeepStored => Ok(()),
        OnNone::Remove => Err(Error::new(
            ErrorKind::InvalidInput,
            "a transaction can't merge with OnNone::Remove: removing properties needs a read \
             before the write; add a replace of the whole value instead, or use Table::merge",
        )),
    }
}
