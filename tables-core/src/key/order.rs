//! Ordinal key order and prefix ranges.
//!
//! The Table service (and Azurite) sorts keys by their UTF-16 code units. Rust's
//! `str` order is UTF-8 byte order, which is code-point order; the two agree except
//! when a character in U+E000..=U+FFFF meets a supplementary-plane character
//! (U+10000 and above): in UTF-16 the supplementary character starts with a
//! surrogate (U+D800..=U+DBFF) and so sorts *first*. [`cmp_ordinal`] gives the
//! service's order; [`prefix_range`] turns a prefix into the `[ge, lt)` range the
//! service can use, since its filters have no `startswith`.

use std::cmp::Ordering;

/// Compares two strings the way the service orders keys: by UTF-16 code units.
///
/// Equivalent to `a.encode_utf16().cmp(b.encode_utf16())`, but compares bytes and
/// only looks at characters where UTF-8 and UTF-16 order can disagree.
///
/// ```
/// use std::cmp::Ordering;
/// use tables_core::key::cmp_ordinal;
///
/// assert_eq!(cmp_ordinal("a", "b"), Ordering::Less);
/// // U+FF01 sorts after U+1F600 in UTF-16 (a surrogate pair starts with 0xD83D),
/// // although Rust's `str` order says the opposite.
/// assert_eq!(cmp_ordinal("\u{FF01}", "\u{1F600}"), Ordering::Greater);
/// assert_eq!("\u{FF01}".cmp("\u{1F600}"), Ordering::Less);
/// ```
pub fn cmp_ordinal(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let Some(i) = first_difference(a, b) else {
        // One is a prefix of the other (or they are equal): the shorter sorts first
        // in both orders.
        return a.len().cmp(&b.len());
    };
    let (x, y) = (a[i], b[i]);
    // UTF-8 lead bytes 0xEE and 0xEF start U+E000..=U+FFFF; 0xF0..=0xF4 start
    // supplementary characters. Only when one of each meets at the first difference
    // do the orders disagree (a difference at a continuation byte means both
    // characters share their lead byte, hence their class).
    let supplementary = |byte: u8| byte >= 0xF0;
    if x >= 0xEE && y >= 0xEE && supplementary(x) != supplementary(y) {
        y.cmp(&x)
    } else {
        x.cmp(&y)
    }
}

/// The index of the first byte where `a` and `b` differ, if any within the shorter.
fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    const CHUNK: usize = 16;
    let len = a.len().min(b.len());
    let mut start = 0;
    // Skip equal chunks with slice comparisons (memcmp), then find the byte.
    while start + CHUNK <= len && a[start..start + CHUNK] == b[start..start + CHUNK] {
        start += CHUNK;
    }
    a[start..len]
        .iter()
        .zip(&b[start..len])
        .position(|(x, y)| x != y)
        .map(|offset| start + offset)
}

/// The next character in UTF-16 code-unit order: U+0000..=U+D7FF, then the
/// supplementary characters U+10000..=U+10FFFF, then U+E000..=U+FFFF. `None` for
/// U+FFFF, the greatest.
pub(crate) fn ordinal_successor(c: char) -> Option<char> {
    let next = match u32::from(c) {
        0xD7FF => 0x1_0000,
        0x10_FFFF => 0xE000,
        0xFFFF => return None,
        code => code + 1,
    };
    char::from_u32(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::prefix_range;
    use std::ops::Bound;

    /// The exclusive upper bound of [`prefix_range`], if any.
    fn upper(prefix: &str) -> Option<String> {
        match prefix_range(prefix).end {
            Bound::Excluded(end) => Some(end),
            Bound::Unbounded => None,
            Bound::Included(end) => panic!("an inclusive end {end:?}"),
        }
    }
    use proptest::prelude::*;

    fn utf16_cmp(a: &str, b: &str) -> Ordering {
        a.encode_utf16().cmp(b.encode_utf16())
    }

    /// Characters around every boundary where the orders or the successor rule
    /// change, plus ordinary text.
    fn interesting_char() -> impl Strategy<Value = char> {
        prop_oneof![
            prop::sample::select(vec![
                '\0',
                'a',
                'b',
                'z',
                '\u{7F}',
                '\u{80}',
                '\u{7FF}',
                '\u{800}',
                '\u{D7FF}',
                '\u{E000}',
                '\u{E001}',
                '\u{FF01}',
                '\u{FFFE}',
                '\u{FFFF}',
                '\u{10000}',
                '\u{10001}',
                '\u{1F600}',
                '\u{10FFFE}',
                '\u{10FFFF}',
            ]),
            any::<char>(),
        ]
    }

    fn interesting_string() -> impl Strategy<Value = String> {
        prop::collection::vec(interesting_char(), 0..6).prop_map(|v| v.into_iter().collect())
    }

    #[test]
    fn orders_differ_from_str_order_only_across_the_surrogate_gap() {
        assert_eq!(cmp_ordinal("\u{E000}", "\u{10000}"), Ordering::Greater);
        assert_eq!(cmp_ordinal("\u{10000}", "\u{FFFF}"), Ordering::Less);
        assert_eq!(cmp_ordinal("\u{D7FF}", "\u{10000}"), Ordering::Less);
        assert_eq!(cmp_ordinal("\u{10000}", "\u{10001}"), Ordering::Less);
        assert_eq!(cmp_ordinal("ab", "abc"), Ordering::Less);
        assert_eq!(cmp_ordinal("same", "same"), Ordering::Equal);
        // A long common prefix exercises the chunked scan.
        let long = "x".repeat(40);
        assert_eq!(
            cmp_ordinal(&format!("{long}\u{FFFF}"), &format!("{long}\u{1F600}")),
            Ordering::Greater
        );
    }

    #[test]
    fn prefix_range_examples() {
        assert_eq!(upper("a").as_deref(), Some("b"));
        assert_eq!(upper("a\u{FFFF}").as_deref(), Some("b"));
        assert_eq!(upper("\u{FFFF}\u{FFFF}"), None);
        assert_eq!(upper("\u{10FFFF}").as_deref(), Some("\u{E000}"));
        assert_eq!(upper("\u{10000}").as_deref(), Some("\u{10001}"));
        assert_eq!(
            prefix_range("empid_000123"),
            crate::key::KeyRange::new(
                Bound::Included("empid_000123".to_owned()),
                Bound::Excluded("empid_000124".to_owned())
            )
        );
    }

    proptest! {
        #[test]
        fn cmp_ordinal_is_utf16_order(a in interesting_string(), b in interesting_string()) {
            prop_assert_eq!(cmp_ordinal(&a, &b), utf16_cmp(&a, &b));
        }

        #[test]
        fn cmp_ordinal_is_utf16_order_with_shared_prefixes(
            common in "[a-z]{0,40}",
            a in interesting_string(),
            b in interesting_string(),
        ) {
            let (a, b) = (format!("{common}{a}"), format!("{common}{b}"));
            prop_assert_eq!(cmp_ordinal(&a, &b), utf16_cmp(&a, &b));
        }

        #[test]
        fn prefix_range_is_exactly_starts_with(
            prefix in interesting_string(),
            tail in interesting_string(),
            other in interesting_string(),
        ) {
            let (ge, lt) = (prefix.clone(), upper(&prefix));
            let inside = |s: &str| {
                utf16_cmp(&ge, s) != Ordering::Greater
                    && lt.as_deref().is_none_or(|lt| utf16_cmp(s, lt) == Ordering::Less)
            };
            let with_prefix = format!("{prefix}{tail}");
            prop_assert!(inside(&with_prefix));
            prop_assert_eq!(inside(&other), other.starts_with(&prefix));
            // Strings near the prefix: a shortened or altered prefix plus tail.
            let mut near: Vec<char> = prefix.chars().collect();
            near.pop();
            let near: String = near.into_iter().chain(other.chars()).collect();
            prop_assert_eq!(inside(&near), near.starts_with(&prefix));
            if let Some(lt) = &lt {
                prop_assert!(!inside(lt));
                prop_assert!(!lt.starts_with(&prefix));
            }
        }
    }
}
