//! Many tasks reading and writing one engine at once.

// Test code: a panic is a test failure.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use tables_core::{
    DynamicEntity, Engine, EntityKey, ErrorKind, IfMatch, QuerySpec, Value, WriteOp,
};
use tables_mem::{MemEngine, MemOptions};

const T: &str = "Busy";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_and_readers_see_consistent_state() {
    let engine = MemEngine::with_options(MemOptions::default().with_page_size(7));
    engine.create_table(T).await.unwrap();
    let writers = 16;
    let per_writer = 50;
    let mut tasks = Vec::new();
    for w in 0..writers {
        let engine = engine.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..per_writer {
                let e = DynamicEntity::new(format!("w{w:02}"), format!("{i:03}")).with("v", i);
                engine.write(T, &WriteOp::Insert(e)).await.unwrap();
                tokio::task::yield_now().await;
            }
        }));
    }
    // Readers page through the table while it grows: every page is in key order and
    // no row is ever returned twice.
    for _ in 0..8 {
        let engine = engine.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..5 {
                let mut seen: Vec<(String, String)> = Vec::new();
                let mut token = None;
                loop {
                    let page = engine
                        .query(T, &QuerySpec::new(), token.as_ref())
                        .await
                        .unwrap();
                    seen.extend(page.items.into_iter().map(|e| (e.partition_key, e.row_key)));
                    token = page.continuation;
                    if token.is_none() {
                        break;
                    }
                }
                assert!(seen.windows(2).all(|w| w[0] < w[1]), "ordered, no repeats");
                tokio::task::yield_now().await;
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let mut total = 0;
    let mut token = None;
    loop {
        let page = engine
            .query(T, &QuerySpec::new(), token.as_ref())
            .await
            .unwrap();
        total += page.items.len();
        token = page.continuation;
        if token.is_none() {
            break;
        }
    }
    assert_eq!(total, writers * per_writer as usize);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn optimistic_concurrency_loses_no_update() {
    // Many tasks increment one counter with read, then replace-if-match, retrying on
    // precondition failures: the final count is exact only if every conditional
    // write is atomic with its check.
    let engine = Arc::new(MemEngine::new());
    engine.create_table(T).await.unwrap();
    let key = EntityKey::new("c", "counter");
    engine
        .write(
            T,
            &WriteOp::Insert(DynamicEntity::new("c", "counter").with("n", 0)),
        )
        .await
        .unwrap();
    let tasks = 8;
    let increments = 25;
    let mut handles = Vec::new();
    for _ in 0..tasks {
        let engine = Arc::clone(&engine);
        let key = key.clone();
        handles.push(tokio::spawn(async move {
            let mut conflicts = 0;
            for _ in 0..increments {
                loop {
                    let current = engine.get_entity(T, &key, None).await.unwrap().unwrap();
                    let Some(Value::Int32(n)) = current.get("n").cloned() else {
                        panic!("counter lost its value");
                    };
                    let op = WriteOp::Replace {
                        entity: DynamicEntity::new("c", "counter").with("n", n + 1),
                        if_match: IfMatch::Etag(current.etag.clone().unwrap()),
                    };
                    match engine.write(T, &op).await {
                        Ok(_) => break,
                        Err(e) if e.kind() == ErrorKind::PreconditionFailed => {
                            conflicts += 1;
                            tokio::task::yield_now().await;
                        }
                        Err(e) => panic!("unexpected {e}"),
                    }
                }
            }
            conflicts
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    let last = engine.get_entity(T, &key, None).await.unwrap().unwrap();
    assert_eq!(last.get("n"), Some(&Value::Int32(tasks * increments)));
}
