//! Hashed shard keys, `{field:shard(N)}`: the stable hash bucket of a text value,
//! 0 to N-1, zero-padded to the digits of N-1. A key that starts with a bucket
//! spreads writes over N partitions instead of one (the design guide's answer to the
//! prepend/append anti-pattern, and the Index Table pattern's hashed shard key); a
//! query over all of them reads the N partitions and merges them in key order.
//!
//! The hash is 64-bit FNV-1a over the value's UTF-8 bytes, then MurmurHash3's
//! 64-bit finalizer, modulo N: fixed here, for every platform and release, because
//! stored keys depend on it.

/// The most buckets a shard placeholder may name.
pub const MAX_SHARDS: usize = 1000;

/// The bucket of `value` among `buckets` (`buckets` at least 1).
///
/// ```
/// use tables_core::key::form::shard::bucket;
///
/// assert_eq!(bucket("device-42", 16), bucket("device-42", 16));
/// assert!(bucket("device-42", 16) < 16);
/// ```
pub fn bucket(value: &str, buckets: usize) -> usize {
    let buckets = u64::try_from(buckets.max(1)).unwrap_or(u64::MAX);
    usize::try_from(mix(fnv1a(value.as_bytes())) % buckets).unwrap_or_default()
}

/// 64-bit FNV-1a.
fn fnv1a(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(PRIME)
    })
}

/// MurmurHash3's 64-bit finalizer: FNV-1a's low bits depend only on the low bits of
/// each byte, so without it a bucket count that is a power of two would put `ann`
/// and `anq` (which differ in bit 4 of a byte only) together.
fn mix(mut hash: u64) -> u64 {
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    hash ^ (hash >> 33)
}

/// The digits a bucket number among `buckets` is written with.
pub fn width(buckets: usize) -> usize {
    buckets.saturating_sub(1).max(1).to_string().len()
}

/// Bucket `bucket` as written in a key among `buckets`.
pub fn write_bucket(out: &mut String, bucket: usize, buckets: usize) {
    let width = width(buckets);
    out.push_str(&format!("{bucket:0width$}"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_fixed() {
        // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (the published test vector).
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(mix(0), 0);
        // Pinned: stored keys depend on these.
        assert_eq!(
            bucket("a", 1000),
            usize::try_from(mix(0xaf63_dc4c_8601_ec8c) % 1000).unwrap()
        );
        assert_eq!(bucket("device-42", 16), bucket("device-42", 16));
    }

    #[test]
    fn values_differing_in_high_bits_spread() {
        // The last characters share their low 3 bits: plain FNV-1a modulo 8 puts all
        // twelve in one bucket.
        let last = "aiqyAIQY!)19";
        let plain: std::collections::BTreeSet<u64> = last
            .chars()
            .map(|c| fnv1a(format!("an{c}").as_bytes()) % 8)
            .collect();
        assert_eq!(plain.len(), 1);
        let mixed: std::collections::BTreeSet<usize> =
            last.chars().map(|c| bucket(&format!("an{c}"), 8)).collect();
        assert!(mixed.len() >= 5, "{mixed:?}");
    }

    #[test]
    fn buckets_spread_and_are_written_at_a_fixed_width() {
        let mut seen = [0usize; 16];
        for i in 0..1600 {
            seen[bucket(&format!("device-{i}"), 16)] += 1;
        }
        assert!(seen.iter().all(|&n| n > 50), "{seen:?}");
        assert_eq!(width(16), 2);
        assert_eq!(width(10), 1);
        assert_eq!(width(2), 1);
        assert_eq!(width(1000), 3);
        let mut out = String::new();
        write_bucket(&mut out, 7, 16);
        assert_eq!(out, "07");
    }
}
