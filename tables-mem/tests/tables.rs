//! Table lifecycle and listing on the mem engine: what only the mem engine does.
//! The service's rules (names, case, listing, missing tables) are checked on every
//! engine by the conformance suite (`tests/src/tables.rs`).

// Test code: a panic is a test failure.
#![allow(clippy::unwrap_used)]

use tables_core::{DynamicEntity, Engine, EntityKey, ErrorKind, ListTablesOptions, WriteOp};
use tables_mem::{MemEngine, MemOptions};

/// Unlike the service, which refuses the name for a while after a delete, the mem
/// engine lets a deleted table be created again at once, empty.
#[tokio::test]
async fn a_deleted_table_can_be_created_again_at_once_and_is_empty() {
    let engine = MemEngine::new();
    engine.create_table("Temp").await.unwrap();
    engine
        .write("Temp", &WriteOp::Insert(DynamicEntity::new("p", "r")))
        .await
        .unwrap();
    engine.delete_table("Temp").await.unwrap();
    engine.create_table("Temp").await.unwrap();
    assert!(engine
        .get_entity("Temp", &EntityKey::new("p", "r"), None)
        .await
        .unwrap()
        .is_none());
}

/// The mem engine doesn't check the name of a table it looks up: entity calls on a
/// name no table can have find no table (the remote engine and `PrefixedEngine`
/// refuse the name first, with `InvalidTableName`).
#[tokio::test]
async fn entity_calls_on_a_name_no_table_can_have_are_table_not_found() {
    let engine = MemEngine::new();
    let op = WriteOp::Insert(DynamicEntity::new("p", "r"));
    let err = engine.write("not/a/name", &op).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TableNotFound);
}

async fn list_all(engine: &MemEngine, prefix: Option<&str>, page_size: u32) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut options = ListTablesOptions::default().with_page_size(page_size);
    options.prefix = prefix.map(str::to_owned);
    loop {
        let page = engine.list_tables(&options).await.unwrap();
        pages.push(page.names);
        match page.continuation {
            Some(next) => options.continuation = Some(next),
            None => return pages,
        }
    }
}

#[tokio::test]
async fn the_engine_page_size_also_bounds_table_pages() {
    let engine = MemEngine::with_options(MemOptions::default().with_page_size(1));
    for name in ["aaa", "bbb", "ccc"] {
        engine.create_table(name).await.unwrap();
    }
    assert_eq!(
        list_all(&engine, None, 1000).await,
        [vec!["aaa"], vec!["bbb"], vec!["ccc"]]
    );
}

#[test]
fn page_size_is_clamped() {
    let zero = MemEngine::with_options(MemOptions::default().with_page_size(0));
    assert_eq!(zero.options().page_size, 1);
    let huge = MemEngine::with_options(MemOptions::default().with_page_size(5_000));
    assert_eq!(huge.options().page_size, 1_000);
    assert_eq!(MemEngine::new().options(), &MemOptions::default());
    assert_eq!(MemOptions::default().page_size, 1_000);
    assert!(!MemOptions::default().break_at_partition_boundaries);
}
