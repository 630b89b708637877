//! The key of the ordered row map: (PartitionKey, RowKey) in the service's order,
//! encoded as bytes whose plain byte order is that order.
//!
//! Rows are ordered by [`cmp_ordinal`](tables_core::key::cmp_ordinal) (UTF-16 code
//! units), PartitionKey first, not by Rust's `str` order. The map's key is one byte
//! string:
//!
//! - each UTF-8 lead byte of U+E000..=U+FFFF (`0xEE`, `0xEF`) is moved above the
//!   lead bytes of the supplementary characters (`0xF0..=0xF4`), which UTF-16 sorts
//!   before them (as surrogate pairs); every other byte is kept. Two strings first
//!   differ at the lead bytes of two characters or inside two characters of the same
//!   lead byte, so the bytes then compare as the strings' UTF-16 code units do;
//! - the PartitionKey ends with `00 01`, and a `00` inside it is written `00 FF`, so
//!   a PartitionKey sorts before every longer one it begins (whatever follows),
//!   and only then does the RowKey count.
//!
//! Stored keys are validated (no U+0000), but query bounds come from filters and
//! may hold any text, so the encoding is order-preserving for every string.
//!
//! Keys of up to 30 encoded bytes are kept inside the tree's nodes, zero-padded,
//! and compared as four big-endian 64-bit words (zero padding past the end of the
//! shorter key, then the lengths, give exactly the bytes' lexicographic order), so
//! a lookup follows no pointer to compare keys and calls no `memcmp`. A probe is
//! built on the stack: a point get allocates nothing.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Keys whose encoding is this long or shorter live inside the tree's nodes
/// (a `RowId` is 32 bytes).
const INLINE: usize = 30;

/// The owned key stored in the map: short keys inline, zero-padded; longer ones on
/// the heap. Both forms borrow as the encoded bytes, whose order is the key order.
#[derive(Debug, Clone)]
pub(crate) enum RowId {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

impl RowId {
    pub(crate) fn new(partition_key: &str, row_key: &str) -> RowId {
        RowId::inline(partition_key, row_key).unwrap_or_else(|| {
            let mut bytes = vec![0; encoded_len(partition_key, row_key)].into_boxed_slice();
            encode(partition_key, row_key, &mut bytes);
            RowId::Heap(bytes)
        })
    }

    /// The inline form, if the key is short enough for it.
    fn inline(partition_key: &str, row_key: &str) -> Option<RowId> {
        let len = encoded_len(partition_key, row_key);
        let short = u8::try_from(len).ok().filter(|_| len <= INLINE)?;
        let mut bytes = [0; INLINE];
        encode(partition_key, row_key, &mut bytes[..len]);
        Some(RowId::Inline { len: short, bytes })
    }

    fn bytes(&self) -> &[u8] {
        match self {
            RowId::Inline { len, bytes } => &bytes[..usize::from(*len)],
            RowId::Heap(bytes) => bytes,
        }
    }
}

impl Borrow<[u8]> for RowId {
    fn borrow(&self) -> &[u8] {
        self.bytes()
    }
}

impl PartialEq for RowId {
    fn eq(&self, other: &RowId) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for RowId {}

impl PartialOrd for RowId {
    fn partial_cmp(&self, other: &RowId) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Where the words of an inline key start: the last overlaps the one before, whose
/// bytes it shares are then known equal.
const WORDS: [usize; 4] = [0, 8, 16, INLINE - 8];

/// The big-endian word of `bytes` at `at`.
fn word(bytes: &[u8; INLINE], at: usize) -> u64 {
    let mut chunk = [0; 8];
    chunk.copy_from_slice(&bytes[at..at + 8]);
    u64::from_be_bytes(chunk)
}

/// The order of two inline keys' padded bytes, word by word.
fn cmp_words(x: &[u8; INLINE], y: &[u8; INLINE]) -> Ordering {
    for at in WORDS {
        let (a, b) = (word(x, at), word(y, at));
        if a != b {
            return a.cmp(&b);
        }
    }
    Ordering::Equal
}

// The borrowed form's order (`[u8]`'s), as `Borrow` requires. Two inline keys:
// where the words first differ, either both keys have bytes there (and the first
// differing byte decides) or the shorter key is a prefix of the other, whose byte
// there is not zero, so the shorter sorts first as it should; equal words leave
// the lengths to decide.
impl Ord for RowId {
    #[inline]
    fn cmp(&self, other: &RowId) -> Ordering {
        match (self, other) {
            (RowId::Inline { len: a, bytes: x }, RowId::Inline { len: b, bytes: y }) => {
                cmp_words(x, y).then(a.cmp(b))
            }
            _ => self.bytes().cmp(other.bytes()),
        }
    }
}

/// A byte of UTF-8 with the lead bytes of U+E000..=U+FFFF after those of the
/// supplementary characters (a bijection, so distinct strings stay distinct).
fn ordinal_byte(byte: u8) -> u8 {
    match byte {
        0xEE | 0xEF => byte + 5,
        0xF0..=0xF4 => byte - 2,
        _ => byte,
    }
}

fn encoded_len(partition_key: &str, row_key: &str) -> usize {
    let nuls = partition_key.bytes().filter(|&b| b == 0).count();
    partition_key.len() + nuls + 2 + row_key.len()
}

/// Writes the encoding of the key into `out`, exactly `encoded_len` bytes long.
fn encode(partition_key: &str, row_key: &str, out: &mut [u8]) {
    let (pk, rk) = (partition_key.as_bytes(), row_key.as_bytes());
    let rest = if pk.contains(&0) {
        let mut at = 0;
        for &byte in pk {
            if byte == 0 {
                out[at..at + 2].copy_from_slice(&[0, 0xFF]);
                at += 2;
            } else {
                out[at] = byte;
                at += 1;
            }
        }
        at
    } else {
        out[..pk.len()].copy_from_slice(pk);
        pk.len()
    };
    out[rest..rest + 2].copy_from_slice(&[0, 1]);
    out[rest + 2..].copy_from_slice(rk);
    // Neither `00 FF` nor `00 01` holds a byte `ordinal_byte` moves, and ASCII has none.
    if !(pk.is_ascii() && rk.is_ascii()) {
        for byte in out.iter_mut() {
            *byte = ordinal_byte(*byte);
        }
    }
}

/// Longer probes than inline keys are encoded on the stack up to this length.
const PROBE: usize = 256;

/// Runs `f` on the encoding of a key too long to be inline, without allocating
/// when it is not very long.
fn with_bytes<R>(partition_key: &str, row_key: &str, f: impl FnOnce(&[u8]) -> R) -> R {
    let len = encoded_len(partition_key, row_key);
    if len <= PROBE {
        let mut probe = [0; PROBE];
        encode(partition_key, row_key, &mut probe[..len]);
        f(&probe[..len])
    } else {
        let mut probe = vec![0; len];
        encode(partition_key, row_key, &mut probe);
        f(&probe)
    }
}

/// Lookups in a map keyed by [`RowId`], by the key's two parts.
pub(crate) trait RowMap<V> {
    /// The value under the key.
    fn find(&self, partition_key: &str, row_key: &str) -> Option<&V>;
    /// The value under the key, to change.
    fn find_mut(&mut self, partition_key: &str, row_key: &str) -> Option<&mut V>;
    /// Removes the key's entry.
    fn take(&mut self, partition_key: &str, row_key: &str) -> Option<V>;
}

impl<V> RowMap<V> for BTreeMap<RowId, V> {
    fn find(&self, partition_key: &str, row_key: &str) -> Option<&V> {
        match RowId::inline(partition_key, row_key) {
            Some(id) => self.get(&id),
            None => with_bytes(partition_key, row_key, |bytes| self.get(bytes)),
        }
    }

    fn find_mut(&mut self, partition_key: &str, row_key: &str) -> Option<&mut V> {
        match RowId::inline(partition_key, row_key) {
            Some(id) => self.get_mut(&id),
            None => with_bytes(partition_key, row_key, |bytes| self.get_mut(bytes)),
        }
    }

    fn take(&mut self, partition_key: &str, row_key: &str) -> Option<V> {
        match RowId::inline(partition_key, row_key) {
            Some(id) => self.remove(&id),
            None => with_bytes(partition_key, row_key, |bytes| self.remove(bytes)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use tables_core::key::cmp_ordinal;

    use super::*;

    /// The service's order of two keys.
    fn service_order(a: (&str, &str), b: (&str, &str)) -> Ordering {
        cmp_ordinal(a.0, b.0).then_with(|| cmp_ordinal(a.1, b.1))
    }

    #[test]
    fn map_orders_by_utf16_and_finds_probes() {
        let mut map = BTreeMap::new();
        // In `str` order U+FF01 < U+1F600; in UTF-16 order it is the other way round.
        for (pk, rk) in [
            ("p", "\u{FF01}"),
            ("p", "\u{1F600}"),
            ("p", "a"),
            ("\u{FF01}", ""),
            ("p\u{1}", ""),
        ] {
            map.insert(RowId::new(pk, rk), (pk, rk));
        }
        let order: Vec<(&str, &str)> = map.values().copied().collect();
        assert_eq!(
            order,
            [
                ("p", "a"),
                ("p", "\u{1F600}"),
                ("p", "\u{FF01}"),
                ("p\u{1}", ""),
                ("\u{FF01}", "")
            ]
        );
        assert_eq!(map.find("p", "\u{1F600}"), Some(&("p", "\u{1F600}")));
        assert_eq!(map.find("p", "b"), None);
        // Encodings of 30 bytes (the longest inline), 31 (on the heap, probed from
        // the stack) and 259 (probed from the heap).
        for long in [
            "x".repeat(INLINE - 3),
            "x".repeat(INLINE - 2),
            "x".repeat(PROBE),
        ] {
            map.insert(RowId::new(&long, "r"), ("long", "r"));
            assert_eq!(map.find(&long, "r"), Some(&("long", "r")));
            assert_eq!(map.find(&long, "s"), None);
            map.find_mut(&long, "r").expect("present").1 = "changed";
            assert_eq!(map.take(&long, "r"), Some(("long", "changed")));
            assert_eq!(map.find(&long, "r"), None);
        }
        assert!(matches!(
            RowId::new(&"x".repeat(INLINE - 3), "r"),
            RowId::Inline { .. }
        ));
        assert!(matches!(
            RowId::new(&"x".repeat(INLINE - 2), "r"),
            RowId::Heap(_)
        ));
    }

    #[test]
    fn inline_keys_compare_at_every_byte() {
        // "p" 00 01 and 27 RowKey bytes: the longest inline key, changed at each byte
        // of the RowKey in turn, so every word of the comparison decides once.
        let base = "m".repeat(INLINE - 3);
        for at in 0..base.len() {
            let with = |c: &str| format!("{}{c}{}", &base[..at], &base[at + 1..]);
            let (low, mid, high) = (
                RowId::new("p", &with("l")),
                RowId::new("p", &base),
                RowId::new("p", &with("n")),
            );
            assert!(matches!(mid, RowId::Inline { .. }));
            assert!(low < mid && mid < high, "a difference at RowKey byte {at}");
            assert_eq!(mid, RowId::new("p", &base));
        }
    }

    /// Text that exercises every class of the encoding: NULs, ASCII, two- and
    /// three-byte characters on both sides of the surrogate range, supplementary
    /// characters.
    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                Just('\u{0}'),
                Just('\u{1}'),
                Just('a'),
                Just('\u{E9}'),
                Just('\u{D7FF}'),
                Just('\u{E000}'),
                Just('\u{FF01}'),
                Just('\u{FFFF}'),
                Just('\u{10000}'),
                Just('\u{1F600}'),
                any::<char>(),
            ],
            0..6,
        )
        .prop_map(|chars| chars.into_iter().collect())
    }

    proptest! {
        #[test]
        fn byte_order_is_the_service_order(
            a in (text(), text()),
            b in (text(), text()),
        ) {
            let (ka, kb) = (RowId::new(&a.0, &a.1), RowId::new(&b.0, &b.1));
            prop_assert_eq!(ka.cmp(&kb), service_order((&a.0, &a.1), (&b.0, &b.1)));
            // The `Borrow` contract: the same order as the encoded bytes.
            prop_assert_eq!(ka.cmp(&kb), ka.bytes().cmp(kb.bytes()));
            let map = BTreeMap::from([(ka.clone(), ())]);
            prop_assert!(map.find(&a.0, &a.1).is_some());
            prop_assert_eq!(map.find(&b.0, &b.1).is_some(), ka == kb);
        }

        #[test]
        fn shared_prefixes_keep_the_order(
            common in text(),
            a in (text(), text()),
            b in (text(), text()),
        ) {
            let a = (format!("{common}{}", a.0), a.1);
            let b = (format!("{common}{}", b.0), b.1);
            let (ka, kb) = (RowId::new(&a.0, &a.1), RowId::new(&b.0, &b.1));
            prop_assert_eq!(ka.cmp(&kb), service_order((&a.0, &a.1), (&b.0, &b.1)));
        }
    }
}
