//! Stored rows are shared with readers, not copied: a get or a query page hands out
//! entities whose properties are the stored ones (copy-on-write), and no reader or
//! writer can change a stored row by changing its own entity afterwards.

// Test code: a panic is a test failure.
#![allow(clippy::unwrap_used)]

use tables_core::{DynamicEntity, Engine, EntityKey, Filter, QuerySpec, Value, WriteOp};
use tables_mem::MemEngine;

const T: &str = "Sharing";

fn row() -> DynamicEntity {
    DynamicEntity::new("p", "r")
        .with("Name", "a name long enough to be worth sharing")
        .with("Age", 30)
}

async fn engine_with_row() -> MemEngine {
    let engine = MemEngine::new();
    engine.create_table(T).await.unwrap();
    engine.write(T, &WriteOp::Insert(row())).await.unwrap();
    engine
}

async fn get(engine: &MemEngine) -> DynamicEntity {
    let key = EntityKey::new("p", "r");
    engine.get_entity(T, &key, None).await.unwrap().unwrap()
}

#[tokio::test]
async fn reads_share_the_stored_properties() {
    let engine = engine_with_row().await;
    let (first, second) = (get(&engine).await, get(&engine).await);
    // The same value in memory, not two equal copies.
    assert!(std::ptr::eq(
        first.get("Name").unwrap(),
        second.get("Name").unwrap()
    ));
    let spec = QuerySpec::new().filter(Filter::partition_key("p"));
    let page = engine.query(T, &spec, None).await.unwrap();
    assert!(std::ptr::eq(
        first.get("Name").unwrap(),
        page.items[0].get("Name").unwrap()
    ));
    // A selection is a new entity of its own.
    let select = ["Age".to_owned()];
    let key = EntityKey::new("p", "r");
    let selected = engine.get_entity(T, &key, Some(&select)).await.unwrap();
    assert_eq!(selected.unwrap().len(), 1);
}

#[tokio::test]
async fn a_reader_changing_its_copy_changes_nothing_stored() {
    let engine = engine_with_row().await;
    let stored = get(&engine).await;
    let mut copy = get(&engine).await;
    copy.insert("Name", "changed");
    copy.insert("Extra", true);
    copy.remove("Age");
    copy.retain(|_, _| false);
    assert_eq!(get(&engine).await, stored);
    assert_eq!(
        get(&engine).await.get("Name"),
        row().get("Name"),
        "the stored row keeps its value"
    );
}

#[tokio::test]
async fn a_writer_changing_its_entity_after_the_write_changes_nothing_stored() {
    let engine = MemEngine::new();
    engine.create_table(T).await.unwrap();
    let mut op = WriteOp::Insert(row());
    engine.write(T, &op).await.unwrap();
    if let WriteOp::Insert(entity) = &mut op {
        entity.insert("Name", "changed after the write");
    }
    assert_eq!(
        get(&engine).await.get("Name"),
        Some(&Value::String(
            "a name long enough to be worth sharing".to_owned()
        ))
    );
    // A merge builds a new row; readers of the old one keep what they read.
    let before = get(&engine).await;
    let merge = WriteOp::UpsertMerge(DynamicEntity::new("p", "r").with("Age", 31));
    engine.write(T, &merge).await.unwrap();
    assert_eq!(before.get("Age"), Some(&Value::Int32(30)));
    assert_eq!(get(&engine).await.get("Age"), Some(&Value::Int32(31)));
}
