//! Lookups through indexes: [`Table::get_by_index`] through a copy index,
//! [`Table::get_all_by_index`] through an index entity. Both return entities as
//! stored, checked against the index row that led to them.

use futures::future::{try_join_all, BoxFuture};
use tables_core::model::{row_role, IndexKind, IndexSchema, RowRole};
use tables_core::model::{CopyIndexKeyOf, ListIndexKeyOf};
use tables_core::{DynamicEntity, EntityKey, Error, ErrorKind, Result, Row};

use crate::table::{Table, Versioned};
use crate::upkeep::{member_key, members_of, owner_of};
use crate::write::versioned;

impl<T: Row> Table<T> {
    /// Finds the entity whose copy index (an `index(..)` or `unique_index(..)`) has
    /// the row `key`, built with the generated `T::<index>_key(..)`: the key says
    /// which index it belongs to, so a key of another type, or of an index entity,
    /// does not compile.
    ///
    /// It reads the index row, then the entity it names, and returns the entity
    /// only if the entity still implies that very row: a row left over by a change
    /// not yet caught up (an index in another partition), a value claimed by a write
    /// that hasn't committed, or an orphan finds nothing. The result is the entity as
    /// stored, with *its own* ETag and timestamp, so it can be written back with
    /// `IfMatch::Etag`. (An index copy's ETag is never handed out: the rows of one
    /// entity group transaction need not share one, see docs/service-behaviour.md.)
    ///
    /// ```
    /// use tables_client::{Entity, IfMatch, TableServiceClient};
    ///
    /// #[derive(Entity, Debug, Clone, PartialEq)]
    /// #[entity(partition_key = "{department}", row_key = "empid_{id:06}")]
    /// #[entity(unique_index(name = "email", row_key = "email_{email}"))]
    /// pub struct Employee { pub department: String, pub id: u32, pub email: String, pub age: i32 }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let service = TableServiceClient::in_memory();
    /// let employees = service.table::<Employee>("Employees");
    /// employees.create().await?;
    /// let ann = Employee { department: "Sales".into(), id: 7, email: "ann@x.com".into(), age: 40 };
    /// employees.insert(&ann).await?;
    ///
    /// let found = employees.get_by_index(Employee::email_key("Sales", "ann@x.com")?).await?;
    /// let found = found.expect("indexed");
    /// // The entity's own version: a conditional write with it goes through.
    /// let older = Employee { age: 41, ..found.value.clone() };
    /// employees.replace(&older, IfMatch::Etag(found.etag)).await?;
    /// # Ok::<(), tables_client::Error>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Decode`] for a row that can't be read as `T`; the engine's
    /// errors.
    pub fn get_by_index(
        &self,
        key: impl CopyIndexKeyOf<T>,
    ) -> BoxFuture<'_, Result<Option<Versioned<T>>>> {
        // Boxed so the key's type isn't part of the future's: a key of the wrong
        // type or index is then one compile error, not three.
        let (index, key) = key.into_parts();
        Box::pin(self.get_by_copy_index(index, key))
    }

    async fn get_by_copy_index(&self, index: &str, key: EntityKey) -> Result<Option<Versioned<T>>> {
        let schemas = indexes_named::<T>(index, IndexKind::Copy)?;
        for table in tables_of(&schemas, self.name()) {
            let Some(copy) = self.engine().get_entity(table, &key, None).await? else {
                continue;
            };
            if schema_of(&copy, &schemas).is_none() {
                continue;
            }
            let Some(primary_key) = owner_of(&copy) else {
                continue;
            };
            let Some(primary) = self
                .engine()
                .get_entity(self.name(), &primary_key, None)
                .await?
            else {
                return Ok(None);
            };
            let current = T::from_entity(primary.clone())?;
            let still_indexed = current
                .index_copies(&primary)?
                .iter()
                .any(|c| c.name() == index && c.key() == key);
            return if still_indexed {
                versioned(primary).map(Some)
            } else {
                Ok(None)
            };
        }
        Ok(None)
    }

    /// Every entity the index entity (an `index_entity(..)`) lists under `key`,
    /// built with the generated `T::<index>_key(..)`, in the order of the list. Each
    /// member is read from its primary row (concurrently); members deleted or moved
    /// since the list was written are left out.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Decode`] for a row that can't be read; the engine's errors.
    pub fn get_all_by_index(
        &self,
        key: impl ListIndexKeyOf<T>,
    ) -> BoxFuture<'_, Result<Vec<Versioned<T>>>> {
        let (index, key) = key.into_parts();
        Box::pin(self.get_all_by_index_entity(index, key))
    }

    async fn get_all_by_index_entity(
        &self,
        index: &str,
        key: EntityKey,
    ) -> Result<Vec<Versioned<T>>> {
        let schemas = indexes_named::<T>(index, IndexKind::List)?;
        for table in tables_of(&schemas, self.name()) {
            let Some(row) = self.engine().get_entity(table, &key, None).await? else {
                continue;
            };
            if schema_of(&row, &schemas).is_none() {
                continue;
            }
            let members = members_of(&row)?;
            let reads = members.iter().map(|member| {
                let member = member_key(&key, member);
                async move { self.engine().get_entity(self.name(), &member, None).await }
            });
            let mut found = Vec::with_capacity(members.len());
            for primary in try_join_all(reads).await?.into_iter().flatten() {
                if self.lists(&primary, index, &key)? {
                    found.push(versioned(primary)?);
                }
            }
            return Ok(found);
        }
        Ok(Vec::new())
    }

    /// Whether `primary` still belongs to index entity `index` at `key`.
    fn lists(&self, primary: &DynamicEntity, index: &str, key: &EntityKey) -> Result<bool> {
        let value = T::from_entity(primary.clone())?;
        Ok(value
            .index_entries()?
            .iter()
            .any(|e| e.name() == index && e.key() == key))
    }
}

/// `T`'s indexes named `index` (one per entity type declaring it), of `kind`.
fn indexes_named<T: Row>(
    index: &str,
    kind: IndexKind,
) -> Result<Vec<(&'static str, &'static IndexSchema)>> {
    let mut found = Vec::new();
    let mut other_kind = false;
    for schema in T::schemas() {
        if let Some(declared) = schema.index(index) {
            if declared.kind == kind {
                found.push((schema.kind, declared));
            } else {
                other_kind = true;
            }
        }
    }
    if !found.is_empty() {
        return Ok(found);
    }
    let type_name = std::any::type_name::<T>();
    let message = match (other_kind, kind) {
        (true, IndexKind::Copy) => format!(
            "`{index}` of {type_name} is an index entity (`index_entity(..)`): look it up with get_all_by_index"
        ),
        (true, IndexKind::List) => format!(
            "`{index}` of {type_name} is a copy index (`index(..)`): look it up with get_by_index"
        ),
        (false, _) => format!("{type_name} declares no index named `{index}`"),
    };
    Err(Error::new(ErrorKind::InvalidInput, message))
}

/// The tables the index rows live in, each once.
fn tables_of<'a>(
    schemas: &[(&'static str, &'static IndexSchema)],
    primary_table: &'a str,
) -> Vec<&'a str> {
    let mut tables: Vec<&'a str> = Vec::new();
    for (_, schema) in schemas {
        let table = schema.table.unwrap_or(primary_table);
        if !tables.contains(&table) {
            tables.push(table);
        }
    }
    tables
}

/// The index (among `schemas`) that wrote `row`, by its `EntityType`.
fn schema_of(
    row: &DynamicEntity,
    schemas: &[(&'static str, &'static IndexSchema)],
) -> Option<&'static IndexSchema> {
    let (kind, index) = match row_role(row) {
        RowRole::IndexCopy { kind, index } | RowRole::IndexEntry { kind, index } => (kind, index),
        _ => return None,
    };
    schemas
        .iter()
        .find(|(k, s)| *k == kind && s.name == index)
        .map(|(_, s)| *s)
}
