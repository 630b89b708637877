//! Typed queries over an index's copies: [`Table::query_index`], the design guide's
//! alternate sort orders. A copy index keeps a row per entity under other keys (an
//! email, an assignee and a time); a query over one partition of it reads the
//! entities in that index's order, with the query builder's ranges, filters, `take`,
//! pages and streams.

use std::sync::Arc;

use tables_core::__private::str_eq;
use tables_core::model::{
    copy_carries, index_copy_type, Contains, CopyIndex, IndexPartition, ProjectedPartition,
    ENTITY_TYPE_PROPERTY,
};
use tables_core::{col, DynamicEntity, EntityKey, Result, Row};

use crate::query::Query;
use crate::table::Table;

/// Whether a stored primary row still implies index `index`'s copy at `key`.
pub(crate) type Implies = fn(&DynamicEntity, &str, &EntityKey) -> Result<bool>;

/// What a query reads: the table's primary rows, or one index's copies.
#[derive(Clone)]
pub(crate) enum Source {
    /// Primary rows of the query's kinds.
    Primary,
    /// The copies of one index.
    Copies(CopySource),
}

/// The copies of one index, and how to check one against its primary.
#[derive(Clone)]
pub(crate) struct CopySource {
    pub(crate) index: &'static str,
    /// The table of the primary rows (the query's own table is the index's).
    pub(crate) primary_table: Arc<str>,
    pub(crate) implies: Implies,
    /// Whether each copy is checked against its primary, and the primary returned.
    pub(crate) verified: bool,
}

fn implies<E: Row>(primary: &DynamicEntity, index: &str, key: &EntityKey) -> Result<bool> {
    let value = E::from_entity(primary.clone())?;
    Ok(value
        .index_copies(primary)?
        .iter()
        .any(|copy| copy.name() == index && copy.key() == *key))
}

/// What [`Table::query_index`] reads: one partition of a copy index, as the entity
/// type (an [`IndexPartition`] of a full copy, `index(..)` without `include`) or as
/// a projection of it ([`IndexPartition::project`], the only way for a partial copy).
/// Which properties a copy carries is checked at compile time.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a partition of a copy index of a type a `Table<{T}>` holds",
    label = "expected a partition built by the derive's `<index>_partition(..)`",
    note = "index entities (`index_entity(..)`) are read with `get_all_by_index`"
)]
pub trait IndexRead<T> {
    /// What the query returns.
    type Item: Row;

    #[doc(hidden)]
    fn into_parts(self) -> IndexParts;
}

/// An [`IndexRead`] taken apart.
#[doc(hidden)]
#[derive(Debug)]
pub struct IndexParts {
    index: &'static str,
    /// The kind whose copies are read.
    kind: &'static str,
    /// The index's own table, if it has one.
    table: Option<&'static str>,
    partition_key: String,
    implies: Implies,
}

impl std::fmt::Debug for CopySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CopySource")
            .field("index", &self.index)
            .field("primary_table", &self.primary_table)
            .field("verified", &self.verified)
            .finish_non_exhaustive()
    }
}

fn parts<E: CopyIndex<I>, const I: usize>(partition: IndexPartition<E, I>) -> IndexParts {
    let index = E::INDEX_NAME;
    let table = E::schema().index(index).and_then(|schema| schema.table);
    IndexParts {
        index,
        kind: E::KIND,
        table,
        partition_key: partition.into_partition_key(),
        implies: implies::<E>,
    }
}

impl<T: Contains<E>, E: CopyIndex<I>, const I: usize> IndexRead<T> for IndexPartition<E, I> {
    type Item = E;

    fn into_parts(self) -> IndexParts {
        const {
            assert!(
                E::INCLUDE.is_none(),
                "this index's copies carry only the properties it `include`s, so they can't be read \
                 as the whole entity: read them as a projection of those properties, \
                 `T::<index>_partition(..)?.project::<P>()`"
            );
        }
        parts(self)
    }
}

impl<T, P, E, const I: usize> IndexRead<T> for ProjectedPartition<P, E, I>
where
    T: Contains<E>,
    E: CopyIndex<I>,
    P: tables_core::Entity,
{
    type Item = P;

    fn into_parts(self) -> IndexParts {
        const {
            assert!(
                str_eq(P::KIND, E::KIND),
                "the projection is of another kind than the index's entity type: give it the \
                 same `kind`"
            );
            assert!(
                str_eq(P::KEY_TEMPLATES[0], E::KEY_TEMPLATES[0])
                    && str_eq(P::KEY_TEMPLATES[1], E::KEY_TEMPLATES[1]),
                "the projection's key templates differ from the index's entity type's: a \
                 projection has the same partition_key and row_key"
            );
            assert!(
                copy_carries(E::INCLUDE, P::PROPERTIES),
                "the projection names a property this index's copies don't carry: add it to \
                 the index's `include(..)`, or leave it out of the projection"
            );
        }
        parts(self.into_partition())
    }
}

impl<T: Row> Table<T> {
    /// A query over one partition of a copy index (`index(..)` or
    /// `unique_index(..)`): the entities in the index's order, with the query
    /// builder's RowKey ranges (the derive's `T::<index>_<field>_range(..)` and
    /// `_prefix(..)`), filters on the copies' properties, `take`, pages, streams.
    /// The design guide's alternate sort orders: a person's tickets newest first,
    /// every email starting with `a`.
    ///
    /// What a reader sees: an index in the entity's own partition is written in the
    /// entity's transaction, so its copies are always the entities as stored. An
    /// index in another partition or table is written after the entity (eventually
    /// consistent): until its intent is settled (at once, or by `reconcile`) a query
    /// may miss an entity just written, or show one as it was before a change, or one
    /// already deleted. [`Query::verified`] checks each copy against its entity and
    /// returns only the entities that still imply it, as stored (one point read per
    /// row, concurrently). Without it, each item carries the copy's values and the
    /// *copy's* ETag: a conditional write with it succeeds only if the entity is
    /// unchanged since the copy was written, and may be refused even then; read the
    /// entity (or use `verified`) to write it back.
    ///
    /// ```
    /// use tables_client::{Entity, TableServiceClient};
    ///
    /// #[derive(Entity, Debug, Clone, PartialEq)]
    /// #[entity(partition_key = "{project}", row_key = "t{id:05}")]
    /// #[entity(index(name = "by_assignee", table = "TicketsByAssignee",
    ///                partition_key = "{assignee}", row_key = "{opened:rticks}_{project}_{id:05}"))]
    /// pub struct Ticket {
    ///     pub project: String,
    ///     pub id: u32,
    ///     pub assignee: String,
    ///     pub opened: tables_client::DateTime,
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let tickets = TableServiceClient::in_memory().table::<Ticket>("Tickets");
    /// tickets.create_if_not_exists().await?; // and TicketsByAssignee
    /// for (id, day) in [(1, 3), (2, 5), (3, 4)] {
    ///     let opened = tables_client::DateTime::from_ymd_hms(2026, 11, day, 9, 0, 0).unwrap();
    ///     tickets.insert(&Ticket { project: "web".into(), id, assignee: "ann".into(), opened }).await?;
    /// }
    /// // Ann's tickets, newest first, two at a time.
    /// let newest = tickets
    ///     .query_index(Ticket::by_assignee_partition("ann")?)
    ///     .page_size(2)
    ///     .page(None)
    ///     .await?;
    /// let ids: Vec<u32> = newest.items.iter().map(|t| t.value.id).collect();
    /// assert_eq!(ids, [2, 3]);
    /// # Ok::<(), tables_client::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn query_index<R: IndexRead<T>>(&self, partition: R) -> Query<R::Item> {
        let parts = partition.into_parts();
        let table = parts.table.unwrap_or(self.name());
        let source = Source::Copies(CopySource {
            index: parts.index,
            primary_table: Arc::from(self.name()),
            implies: parts.implies,
            verified: false,
        });
        let copies = col(ENTITY_TYPE_PROPERTY).eq(index_copy_type(parts.kind, parts.index));
        Query::over(self.service().clone(), table, None, Some(copies), source)
            .partition(parts.partition_key)
    }
}
