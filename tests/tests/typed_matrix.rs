//! The typed matrix ([`tables_tests::typed_matrix!`]) runs what its modules say:
//! each module's test probes the engine it was given and checks that it is the one
//! the module is named after. Without this, a `one_row_pages` run on default pages
//! would pass unnoticed: every scenario also passes there.

use tables_client::{DynamicEntity, Engine, QuerySpec, Result, WriteOp};
use tables_tests::typed::Backend;

/// The module this test runs in, from the test thread's name
/// (`one_row_pages::engine_is_as_named`).
fn module() -> String {
    let thread = std::thread::current();
    let name = thread.name().expect("the test harness names its threads");
    name.split("::").next().unwrap_or_default().to_owned()
}

async fn engine_is_as_named(backend: Backend) -> Result<()> {
    let engine = backend.engine();
    engine.create_table("Probe").await?;
    for (pk, rk) in [("a", "1"), ("a", "2"), ("b", "1")] {
        engine
            .write("Probe", &WriteOp::Insert(DynamicEntity::new(pk, rk)))
            .await?;
    }
    let page = engine.query("Probe", &QuerySpec::new(), None).await?;
    let module = module();
    match module.as_str() {
        "mem" => {
            assert_eq!(backend, Backend::Mem);
            assert_eq!(page.items.len(), 3, "default pages hold every row");
        }
        "one_row_pages" => {
            assert_eq!(backend, Backend::OneRowPages);
            assert_eq!(page.items.len(), 1, "a page holds one row");
            assert!(page.continuation.is_some(), "and the query goes on");
        }
        "azurite" => {
            assert!(matches!(backend, Backend::Azurite(_)), "{backend:?}");
            assert_eq!(page.items.len(), 3, "Azurite's pages hold every row");
        }
        "server" => {
            assert!(matches!(backend, Backend::Server(_)), "{backend:?}");
            assert_eq!(page.items.len(), 3, "the server's pages hold every row");
            let url = tables_tests::server::url();
            assert_eq!(backend, Backend::Server(url));
        }
        "mem_cosmos" => {
            assert!(matches!(backend, Backend::MemCosmos(_)), "{backend:?}");
            let capabilities = engine.capabilities();
            assert!(!capabilities.ordered_results, "results in any order");
            assert_eq!(capabilities.max_row_key_bytes, 255, "Cosmos's RowKey limit");
        }
        "server_cosmos" => {
            assert_eq!(backend, Backend::ServerCosmos);
            assert!(
                !engine.capabilities().ordered_results,
                "results in any order"
            );
            // The client refuses a 256-byte RowKey before sending; the server
            // plays Cosmos too: a client that doesn't know it talks to Cosmos has
            // the same write refused by the service.
            let long = DynamicEntity::new("a", "r".repeat(256));
            let err = engine
                .write("Probe", &WriteOp::Insert(long.clone()))
                .await
                .expect_err("a 256-byte RowKey is refused on Cosmos");
            assert_eq!(err.origin(), tables_client::Origin::Local, "{err}");
            let unaware =
                tables_client::remote::RemoteEngine::builder(tables_tests::server::cosmos_url())
                    .credential(tables_client::remote::Credential::SharedKey(
                        tables_tests::azurite::dev_key(),
                    ))
                    .build()?;
            let err = unaware
                .write("Probe", &WriteOp::Insert(long))
                .await
                .expect_err("the server refuses a 256-byte RowKey as Cosmos does");
            assert_eq!(err.service_code(), Some("InvalidInput"), "{err}");
        }
        other => panic!("the matrix has no module {other:?}"),
    }
    engine.delete_table("Probe").await?;
    Ok(())
}

tables_tests::typed_matrix!(engine_is_as_named);
