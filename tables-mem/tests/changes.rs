//! The journal hooks: every change reaches the sink in order, failed writes
//! report nothing, restoring keeps Timestamps and ETags and moves the clock past
//! them, and an export restores into an equal engine.

#![allow(clippy::unwrap_used)] // tests

use std::sync::{Arc, Mutex};

use tables_core::{
    DateTime, DynamicEntity, ETag, Engine, EntityKey, ErrorKind, IfMatch, QuerySpec, WriteOp,
};
use tables_mem::{Change, ChangeSink, MemEngine, RowChange};

/// A change as owned text: enough to compare orders and contents.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    Created(String),
    Deleted(String),
    Rows(String, Vec<Result<DynamicEntity, EntityKey>>),
}

#[derive(Debug, Default)]
struct Recorder(Mutex<Vec<Seen>>);

impl ChangeSink for Recorder {
    fn record(&self, change: Change<'_>) {
        let seen = match change {
            Change::TableCreated(name) => Seen::Created(name.to_owned()),
            Change::TableDeleted(name) => Seen::Deleted(name.to_owned()),
            Change::Rows { table, rows } => Seen::Rows(
                table.to_owned(),
                rows.iter()
                    .map(|row| match row {
                        RowChange::Stored(entity) => Ok((*entity).clone()),
                        RowChange::Removed(key) => Err((*key).clone()),
                    })
                    .collect(),
            ),
            other => panic!("a change this test does not know: {other:?}"),
        };
        self.0.lock().unwrap().push(seen);
    }
}

fn restore_all(engine: &MemEngine, seen: &[Seen]) {
    for change in seen {
        match change {
            Seen::Created(name) => engine.restore(&Change::TableCreated(name)).unwrap(),
            Seen::Deleted(name) => engine.restore(&Change::TableDeleted(name)).unwrap(),
            Seen::Rows(table, rows) => {
                let rows: Vec<RowChange<'_>> = rows
                    .iter()
                    .map(|row| match row {
                        Ok(entity) => RowChange::Stored(entity),
                        Err(key) => RowChange::Removed(key),
                    })
                    .collect();
                engine
                    .restore(&Change::Rows { table, rows: &rows })
                    .unwrap();
            }
        }
    }
}

async fn rows(engine: &MemEngine, table: &str) -> Vec<DynamicEntity> {
    engine
        .query(table, &QuerySpec::new(), None)
        .await
        .unwrap()
        .items
}

#[tokio::test]
async fn every_change_is_heard_in_order_and_replays_into_an_equal_engine() {
    let recorder = Arc::new(Recorder::default());
    let engine = MemEngine::new();
    engine.record_changes(recorder.clone()).unwrap();
    let second = Arc::new(Recorder::default());
    assert_eq!(
        engine.record_changes(second).unwrap_err().kind(),
        ErrorKind::InvalidInput
    );

    engine.create_table("Orders").await.unwrap();
    let inserted = engine
        .write(
            "Orders",
            &WriteOp::Insert(DynamicEntity::new("p", "a").with("N", 1)),
        )
        .await
        .unwrap();
    // Refused writes and batches report nothing.
    let refused = engine
        .write("Orders", &WriteOp::Insert(DynamicEntity::new("p", "a")))
        .await;
    assert!(refused.is_err());
    let half_bad = [
        WriteOp::Insert(DynamicEntity::new("p", "b")),
        WriteOp::Delete {
            key: EntityKey::new("p", "missing"),
            if_match: IfMatch::Any,
        },
    ];
    assert!(engine.submit_batch("Orders", &half_bad).await.is_err());
    let batch = [
        WriteOp::Insert(DynamicEntity::new("p", "b").with("N", 2)),
        WriteOp::Merge {
            entity: DynamicEntity::new("p", "a").with("M", true),
            if_match: IfMatch::Etag(inserted.etag.clone().unwrap()),
        },
    ];
    engine.submit_batch("Orders", &batch).await.unwrap();
    engine
        .write(
            "Orders",
            &WriteOp::Delete {
                key: EntityKey::new("p", "b"),
                if_match: IfMatch::Any,
            },
        )
        .await
        .unwrap();
    engine.create_table("Scratch").await.unwrap();
    engine.delete_table("scratch").await.unwrap();

    let seen = recorder.0.lock().unwrap().clone();
    let kinds: Vec<String> = seen
        .iter()
        .map(|s| match s {
            Seen::Created(n) => format!("+{n}"),
            Seen::Deleted(n) => format!("-{n}"),
            Seen::Rows(t, rows) => format!("{t}:{}", rows.len()),
        })
        .collect();
    // One record per write and one per whole batch; the deleted table by the name
    // it was created with.
    assert_eq!(
        kinds,
        ["+Orders", "Orders:1", "Orders:2", "Orders:1", "+Scratch", "-Scratch"]
    );
    // The batch's record holds the merged row as stored, not the merge request.
    let Seen::Rows(_, batch_rows) = &seen[2] else {
        unreachable!()
    };
    let merged = batch_rows[1].as_ref().unwrap();
    assert_eq!(
        (merged.get("N"), merged.get("M")),
        (Some(&1.into()), Some(&true.into()))
    );

    let rebuilt = MemEngine::new();
    restore_all(&rebuilt, &seen);
    assert_eq!(
        rows(&rebuilt, "Orders").await,
        rows(&engine, "Orders").await
    );
    // Replaying what the engine holds already changes nothing.
    restore_all(&rebuilt, &seen);
    assert_eq!(
        rows(&rebuilt, "Orders").await,
        rows(&engine, "Orders").await
    );
    assert!(rebuilt
        .query("Scratch", &QuerySpec::new(), None)
        .await
        .is_err());

    // An export restores into an equal engine too.
    let mut exported = Vec::new();
    engine.export(1, |change| {
        let recorder = Recorder::default();
        recorder.record(change);
        exported.extend(recorder.0.into_inner().unwrap());
    });
    let from_export = MemEngine::new();
    restore_all(&from_export, &exported);
    assert_eq!(
        rows(&from_export, "Orders").await,
        rows(&engine, "Orders").await
    );
}

#[tokio::test]
async fn restored_rows_keep_their_versions_and_later_writes_come_after_them() {
    let engine = MemEngine::new();
    engine.restore(&Change::TableCreated("Future")).unwrap();
    let mut row = DynamicEntity::new("p", "r").with("N", 1);
    // A row written by a clock far ahead of this one.
    let stamp: DateTime = "9000-01-01T00:00:00.0000001Z".parse().unwrap();
    row.timestamp = Some(stamp);
    row.etag = Some(ETag::from_timestamp(stamp));
    engine
        .restore(&Change::Rows {
            table: "Future",
            rows: &[RowChange::Stored(&row)],
        })
        .unwrap();
    let got = engine
        .get_entity("Future", &EntityKey::new("p", "r"), None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got, row);
    // Its ETag still guards it, and the next write is stamped after it.
    let outcome = engine
        .write(
            "Future",
            &WriteOp::Replace {
                entity: DynamicEntity::new("p", "r").with("N", 2),
                if_match: IfMatch::Etag(row.etag.clone().unwrap()),
            },
        )
        .await
        .unwrap();
    assert!(outcome.timestamp.unwrap() > stamp);

    // Rows of a table that does not exist are refused, and nothing of them applied.
    let err = engine
        .restore(&Change::Rows {
            table: "Nowhere",
            rows: &[RowChange::Stored(&row)],
        })
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TableNotFound);
}
