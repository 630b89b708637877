//! Resource names for the fuzz cases: tables and entity paths, mostly the seeded
//! ones, some malformed (used by the case generator and the body writers alike).

use super::{Rng, KEYS, TABLES};

/// A `'..'` key literal: a seeded key, or noise, now and then badly quoted.
pub(super) fn key_literal(rng: &mut Rng) -> String {
    let key = match rng.below(5) {
        0..=2 => rng.pick(&KEYS).0.to_owned(),
        3 => rng.pick(&KEYS).1.to_owned(),
        _ => rng.text(12),
    };
    match rng.below(20) {
        0 => key,
        1 => format!("'{key}"),
        2 => format!("'{key}'''"),
        _ => format!("'{}'", key.replace('\'', "''")),
    }
}

pub(super) fn entity_path(rng: &mut Rng) -> String {
    let table = table_name(rng);
    let (pk, rk) = (key_literal(rng), key_literal(rng));
    let inner = match rng.below(20) {
        0 => format!("RowKey={rk},PartitionKey={pk}"),
        1 => format!("PartitionKey={pk}"),
        2 => format!("PartitionKey={pk},RowKey={rk},X='y'"),
        3 => format!(" PartitionKey = {pk} , RowKey = {rk} "),
        4 => format!("PartitionKey={pk},RowKey={rk})("),
        5 => format!("partitionkey={pk},rowkey={rk}"),
        _ => format!("PartitionKey={pk},RowKey={rk}"),
    };
    format!("{table}({inner})")
}

pub(super) fn table_name(rng: &mut Rng) -> String {
    match rng.below(10) {
        0..=5 => rng.one_of(TABLES).to_owned(),
        6 => "FUZZ".to_owned(),
        7 => format!("t{}", rng.below(1_000)),
        8 => "x".repeat(rng.pick(&[0, 2, 3, 63, 64])),
        _ => rng.text(10),
    }
}
