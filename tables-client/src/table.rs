//! [`Table<T>`]: a typed handle on one table, and [`Versioned<T>`], a value read with
//! its version.
//!
//! The handle's methods live in the modules of their area: writes and index upkeep
//! in `write` and `upkeep`, lookups in `lookup`, queries in `query`.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use tables_core::{DateTime, ETag, Engine, Result, Row};

use crate::service::TableServiceClient;

/// A typed handle on table `name` holding `T`: an `#[derive(Entity)]` type, or an
/// `#[derive(EntityUnion)]` enum for a table (or partition) of several kinds. Cheap to
/// clone.
pub struct Table<T> {
    service: TableServiceClient,
    name: Arc<str>,
    _rows: PhantomData<fn() -> T>,
}

impl<T> Clone for Table<T> {
    fn clone(&self) -> Table<T> {
        Table {
            service: self.service.clone(),
            name: Arc::clone(&self.name),
            _rows: PhantomData,
        }
    }
}

impl<T> fmt::Debug for Table<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Table")
            .field("name", &self.name)
            .field("rows", &std::any::type_name::<T>())
            .finish()
    }
}

impl TableServiceClient {
    /// A typed handle on table `name` holding `T` (an entity or an entity union).
    /// Nothing is checked or sent until it is used.
    pub fn table<T: Row>(&self, name: impl Into<String>) -> Table<T> {
        Table {
            service: self.for_rows::<T>(),
            name: Arc::from(name.into()),
            _rows: PhantomData,
        }
    }
}

impl<T: Row> Table<T> {
    /// The table's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The client the handle came from.
    pub fn service(&self) -> &TableServiceClient {
        &self.service
    }

    pub(crate) fn engine(&self) -> &Arc<dyn Engine> {
        self.service.engine()
    }

    /// Creates the table.
    ///
    /// # Errors
    ///
    /// As [`TableServiceClient::create_table`].
    pub async fn create(&self) -> Result<()> {
        self.service.create_table(&self.name).await
    }

    /// Creates the table unless it exists, and every other table its indexes write
    /// to (`index(table = ..)`). Returns whether this table was created.
    ///
    /// # Errors
    ///
    /// As [`TableServiceClient::create_table_if_not_exists`].
    pub async fn create_if_not_exists(&self) -> Result<bool> {
        let created = self.service.create_table_if_not_exists(&self.name).await?;
        for table in index_tables::<T>() {
            self.service.create_table_if_not_exists(table).await?;
        }
        Ok(created)
    }

    /// Deletes the table (not the tables of its indexes). (Entities are deleted
    /// with [`Table::delete`].)
    ///
    /// # Errors
    ///
    /// As [`TableServiceClient::delete_table`].
    pub async fn delete_table(&self) -> Result<()> {
        self.service.delete_table(&self.name).await
    }
}

/// The other tables `T`'s indexes write to, each once.
pub(crate) fn index_tables<T: Row>() -> Vec<&'static str> {
    let mut tables: Vec<&'static str> = Vec::new();
    for schema in T::schemas() {
        for index in schema.indexes {
            if let Some(table) = index.table {
                if !tables.contains(&table) {
                    tables.push(table);
                }
            }
        }
    }
    tables
}

/// A value read from a table with the version the service gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct Versioned<T> {
    /// The value.
    pub value: T,
    /// The ETag: pass `IfMatch::Etag(etag)` to update only this version.
    pub etag: ETag,
    /// The service's last-modified time.
    pub timestamp: DateTime,
}

impl<T> Versioned<T> {
    /// The value, dropping the version.
    pub fn into_value(self) -> T {
        self.value
    }

    /// The same version of another value (e.g. a decoded projection).
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Versioned<U> {
        Versioned {
            value: f(self.value),
            etag: self.etag,
            timestamp: self.timestamp,
        }
    }
}
