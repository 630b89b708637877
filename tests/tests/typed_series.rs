//! Data series (`#[entity(series)]`): an array stored as one property per point,
//! read with one point query, one point set alone with a Merge under the ETag
//! (`Table::set_point`), points usable as typed columns; on every engine of the
//! typed matrix. A series too long for one row makes its type wide
//! (tests/tests/typed_wide.rs).

#![allow(clippy::unwrap_used)] // tests

use tables_client::{DynamicEntity, Entity, ErrorKind, IfMatch, Origin, Result, Value, WriteOp};
use tables_tests::read::get;
use tables_tests::typed::Backend;

/// The guide's counters: one row per page and day, one point per hour.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Hits", partition_key = "{page}", row_key = "{day}")]
struct Hits {
    page: String,
    day: String,
    #[entity(series)]
    hourly: [u32; 24],
}

/// A series whose missing points read as 0.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Sparse", partition_key = "sparse", row_key = "{id}")]
struct Sparse {
    id: String,
    #[entity(series, default, rename = "Level")]
    levels: [i64; 5],
}

/// As many points as one row holds: 250 and the two tag properties make the
/// service's 252.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Full", partition_key = "full", row_key = "{id}")]
struct Full {
    id: String,
    #[entity(series)]
    points: [i32; 250],
}

const TABLE: &str = "Series";

fn hits(page: &str, day: &str) -> Hits {
    let mut hourly = [0; 24];
    for (hour, count) in hourly.iter_mut().enumerate() {
        *count = u32::try_from(hour * 10).unwrap();
    }
    Hits {
        page: page.to_owned(),
        day: day.to_owned(),
        hourly,
    }
}

/// The row holds `hourly_00` .. `hourly_23`, one Int64 each (a `u32`'s stored
/// form, as for any `u32` field); it reads
/// back whole, by point query and by a filter on one point.
async fn a_series_is_one_property_per_point(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table(TABLE).await?;
    let table = service.table::<Hits>(TABLE);
    let home = hits("home", "2026-11-24");
    table.insert(&home).await?;
    let mut quiet = hits("about", "2026-11-24");
    quiet.hourly = [1; 24];
    table.insert(&quiet).await?;

    let raw = get(service.engine().as_ref(), TABLE, "home", "2026-11-24")
        .await?
        .unwrap();
    for hour in 0..24u32 {
        let name = format!("hourly_{hour:02}");
        assert_eq!(
            raw.get(&name),
            Some(&Value::Int64(i64::from(hour * 10))),
            "{name}"
        );
    }
    assert!(raw.get("hourly").is_none());
    assert!(raw.get("hourly_24").is_none());

    let got = table.get(Hits::key("home", "2026-11-24")?).await?.unwrap();
    assert_eq!(got.value, home);
    let busy = table
        .query()
        .filter(Hits::HOURLY.point(23).unwrap().gt(100))
        .collect()
        .await?;
    assert_eq!(busy, vec![home]);
    assert_eq!(Hits::HOURLY.len(), 24);
    Ok(())
}

/// `set_point` merges one property under the ETag: the other points and columns
/// other programs wrote are kept; a stale ETag or an index past the end changes
/// nothing.
async fn one_point_is_set_alone_under_the_etag(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table(TABLE).await?;
    let table = service.table::<Hits>(TABLE);
    let first = table.insert(&hits("home", "d1")).await?.etag.unwrap();
    // Another program's column, written after the insert.
    let foreign = DynamicEntity::new("home", "d1").with("Foreign", Value::Int64(7));
    let after_foreign = service
        .engine()
        .write(
            TABLE,
            &WriteOp::Merge {
                entity: foreign,
                if_match: IfMatch::Any,
            },
        )
        .await?
        .etag
        .unwrap();
    let key = Hits::key("home", "d1")?;

    let stale = table
        .set_point(&key, Hits::HOURLY, 5, 999, IfMatch::Etag(first))
        .await
        .unwrap_err();
    assert_eq!(stale.kind(), ErrorKind::PreconditionFailed, "{stale}");
    let past = table
        .set_point(&key, Hits::HOURLY, 24, 1, IfMatch::Any)
        .await
        .unwrap_err();
    assert_eq!(past.kind(), ErrorKind::InvalidInput, "{past}");
    assert_eq!(past.origin(), Origin::Local);
    assert_eq!(table.get(&key).await?.unwrap().value, hits("home", "d1"));

    table
        .set_point(&key, Hits::HOURLY, 5, 999, IfMatch::Etag(after_foreign))
        .await?;
    let mut expected = hits("home", "d1");
    expected.hourly[5] = 999;
    assert_eq!(table.get(&key).await?.unwrap().value, expected);
    let raw = get(service.engine().as_ref(), TABLE, "home", "d1")
        .await?
        .unwrap();
    assert_eq!(raw.get("Foreign"), Some(&Value::Int64(7)), "kept");
    Ok(())
}

/// A missing point is an error naming the field and the point, unless the field
/// says `default`; `rename` names the points.
async fn missing_points_are_errors_or_defaults(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table(TABLE).await?;
    let mut partial = DynamicEntity::new("sparse", "a")
        .with("EntityType", "Sparse")
        .with("EntityVersion", Value::Int32(1));
    partial = partial
        .with("Level_01", Value::Int64(5))
        .with("Level_04", Value::Int64(9));
    service
        .engine()
        .write(TABLE, &WriteOp::Insert(partial))
        .await?;
    let sparse = service.table::<Sparse>(TABLE);
    let got = sparse.get(Sparse::key("a")?).await?.unwrap().value;
    assert_eq!(got.levels, [0, 5, 0, 0, 9]);

    let row = DynamicEntity::new("home", "d2")
        .with("EntityType", "Hits")
        .with("EntityVersion", Value::Int32(1))
        .with("hourly_00", Value::Int32(1));
    service.engine().write(TABLE, &WriteOp::Insert(row)).await?;
    let err = service
        .table::<Hits>(TABLE)
        .get(Hits::key("home", "d2")?)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode, "{err}");
    assert!(err.to_string().contains("hourly_01"), "{err}");
    Ok(())
}

/// A series that fills a row to the service's 252 properties is written and read
/// back whole.
async fn a_series_may_fill_a_row(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table(TABLE).await?;
    let table = service.table::<Full>(TABLE);
    let mut points = [0i32; 250];
    for (i, point) in points.iter_mut().enumerate() {
        *point = -i32::try_from(i).unwrap();
    }
    let full = Full {
        id: "x".to_owned(),
        points,
    };
    table.insert(&full).await?;
    assert_eq!(table.get(Full::key("x")?).await?.unwrap().value, full);
    let raw = get(service.engine().as_ref(), TABLE, "full", "x")
        .await?
        .unwrap();
    assert_eq!(raw.get("points_249"), Some(&Value::Int32(-249)));
    assert_eq!(raw.get("points_000"), Some(&Value::Int32(0)));
    Ok(())
}

tables_tests::typed_matrix!(
    a_series_is_one_property_per_point,
    one_point_is_set_alone_under_the_etag,
    missing_points_are_errors_or_defaults,
    a_series_may_fill_a_row,
);
