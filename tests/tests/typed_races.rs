//! Races the fault tests found, replayed deterministically: an engine that lets
//! another client write right after a chosen read, so the write in flight works
//! from what that read returned.

#![allow(clippy::unwrap_used)] // tests

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use tables_client::mem::MemEngine;
use tables_client::{
    DynamicEntity, Engine, Entity, EntityKey, IfMatch, Result, TableServiceClient,
};
use tables_tests::forward::{Forward, Forwarding};
use tables_tests::typed::{check, Clerk, STAFF};

/// What to do through another client once the watched read is answered.
type Meddle = Box<dyn FnOnce(TableServiceClient) -> BoxFuture<'static, Result<()>> + Send>;

/// After the next read of the watched key, runs the meddling.
struct DeleteAfterRead {
    inner: MemEngine,
    armed: Mutex<Option<(EntityKey, Meddle)>>,
}

impl std::fmt::Debug for DeleteAfterRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeleteAfterRead").finish_non_exhaustive()
    }
}

/// A seat-holder: one unique copy in the partition, no index entity.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Seat", partition_key = "{department}", row_key = "s_{id:04}")]
#[entity(unique_index(name = "seat", row_key = "seat_{seat}"))]
struct Seat {
    department: String,
    id: u32,
    seat: String,
}

#[tables_client::async_trait]
impl Forward for DeleteAfterRead {
    fn inner(&self) -> &dyn Engine {
        &self.inner
    }

    async fn get_entity(
        &self,
        table: &str,
        key: &EntityKey,
        select: Option<&[String]>,
    ) -> Result<Option<DynamicEntity>> {
        let row = self.inner.get_entity(table, key, select).await?;
        let fire = {
            let mut armed = self.armed.lock().unwrap();
            match armed.as_ref() {
                Some((watch, _)) if watch == key => armed.take(),
                _ => None,
            }
        };
        if let Some((_, meddle)) = fire {
            meddle(TableServiceClient::new(self.inner.clone())).await?;
        }
        Ok(row)
    }
}

/// A mem engine, the meddling engine over it, and a client over that with the
/// staff table created.
async fn fixture() -> (
    MemEngine,
    Arc<Forwarding<DeleteAfterRead>>,
    TableServiceClient,
) {
    let inner = MemEngine::new();
    let engine = Arc::new(Forwarding(DeleteAfterRead {
        inner: inner.clone(),
        armed: Mutex::new(None),
    }));
    let service = TableServiceClient::from_engine(engine.clone());
    service.create_table(STAFF).await.unwrap();
    (inner, engine, service)
}

fn clerk() -> Clerk {
    Clerk {
        department: "Sales".into(),
        id: 8,
        email: "c8@contoso.com".into(),
        desk: "D8".into(),
        team: "red".into(),
    }
}

/// An insert reads an index row that still lists (or copies) the previous row with
/// its key; a concurrent delete of that row then removes the listing. The insert
/// must not commit on what it read: its index rows are whole afterwards. (Seen in
/// the transport fault test as a `MissingMember` of `last_name`.)
#[tokio::test]
async fn an_insert_does_not_rely_on_index_rows_a_concurrent_delete_changes() {
    for watched in ["team_red", "desk_D8", "email_c8@contoso.com"] {
        let (inner, engine, service) = fixture().await;
        let clerks = service.table::<Clerk>(STAFF);
        clerks.insert(&clerk()).await.unwrap();

        let meddle: Meddle = Box::new(|other| {
            Box::pin(async move {
                let key = Clerk::key("Sales", 8)?;
                other
                    .table::<Clerk>(STAFF)
                    .delete(key, IfMatch::Any)
                    .await?;
                Ok(())
            })
        });
        *engine.armed.lock().unwrap() = Some((EntityKey::new("Sales", watched), meddle));
        let outcome = clerks.insert(&clerk()).await;
        assert!(
            engine.armed.lock().unwrap().is_none(),
            "{watched}: the read was not made"
        );
        match outcome {
            Ok(_) => {
                let got = clerks.get(Clerk::key("Sales", 8).unwrap()).await.unwrap();
                assert_eq!(got.map(|v| v.value), Some(clerk()), "{watched}");
            }
            Err(e) => assert!(!e.may_have_applied(), "{watched}: {e}"),
        }
        // The index rows are exactly what the primaries imply (or `check` fails).
        if let Err(e) = check::<Clerk>(&inner, STAFF).await {
            panic!("{watched}: index rows not whole: {e}");
        }
    }
}

/// The same race on a type with a copy index only: the insert finds the copy of the
/// previous row with its key (same content), which a concurrent delete removes.
#[tokio::test]
async fn an_insert_does_not_rely_on_a_copy_a_concurrent_delete_removes() {
    let (inner, engine, service) = fixture().await;
    let seats = service.table::<Seat>(STAFF);
    let seat = Seat {
        department: "Sales".into(),
        id: 3,
        seat: "A1".into(),
    };
    seats.insert(&seat).await.unwrap();
    let meddle: Meddle = Box::new(|other| {
        Box::pin(async move {
            let key = Seat::key("Sales", 3)?;
            other.table::<Seat>(STAFF).delete(key, IfMatch::Any).await?;
            Ok(())
        })
    });
    *engine.armed.lock().unwrap() = Some((EntityKey::new("Sales", "seat_A1"), meddle));
    seats.insert(&seat).await.unwrap();
    assert!(
        engine.armed.lock().unwrap().is_none(),
        "the read was not made"
    );
    let copy = inner
        .get_entity(STAFF, &EntityKey::new("Sales", "seat_A1"), None)
        .await
        .unwrap();
    assert!(copy.is_some(), "the inserted row's copy is missing");
    check::<Seat>(&inner, STAFF).await.unwrap();
}
