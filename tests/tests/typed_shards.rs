//! Hashed shard keys (`{field:shard(N)}`): a PartitionKey that starts with a stable
//! hash bucket of a field spreads rows that would share one hot partition over N,
//! and `Query::across_partitions` with `T::shard_partitions(..)` reads every bucket at
//! once, merged in key order; on every engine of the typed matrix.

#![allow(clippy::unwrap_used)] // tests

use std::collections::BTreeSet;

use tables_client::key::form::shard::bucket;
use tables_client::{Entity, ErrorKind, IfMatch, Result, Row};
use tables_tests::read::all_rows;
use tables_tests::typed::Backend;

/// Sign-ins: by time they would all go to one partition; a bucket of the user
/// spreads them over 8. The user is read back from the RowKey.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    kind = "SignIn",
    partition_key = "{user:shard(8)}",
    row_key = "{at:010}_{user}"
)]
struct SignIn {
    user: String,
    at: u64,
    device: String,
}

/// A bucket beside another field: `{site:shard(4)}_{day}`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    kind = "Visit",
    partition_key = "{site:shard(12)}_{day}",
    row_key = "{site}_{n:04}"
)]
struct Visit {
    site: String,
    day: String,
    n: u32,
}

const TABLE: &str = "Shards";

fn signin(i: u64) -> SignIn {
    SignIn {
        user: format!("user{:02}", i % 23),
        at: 1_000 + i,
        device: format!("d{i}"),
    }
}

/// The rows spread over the buckets; the merged query returns them all in RowKey
/// order (here, time order); `take` and a row range apply to the merged result; a
/// row reads, updates and deletes by its key as any other.
async fn buckets_spread_and_merge_back_in_key_order(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table(TABLE).await?;
    let table = service.table::<SignIn>(TABLE);
    // Inserted newest first, so the merge, not the insert order, sorts them.
    for i in (0..60).rev() {
        table.insert(&signin(i)).await?;
    }
    let rows = all_rows(service.engine().as_ref(), TABLE).await?;
    let partitions: BTreeSet<&str> = rows.iter().map(|r| r.partition_key.as_str()).collect();
    assert!(partitions.len() >= 6, "spread over {partitions:?}");
    for row in &rows {
        let user = row.row_key.split('_').nth(1).unwrap();
        assert_eq!(
            row.partition_key,
            bucket(user, 8).to_string(),
            "{}",
            row.row_key
        );
    }
    assert_eq!(
        SignIn::shard_partitions()?,
        ["0", "1", "2", "3", "4", "5", "6", "7"]
    );

    let all = table
        .query()
        .across_partitions(SignIn::shard_partitions()?)
        .collect()
        .await?;
    assert_eq!(all, (0..60).map(signin).collect::<Vec<_>>());

    if !backend.ordered() {
        // The seven first of a merge depend on each partition's order: refused on
        // an engine whose results come in any order, naming the call.
        let err = table
            .query()
            .take(7)
            .across_partitions(SignIn::shard_partitions()?)
            .collect()
            .await
            .unwrap_err();
        assert_eq!(err.kind(), tables_client::ErrorKind::InvalidQuery, "{err}");
        assert!(
            err.to_string().contains("`across_partitions(..).collect`"),
            "{err}"
        );
    }
    let first = table
        .query()
        .order_in_client(1_000)
        .take(7)
        .across_partitions(SignIn::shard_partitions()?)
        .collect()
        .await?;
    assert_eq!(first, (0..7).map(signin).collect::<Vec<_>>());

    let window = table
        .query()
        .row_range(SignIn::at_range(1_010..1_020)?)
        .across_partitions(SignIn::shard_partitions()?)
        .collect()
        .await?;
    assert_eq!(window, (10..20).map(signin).collect::<Vec<_>>());

    let key = SignIn::key("user05", 1_005)?;
    let read = table.get(&key).await?.unwrap();
    assert_eq!(read.value, signin(5));
    let moved = SignIn {
        device: "new".into(),
        ..signin(5)
    };
    table.replace(&moved, IfMatch::Etag(read.etag)).await?;
    assert_eq!(table.get(&key).await?.unwrap().value, moved);
    table.delete(&key, IfMatch::Any).await?;
    assert!(table.get(&key).await?.is_none());

    // A query naming a partition and partitions is refused before anything runs.
    let both = table
        .query()
        .partition("0")
        .across_partitions(SignIn::shard_partitions()?)
        .collect()
        .await
        .unwrap_err();
    assert_eq!(
        both.kind(),
        tables_client::ErrorKind::InvalidInput,
        "{both}"
    );
    Ok(())
}

/// A bucket beside another field: `shard_partitions(day)` names the day's buckets.
async fn buckets_beside_other_fields(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table(TABLE).await?;
    let table = service.table::<Visit>(TABLE);
    let mut expected = Vec::new();
    for site in ["alpha", "beta", "gamma", "delta", "eps"] {
        for n in 0..3 {
            for day in ["2026-11-24", "2026-11-25"] {
                let visit = Visit {
                    site: site.into(),
                    day: day.into(),
                    n,
                };
                table.insert(&visit).await?;
                if day == "2026-11-25" {
                    expected.push(visit);
                }
            }
        }
    }
    let partitions = Visit::shard_partitions("2026-11-25")?;
    assert_eq!(partitions.len(), 12);
    assert_eq!(partitions[3], "03_2026-11-25");
    let day = table
        .query()
        .across_partitions(partitions)
        .collect()
        .await?;
    expected.sort_by(|a, b| (a.site.as_str(), a.n).cmp(&(b.site.as_str(), b.n)));
    assert_eq!(day, expected);
    Ok(())
}

/// A row whose bucket is not its value's (written by other code, or with another
/// bucket count) reads as an error naming the field and both buckets, not as a
/// value whose own key is another row (a replace of it would miss, an upsert would
/// make a second row).
async fn a_row_in_another_bucket_is_a_decode_error(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table(TABLE).await?;
    let table = service.table::<SignIn>(TABLE);
    table.insert(&signin(1)).await?;
    let stray = signin(2);
    let right = bucket(&stray.user, 8);
    let wrong = (right + 3) % 8;
    let mut row = stray.to_entity()?;
    row.partition_key = wrong.to_string();
    let write = tables_client::WriteOp::Insert(row);
    service.engine().write(TABLE, &write).await?;
    let err = table
        .query()
        .across_partitions(SignIn::shard_partitions()?)
        .collect()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode, "{err}");
    let message = err.to_string();
    assert!(
        message.contains(&format!(
            "field `user` is \"user02\", which this type puts in bucket {right} of 8, not {wrong}"
        )),
        "{message}"
    );
    assert_eq!(err.entity_key(), Some(&write.key()), "{err:?}");
    Ok(())
}

tables_tests::typed_matrix!(
    buckets_spread_and_merge_back_in_key_order,
    buckets_beside_other_fields,
    a_row_in_another_bucket_is_a_decode_error,
);

/// A sharded field is read back from another placeholder of its key or from the
/// whole other key: either way its bucket is checked.
#[test]
fn every_bucket_read_back_is_checked() {
    #[derive(Entity, Debug, Clone, PartialEq)]
    #[entity(partition_key = "{a:shard(16)}", row_key = "{a}")]
    struct WholeKey {
        a: String,
    }
    fn moved<T: Row + std::fmt::Debug>(value: &T, pk: String) -> String {
        let mut row = value.to_entity().unwrap();
        assert!(T::from_entity(row.clone()).is_ok());
        row.partition_key = pk;
        let err = T::from_entity(row).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode, "{err}");
        err.to_string()
    }
    let whole = WholeKey { a: "x".into() };
    let other = (bucket("x", 16) + 1) % 16;
    let message = moved(&whole, format!("{other:02}"));
    assert!(message.contains("field `a` is \"x\""), "{message}");
    let beside = Visit {
        site: "alpha".into(),
        day: "2026-11-25".into(),
        n: 1,
    };
    let other = (bucket("alpha", 12) + 1) % 12;
    let message = moved(&beside, format!("{other:02}_2026-11-25"));
    assert!(message.contains("field `site` is \"alpha\""), "{message}");
}

/// The derive (which can't depend on `tables-core`) writes a bucket at the width
/// core's shard form reads: digits of N-1, at the edges of the allowed counts.
#[test]
fn the_derive_writes_buckets_at_cores_width() {
    use tables_client::key::form::shard::{width, MAX_SHARDS};

    #[derive(Entity, Debug, Clone, PartialEq)]
    #[entity(partition_key = "{a:shard(1000)}", row_key = "{a}")]
    struct Most {
        a: String,
    }
    #[derive(Entity, Debug, Clone, PartialEq)]
    #[entity(partition_key = "{a:shard(10)}", row_key = "{a}")]
    struct Ten {
        a: String,
    }
    #[derive(Entity, Debug, Clone, PartialEq)]
    #[entity(partition_key = "{a:shard(2)}", row_key = "{a}")]
    struct Two {
        a: String,
    }
    assert_eq!(MAX_SHARDS, 1000);
    let most = Most::shard_partitions().unwrap();
    assert_eq!((most.len(), most[999].as_str()), (1000, "999"));
    assert!(most.iter().all(|k| k.len() == width(1000)));
    assert_eq!(Ten::shard_partitions().unwrap().last().unwrap(), "9");
    assert_eq!(Two::shard_partitions().unwrap(), ["0", "1"]);
    let key = Most::key("x").unwrap();
    let key = tables_client::EntityKey::from(key);
    assert_eq!(key.partition_key, format!("{:03}", bucket("x", 1000)));
}
