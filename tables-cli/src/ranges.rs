//! `--parallel`: the PartitionKey space cut into ranges read side by side.
//!
//! The service can't say how many rows lie between two keys, so the cut is made
//! from the keys themselves: one-row probes (`PartitionKey ge 'x'`, `$top=1`)
//! list the distinct prefixes the table's keys start with, one character deeper at
//! a time, until there are enough to share out; each range then starts at one of
//! them. Ranges always cover the whole key space, first to last with no gap, so
//! the probes decide only how evenly work is shared, never which rows are read
//! (on Cosmos DB for Table, whose results are unordered, a probe may return any
//! key at or above its bound: the cut is then uneven, still complete). A single
//! partition is not cut.

use serde::{Deserialize, Serialize};
use tables_client::{Filter, QuerySpec, TableServiceClient};
use tables_core::filter::Column;

use crate::Failure;

/// The most probes one cut sends.
const MAX_PROBES: usize = 256;
/// How deep (characters) prefixes are followed.
const MAX_DEPTH: usize = 24;

/// A range of PartitionKeys: from `low` (inclusive; `None`: the start) to `high`
/// (exclusive; `None`: the end).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct KeyRange {
    pub(crate) low: Option<String>,
    pub(crate) high: Option<String>,
}

impl KeyRange {
    /// Every key.
    pub(crate) fn all() -> KeyRange {
        KeyRange {
            low: None,
            high: None,
        }
    }

    /// The filter that reads this range, and `also` (the user's filter).
    pub(crate) fn filter(&self, also: Option<&Filter>) -> Option<Filter> {
        let pk = Column::partition_key();
        let parts = [
            self.low.as_ref().map(|low| pk.ge(low.as_str())),
            self.high.as_ref().map(|high| pk.lt(high.as_str())),
            also.cloned(),
        ];
        parts.into_iter().flatten().reduce(Filter::and)
    }
}

/// Cuts `table`'s PartitionKey space into at most `n` ranges (one when `n` is 1 or
/// the probes find a single partition).
pub(crate) async fn cut(
    service: &TableServiceClient,
    table: &str,
    n: usize,
) -> Result<Vec<KeyRange>, Failure> {
    if n <= 1 {
        return Ok(vec![KeyRange::all()]);
    }
    let mut probes = 0;
    // Prefixes known to start keys, in order; expanded one level at a time.
    let mut prefixes = vec![String::new()];
    for _depth in 0..MAX_DEPTH {
        if prefixes.len() >= n || probes >= MAX_PROBES {
            break;
        }
        let mut deeper = Vec::new();
        for prefix in &prefixes {
            let found = next_characters(service, table, prefix, &mut probes).await?;
            if found.is_empty() {
                // The prefix is a whole key (or the table is empty): keep it.
                deeper.push(prefix.clone());
            }
            deeper.extend(found);
        }
        if deeper == prefixes {
            break;
        }
        prefixes = deeper;
    }
    prefixes.retain(|p| !p.is_empty());
    prefixes.sort();
    prefixes.dedup();
    if prefixes.len() <= 1 {
        return Ok(vec![KeyRange::all()]);
    }
    // Range i starts at prefix number i·len/n: n bounds spread over the prefixes.
    let count = n.min(prefixes.len());
    let mut bounds: Vec<String> = (1..count)
        .map(|i| prefixes[i * prefixes.len() / count].clone())
        .collect();
    bounds.dedup();
    let mut ranges = Vec::with_capacity(bounds.len() + 1);
    let mut low = None;
    for bound in bounds {
        ranges.push(KeyRange {
            low: low.take(),
            high: Some(bound.clone()),
        });
        low = Some(bound);
    }
    ranges.push(KeyRange { low, high: None });
    Ok(ranges)
}

/// The distinct prefixes one character longer than `prefix` that keys start with.
async fn next_characters(
    service: &TableServiceClient,
    table: &str,
    prefix: &str,
    probes: &mut usize,
) -> Result<Vec<String>, Failure> {
    let mut found = Vec::new();
    // The least key longer than `prefix` starts with prefix + ' ' or more: control
    // characters are not allowed in keys.
    let mut at = format!("{prefix} ");
    while *probes < MAX_PROBES {
        *probes += 1;
        let Some(key) = first_key_from(service, table, &at).await? else {
            break;
        };
        let Some(rest) = key.strip_prefix(prefix) else {
            break;
        };
        let Some(next) = rest.chars().next() else {
            break;
        };
        let child = format!("{prefix}{next}");
        if found.last() == Some(&child) {
            break; // an unordered engine answered below the bound
        }
        found.push(child.clone());
        match successor(&child) {
            Some(after) => at = after,
            None => break,
        }
    }
    Ok(found)
}

/// The least string above every string starting with `prefix`: its last
/// character's successor.
fn successor(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    let last = chars.pop()?;
    let mut code = u32::from(last) + 1;
    if (0xD800..0xE000).contains(&code) {
        code = 0xE000;
    }
    chars.push(char::from_u32(code)?);
    Some(chars.into_iter().collect())
}

/// The first PartitionKey at or above `at` (one row, only its keys).
async fn first_key_from(
    service: &TableServiceClient,
    table: &str,
    at: &str,
) -> Result<Option<String>, Failure> {
    let spec = QuerySpec::new()
        .filter(Column::partition_key().ge(at))
        .select(vec!["PartitionKey".to_owned()])
        .top(1);
    let mut continuation = None;
    // A page may be empty with a continuation (a scan cut short): follow it.
    for _ in 0..16 {
        let page = service
            .engine()
            .query(table, &spec, continuation.as_ref())
            .await?;
        if let Some(row) = page.items.into_iter().next() {
            return Ok(Some(row.partition_key));
        }
        match page.continuation {
            Some(next) => continuation = Some(next),
            None => return Ok(None),
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tables_client::{DynamicEntity, WriteOp};

    async fn table_of(keys: &[String]) -> TableServiceClient {
        let service = TableServiceClient::in_memory();
        service.create_table("Tee").await.unwrap();
        for key in keys {
            let row = DynamicEntity::new(key.clone(), "r");
            service
                .engine()
                .write("Tee", &WriteOp::Insert(row))
                .await
                .unwrap();
        }
        service
    }

    fn covered(ranges: &[KeyRange], keys: &[String]) {
        assert!(ranges.first().unwrap().low.is_none());
        assert!(ranges.last().unwrap().high.is_none());
        for pair in ranges.windows(2) {
            assert_eq!(pair[0].high, pair[1].low, "no gap, no overlap");
        }
        for key in keys {
            let holders = ranges
                .iter()
                .filter(|r| {
                    r.low.as_deref().is_none_or(|l| key.as_str() >= l)
                        && r.high.as_deref().is_none_or(|h| key.as_str() < h)
                })
                .count();
            assert_eq!(holders, 1, "{key}");
        }
    }

    #[tokio::test]
    async fn ranges_share_out_keys_of_every_shape() {
        let shapes: Vec<Vec<String>> = vec![
            (0..400).map(|i| format!("device-{i:04}")).collect(),
            (0..300)
                .map(|i| format!("{:08x}", (i as u32).wrapping_mul(2_654_435_761)))
                .collect(),
            (1..=28).map(|d| format!("2026-11-{d:02}")).collect(),
            vec!["only".to_owned()],
            vec![
                "ä".to_owned(),
                "日本".to_owned(),
                "a".to_owned(),
                "Z".to_owned(),
            ],
        ];
        for keys in shapes {
            let service = table_of(&keys).await;
            let ranges = cut(&service, "Tee", 4).await.unwrap();
            covered(&ranges, &keys);
            if keys.len() >= 28 {
                assert_eq!(ranges.len(), 4, "{ranges:?}");
                // No range holds most of the keys.
                for range in &ranges {
                    let held = keys
                        .iter()
                        .filter(|k| {
                            range.low.as_deref().is_none_or(|l| k.as_str() >= l)
                                && range.high.as_deref().is_none_or(|h| k.as_str() < h)
                        })
                        .count();
                    assert!(
                        held * 2 < keys.len(),
                        "{range:?} holds {held} of {}",
                        keys.len()
                    );
                }
            }
        }
        let empty = table_of(&[]).await;
        assert_eq!(cut(&empty, "Tee", 8).await.unwrap(), vec![KeyRange::all()]);
    }
}
