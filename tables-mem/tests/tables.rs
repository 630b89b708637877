//! Table lifecycle and listing on the mem engine.

// Test code: a panic is a test failure.
#![allow(clippy::unwrap_used)]

use tables_core::{DynamicEntity, Engine, EntityKey, ErrorKind, ListTablesOptions, WriteOp};
use tables_mem::{MemEngine, MemOptions};

#[tokio::test]
async fn names_are_case_insensitive_and_case_preserving() {
    let engine = MemEngine::new();
    engine.create_table("Orders").await.unwrap();
    let err = engine.create_table("ORDERS").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TableAlreadyExists);
    assert_eq!(err.service_code(), Some("TableAlreadyExists"));
    assert_eq!(err.status(), Some(409));

    let e = DynamicEntity::new("p", "r");
    engine.write("orders", &WriteOp::Insert(e)).await.unwrap();
    assert!(engine
        .get_entity("oRdErS", &EntityKey::new("p", "r"), None)
        .await
        .unwrap()
        .is_some());
    let page = engine
        .list_tables(&ListTablesOptions::default())
        .await
        .unwrap();
    assert_eq!(page.names, ["Orders"]);
}

#[tokio::test]
async fn invalid_names_are_rejected() {
    let engine = MemEngine::new();
    for name in ["", "ab", "1abc", "has-dash", "tables", &"a".repeat(64)] {
        let err = engine.create_table(name).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidTableName, "{name:?}");
    }
    let page = engine
        .list_tables(&ListTablesOptions::default())
        .await
        .unwrap();
    assert!(page.names.is_empty());
}

#[tokio::test]
async fn delete_removes_the_table_and_its_entities() {
    let engine = MemEngine::new();
    engine.create_table("Temp").await.unwrap();
    engine
        .write("Temp", &WriteOp::Insert(DynamicEntity::new("p", "r")))
        .await
        .unwrap();
    engine.delete_table("TEMP").await.unwrap();
    let err = engine
        .get_entity("Temp", &EntityKey::new("p", "r"), None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TableNotFound);
    let err = engine.delete_table("Temp").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TableNotFound);
    assert_eq!(err.service_code(), Some("ResourceNotFound"));
    assert_eq!(err.status(), Some(404));
    // Recreated, it is empty.
    engine.create_table("Temp").await.unwrap();
    assert!(engine
        .get_entity("Temp", &EntityKey::new("p", "r"), None)
        .await
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn entity_calls_on_a_missing_table_are_table_not_found() {
    let engine = MemEngine::new();
    let op = WriteOp::Insert(DynamicEntity::new("p", "r"));
    let err = engine.write("Missing", &op).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TableNotFound);
    let spec = tables_core::QuerySpec::new();
    let err = engine.query("Missing", &spec, None).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TableNotFound);
    // A name no table can have is simply not found.
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
async fn list_tables_pages_in_name_order_with_prefix() {
    let engine = MemEngine::new();
    for name in ["beta", "alpha", "Gamma", "alpha2", "alphabet", "delta"] {
        engine.create_table(name).await.unwrap();
    }
    assert_eq!(
        list_all(&engine, None, 2).await,
        [
            vec!["Gamma", "alpha"],
            vec!["alpha2", "alphabet"],
            vec!["beta", "delta"]
        ]
    );
    assert_eq!(
        list_all(&engine, Some("alpha"), 2).await,
        [vec!["alpha", "alpha2"], vec!["alphabet"]]
    );
    assert_eq!(
        list_all(&engine, Some("zzz"), 5).await,
        [Vec::<String>::new()]
    );
    for bad in [0, 1001] {
        let options = ListTablesOptions::default().with_page_size(bad);
        let err = engine.list_tables(&options).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidQuery);
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
