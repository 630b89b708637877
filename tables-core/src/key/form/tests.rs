//! The numeric key forms: edges, round trips and order.

use proptest::prelude::*;

use crate::datetime::DateTime;
use crate::error::{ErrorKind, Result};
use crate::key::{
    decode_reverse_ticks_key, decode_signed, decode_ticks_key, encode_signed, pad_unsigned,
    parse_padded, reverse_ticks_key, ticks_key, SIGNED_KEY_WIDTH, TICKS_KEY_WIDTH,
};

fn invalid_key<T: std::fmt::Debug>(r: Result<T>) {
    assert_eq!(r.expect_err("should fail").kind(), ErrorKind::InvalidKey);
}

#[test]
fn padding_edges() {
    assert_eq!(pad_unsigned(0, 1).unwrap(), "0");
    assert_eq!(pad_unsigned(999, 3).unwrap(), "999");
    invalid_key(pad_unsigned(1000, 3));
    invalid_key(pad_unsigned(0, 0));
    assert_eq!(pad_unsigned(u64::MAX, 20).unwrap(), u64::MAX.to_string());
    assert_eq!(pad_unsigned(7, 25).unwrap().len(), 25);
    assert_eq!(parse_padded("0000000000000000000000007", 25).unwrap(), 7);
    invalid_key(parse_padded("12", 3));
    invalid_key(parse_padded("1234", 3));
    invalid_key(parse_padded("+12", 3));
    invalid_key(parse_padded("1 2", 3));
    invalid_key(parse_padded("١٢٣", 3));
    invalid_key(parse_padded("18446744073709551616", 20));
}

#[test]
fn signed_edges() {
    assert_eq!(encode_signed(i64::MIN), "00000000000000000000");
    assert_eq!(encode_signed(0), "09223372036854775808");
    assert_eq!(encode_signed(i64::MAX), "18446744073709551615");
    assert_eq!(decode_signed("00000000000000000000").unwrap(), i64::MIN);
    invalid_key(decode_signed("0922337203685477580"));
    invalid_key(decode_signed("-9223372036854775808"));
    invalid_key(decode_signed("99999999999999999999"));
}

#[test]
fn ticks_edges() {
    assert_eq!(ticks_key(DateTime::MAX), "3155378975999999999");
    assert_eq!(ticks_key(DateTime::MIN), "0504911232000000000");
    assert_eq!(reverse_ticks_key(DateTime::MAX), "0000000000000000000");
    assert_eq!(
        reverse_ticks_key(DateTime::MIN),
        format!("{:019}", DateTime::MAX_TICKS - DateTime::MIN_TICKS)
    );
    assert_eq!(
        decode_ticks_key("3155378975999999999").unwrap(),
        DateTime::MAX
    );
    assert_eq!(
        decode_reverse_ticks_key("0000000000000000000").unwrap(),
        DateTime::MAX
    );
    // Below 1601 and above 9999.
    invalid_key(decode_ticks_key("0000000000000000000"));
    invalid_key(decode_ticks_key("3155378976000000000"));
    invalid_key(decode_ticks_key("9999999999999999999"));
    invalid_key(decode_reverse_ticks_key("9999999999999999999"));
    invalid_key(decode_reverse_ticks_key(&format!(
        "{:019}",
        DateTime::MAX_TICKS - DateTime::MIN_TICKS + 1
    )));
    invalid_key(decode_ticks_key("315537897599999999"));
    invalid_key(decode_ticks_key("3155378975999999999x"));
}

fn any_datetime() -> impl Strategy<Value = DateTime> {
    (DateTime::MIN_TICKS..=DateTime::MAX_TICKS).prop_map(|t| DateTime::from_ticks(t).unwrap())
}

proptest! {
    #[test]
    fn padded_round_trip_and_order(a: u64, b: u64, width in 20usize..32) {
        let (ka, kb) = (pad_unsigned(a, width).unwrap(), pad_unsigned(b, width).unwrap());
        prop_assert_eq!(ka.len(), width);
        prop_assert_eq!(parse_padded(&ka, width).unwrap(), a);
        prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
    }

    #[test]
    fn padding_fails_exactly_when_too_narrow(value: u64, width in 0usize..22) {
        let digits = value.to_string().len();
        prop_assert_eq!(pad_unsigned(value, width).is_ok(), digits <= width);
    }

    #[test]
    fn signed_round_trip_and_order(a: i64, b: i64) {
        let (ka, kb) = (encode_signed(a), encode_signed(b));
        prop_assert_eq!(ka.len(), SIGNED_KEY_WIDTH);
        prop_assert_eq!(decode_signed(&ka).unwrap(), a);
        prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
    }

    #[test]
    fn ticks_round_trip_and_order(a in any_datetime(), b in any_datetime()) {
        let (ka, kb) = (ticks_key(a), ticks_key(b));
        prop_assert_eq!(ka.len(), TICKS_KEY_WIDTH);
        prop_assert_eq!(decode_ticks_key(&ka).unwrap(), a);
        prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
    }

    #[test]
    fn reverse_ticks_sort_newest_first(a in any_datetime(), b in any_datetime()) {
        let (ka, kb) = (reverse_ticks_key(a), reverse_ticks_key(b));
        prop_assert_eq!(ka.len(), TICKS_KEY_WIDTH);
        prop_assert_eq!(decode_reverse_ticks_key(&ka).unwrap(), a);
        prop_assert_eq!(ka.cmp(&kb), b.cmp(&a));
    }

    #[test]
    fn newest_first_listing(mut times in proptest::collection::vec(any_datetime(), 1..20)) {
        let mut keys: Vec<String> = times.iter().map(|t| reverse_ticks_key(*t)).collect();
        keys.sort();
        times.sort_by(|a, b| b.cmp(a));
        let decoded: Vec<DateTime> =
            keys.iter().map(|k| decode_reverse_ticks_key(k).unwrap()).collect();
        prop_assert_eq!(decoded, times);
    }
}
