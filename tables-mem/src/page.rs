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

use tables_core::{ContinuationToken, DynamicEntity, Page, QueryPlan, QuerySpec};

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
    let mut start = plan_start(plan);
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
        if !plan.contains(partition_key, row_key) {
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
        if spec.filter.as_ref().map_or(true, |f| f.matches(entity)) {
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
