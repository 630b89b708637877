//! Property tests of the derive: every field type and key form round-trips through
//! `DynamicEntity`, keys parse back, and numeric and tick keys sort like the values.

#![allow(clippy::unwrap_used)] // test helpers build known-good values

use std::cmp::Ordering;

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use tables_client::key::cmp_ordinal;
use tables_client::{DateTime, Entity, Property, Row};
use uuid::Uuid;

#[derive(Property, Debug, Clone, Copy, PartialEq, Eq)]
enum Color {
    Red,
    #[entity(rename = "green")]
    Green,
    Blue,
}

#[derive(Property, Debug, Clone, PartialEq, Eq)]
struct Email(String);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Blob {
    tags: Vec<String>,
    weight: Option<u32>,
}

/// Every key form at once: a variable text part in the PartitionKey, fixed-width
/// parts and a trailing enum in the RowKey.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    partition_key = "p_{text}",
    row_key = "{a:03}_{b:05}_{c:010}_{d:020}_{e:signed}_{f:signed}_{t:ticks}_{r:rticks}_{id}_{color}"
)]
struct AllKeys {
    text: String,
    color: Color,
    a: u8,
    b: u16,
    c: u32,
    d: u64,
    e: i32,
    f: i64,
    t: DateTime,
    r: DateTime,
    id: Uuid,
    note: String,
}

/// Every property type.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "all", row_key = "{id:010}")]
struct AllProps {
    id: u32,
    s: String,
    flag: bool,
    i8v: i8,
    i16v: i16,
    i32v: i32,
    i64v: i64,
    u8v: u8,
    u16v: u16,
    u32v: u32,
    u64v: u64,
    f32v: f32,
    f64v: f64,
    bytes: Vec<u8>,
    guid: Uuid,
    at: DateTime,
    maybe_i: Option<i64>,
    maybe_s: Option<String>,
    maybe_color: Option<Color>,
    color: Color,
    email: Email,
    #[entity(json)]
    blob: Blob,
    #[entity(json)]
    maybe_blob: Option<Blob>,
    #[entity(default)]
    defaulted: i32,
}

fn key_text() -> impl Strategy<Value = String> {
    // Any characters keys may hold, including the separator `_` and non-ASCII.
    proptest::string::string_regex("[a-zA-Z0-9_ .~é日😀-]{0,20}").unwrap()
}

fn datetime() -> impl Strategy<Value = DateTime> {
    (DateTime::MIN_TICKS..=DateTime::MAX_TICKS).prop_map(|t| DateTime::from_ticks(t).unwrap())
}

fn color() -> impl Strategy<Value = Color> {
    prop_oneof![Just(Color::Red), Just(Color::Green), Just(Color::Blue)]
}

prop_compose! {
    fn all_keys()(
        text in key_text(), color in color(), a in any::<u8>(), b in any::<u16>(),
        c in any::<u32>(), d in any::<u64>(), e in any::<i32>(), f in any::<i64>(),
        t in datetime(), r in datetime(), id in any::<u128>(), note in ".{0,10}",
    ) -> AllKeys {
        AllKeys { text, color, a, b, c, d, e, f, t, r, id: Uuid::from_u128(id), note }
    }
}

prop_compose! {
    fn all_props()(
        id in any::<u32>(), s in ".{0,30}", flag in any::<bool>(),
        ints in (any::<i8>(), any::<i16>(), any::<i32>(), any::<i64>()),
        uints in (any::<u8>(), any::<u16>(), any::<u32>(), 0..=i64::MAX as u64),
        f32v in proptest::num::f32::NORMAL | proptest::num::f32::ZERO,
        f64v in proptest::num::f64::NORMAL | proptest::num::f64::ZERO | proptest::num::f64::SUBNORMAL,
        bytes in proptest::collection::vec(any::<u8>(), 0..40),
        guid in any::<u128>(), at in datetime(),
        maybe_i in proptest::option::of(any::<i64>()),
        maybe_s in proptest::option::of(".{0,10}"),
        maybe_color in proptest::option::of(color()), color in color(),
        email in "[a-z]{1,8}@[a-z]{1,8}\\.com",
        tags in proptest::collection::vec(".{0,5}", 0..4),
        weight in proptest::option::of(any::<u32>()),
        maybe_blob in proptest::option::of(Just(())),
        defaulted in any::<i32>(),
    ) -> AllProps {
        let blob = Blob { tags, weight };
        AllProps {
            id, s, flag, i8v: ints.0, i16v: ints.1, i32v: ints.2, i64v: ints.3,
            u8v: uints.0, u16v: uints.1, u32v: uints.2, u64v: uints.3, f32v, f64v, bytes,
            guid: Uuid::from_u128(guid), at, maybe_i, maybe_s, maybe_color, color,
            email: Email(email), maybe_blob: maybe_blob.map(|()| blob.clone()), blob, defaulted,
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_key_form_round_trips(value in all_keys()) {
        let row = value.to_entity().unwrap();
        prop_assert_eq!(&row.partition_key, &AllKeys::partition_key(&value.text).unwrap());
        let key = AllKeys::key(
            &value.text, value.a, value.b, value.c, value.d, value.e, value.f,
            value.t, value.r, value.id, value.color,
        ).unwrap();
        prop_assert_eq!(&key, &row.key());
        // Key fields are parsed back, not stored.
        prop_assert!(!row.contains("c") && !row.contains("text"));
        prop_assert_eq!(AllKeys::from_entity(row).unwrap(), value);
    }

    #[test]
    fn every_property_type_round_trips(value in all_props()) {
        let row = value.to_entity().unwrap();
        prop_assert_eq!(row.contains("maybe_i"), value.maybe_i.is_some());
        prop_assert_eq!(row.contains("maybe_blob"), value.maybe_blob.is_some());
        prop_assert_eq!(AllProps::from_entity(row).unwrap(), value);
    }

    #[test]
    fn absent_defaulted_property_decodes_as_default(value in all_props()) {
        let mut row = value.to_entity().unwrap();
        row.remove("defaulted");
        prop_assert_eq!(AllProps::from_entity(row).unwrap().defaulted, 0);
    }

    #[test]
    fn padded_keys_sort_like_the_numbers(a in any::<u64>(), b in any::<u64>()) {
        let (ka, kb) = (Sorts::row_key(a, 0, DateTime::MIN).unwrap(), Sorts::row_key(b, 0, DateTime::MIN).unwrap());
        prop_assert_eq!(cmp_ordinal(&ka, &kb), a.cmp(&b));
    }

    #[test]
    fn signed_keys_sort_like_the_numbers(a in any::<i64>(), b in any::<i64>()) {
        let (ka, kb) = (Sorts::row_key(0, a, DateTime::MIN).unwrap(), Sorts::row_key(0, b, DateTime::MIN).unwrap());
        prop_assert_eq!(cmp_ordinal(&ka, &kb), a.cmp(&b));
    }

    #[test]
    fn tick_keys_sort_like_time_and_reverse_ticks_against_it(a in datetime(), b in datetime()) {
        let (ka, kb) = (Ticks::row_key(a).unwrap(), Ticks::row_key(b).unwrap());
        prop_assert_eq!(cmp_ordinal(&ka, &kb), a.cmp(&b));
        let (ra, rb) = (Sorts::row_key(0, 0, a).unwrap(), Sorts::row_key(0, 0, b).unwrap());
        prop_assert_eq!(cmp_ordinal(&ra, &rb), b.cmp(&a));
    }

    #[test]
    fn ranges_hold_exactly_the_values_in_range(lo in any::<u32>(), hi in any::<u32>(), x in any::<u32>()) {
        let range = Padded::n_range(lo..hi).unwrap();
        let key = Padded::row_key(x).unwrap();
        prop_assert_eq!(range.contains(&key), (lo..hi).contains(&x));
        let range = Padded::n_range(lo..=hi).unwrap();
        prop_assert_eq!(range.contains(&key), (lo..=hi).contains(&x));
    }

    #[test]
    fn reverse_ticks_ranges_hold_exactly_the_times_in_range(lo in datetime(), hi in datetime(), x in datetime()) {
        let range = Sorts::at_range(7, -3, lo..hi).unwrap();
        let key = Sorts::row_key(7, -3, x).unwrap();
        prop_assert_eq!(range.contains(&key), (lo..hi).contains(&x));
    }
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "s", row_key = "{n:020}_{s:signed}_{at:rticks}")]
struct Sorts {
    n: u64,
    s: i64,
    at: DateTime,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "t", row_key = "{at:ticks}")]
struct Ticks {
    at: DateTime,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "n", row_key = "n_{n:010}")]
struct Padded {
    n: u32,
}

#[test]
fn enums_are_stored_as_their_text_and_filter_the_same_way() {
    let value = AllProps::from_entity(
        AllProps {
            id: 1,
            s: String::new(),
            flag: false,
            i8v: 0,
            i16v: 0,
            i32v: 0,
            i64v: 0,
            u8v: 0,
            u16v: 0,
            u32v: 0,
            u64v: 0,
            f32v: 0.0,
            f64v: 0.0,
            bytes: vec![],
            guid: Uuid::nil(),
            at: DateTime::MIN,
            maybe_i: None,
            maybe_s: None,
            maybe_color: None,
            color: Color::Green,
            email: Email("a@b.com".into()),
            blob: Blob {
                tags: vec![],
                weight: None,
            },
            maybe_blob: None,
            defaulted: 0,
        }
        .to_entity()
        .unwrap(),
    )
    .unwrap();
    let row = value.to_entity().unwrap();
    assert_eq!(row.get("color").and_then(|v| v.as_str()), Some("green"));
    assert!(AllProps::COLOR.eq(Color::Green).matches(&row));
    assert_eq!(
        AllProps::COLOR.eq(Color::Green).to_odata(),
        "color eq 'green'"
    );
    assert_eq!(AllProps::U32V.eq(7).to_odata(), "u32v eq 7L or u32v eq 7");
    let mut bad = row;
    bad.insert("color", "purple");
    let err = AllProps::from_entity(bad).unwrap_err();
    assert!(
        err.message().contains("purple") && err.message().contains("Red"),
        "{}",
        err.message()
    );
    assert_eq!(Ordering::Less, cmp_ordinal("a", "b"));
}
