//! Wide entities: one logical entity stored as several rows of one partition, for a
//! type marked `#[entity(wide)]` (the design guide's "wide entities" pattern: more
//! than 252 properties or more than 1 MiB).
//!
//! The layout, written and read only by the client's wide layer
//! (`tables_client::wide`):
//!
//! - an entity that fits one row is stored as one plain row, without any layout
//!   property;
//! - otherwise the **base row** has the entity's own keys, its tag and index
//!   bookkeeping properties first, then as many properties as fit, and
//!   [`PARTS_PROPERTY`]: the number of part rows;
//! - **part** `i` (1 to [`MAX_PARTS`]) has the RowKey [`part_row_key`]`(base, i)` (the
//!   base key, a space, `~` and two digits: it sorts after the base key and before
//!   any other key that starts with it, since a space is the smallest character a key
//!   may hold), [`PART_PROPERTY`] = `i`, and the properties that did not fit before;
//! - every row of a multi-row version carries the same [`PARTS_TAG_PROPERTY`], new
//!   for each version, so a reader can tell a whole entity from rows of two versions.
//!
//! All rows of a version are written in one entity group transaction under the base
//! row's ETag, which is the logical entity's ETag.

use std::collections::HashSet;
use std::sync::Arc;

use crate::entity::DynamicEntity;
use crate::error::{Error, ErrorKind, Result};
use crate::filter::{col, Filter, QueryPlan};
use crate::filter::{PARTITION_KEY, ROW_KEY};
use crate::model::{
    ENTITY_TYPE_PROPERTY, ENTITY_VERSION_PROPERTY, PRIMARY_PARTITION_KEY_PROPERTY,
    PRIMARY_ROW_KEY_PROPERTY,
};
use crate::size::{entity_size, value_size, MAX_ENTITY_BYTES, MAX_USER_PROPERTIES};
use crate::value::Value;

/// On a wide entity's base row: the number of part rows (`Edm.Int32`, 1 to
/// [`MAX_PARTS`]). A wide type's codec writes it (as 0) to mark a row for the wide
/// layer, which lays it out and writes the real count (or no marker, for one row).
pub const PARTS_PROPERTY: &str = crate::model::ENTITY_PARTS_PROPERTY;
/// On a part row: its number, from 1 (`Edm.Int32`).
pub const PART_PROPERTY: &str = crate::model::ENTITY_PART_PROPERTY;
/// On every row of a multi-row version: the version's tag (`Edm.String`).
pub const PARTS_TAG_PROPERTY: &str = crate::model::ENTITY_PARTS_TAG_PROPERTY;
/// Most part rows of one entity: with the base row, 100 rows, one entity group
/// transaction.
pub const MAX_PARTS: usize = 99;

/// The properties the layout adds, which a reader removes.
pub const LAYOUT_PROPERTIES: [&str; 3] = [PARTS_PROPERTY, PART_PROPERTY, PARTS_TAG_PROPERTY];

/// Properties kept on the base row, so filters on the tag and the index
/// bookkeeping work on the service.
const BASE_FIRST: [&str; 4] = [
    ENTITY_TYPE_PROPERTY,
    ENTITY_VERSION_PROPERTY,
    PRIMARY_PARTITION_KEY_PROPERTY,
    PRIMARY_ROW_KEY_PROPERTY,
];

/// The RowKey of part `part` (1 to [`MAX_PARTS`]) of the entity whose RowKey is
/// `base`.
///
/// ```
/// assert_eq!(tables_core::wide::part_row_key("day_0001", 3), "day_0001 ~03");
/// ```
pub fn part_row_key(base: &str, part: usize) -> String {
    format!("{base} ~{part:02}")
}

/// Whether `entity` is marked for the wide layout (it has [`PARTS_PROPERTY`]).
pub fn is_wide(entity: &DynamicEntity) -> bool {
    entity.contains(PARTS_PROPERTY)
}

/// The number of part rows a stored base row declares; `None` when `row` is not a
/// wide base row.
pub fn part_count(row: &DynamicEntity) -> Option<usize> {
    match row.get(PARTS_PROPERTY) {
        Some(Value::Int32(n)) => usize::try_from(*n).ok(),
        _ => None,
    }
}

/// The part number of a part row; `None` when `row` is not one.
pub fn part_number(row: &DynamicEntity) -> Option<usize> {
    match row.get(PART_PROPERTY) {
        Some(Value::Int32(n)) if *n >= 1 => usize::try_from(*n).ok(),
        _ => None,
    }
}

/// The base RowKey of a part row, when `row` is part of the entity whose RowKey it
/// names.
pub fn base_row_key(row: &DynamicEntity) -> Option<&str> {
    let part = part_number(row)?;
    let suffix = format!(" ~{part:02}");
    row.row_key.strip_suffix(suffix.as_str())
}

/// The filter for every row of the entity `(partition_key, row_key)`: the base row
/// and the range its parts may occupy.
pub fn rows_filter(partition_key: &str, row_key: &str) -> Filter {
    Filter::partition_key(partition_key).and(
        col(ROW_KEY).eq(row_key).or(col(ROW_KEY)
            .ge(part_row_key(row_key, 1))
            .and(col(ROW_KEY).le(part_row_key(row_key, MAX_PARTS)))),
    )
}

/// `filter` widened so a query also returns the rows of every multi-row entity in
/// the key region `filter` names: a filter over a property stored on a part row can't
/// be judged by the service, so the reader assembles those entities and judges them
/// itself ([`Filter::matches`]).
pub fn widen(filter: &Filter) -> Filter {
    let laid_out = col(PARTS_PROPERTY).ge(1).or(col(PART_PROPERTY).ge(1));
    let region = match filter.plan() {
        QueryPlan::Point {
            partition_key,
            row_key,
        } => rows_filter(&partition_key, &row_key),
        QueryPlan::Range {
            partition_key,
            lower,
            upper,
        } => {
            let mut region = Filter::partition_key(partition_key);
            if let Some(lower) = lower {
                region = region.and(if lower.inclusive {
                    col(ROW_KEY).ge(lower.key)
                } else {
                    col(ROW_KEY).gt(lower.key)
                });
            }
            if let Some(upper) = upper {
                region = region.and(col(ROW_KEY).le(part_row_key(&upper.key, MAX_PARTS)));
            }
            region
        }
        QueryPlan::PartitionScan { partition_key } => Filter::partition_key(partition_key),
        QueryPlan::TableScan => return filter.clone().or(laid_out),
    };
    filter.clone().or(region.and(laid_out))
}

/// The rows of `entity` (marked wide), laid out as the module docs say; `tag`
/// marks the rows of this version when there are several. The first row is the
/// base row.
///
/// # Errors
///
/// [`ErrorKind::EntityTooLarge`] when the entity needs more than [`MAX_PARTS`] part
/// rows.
pub fn split(entity: &DynamicEntity, tag: &str) -> Result<Vec<DynamicEntity>> {
    // Names are distinct in `entity`, so rows are built with `push_unchecked`: a
    // wide entity has hundreds of properties, and `insert` looks for each name.
    let is_layout = |name: &str| LAYOUT_PROPERTIES.contains(&name);
    let all = entity.named_properties();
    let mut ordered: Vec<&(Arc<str>, Value)> = Vec::with_capacity(all.len());
    ordered.extend(
        BASE_FIRST
            .iter()
            .filter_map(|first| all.iter().find(|(name, _)| &**name == *first)),
    );
    ordered.extend(
        all.iter()
            .filter(|(name, _)| !is_layout(name) && !BASE_FIRST.contains(&&**name)),
    );

    // One plain row, when it fits.
    let mut single = DynamicEntity::new(entity.partition_key.clone(), entity.row_key.clone());
    single.reserve(ordered.len());
    for (name, value) in ordered.iter().copied() {
        single.push_unchecked(Arc::clone(name), value.clone());
    }
    if fits_one_row(&single) {
        return Ok(vec![single]);
    }

    // The layout properties each row carries, counted before any property is placed.
    let tag_value = Value::String(tag.to_owned());
    let mut rows: Vec<DynamicEntity> = Vec::new();
    let mut current = DynamicEntity::new(entity.partition_key.clone(), entity.row_key.clone());
    current.insert(PARTS_PROPERTY, 0i32);
    current.insert(PARTS_TAG_PROPERTY, tag_value.clone());
    let mut size = entity_size(&current);
    for (name, value) in single.take_properties() {
        let cost = 8 + 2 * name.encode_utf16().count() + value_size(&value);
        if current.len() + 1 > MAX_USER_PROPERTIES || size + cost > MAX_ENTITY_BYTES {
            rows.push(current);
            let part = rows.len();
            current = DynamicEntity::new(
                entity.partition_key.clone(),
                part_row_key(&entity.row_key, part),
            );
            current.insert(PART_PROPERTY, part_i32(part));
            current.insert(PARTS_TAG_PROPERTY, tag_value.clone());
            size = entity_size(&current);
        }
        current.push_unchecked(name, value);
        size += cost;
    }
    rows.push(current);
    let parts = rows.len() - 1;
    if parts > MAX_PARTS {
        return Err(Error::local(
            ErrorKind::EntityTooLarge,
            format!(
                "the wide entity ({}, {}) needs {} rows; one entity group transaction writes at most \
                 {} (a base row and {MAX_PARTS} parts): store some fields in blobs (#[entity(blob)]) \
                 or split the type",
                entity.partition_key,
                entity.row_key,
                parts + 1,
                MAX_PARTS + 1
            ),
        )
        .with_entity_key(entity.key()));
    }
    rows[0].insert(PARTS_PROPERTY, part_i32(parts));
    Ok(rows)
}

/// Whether `row` is within the service's limits for one row.
pub fn fits_one_row(row: &DynamicEntity) -> bool {
    row.len() <= MAX_USER_PROPERTIES && entity_size(row) <= MAX_ENTITY_BYTES
}

fn part_i32(part: usize) -> i32 {
    // At most MAX_PARTS + 1 rows are ever numbered.
    i32::try_from(part).unwrap_or(i32::MAX)
}

/// What the rows read for one entity make.
#[derive(Debug)]
pub enum Assembled {
    /// The whole entity, with the base row's keys, ETag and timestamp, and without
    /// the layout properties.
    Whole(DynamicEntity),
    /// The rows are of two versions, or a part is missing: the entity changed while
    /// it was read. Read it again.
    Torn,
}

/// The entity `base` and its `parts` (rows read with [`rows_filter`], in any order)
/// make. Rows that are not parts of `base` are ignored.
pub fn assemble(mut base: DynamicEntity, parts: &[DynamicEntity]) -> Assembled {
    let Some(count) = part_count(&base) else {
        strip_layout(&mut base);
        return Assembled::Whole(base);
    };
    if count == 0 {
        strip_layout(&mut base);
        return Assembled::Whole(base);
    }
    let tag = base.get(PARTS_TAG_PROPERTY).cloned();
    let mut ordered: Vec<Option<&DynamicEntity>> = vec![None; count];
    for row in parts {
        let Some(number) = part_number(row) else {
            continue;
        };
        if number > count || row.row_key != part_row_key(&base.row_key, number) {
            continue;
        }
        if row.get(PARTS_TAG_PROPERTY) != tag.as_ref() || tag.is_none() {
            return Assembled::Torn;
        }
        ordered[number - 1] = Some(row);
    }
    strip_layout(&mut base);
    let mut seen: HashSet<Arc<str>> = base
        .named_properties()
        .iter()
        .map(|(name, _)| Arc::clone(name))
        .collect();
    for row in ordered {
        let Some(row) = row else {
            return Assembled::Torn;
        };
        for (name, value) in row.named_properties() {
            if !LAYOUT_PROPERTIES.contains(&&**name) && seen.insert(Arc::clone(name)) {
                base.push_unchecked(Arc::clone(name), value.clone());
            }
        }
    }
    Assembled::Whole(base)
}

/// Removes the layout properties from `entity`.
pub fn strip_layout(entity: &mut DynamicEntity) {
    entity.retain(|name, _| !LAYOUT_PROPERTIES.contains(&name));
}

/// Whether a filter names only keys (so the service judges it the same on any row
/// of a wide entity as on the whole entity).
pub fn names_only_keys(filter: &Filter) -> bool {
    match filter {
        Filter::Compare { property, .. } => property == PARTITION_KEY || property == ROW_KEY,
        Filter::And(a, b) | Filter::Or(a, b) => names_only_keys(a) && names_only_keys(b),
        Filter::Not(inner) => names_only_keys(inner),
        Filter::Literal(_) => true,
        Filter::Unchecked(_) => false,
        Filter::Read(read) => read.property() == PARTITION_KEY || read.property() == ROW_KEY,
    }
}

/// The property names `filter` reads (keys and `Timestamp` included).
pub fn filter_properties(filter: &Filter, out: &mut Vec<String>) {
    match filter {
        Filter::Compare { property, .. } => {
            if !out.contains(property) {
                out.push(property.clone());
            }
        }
        Filter::And(a, b) | Filter::Or(a, b) => {
            filter_properties(a, out);
            filter_properties(b, out);
        }
        Filter::Not(inner) => filter_properties(inner, out),
        Filter::Read(read) => {
            if !out.iter().any(|known| known == read.property()) {
                out.push(read.property().to_owned());
            }
        }
        Filter::Literal(_) | Filter::Unchecked(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wide(n: usize, value_len: usize) -> DynamicEntity {
        let mut e = DynamicEntity::new("p", "r");
        e.insert(ENTITY_TYPE_PROPERTY, "Sensor");
        for i in 0..n {
            e.insert(format!("v_{i:04}"), "x".repeat(value_len));
        }
        e.insert(PARTS_PROPERTY, 0i32);
        e
    }

    #[test]
    fn a_small_entity_stays_one_row() {
        let rows = split(&wide(10, 5), "t").unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(part_count(&rows[0]), None, "a plain row");
        assert!(rows[0].get(PARTS_TAG_PROPERTY).is_none());
    }

    #[test]
    fn many_properties_split_under_the_limits_and_assemble_back() {
        let entity = wide(700, 3000);
        let rows = split(&entity, "t1").unwrap();
        assert!(rows.len() > 2, "{} rows", rows.len());
        for row in &rows {
            assert!(row.len() <= MAX_USER_PROPERTIES, "{}", row.len());
            assert!(entity_size(row) <= MAX_ENTITY_BYTES);
        }
        assert_eq!(
            rows[0].get(ENTITY_TYPE_PROPERTY),
            Some(&Value::from("Sensor"))
        );
        assert_eq!(part_count(&rows[0]), Some(rows.len() - 1));
        assert_eq!(rows[2].row_key, "r ~02");
        assert_eq!(base_row_key(&rows[2]), Some("r"));
        let Assembled::Whole(back) = assemble(rows[0].clone(), &rows[1..]) else {
            panic!("torn");
        };
        let mut expected = entity.clone();
        strip_layout(&mut expected);
        assert_eq!(back.len(), expected.len());
        for (name, value) in expected.properties() {
            assert_eq!(back.get(name), Some(value), "{name}");
        }
    }

    #[test]
    fn rows_of_two_versions_or_a_missing_part_are_torn() {
        let rows = split(&wide(600, 10), "a").unwrap();
        let other = split(&wide(600, 10), "b").unwrap();
        assert!(matches!(
            assemble(rows[0].clone(), &[rows[1].clone(), other[2].clone()]),
            Assembled::Torn
        ));
        assert!(matches!(
            assemble(rows[0].clone(), &rows[1..2]),
            Assembled::Torn
        ));
    }

    #[test]
    fn too_many_parts_is_a_typed_error() {
        let err = split(&wide(4200, 30_000), "t").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::EntityTooLarge);
    }

    #[test]
    fn widening_keeps_the_key_region() {
        let f = Filter::partition_key("p").and(col("Temp").gt(5));
        let widened = widen(&f).to_string();
        assert!(widened.contains("PartitionKey eq 'p'"), "{widened}");
        assert!(widened.contains(PARTS_PROPERTY), "{widened}");
        let point = widen(&Filter::point("p", "r")).to_string();
        assert!(point.contains("r ~99"), "{point}");
    }
}
