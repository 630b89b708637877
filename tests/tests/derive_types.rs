//! Property tests of the field types beyond the basics: every value round-trips
//! through `DynamicEntity` (as a property and as a key part), and keys sort like the
//! values in the service's order (`cmp_ordinal`: UTF-16 code units).

#![allow(clippy::unwrap_used)] // test helpers build known-good values

use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::Arc;
use std::time::Duration;

use chrono::NaiveDate;
use proptest::prelude::*;
use rust_decimal::Decimal;
use tables_client::key::cmp_ordinal;
use tables_client::{Entity, ErrorKind, Row, Value};

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "p", row_key = "{id:010}")]
struct Props {
    id: u32,
    grade: char,
    tiny: i8,
    small: i16,
    byte: u8,
    word: u16,
    title: Box<str>,
    shared: Arc<str>,
    label: Cow<'static, str>,
    blob: bytes::Bytes,
    day: NaiveDate,
    audit: time::Date,
    took: Duration,
    price: Decimal,
    maybe_day: Option<time::Date>,
    maybe_price: Option<Decimal>,
}

/// Every new key form in one RowKey (the readable char is the one variable part).
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    partition_key = "{team}",
    row_key = "{a:signed}_{b:signed}_{c:03}_{d:05}_{cp:07}_{day}_{audit}_{ch}"
)]
struct Keys {
    team: Arc<str>,
    a: i8,
    b: i16,
    c: u8,
    d: u16,
    cp: char,
    day: NaiveDate,
    audit: time::Date,
    ch: char,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "o", row_key = "{a:signed}")]
struct I8Key {
    a: i8,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "o", row_key = "{a:signed}")]
struct I16Key {
    a: i16,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "o", row_key = "{a:03}_{b:05}")]
struct UnsignedKey {
    a: u8,
    b: u16,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "o", row_key = "{c:07}")]
struct CodePoint {
    c: char,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "o", row_key = "x{c}")]
struct CharText {
    c: char,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "o", row_key = "{day}")]
struct DayKey {
    day: NaiveDate,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "o", row_key = "{day}")]
struct TimeDayKey {
    day: time::Date,
}

/// Days from 0001-01-01 to 9999-12-31.
fn naive_date() -> impl Strategy<Value = NaiveDate> {
    let first = NaiveDate::from_ymd_opt(1, 1, 1).unwrap();
    (0i64..=3_652_058).prop_map(move |days| first + chrono::Days::new(days.unsigned_abs()))
}

fn time_date() -> impl Strategy<Value = time::Date> {
    naive_date().prop_map(to_time)
}

fn to_time(day: NaiveDate) -> time::Date {
    use chrono::Datelike as _;
    let month = time::Month::try_from(u8::try_from(day.month()).unwrap()).unwrap();
    time::Date::from_calendar_date(day.year(), month, u8::try_from(day.day()).unwrap()).unwrap()
}

/// Characters a key may hold as text (no `/ \ # ?` or control characters).
fn key_char() -> impl Strategy<Value = char> {
    any::<char>().prop_filter("keys can't hold it", |c| {
        !matches!(c, '/' | '\\' | '#' | '?') && !c.is_control()
    })
}

fn decimal() -> impl Strategy<Value = Decimal> {
    (any::<i64>(), any::<u32>(), 0u32..=28, any::<bool>()).prop_map(|(lo, mid, scale, negative)| {
        Decimal::from_parts(lo as u32, mid, (lo >> 32) as u32, negative, scale)
    })
}

prop_compose! {
    fn props()(
        id in any::<u32>(), grade in any::<char>(),
        ints in (any::<i8>(), any::<i16>(), any::<u8>(), any::<u16>()),
        texts in (".{0,12}", ".{0,12}", ".{0,12}"),
        blob in proptest::collection::vec(any::<u8>(), 0..40),
        day in naive_date(), audit in time_date(),
        took in 0..=i64::MAX as u64, price in decimal(),
        maybe_day in proptest::option::of(time_date()),
        maybe_price in proptest::option::of(decimal()),
    ) -> Props {
        Props {
            id, grade, tiny: ints.0, small: ints.1, byte: ints.2, word: ints.3,
            title: texts.0.into(), shared: Arc::from(texts.1), label: Cow::Owned(texts.2),
            blob: bytes::Bytes::from(blob), day, audit, took: Duration::from_nanos(took),
            price, maybe_day, maybe_price,
        }
    }
}

prop_compose! {
    fn keys()(
        team in "[a-zA-Z0-9 é日😀_-]{1,12}",
        ints in (any::<i8>(), any::<i16>(), any::<u8>(), any::<u16>()),
        cp in any::<char>(), day in naive_date(), audit in time_date(), ch in key_char(),
    ) -> Keys {
        Keys { team: Arc::from(team), a: ints.0, b: ints.1, c: ints.2, d: ints.3, cp, day, audit, ch }
    }
}

/// The service's order of readable chars: UTF-16 code units, which is char order
/// except that U+E000..=U+FFFF sort after the supplementary characters.
fn utf16_order(a: char, b: char) -> Ordering {
    let high_bmp = |c: char| ('\u{E000}'..='\u{FFFF}').contains(&c);
    let supplementary = |c: char| c > '\u{FFFF}';
    if (high_bmp(a) && supplementary(b)) || (supplementary(a) && high_bmp(b)) {
        b.cmp(&a)
    } else {
        a.cmp(&b)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_new_property_type_round_trips(value in props()) {
        let row = value.to_entity().unwrap();
        prop_assert_eq!(row.contains("maybe_day"), value.maybe_day.is_some());
        let back = Props::from_entity(row).unwrap();
        prop_assert_eq!(back.price.scale(), value.price.scale());
        prop_assert_eq!(back, value);
    }

    #[test]
    fn every_new_key_form_round_trips(value in keys()) {
        let row = value.to_entity().unwrap();
        let key = Keys::key(
            &value.team, value.a, value.b, value.c, value.d, value.cp, value.day, value.audit,
            value.ch,
        ).unwrap();
        prop_assert_eq!(&key, &row.key());
        prop_assert!(!row.contains("day") && !row.contains("team"), "key fields aren't stored twice");
        prop_assert_eq!(Keys::from_entity(row).unwrap(), value);
    }

    #[test]
    fn i8_and_i16_keys_sort_like_the_numbers(a in any::<i8>(), b in any::<i8>(), x in any::<i16>(), y in any::<i16>()) {
        let (ka, kb) = (I8Key::row_key(a).unwrap(), I8Key::row_key(b).unwrap());
        prop_assert_eq!(cmp_ordinal(&ka, &kb), a.cmp(&b));
        let (kx, ky) = (I16Key::row_key(x).unwrap(), I16Key::row_key(y).unwrap());
        prop_assert_eq!(cmp_ordinal(&kx, &ky), x.cmp(&y));
    }

    #[test]
    fn u8_and_u16_keys_sort_like_the_numbers(a in any::<(u8, u16)>(), b in any::<(u8, u16)>()) {
        let (ka, kb) = (UnsignedKey::row_key(a.0, a.1).unwrap(), UnsignedKey::row_key(b.0, b.1).unwrap());
        prop_assert_eq!(cmp_ordinal(&ka, &kb), a.cmp(&b));
    }

    #[test]
    fn code_point_keys_sort_exactly_like_chars(a in any::<char>(), b in any::<char>()) {
        let (ka, kb) = (CodePoint::row_key(a).unwrap(), CodePoint::row_key(b).unwrap());
        prop_assert_eq!(cmp_ordinal(&ka, &kb), a.cmp(&b));
    }

    #[test]
    fn readable_char_keys_sort_in_utf16_order(a in key_char(), b in key_char()) {
        let (ka, kb) = (CharText::row_key(a).unwrap(), CharText::row_key(b).unwrap());
        prop_assert_eq!(cmp_ordinal(&ka, &kb), utf16_order(a, b));
    }

    #[test]
    fn date_keys_sort_like_the_dates(a in naive_date(), b in naive_date()) {
        let (ka, kb) = (DayKey::row_key(a).unwrap(), DayKey::row_key(b).unwrap());
        prop_assert_eq!(cmp_ordinal(&ka, &kb), a.cmp(&b));
        let (ta, tb) = (TimeDayKey::row_key(to_time(a)).unwrap(), TimeDayKey::row_key(to_time(b)).unwrap());
        prop_assert_eq!(&ta, &ka, "both crates write a date alike");
        prop_assert_eq!(cmp_ordinal(&ta, &tb), a.cmp(&b));
    }

    #[test]
    fn date_ranges_hold_exactly_the_dates_in_range(lo in naive_date(), hi in naive_date(), x in naive_date()) {
        let key = DayKey::row_key(x).unwrap();
        prop_assert_eq!(DayKey::day_range(lo..hi).unwrap().contains(&key), (lo..hi).contains(&x));
        prop_assert_eq!(DayKey::day_range(lo..=hi).unwrap().contains(&key), (lo..=hi).contains(&x));
        prop_assert_eq!(DayKey::day_range(..hi).unwrap().contains(&key), x < hi);
    }
}

#[test]
fn extremes_of_the_narrow_integers_sort_in_order() {
    let keys: Vec<String> = [i8::MIN, -100, -1, 0, 1, 100, i8::MAX]
        .into_iter()
        .map(|a| I8Key::row_key(a).unwrap())
        .collect();
    assert!(
        keys.windows(2)
            .all(|w| cmp_ordinal(&w[0], &w[1]) == Ordering::Less),
        "{keys:?}"
    );
    let keys: Vec<String> = [i16::MIN, i16::MIN + 1, -1, 0, 1, i16::MAX - 1, i16::MAX]
        .into_iter()
        .map(|a| I16Key::row_key(a).unwrap())
        .collect();
    assert!(
        keys.windows(2)
            .all(|w| cmp_ordinal(&w[0], &w[1]) == Ordering::Less),
        "{keys:?}"
    );
    assert_eq!(
        UnsignedKey::row_key(u8::MAX, u16::MAX).unwrap(),
        "255_65535"
    );
}

#[test]
fn dates_and_chars_read_as_written() {
    let day = NaiveDate::from_ymd_opt(7, 3, 9).unwrap();
    assert_eq!(DayKey::row_key(day).unwrap(), "0007-03-09");
    assert_eq!(CodePoint::row_key('😀').unwrap(), "0128512");
    assert_eq!(CharText::row_key('é').unwrap(), "xé");
    // Out of the yyyy-MM-dd range: a typed error naming the field.
    let err = DayKey::row_key(NaiveDate::from_ymd_opt(0, 12, 31).unwrap()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidKey);
    assert!(err.message().contains("`day`"), "{}", err.message());
    // A char keys can't hold as text.
    assert_eq!(
        CharText::row_key('#').unwrap_err().kind(),
        ErrorKind::InvalidKey
    );
}

#[test]
fn rows_other_programs_wrote_read_leniently_where_exact() {
    let row = DayKey {
        day: NaiveDate::from_ymd_opt(2024, 1, 2).unwrap(),
    }
    .to_entity()
    .unwrap();
    assert!(DayKey::from_entity(row).is_ok());
    // A .NET decimal written as text with an exponent (Python's str(Decimal)) reads.
    let mut value = Props::from_entity(
        Props {
            id: 1,
            grade: 'a',
            tiny: 0,
            small: 0,
            byte: 0,
            word: 0,
            title: "".into(),
            shared: Arc::from(""),
            label: Cow::Borrowed(""),
            blob: bytes::Bytes::new(),
            day: NaiveDate::from_ymd_opt(2024, 1, 2).unwrap(),
            audit: to_time(NaiveDate::from_ymd_opt(2024, 1, 2).unwrap()),
            took: Duration::ZERO,
            price: Decimal::ONE,
            maybe_day: None,
            maybe_price: None,
        }
        .to_entity()
        .unwrap(),
    )
    .unwrap()
    .to_entity()
    .unwrap();
    value.insert("price", "1E-7");
    value.insert(
        "day",
        Value::DateTime(tables_client::DateTime::from_ymd_hms(2024, 1, 2, 0, 0, 0).unwrap()),
    );
    let read = Props::from_entity(value.clone()).unwrap();
    assert_eq!(read.price, Decimal::from_str_exact("0.0000001").unwrap());
    assert_eq!(read.day, NaiveDate::from_ymd_opt(2024, 1, 2).unwrap());
    // Lossy or wrong values are decode errors naming the property.
    value.insert("took", -1i64);
    let err = Props::from_entity(value).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode);
    assert_eq!(err.property(), Some("took"));
}
