//! Query paging: which rows a query visits, where a page ends, and where the next
//! one starts.
//!
//! A page ends after `min($top, page size)` matching rows or, when the engine breaks
//! pages at partition boundaries, as soon as the scan moves into another partition
//! (such a page may hold fewer rows, even none). The continuation token is the key
//! of the row the next page starts with, and the next page returns rows with keys
//! `>=` that key. Because no row lay between the page's last row and the token's key
//! when the page was made, this is "strictly after the last row returned": a
//! resumed query never repeats a row, and it resumes by position, so it works even
//! if the token's row was deleted meanwhile. (As with the service, a row inserted
//! later between the two keys is not returned.)

use std::cmp::Ordering;
use std::ops::Bound;

use tables_core::{
    ContinuationToken, DynamicEntity, Error, ErrorKind, Origin, Page, QueryPlan, QuerySpec, Result,
};

use tables_core::filter::PartitionBounds;
use tables_core::key::cmp_ordinal;

use crate::key::RowId;
use crate::table::{project, Rows};

/// Where a scan starts.
#[derive(Clone, Copy)]
struct Start<'a> {
    key: (&'a str, &'a str),
    inclusive: bool,
}

/// The first key of the plan's region, which is contiguous in key order: from there
/// the scan runs until the first key outside it ([`QueryPlan::contains`]).
fn plan_start(plan: &QueryPlan) -> Option<Start<'_>> {
    match plan {
        QueryPlan::Point {
            partition_key,
            row_key,
        } => Some(Start {
            key: (partition_key, row_key),
            inclusive: true,
        }),
        QueryPlan::Range {
            partition_key,
            lower: Some(bound),
            ..
        } => Some(Start {
            key: (partition_key, &bound.key),
            inclusive: bound.inclusive,
        }),
        QueryPlan::Range { partition_key, .. } | QueryPlan::PartitionScan { partition_key } => {
            Some(Start {
                key: (partition_key, ""),
                inclusive: true,
            })
        }
        QueryPlan::TableScan => None,
    }
}

/// For a table scan, the bounds the filter puts on PartitionKeys (`PartitionKey ge
/// 'a' and PartitionKey lt 'm'`): the scan starts at the lower one and stops past
/// the upper one, as the service reads a range of partitions, instead of visiting
/// the whole table. Narrower plans bound the scan themselves.
fn table_scan_bounds(spec: &QuerySpec, plan: &QueryPlan) -> PartitionBounds {
    match (plan, &spec.filter) {
        (QueryPlan::TableScan, Some(filter)) => filter.partition_key_bounds(),
        _ => PartitionBounds::default(),
    }
}

/// The first key a PartitionKey lower bound admits: the bound's partition from its
/// least RowKey (an exclusive bound's own partition is then skipped by the filter).
fn bounds_start(bounds: &PartitionBounds) -> Option<Start<'_>> {
    bounds.lower.as_ref().map(|bound| Start {
        key: (&bound.key, ""),
        inclusive: true,
    })
}

/// The later of the plan's start and a continuation token's key (`>=`).
fn resume_at<'a>(start: Option<Start<'a>>, token: (&'a str, &'a str)) -> Start<'a> {
    let token = Start {
        key: token,
        inclusive: true,
    };
    match start {
        Some(start) if cmp_key(token.key, start.key) != Ordering::Greater => start,
        _ => token,
    }
}

/// The service's order of two keys.
fn cmp_key(a: (&str, &str), b: (&str, &str)) -> Ordering {
    cmp_ordinal(a.0, b.0).then_with(|| cmp_ordinal(a.1, b.1))
}

/// How a page is cut.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageRules {
    /// Most rows in the page: `min($top, page size)`, at least 1.
    pub(crate) limit: usize,
    /// End the page when the scan enters another partition.
    pub(crate) break_at_partitions: bool,
}

/// Runs one page of a validated query. `resume` is a continuation token's key.
pub(crate) fn query_page(
    rows: &Rows,
    spec: &QuerySpec,
    plan: &QueryPlan,
    resume: Option<(&str, &str)>,
    rules: PageRules,
) -> Page<DynamicEntity> {
    let partitions = table_scan_bounds(spec, plan);
    let mut start = plan_start(plan).or_else(|| bounds_start(&partitions));
    if let Some(token) = resume {
        start = Some(resume_at(start, token));
    }
    // A range start comes from a filter or a token: once per page, so it is built
    // on the heap, whatever its length.
    let lower = match start {
        Some(start) => {
            let key = RowId::new(start.key.0, start.key.1);
            if start.inclusive {
                Bound::Included(key)
            } else {
                Bound::Excluded(key)
            }
        }
        None => Bound::Unbounded,
    };
    let select = spec.select.as_deref();
    // Room for a whole page up front: growing a page of entities copies it over and
    // over, and the allocator's large requests on the way sweep its small free
    // lists (the entities' keys) each time.
    let mut items = Vec::with_capacity(match plan {
        QueryPlan::Point { .. } => 1,
        _ => rules.limit,
    });
    let mut last_partition: Option<&str> = None;
    // Every stored entity carries its own keys: the scan reads them there.
    for entity in rows
        .range((lower, Bound::Unbounded))
        .map(|(_, entity)| entity)
    {
        let (partition_key, row_key) = (&entity.partition_key, &entity.row_key);
        if !plan.contains(partition_key, row_key) || partitions.is_past(partition_key) {
            break;
        }
        let next = || {
            Some(ContinuationToken::new(
                partition_key.as_str(),
                Some(row_key.clone()),
            ))
        };
        if rules.break_at_partitions {
            if last_partition.is_some_and(|p| p != partition_key) {
                return Page {
                    items,
                    continuation: next(),
                };
            }
            last_partition = Some(partition_key);
        }
        if spec.filter.as_ref().is_none_or(|f| f.matches(entity)) {
            if items.len() >= rules.limit {
                return Page {
                    items,
                    continuation: next(),
                };
            }
            items.push(project(entity, select));
        }
    }
    Page {
        items,
        continuation: None,
    }
}

/// Runs one page of a validated query in the Cosmos DB for Table profile's order:
/// an arbitrary order, the same for every page of one query and another for each
/// `seed`. The rows are ordered by a hash of their keys and the seed, so a page
/// holds rows from anywhere in the query's region and the next page resumes
/// exactly after the last row returned (by the hash and the keys). The
/// continuation carries the hash and the keys (`NextRowKey` is `NA`, as Cosmos DB
/// sends it).
///
/// Each page visits the whole region of the query: fine for a test engine, and it
/// keeps the tokens exact while rows are written between pages.
pub(crate) fn query_page_unordered(
    rows: &Rows,
    spec: &QuerySpec,
    plan: &QueryPlan,
    continuation: Option<&ContinuationToken>,
    rules: PageRules,
    seed: u64,
) -> Result<Page<DynamicEntity>> {
    let resume = continuation.map(unordered_position).transpose()?;
    let partitions = table_scan_bounds(spec, plan);
    let lower = match plan_start(plan).or_else(|| bounds_start(&partitions)) {
        Some(start) => Bound::Included(RowId::new(start.key.0, start.key.1)),
        None => Bound::Unbounded,
    };
    let mut matching: Vec<(u64, &DynamicEntity)> = rows
        .range((lower, Bound::Unbounded))
        .map(|(_, entity)| entity)
        .take_while(|entity| {
            plan.contains(&entity.partition_key, &entity.row_key)
                && !partitions.is_past(&entity.partition_key)
        })
        .filter(|entity| spec.filter.as_ref().is_none_or(|f| f.matches(entity)))
        .map(|entity| {
            (
                order_hash(seed, &entity.partition_key, &entity.row_key),
                entity,
            )
        })
        .filter(|(hash, entity)| {
            resume.as_ref().is_none_or(|(h, pk, rk)| {
                (
                    *hash,
                    entity.partition_key.as_str(),
                    entity.row_key.as_str(),
                )
                    .cmp(&(*h, pk.as_str(), rk.as_str()))
                    .is_ge()
            })
        })
        .collect();
    matching.sort_unstable_by(|(ha, a), (hb, b)| {
        ha.cmp(hb).then_with(|| {
            cmp_key(
                (&a.partition_key, &a.row_key),
                (&b.partition_key, &b.row_key),
            )
        })
    });
    let select = spec.select.as_deref();
    let continuation = matching.get(rules.limit).map(|(hash, entity)| {
        ContinuationToken::new(
            format!(
                "{hash:016x}{}:{}{}",
                entity.partition_key.len(),
                entity.partition_key,
                entity.row_key
            ),
            Some(UNORDERED_ROW_KEY.to_owned()),
        )
    });
    let items = matching
        .iter()
        .take(rules.limit)
        .map(|(_, entity)| project(entity, select))
        .collect();
    Ok(Page {
        items,
        continuation,
    })
}

/// The `NextRowKey` of the Cosmos profile's tokens: the service sends `NA`.
const UNORDERED_ROW_KEY: &str = "NA";

/// A row's place in the Cosmos profile's order (FNV-1a of the seed and the keys).
fn order_hash(seed: u64, partition_key: &str, row_key: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for byte in partition_key
        .bytes()
        .chain(std::iter::once(0xff))
        .chain(row_key.bytes())
    {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The position an unordered token resumes at: the hash and the keys of the row
/// the next page starts with.
fn unordered_position(token: &ContinuationToken) -> Result<(u64, String, String)> {
    let malformed = || {
        Error::new(
            ErrorKind::InvalidContinuationToken,
            format!(
                "continuation token {token} was not made by this engine's Cosmos DB profile; pass \
                 the token of a previous page of the same query, or start again from the first page"
            ),
        )
        .with_origin(Origin::Service)
    };
    if token.next_row_key() != Some(UNORDERED_ROW_KEY) {
        return Err(malformed());
    }
    let text = token.next_partition_key();
    let hash = text
        .get(..16)
        .and_then(|hex| u64::from_str_radix(hex, 16).ok())
        .ok_or_else(malformed)?;
    let rest = &text[16..];
    let (length, keys) = rest.split_once(':').ok_or_else(malformed)?;
    let length: usize = length.parse().map_err(|_| malformed())?;
    if length > keys.len() || !keys.is_char_boundary(length) {
        return Err(malformed());
    }
    let (partition_key, row_key) = keys.split_at(length);
    Ok((hash, partition_key.to_owned(), row_key.to_owned()))
}
