//! [`TableServiceClient`]: the entry point of the typed client.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::paging::TablePages;
use tables_core::{
    key::validate_table_name, DynamicEntity, Engine, ErrorKind, ListTablesOptions, QuerySpec,
    Result,
};

/// How a client behaves; every field has a sensible default.
///
/// More fields may come: start from [`ClientOptions::default`] and change what you
/// need, with the `with_` methods or by assigning fields.
///
/// ```
/// use std::time::Duration;
/// use tables_client::ClientOptions;
///
/// let options = ClientOptions::default()
///     .with_allow_table_scans(false)
///     .with_page_size(100)
///     .with_intent_retention(Duration::from_secs(3600));
/// assert_eq!(options.page_size, Some(100));
/// assert_eq!(options.bulk_concurrency, ClientOptions::default().bulk_concurrency);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientOptions {
    /// Whether queries that name no PartitionKey (table scans) may run. `false` makes
    /// them fail with [`ErrorKind::InvalidQuery`] before anything is sent: a guard
    /// for services that must only run point, range and partition queries.
    pub allow_table_scans: bool,
    /// Entities per page the client asks for (1..=1000); `None` is the service's
    /// 1,000.
    pub page_size: Option<u32>,
    /// How many chunks a bulk writer sends at once.
    pub bulk_concurrency: usize,
    /// How often a write retries its optimistic-concurrency loop (index entities,
    /// intra-partition index upkeep) after losing a race before it gives up with
    /// [`ErrorKind::PreconditionFailed`].
    pub max_conflict_retries: u32,
    /// How long a finished intent stays as a small tombstone row (in its entity's
    /// partition) before `reconcile()` removes it. Within that time a write whose
    /// answer was lost learns from it exactly whether it committed, and a late
    /// delivery of the write can't commit it again. Keep it well above the longest a
    /// request may take, retries included, and the clock skew between this machine
    /// and the service. A move ([`crate::Table::move_to`]) that has not committed is
    /// left to its mover for as long, before `reconcile()` undoes it. Default 15
    /// minutes.
    pub intent_retention: Duration,
}

impl Default for ClientOptions {
    fn default() -> ClientOptions {
        ClientOptions {
            allow_table_scans: true,
            page_size: None,
            bulk_concurrency: 8,
            max_conflict_retries: 32,
            intent_retention: Duration::from_secs(15 * 60),
        }
    }
}

impl ClientOptions {
    /// Sets [`allow_table_scans`](ClientOptions::allow_table_scans).
    pub fn with_allow_table_scans(mut self, allow: bool) -> ClientOptions {
        self.allow_table_scans = allow;
        self
    }

    /// Sets [`page_size`](ClientOptions::page_size) (1..=1000, checked when a query
    /// runs).
    pub fn with_page_size(mut self, entities: u32) -> ClientOptions {
        self.page_size = Some(entities);
        self
    }

    /// Sets [`bulk_concurrency`](ClientOptions::bulk_concurrency).
    pub fn with_bulk_concurrency(mut self, chunks: usize) -> ClientOptions {
        self.bulk_concurrency = chunks;
        self
    }

    /// Sets [`max_conflict_retries`](ClientOptions::max_conflict_retries).
    pub fn with_max_conflict_retries(mut self, retries: u32) -> ClientOptions {
        self.max_conflict_retries = retries;
        self
    }

    /// Sets [`intent_retention`](ClientOptions::intent_retention).
    pub fn with_intent_retention(mut self, retention: Duration) -> ClientOptions {
        self.intent_retention = retention;
        self
    }
}

/// The entry point: table management and typed [`Table`](crate::Table) handles over any
/// [`Engine`]. Cheap to clone (clones share the engine).
///
/// ```
/// use tables_client::TableServiceClient;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let service = TableServiceClient::in_memory();
/// service.create_table_if_not_exists("Employees").await?;
/// assert_eq!(service.list_tables().await?, ["Employees"]);
/// # Ok::<(), tables_client::Error>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct TableServiceClient {
    inner: Arc<Inner>,
    /// Whether this is the client of a wide type's table, whose rows go through the
    /// wide layer ([`crate::wide`]).
    wide: bool,
}

struct Inner {
    engine: Arc<dyn Engine>,
    /// The same stack with the wide layer at its bottom, for wide types.
    wide_engine: Arc<dyn Engine>,
    options: ClientOptions,
}

impl fmt::Debug for TableServiceClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableServiceClient")
            .field("engine", self.engine())
            .field("options", &self.inner.options)
            .finish()
    }
}

impl TableServiceClient {
    /// A client over a new, empty in-memory engine.
    #[cfg(feature = "mem")]
    pub fn in_memory() -> TableServiceClient {
        TableServiceClient::new(tables_mem::MemEngine::new())
    }

    /// A client over the remote endpoint a connection string names (Azure Storage, the
    /// Cosmos DB Table API, or Azurite with `UseDevelopmentStorage=true`). For retry
    /// policies, timeouts or other credentials, build a
    /// [`RemoteEngine`](crate::remote::RemoteEngine) and use [`TableServiceClient::new`].
    ///
    /// ```
    /// use tables_client::TableServiceClient;
    ///
    /// // Nothing is sent yet: the first operation connects.
    /// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true")?;
    /// assert!(format!("{service:?}").contains("devstoreaccount1"));
    /// # Ok::<(), tables_client::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for a malformed
    /// connection string; nothing is sent until the first operation.
    pub fn from_connection_string(connection_string: &str) -> Result<TableServiceClient> {
        let engine = crate::remote::RemoteEngine::from_connection_string(connection_string)?;
        Ok(TableServiceClient::new(engine))
    }

    /// A client of the account at `account_url` (`https://<account>.table.core.windows.net`,
    /// or a Cosmos DB for Table account's URL) signing in with an `azure_core` token
    /// credential: any of the official `azure_identity` crate's (managed identity,
    /// workload identity, `az login`, a client secret...). The scope follows the
    /// URL: `https://cosmos.azure.com/.default` on Cosmos DB's hosts,
    /// `https://storage.azure.com/.default` elsewhere (feature `azure_identity`).
    ///
    /// ```no_run
    /// # fn demo(identity: std::sync::Arc<dyn azure_core::credentials::TokenCredential>) -> tables_client::Result<()> {
    /// // identity: azure_identity::DeveloperToolsCredential::new(None)?, for example.
    /// let service = tables_client::TableServiceClient::with_azure_credential(
    ///     "https://myaccount.table.core.windows.net",
    ///     identity,
    /// )?;
    /// # let _ = service;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for a URL that is
    /// not HTTPS or names no account; nothing is sent until the first operation.
    #[cfg(feature = "azure_identity")]
    pub fn with_azure_credential(
        account_url: &str,
        credential: Arc<dyn azure_core::credentials::TokenCredential>,
    ) -> Result<TableServiceClient> {
        use crate::remote::{AzureCredential, Credential, RemoteEngine};
        let build = |cosmos: bool| {
            RemoteEngine::builder(account_url)
                .credential(Credential::Bearer(Arc::new(AzureCredential::for_endpoint(
                    Arc::clone(&credential),
                    cosmos,
                ))))
                .build()
        };
        let engine = build(false)?;
        let engine = if engine.capabilities().service == tables_core::ServiceKind::CosmosTable {
            build(true)?
        } else {
            engine
        };
        Ok(TableServiceClient::new(engine))
    }

    /// A client over `engine`.
    pub fn new(engine: impl Engine + 'static) -> TableServiceClient {
        TableServiceClient::from_engine(Arc::new(engine))
    }

    /// A client over a shared engine.
    pub fn from_engine(engine: Arc<dyn Engine>) -> TableServiceClient {
        TableServiceClient::with_options(engine, ClientOptions::default())
    }

    /// A client over a shared engine, with options.
    pub fn with_options(engine: Arc<dyn Engine>, options: ClientOptions) -> TableServiceClient {
        let wide_engine: Arc<dyn Engine> = Arc::new(crate::wide::WideEngine::new(
            Arc::clone(&engine),
            options.max_conflict_retries,
        ));
        TableServiceClient {
            inner: Arc::new(Inner {
                engine,
                wide_engine,
                options,
            }),
            wide: false,
        }
    }

    /// This client with `layer` over its engine (and over the wide stack's).
    fn layered(&self, layer: impl Fn(Arc<dyn Engine>) -> Arc<dyn Engine>) -> TableServiceClient {
        TableServiceClient {
            inner: Arc::new(Inner {
                engine: layer(Arc::clone(&self.inner.engine)),
                wide_engine: layer(Arc::clone(&self.inner.wide_engine)),
                options: self.inner.options.clone(),
            }),
            wide: self.wide,
        }
    }

    /// This client with client-side encryption of `#[entity(encrypted)]` fields
    /// under `kek` (see [`crate::encryption`]): its engine is wrapped in an
    /// [`EncryptingEngine`](crate::encryption::EncryptingEngine), so every write
    /// encrypts and every read decrypts. A client without it refuses to write an
    /// encrypted field ([`ErrorKind::Encryption`], nothing sent).
    ///
    /// ```
    /// use tables_client::encryption::LocalKey;
    /// use tables_client::{Entity, TableServiceClient};
    ///
    /// #[derive(Entity, Debug, Clone, PartialEq)]
    /// #[entity(partition_key = "{department}", row_key = "{id}")]
    /// pub struct Employee { pub department: String, pub id: String, #[entity(encrypted)] pub ssn: String }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let plain = TableServiceClient::in_memory();
    /// let service = plain.clone().with_encryption(LocalKey::generate("hr-2026")?);
    /// let staff = service.table::<Employee>("Staff");
    /// staff.create().await?;
    /// let ann = Employee { department: "HR".into(), id: "7".into(), ssn: "123-45-6789".into() };
    /// staff.insert(&ann).await?;
    /// assert_eq!(staff.get(Employee::key("HR", "7")?).await?.unwrap().value, ann);
    ///
    /// // The engine below holds ciphertext only; a client without the key can't read it.
    /// let err = plain.table::<Employee>("Staff").get(Employee::key("HR", "7")?).await.unwrap_err();
    /// assert_eq!(err.kind(), tables_client::ErrorKind::Encryption);
    /// # Ok::<(), tables_client::Error>(())
    /// # }).unwrap();
    /// ```
    #[must_use]
    pub fn with_encryption(
        self,
        kek: impl crate::encryption::KeyEncryptionKey + 'static,
    ) -> TableServiceClient {
        let kek: Arc<dyn crate::encryption::KeyEncryptionKey> = Arc::new(kek);
        self.layered(|engine| {
            Arc::new(crate::encryption::EncryptingEngine::new(
                engine,
                Arc::clone(&kek),
            ))
        })
    }

    /// This client with `#[entity(blob)]` fields kept in `container` of `store`
    /// (which must exist; see [`crate::large`]): its engine is wrapped in a
    /// [`BlobEngine`](crate::large::BlobEngine). A client without it refuses to
    /// write a blob field (nothing sent) and can't read one.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tables_client::blob::BlobStore;
    /// use tables_client::mem::MemBlobStore;
    /// use tables_client::{Entity, TableServiceClient};
    ///
    /// #[derive(Entity, Debug, Clone, PartialEq)]
    /// #[entity(partition_key = "{department}", row_key = "{id}")]
    /// pub struct Employee { pub department: String, pub id: String, #[entity(blob)] pub photo: Vec<u8> }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let blobs = Arc::new(MemBlobStore::new());
    /// blobs.create_container("photos").await?;
    /// let service = TableServiceClient::in_memory().with_blob_store(blobs.clone(), "photos");
    /// let staff = service.table::<Employee>("Staff");
    /// staff.create().await?;
    /// // 200 KB: more than a property holds, kept in a blob.
    /// let ann = Employee { department: "HR".into(), id: "7".into(), photo: vec![7; 200_000] };
    /// staff.insert(&ann).await?;
    /// assert_eq!(staff.get(Employee::key("HR", "7")?).await?.unwrap().value, ann);
    /// # Ok::<(), tables_client::Error>(())
    /// # }).unwrap();
    /// ```
    #[must_use]
    pub fn with_blob_store(
        self,
        store: Arc<dyn crate::blob::BlobStore>,
        container: impl Into<String>,
    ) -> TableServiceClient {
        let container = container.into();
        self.layered(|engine| {
            Arc::new(crate::large::BlobEngine::new(
                engine,
                Arc::clone(&store),
                container.clone(),
            ))
        })
    }

    /// The engine. For the client of a wide type's table
    /// ([`Table::service`](crate::Table::service)), the same stack with the wide
    /// layer at its bottom ([`crate::wide`]): rows read through it are whole
    /// entities.
    pub fn engine(&self) -> &Arc<dyn Engine> {
        if self.wide {
            &self.inner.wide_engine
        } else {
            &self.inner.engine
        }
    }

    /// This client, for the table of `T`: its rows go through the wide layer when
    /// `T` is wide.
    pub(crate) fn for_rows<T: tables_core::model::Row>(&self) -> TableServiceClient {
        TableServiceClient {
            inner: Arc::clone(&self.inner),
            wide: T::WIDE,
        }
    }

    /// The options.
    pub fn options(&self) -> &ClientOptions {
        &self.inner.options
    }

    /// Creates a table.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidTableName`] before anything is sent;
    /// [`ErrorKind::TableAlreadyExists`]; the engine's errors.
    pub async fn create_table(&self, name: &str) -> Result<()> {
        validate_table_name(name)?;
        self.inner.engine.create_table(name).await
    }

    /// Creates a table unless it exists. Returns whether it was created.
    ///
    /// # Errors
    ///
    /// As [`TableServiceClient::create_table`], except that an existing table is
    /// not an error.
    pub async fn create_table_if_not_exists(&self, name: &str) -> Result<bool> {
        match self.create_table(name).await {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == ErrorKind::TableAlreadyExists => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Deletes a table and everything in it.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::TableNotFound`]; the engine's errors.
    pub async fn delete_table(&self, name: &str) -> Result<()> {
        validate_table_name(name)?;
        self.inner.engine.delete_table(name).await
    }

    /// Deletes a table if it exists. Returns whether it was deleted.
    ///
    /// # Errors
    ///
    /// The engine's errors other than [`ErrorKind::TableNotFound`].
    pub async fn delete_table_if_exists(&self, name: &str) -> Result<bool> {
        match self.delete_table(name).await {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == ErrorKind::TableNotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Every row of `table` as stored, in key order: primary rows and the client's
    /// own (index copies and entries, intents), with their system properties, for
    /// tests and debugging (what an application reads goes through `Table<T>`). A
    /// table scan, read page by page into memory.
    ///
    /// ```
    /// use tables_client::{Entity, TableServiceClient};
    ///
    /// #[derive(Entity, Debug, Clone, PartialEq)]
    /// #[entity(partition_key = "{team}", row_key = "m{id:04}")]
    /// #[entity(unique_index(name = "email", row_key = "email_{email}"))]
    /// pub struct Member { pub team: String, pub id: u16, pub email: String }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let service = TableServiceClient::in_memory();
    /// let members = service.table::<Member>("Members");
    /// members.create().await?;
    /// members.insert(&Member { team: "a".into(), id: 1, email: "x@y".into() }).await?;
    /// let rows = service.raw_rows("Members").await?;
    /// let keys: Vec<&str> = rows.iter().map(|r| r.row_key.as_str()).collect();
    /// assert_eq!(keys, ["email_x@y", "m0001"]); // the member's index copy, and the member
    /// # Ok::<(), tables_client::Error>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// The engine's errors.
    pub async fn raw_rows(&self, table: &str) -> Result<Vec<DynamicEntity>> {
        let mut pages = crate::paging::EntityPages::new(table, QuerySpec::new(), None);
        let mut rows = Vec::new();
        while let Some(page) = pages.next(&*self.inner.engine).await? {
            rows.extend(page.items);
        }
        Ok(rows)
    }

    /// Every table's name, following continuation.
    ///
    /// # Errors
    ///
    /// The engine's errors.
    pub async fn list_tables(&self) -> Result<Vec<String>> {
        self.list_tables_with_prefix("").await
    }

    /// The names of the tables starting with `prefix`, following continuation.
    ///
    /// # Errors
    ///
    /// The engine's errors.
    pub async fn list_tables_with_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        all_table_names(&*self.inner.engine, prefix).await
    }
}

/// The names of an engine's tables starting with `prefix` (every table for ``),
/// following continuation.
pub(crate) async fn all_table_names<E: Engine + ?Sized>(
    engine: &E,
    prefix: &str,
) -> Result<Vec<String>> {
    let mut options = ListTablesOptions::default();
    options.prefix = (!prefix.is_empty()).then(|| prefix.to_owned());
    let mut pages = TablePages::new(options);
    let mut names = Vec::new();
    while let Some(page) = pages.next(engine).await? {
        names.extend(page);
    }
    Ok(names)
}
