//! The field types beyond the basics (`char`, `i8`/`i16`/`u8`/`u16`, `Box<str>`,
//! `Arc<str>`, `Cow<'static, str>`, `bytes::Bytes`, `chrono::NaiveDate`, `time::Date`,
//! `std::time::Duration`, `rust_decimal::Decimal`) written through derived types and
//! read back, as stored values with their Edm types, through typed filters, and as
//! key parts in the order the service keeps them. Bad values are refused with a
//! typed error naming the field before anything is written. On every engine of the
//! typed matrix ([`tables_tests::typed_matrix!`]).

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use chrono::NaiveDate;
use rust_decimal::Decimal;
use tables_client::{DynamicEntity, EdmType, Entity, ErrorKind, Value};
use tables_tests::read::all_rows;
use tables_tests::typed::{Backend, Fixture};

const TABLE: &str = "Types";

/// Every new property type, plain and optional.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "{sku}", row_key = "item")]
pub struct Item {
    pub sku: String,
    pub grade: char,
    pub tiny: i8,
    pub small: i16,
    pub byte: u8,
    pub word: u16,
    pub title: Box<str>,
    pub shared: Arc<str>,
    pub label: Cow<'static, str>,
    pub blob: bytes::Bytes,
    pub released: NaiveDate,
    pub audited: time::Date,
    pub warranty: Duration,
    pub price: Decimal,
    pub maybe_grade: Option<char>,
    pub maybe_date: Option<NaiveDate>,
    pub maybe_price: Option<Decimal>,
    pub maybe_blob: Option<bytes::Bytes>,
}

/// Signed narrow integers as `{x:signed}`, unsigned as padded.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    partition_key = "ints",
    row_key = "{a:signed}_{b:signed}_{c:03}_{d:05}"
)]
pub struct IntKeys {
    pub a: i8,
    pub b: i16,
    pub c: u8,
    pub d: u16,
}

/// A `char` as itself (readable) in the RowKey.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "chars", row_key = "{c}")]
pub struct CharText {
    pub c: char,
}

/// A `char` as its code point: sorts exactly like `char`, holds any character.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "points", row_key = "{c:07}")]
pub struct CharPoint {
    pub c: char,
}

/// Dates of both crates in one RowKey, with a range helper on the first.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "dates", row_key = "{day}_{audit}")]
pub struct DateKeys {
    pub day: NaiveDate,
    pub audit: time::Date,
}

/// Text types other than `String` as whole keys and in a template.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "{team}", row_key = "{name}_{rank:03}")]
pub struct TextKeys {
    pub team: Box<str>,
    pub name: Arc<str>,
    pub rank: u8,
    pub motto: Cow<'static, str>,
}

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

fn time_date(y: i32, m: u8, d: u8) -> time::Date {
    time::Date::from_calendar_date(y, time::Month::try_from(m).unwrap(), d).unwrap()
}

fn dec(text: &str) -> Decimal {
    Decimal::from_str_exact(text).unwrap()
}

fn item(sku: &str) -> Item {
    Item {
        sku: sku.into(),
        grade: 'é',
        tiny: i8::MIN,
        small: i16::MAX,
        byte: u8::MAX,
        word: u16::MAX,
        title: "Ünïcode title 😀".into(),
        shared: Arc::from("shared"),
        label: Cow::Borrowed("label"),
        blob: bytes::Bytes::from_static(&[0, 1, 2, 255]),
        released: date(2024, 2, 29),
        audited: time_date(1, 1, 1),
        warranty: Duration::new(63_113_904, 123_456_789),
        price: dec("-79228162514264337593543950.335"),
        maybe_grade: Some('😀'),
        maybe_date: None,
        maybe_price: Some(dec("1.50")),
        maybe_blob: None,
    }
}

async fn stored(fixture: &Fixture, pk: &str, rk: &str) -> DynamicEntity {
    use tables_client::Engine as _;
    let key = tables_client::EntityKey::new(pk, rk);
    fixture
        .engine
        .get_entity(TABLE, &key, None)
        .await
        .unwrap()
        .unwrap()
}

/// Each type is written with the Edm type the manual names and reads back equal
/// (a `Decimal` keeps its scale; a `Duration` its nanoseconds).
async fn every_new_type_round_trips(backend: Backend) {
    let fixture = backend.fresh();
    fixture.service.create_table(TABLE).await.unwrap();
    let items = fixture.service.table::<Item>(TABLE);
    let written = item("a1");
    items.insert(&written).await.unwrap();

    let read = items
        .get(Item::key("a1").unwrap())
        .await
        .unwrap()
        .unwrap()
        .value;
    assert_eq!(read, written);
    assert_eq!(read.price.scale(), 3);
    assert_eq!(read.maybe_price.unwrap().scale(), 2, "1.50 stays 1.50");

    let row = stored(&fixture, "a1", "item").await;
    let edm = |name: &str| row.get(name).map(Value::edm_type);
    for (name, expected) in [
        ("grade", EdmType::String),
        ("tiny", EdmType::Int32),
        ("small", EdmType::Int32),
        ("byte", EdmType::Int32),
        ("word", EdmType::Int32),
        ("title", EdmType::String),
        ("shared", EdmType::String),
        ("label", EdmType::String),
        ("blob", EdmType::Binary),
        ("released", EdmType::String),
        ("audited", EdmType::String),
        ("warranty", EdmType::Int64),
        ("price", EdmType::String),
    ] {
        assert_eq!(edm(name), Some(expected), "{name}");
    }
    assert_eq!(row.get("released"), Some(&Value::from("2024-02-29")));
    assert_eq!(row.get("audited"), Some(&Value::from("0001-01-01")));
    assert_eq!(
        row.get("warranty"),
        Some(&Value::Int64(63_113_904_123_456_789))
    );
    assert_eq!(
        row.get("price"),
        Some(&Value::from("-79228162514264337593543950.335"))
    );
    assert!(!row.contains("maybe_date") && !row.contains("maybe_blob"));

    fixture.drop_tables().await;
}

/// Typed filters on the new types run on the service and compare like the values:
/// dates as dates, durations as durations, chars as chars.
async fn typed_filters_compare_like_the_values(backend: Backend) {
    let fixture = backend.fresh();
    fixture.service.create_table(TABLE).await.unwrap();
    let items = fixture.service.table::<Item>(TABLE);
    let days = [
        date(999, 12, 31),
        date(1000, 1, 1),
        date(2023, 12, 31),
        date(2024, 1, 1),
    ];
    for (i, day) in days.iter().enumerate() {
        let mut value = item(&format!("f{i}"));
        value.released = *day;
        value.warranty = Duration::from_secs(10u64.pow(u32::try_from(i).unwrap()));
        value.grade = ['a', 'z', 'é', '日'][i];
        items.insert(&value).await.unwrap();
    }
    let skus = |found: Vec<Item>| {
        let mut skus: Vec<String> = found.into_iter().map(|i| i.sku).collect();
        skus.sort();
        skus
    };
    let since_1000 = items
        .query()
        .filter(Item::RELEASED.ge(date(1000, 1, 1)))
        .collect()
        .await
        .unwrap();
    assert_eq!(skus(since_1000), ["f1", "f2", "f3"]);
    let long = items
        .query()
        .filter(Item::WARRANTY.gt(Duration::from_secs(10)))
        .collect()
        .await
        .unwrap();
    assert_eq!(skus(long), ["f2", "f3"]);
    let after_z = items
        .query()
        .filter(Item::GRADE.gt('z'))
        .collect()
        .await
        .unwrap();
    assert_eq!(skus(after_z), ["f2", "f3"]);
    let exact = items
        .query()
        .filter(Item::TITLE.eq("Ünïcode title 😀") & Item::LABEL.eq("label"))
        .collect()
        .await
        .unwrap();
    assert_eq!(exact.len(), 4);

    fixture.drop_tables().await;
}

/// Narrow integers, chars and dates as key parts: the rows come back from the
/// service in the order of the values, and each key reads back to its value.
async fn key_parts_sort_like_the_values(backend: Backend) {
    let fixture = backend.fresh();
    fixture.service.create_table(TABLE).await.unwrap();

    let ints = fixture.service.table::<IntKeys>(TABLE);
    let mut expected = Vec::new();
    for a in [i8::MIN, -1, 0, 1, i8::MAX] {
        for b in [i16::MIN, -300, 0, 7, i16::MAX] {
            let (c, d) = (a.unsigned_abs(), b.unsigned_abs());
            expected.push(IntKeys { a, b, c, d });
        }
    }
    for value in expected.iter().rev() {
        ints.insert(value).await.unwrap();
    }
    expected.sort_by_key(|k| (k.a, k.b, k.c, k.d));
    let got = ints.query().partition("ints").collect().await.unwrap();
    assert_eq!(
        got, expected,
        "i8/i16 signed and u8/u16 padded keys sort like the numbers"
    );

    // Readable chars: the service's order is char order within the BMP below
    // U+E000 and among supplementary characters.
    let text = fixture.service.table::<CharText>(TABLE);
    let chars = [
        '~', 'A', 'Z', 'a', 'z', '0', ' ', 'é', 'ß', 'Ω', '日', '\u{D7FF}',
    ];
    for c in chars {
        text.insert(&CharText { c }).await.unwrap();
    }
    let mut sorted = chars.to_vec();
    sorted.sort_unstable();
    let got: Vec<char> = text
        .query()
        .partition("chars")
        .collect()
        .await
        .unwrap()
        .into_iter()
        .map(|k| k.c)
        .collect();
    assert_eq!(got, sorted);

    // Code points: exact char order, for every character (also `/` and the ones
    // the readable form sorts differently).
    let points = fixture.service.table::<CharPoint>(TABLE);
    let chars = [
        '/',
        '\u{E000}',
        '\u{FFFD}',
        '😀',
        '\u{10FFFF}',
        'A',
        '\0',
        'é',
    ];
    for c in chars {
        points.insert(&CharPoint { c }).await.unwrap();
    }
    let mut sorted = chars.to_vec();
    sorted.sort_unstable();
    let got: Vec<char> = points
        .query()
        .partition("points")
        .collect()
        .await
        .unwrap()
        .into_iter()
        .map(|k| k.c)
        .collect();
    assert_eq!(got, sorted);

    // Dates across years, centuries and the ends of the range.
    let dates = fixture.service.table::<DateKeys>(TABLE);
    let days = [
        (9999, 12, 31),
        (1, 1, 1),
        (999, 12, 31),
        (1000, 1, 1),
        (1969, 12, 31),
        (1970, 1, 1),
        (2024, 2, 29),
        (2024, 3, 1),
    ];
    for (y, m, d) in days {
        let value = DateKeys {
            day: date(y, m, d),
            audit: time_date(y, u8::try_from(m).unwrap(), u8::try_from(d).unwrap()),
        };
        dates.insert(&value).await.unwrap();
    }
    let got = dates.query().partition("dates").collect().await.unwrap();
    let mut sorted: Vec<NaiveDate> = days.iter().map(|&(y, m, d)| date(y, m, d)).collect();
    sorted.sort_unstable();
    assert_eq!(got.iter().map(|k| k.day).collect::<Vec<_>>(), sorted);
    assert!(got.iter().all(|k| k.day.to_string() == k.audit.to_string()));
    let range = DateKeys::day_range(date(1000, 1, 1)..date(2024, 3, 1)).unwrap();
    let in_range = dates
        .query()
        .partition("dates")
        .row_range(range)
        .collect()
        .await
        .unwrap();
    assert_eq!(
        in_range.iter().map(|k| k.day).collect::<Vec<_>>(),
        [
            date(1000, 1, 1),
            date(1969, 12, 31),
            date(1970, 1, 1),
            date(2024, 2, 29)
        ]
    );

    fixture.drop_tables().await;
}

/// `Box<str>`, `Arc<str>` and `Cow<'static, str>` as whole keys, template parts and
/// properties.
async fn text_types_are_keys_and_properties(backend: Backend) {
    let fixture = backend.fresh();
    fixture.service.create_table(TABLE).await.unwrap();
    let table = fixture.service.table::<TextKeys>(TABLE);
    let value = TextKeys {
        team: "Ops é".into(),
        name: Arc::from("Ann_Lee"),
        rank: 7,
        motto: Cow::Owned("ship it".to_owned()),
    };
    table.insert(&value).await.unwrap();
    let key = TextKeys::key("Ops é", "Ann_Lee", 7).unwrap();
    assert_eq!(key.row_key, "Ann_Lee_007");
    assert_eq!(table.get(key).await.unwrap().unwrap().value, value);
    let found = table
        .query()
        .partition("Ops é")
        .row_range(TextKeys::rank_range("Ann_Lee", 5..10).unwrap())
        .filter(TextKeys::MOTTO.eq("ship it"))
        .collect()
        .await
        .unwrap();
    assert_eq!(found, [value]);

    fixture.drop_tables().await;
}

/// Values with no stored form are refused before anything is sent, with a typed
/// error naming the field.
async fn bad_values_are_refused_before_anything_is_written(backend: Backend) {
    let fixture = backend.fresh();
    fixture.service.create_table(TABLE).await.unwrap();
    let items = fixture.service.table::<Item>(TABLE);

    let mut too_long = item("b1");
    too_long.warranty = Duration::from_nanos(i64::MAX as u64 + 1);
    let err = items.insert(&too_long).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidValue);
    assert_eq!(err.property(), Some("warranty"));
    assert!(err.message().contains("`warranty`"), "{}", err.message());

    let mut far = item("b2");
    far.released = date(10_000, 1, 1);
    let err = items.insert(&far).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidValue);
    assert!(err.message().contains("`released`"), "{}", err.message());

    let dates = fixture.service.table::<DateKeys>(TABLE);
    let bc = DateKeys {
        day: date(-44, 3, 15),
        audit: time_date(2000, 1, 1),
    };
    let err = dates.insert(&bc).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidKey);
    assert!(err.message().contains("`day`"), "{}", err.message());

    let slash = fixture.service.table::<CharText>(TABLE);
    let err = slash.insert(&CharText { c: '/' }).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidKey);
    assert!(err.message().contains("`c`"), "{}", err.message());

    assert!(
        all_rows(&fixture.engine, TABLE).await.unwrap().is_empty(),
        "nothing was written"
    );
    fixture.drop_tables().await;
}

tables_tests::typed_matrix!(
    #[tokio::test]
    every_new_type_round_trips,
    #[tokio::test]
    typed_filters_compare_like_the_values,
    #[tokio::test]
    key_parts_sort_like_the_values,
    #[tokio::test]
    text_types_are_keys_and_properties,
    #[tokio::test]
    bad_values_are_refused_before_anything_is_written,
);
