//! [`Backend`]: the engine configurations of the typed tests' matrix, and the
//! [`Fixture`] a scenario that injects faults or counts calls works on.

use std::sync::Arc;

use tables_client::blob::BlobStore;
use tables_client::mem::{FaultInjector, MemBlobStore, MemEngine, MemOptions};
use tables_client::remote::RemoteEngine;
use tables_client::{Engine, PrefixedEngine, TableServiceClient};

/// Where a typed scenario runs: one configuration of the matrix
/// ([`typed_matrix!`](crate::typed_matrix)). A scenario asks it for as many fresh,
/// empty engines as it needs ([`Backend::engine`], [`Backend::service`],
/// [`Backend::fresh`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// The mem engine with its default paging (pages of up to 1,000 entities).
    Mem,
    /// The mem engine returning one entity (and one table name) per page and ending
    /// pages at partition boundaries: the harshest paging a client can meet.
    OneRowPages,
    /// The mem engine's Cosmos DB for Table profile ([`MemOptions::cosmos`]):
    /// results in an arbitrary order (seeded per test), RowKeys of at most 255
    /// bytes, batches of at most 2 MB, case-sensitive table names, filters on
    /// `Timestamp` that match nothing.
    MemCosmos(u64),
    /// The remote engine on the run's Azurite (its account URL); every engine it
    /// hands out keeps its tables under a prefix of its own.
    Azurite(String),
    /// The remote engine on the run's `tables-server --profile cosmos`, told it
    /// plays Cosmos DB for Table; tables under a prefix of their own.
    ServerCosmos,
    /// The remote engine on the run's `tables-server` (its account URL), tables
    /// under a prefix of their own as on Azurite; blobs in the mem blob store (the
    /// server serves tables only).
    Server(String),
}

impl Backend {
    /// The run's Azurite, or `None` after a loud `SKIPPED` line naming `test` (a
    /// failure under `CI=true`; see [`crate::azurite::url_or_skip`]).
    pub fn azurite(test: &str) -> Option<Backend> {
        crate::azurite::url_or_skip(test).map(Backend::Azurite)
    }

    /// Where this configuration knowingly differs from Azure
    /// ([`Capabilities::azurite`](crate::Capabilities::azurite) on Azurite,
    /// Azure's rules everywhere else): scenarios branch on these flags, never on
    /// which backend runs them.
    pub fn capabilities(&self) -> crate::Capabilities {
        match self {
            Backend::Azurite(_) => crate::Capabilities::azurite(),
            Backend::Mem | Backend::OneRowPages | Backend::Server(_) => {
                crate::Capabilities::azure()
            }
            Backend::MemCosmos(_) | Backend::ServerCosmos => crate::Capabilities::cosmos(),
        }
    }

    /// Whether this backend's engine returns query results in key order
    /// ([`tables_core::EngineCapabilities::ordered_results`]): `false` on the
    /// Cosmos DB for Table profile, mem or server.
    pub fn ordered(&self) -> bool {
        !matches!(self, Backend::MemCosmos(_) | Backend::ServerCosmos)
    }

    /// The steps (engine calls, counted from 1) of an operation of `steps` calls
    /// that a crash matrix fails at on this backend: every one, except on Azurite
    /// outside `TABLES_THOROUGH=1` runs, where every test of the run waits on one
    /// Azurite process: there the first and the middle step (the first fails the
    /// operation itself, the middle one its upkeep); on
    /// `tables-server` (either profile) every third step and the last (the mem engines still fail
    /// every step, so each step is proven; the remote backends prove the wire at a
    /// sample).
    pub fn crash_steps(&self, steps: u64) -> Vec<u64> {
        match self {
            Backend::Azurite(_) if !crate::sizes::thorough() => {
                let mut sample = vec![1, steps.div_ceil(2).max(1)];
                sample.dedup();
                sample
            }
            // tables-server, either profile: every third step and the last.
            Backend::Server(_) | Backend::ServerCosmos if !crate::sizes::thorough() => {
                (1..=steps).filter(|n| n % 3 == 1 || *n == steps).collect()
            }
            _ => (1..=steps).collect(),
        }
    }

    /// The run's `tables-server` ([`crate::server::url`]): always there.
    pub fn server() -> Backend {
        Backend::Server(crate::server::url())
    }

    /// The mem engine's options for this configuration; `None` on a remote one.
    pub fn mem_options(&self) -> Option<MemOptions> {
        match self {
            Backend::Mem => Some(MemOptions::default()),
            Backend::OneRowPages => Some(
                MemOptions::default()
                    .with_page_size(1)
                    .with_break_at_partition_boundaries(true),
            ),
            Backend::MemCosmos(seed) => Some(MemOptions::cosmos(*seed)),
            Backend::Azurite(_) | Backend::Server(_) | Backend::ServerCosmos => None,
        }
    }

    /// A fresh, empty engine: a new mem engine, or a new table namespace on Azurite.
    pub fn engine(&self) -> Arc<dyn Engine> {
        match self.scratch() {
            Some(scratch) => scratch,
            None => Arc::new(self.mem()),
        }
    }

    /// A client over a fresh, empty engine ([`Backend::engine`]).
    pub fn service(&self) -> TableServiceClient {
        TableServiceClient::from_engine(self.engine())
    }

    /// A fresh, empty engine behind a fault injector (armed with no faults), and a
    /// client over it.
    pub fn fresh(&self) -> Fixture {
        let scratch = self.scratch();
        let base: Arc<dyn Engine> = match &scratch {
            Some(scratch) => Arc::clone(scratch) as Arc<dyn Engine>,
            None => Arc::new(self.mem()),
        };
        let engine = FaultInjector::new(base);
        let service = TableServiceClient::new(engine.clone());
        Fixture {
            engine,
            service,
            scratch,
        }
    }

    /// A blob store beside this configuration's engines, with a fresh, empty
    /// container (returned with it): the mem blob store, or Azurite's blob service
    /// (the run's `TABLES_TEST_AZURITE_BLOB_URL`).
    ///
    /// # Panics
    ///
    /// If the container can't be created, or (under CI) Azurite's blob service is
    /// not running.
    pub async fn blob_store(&self, test: &str) -> Option<(Arc<dyn BlobStore>, String)> {
        let store: Arc<dyn BlobStore> = match self {
            Backend::Azurite(_) => Arc::new(crate::azurite::blob_store_or_skip(
                test,
                tables_client::remote::DEFAULT_SINGLE_PUT_LIMIT,
                tables_client::remote::DEFAULT_BLOCK_SIZE,
            )?),
            Backend::Mem
            | Backend::OneRowPages
            | Backend::MemCosmos(_)
            | Backend::Server(_)
            | Backend::ServerCosmos => Arc::new(MemBlobStore::new()),
        };
        let container = crate::blob_suite::unique_container(test);
        store
            .create_container(&container)
            .await
            .expect("the container can be created");
        Some((store, container))
    }

    /// A new mem engine with this configuration's options (the defaults on Azurite,
    /// which never asks for one).
    fn mem(&self) -> MemEngine {
        MemEngine::with_options(self.mem_options().unwrap_or_default())
    }

    /// A new table namespace on Azurite; `None` in memory.
    fn scratch(&self) -> Option<Arc<PrefixedEngine<RemoteEngine>>> {
        match self {
            Backend::Azurite(url) => Some(Arc::new(PrefixedEngine::unique(
                crate::azurite::engine(url),
            ))),
            Backend::Server(_) => Some(Arc::new(PrefixedEngine::unique(crate::server::engine()))),
            Backend::ServerCosmos => Some(Arc::new(PrefixedEngine::unique(
                crate::server::cosmos_engine(),
            ))),
            Backend::Mem | Backend::OneRowPages | Backend::MemCosmos(_) => None,
        }
    }
}

/// One scenario's engine (a fault injector in front), its client, and the tables to
/// drop afterwards.
#[derive(Debug)]
pub struct Fixture {
    /// The engine, behind a fault injector with no faults armed.
    pub engine: FaultInjector<Arc<dyn Engine>>,
    /// A client over [`Fixture::engine`].
    pub service: TableServiceClient,
    scratch: Option<Arc<PrefixedEngine<RemoteEngine>>>,
}

impl Fixture {
    /// Drops the fixture's tables on a shared endpoint (nothing to do in memory).
    ///
    /// # Panics
    ///
    /// If the tables cannot be listed or deleted.
    pub async fn drop_tables(self) {
        if let Some(scratch) = self.scratch {
            scratch
                .delete_all_tables()
                .await
                .expect("the fixture's tables can be dropped");
        }
    }
}
