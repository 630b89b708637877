//! Orders the official JS and Python SDKs wrote, read through typed filters.
//!
//! The JS SDK sends a whole number without a type (the service stores `150` as
//! `Edm.Int32`), a fraction as `Edm.Double`, and `Int64` only when told; the Python
//! SDK sends an `int` as `Edm.Int32` and a `float` as `Edm.Double`. So one column
//! holds Int32, Int64 and Double values, and a field's reader takes them all: a `u32`
//! field reads Int32 and Int64, an `f64` field reads Double and both integers. Each
//! typed filter below matches exactly the rows whose value, as the field reads it,
//! satisfies it: the program checks every one against its own evaluation of every
//! row.
//!
//! The rows are the ones `tools/js-sdk/orders.mjs` and `tools/py-sdk/orders.py`
//! write, as the service stored them (`examples/fixtures/orders.txt`, which the test
//! `tests/tests/foreign_orders.rs` checks against fresh runs of both SDKs).
//!
//! This file is a module of the `existing_table` example and of that test.

use std::collections::BTreeMap;

use tables_client::{DynamicEntity, Entity, Error, TableServiceClient, TypedFilter, Value};

/// An order, as the Rust program reads it: untagged (other programs mark nothing),
/// two declared columns, and every other column kept as stored.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Order", untagged, rename_all = "PascalCase")]
#[entity(partition_key = "{list}", row_key = "{id}")]
pub(crate) struct Order {
    pub(crate) list: String,
    pub(crate) id: String,
    /// Int32 or Int64 on the service.
    pub(crate) items: u32,
    /// Int32, Int64 or Double on the service.
    pub(crate) total: f64,
    /// `Channel`, `Coupon`, `Region`: columns this type doesn't declare.
    #[entity(other_properties)]
    pub(crate) other: BTreeMap<String, Value>,
}

/// The partition the SDKs write.
pub(crate) const PARTITION: &str = "orders";

/// The table the example keeps them in.
#[allow(dead_code)] // the test names tables of its own
pub(crate) const ORDERS_TABLE: &str = "Orders";

/// The rows as the JS and Python SDKs wrote them: one line per row, the RowKey then
/// `Name=Type:value` per property, tab-separated.
pub(crate) const FIXTURE: &str = include_str!("../fixtures/orders.txt");

/// Reads [`FIXTURE`]-formatted text into rows of [`PARTITION`].
///
/// # Errors
///
/// A line or value that is not in the format, naming the line.
pub(crate) fn parse_rows(text: &str) -> Result<Vec<DynamicEntity>, String> {
    let mut rows = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: &str| format!("orders fixture, line {}: {why}: {line:?}", number + 1);
        let mut parts = line.split('\t');
        let row_key = parts.next().ok_or_else(|| bad("no RowKey"))?;
        let mut row = DynamicEntity::new(PARTITION, row_key);
        for part in parts {
            let (name, typed) = part.split_once('=').ok_or_else(|| bad("no `=`"))?;
            let (edm, value) = typed.split_once(':').ok_or_else(|| bad("no `:`"))?;
            let value = match edm {
                "String" => Value::String(value.to_owned()),
                "Int32" => Value::Int32(value.parse().map_err(|_| bad("not an Int32"))?),
                "Int64" => Value::Int64(value.parse().map_err(|_| bad("not an Int64"))?),
                "Double" => Value::Double(value.parse().map_err(|_| bad("not a Double"))?),
                _ => return Err(bad("a type other than String, Int32, Int64, Double")),
            };
            row = row.with(name, value);
        }
        rows.push(row);
    }
    Ok(rows)
}

/// `rows` in [`FIXTURE`]'s format, sorted by RowKey (properties by name): what a
/// fresh run of the SDKs must match.
#[allow(dead_code)] // the test's: a fresh run of the SDKs must match the fixture
pub(crate) fn format_rows(rows: &[DynamicEntity]) -> String {
    let mut lines: Vec<String> = rows
        .iter()
        .map(|row| {
            let mut properties: Vec<(&str, &Value)> = row.properties().collect();
            properties.sort_by(|a, b| a.0.cmp(b.0));
            let mut line = row.row_key.clone();
            for (name, value) in properties {
                let (edm, text) = match value {
                    Value::String(s) => ("String", s.clone()),
                    Value::Int32(n) => ("Int32", n.to_string()),
                    Value::Int64(n) => ("Int64", n.to_string()),
                    Value::Double(x) => ("Double", format!("{x:?}")),
                    other => ("Unsupported", format!("{other:?}")),
                };
                line.push_str(&format!("\t{name}={edm}:{text}"));
            }
            line
        })
        .collect();
    lines.sort();
    lines.join("\n") + "\n"
}

/// One typed filter, and the verdict the program itself gives a row.
struct Check {
    filter: TypedFilter<Order>,
    holds: fn(&Order) -> bool,
}

fn checks() -> Vec<Check> {
    vec![
        Check {
            filter: Order::ITEMS.gt(0u32),
            holds: |o| o.items > 0,
        },
        Check {
            filter: Order::ITEMS.eq(12u32),
            holds: |o| o.items == 12,
        },
        Check {
            filter: Order::ITEMS.le(5u32),
            holds: |o| o.items <= 5,
        },
        Check {
            filter: Order::ITEMS.ge(3_000_000_000u32),
            holds: |o| o.items >= 3_000_000_000,
        },
        Check {
            filter: Order::TOTAL.gt(100.0),
            holds: |o| o.total > 100.0,
        },
        Check {
            filter: Order::TOTAL.eq(150.0),
            holds: |o| o.total == 150.0,
        },
        Check {
            filter: Order::TOTAL.ne(150.0),
            holds: |o| o.total != 150.0,
        },
        Check {
            filter: Order::TOTAL.lt(100.5),
            holds: |o| o.total < 100.5,
        },
        Check {
            filter: Order::TOTAL.ge(100.25),
            holds: |o| o.total >= 100.25,
        },
        Check {
            filter: Order::TOTAL.between(-1.0, 100.0),
            holds: |o| (-1.0..=100.0).contains(&o.total),
        },
    ]
}

/// Runs every typed filter over the orders in `table` and compares its rows with the
/// program's own verdict on every row the reader reads: one line per filter, or the
/// first filter whose rows differ.
///
/// # Errors
///
/// A failed query, or a filter whose rows differ from the verdict (naming both).
pub(crate) async fn typed_filters_match_the_reader(
    service: &TableServiceClient,
    table: &str,
) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let orders = service.table::<Order>(table);
    let all: Vec<Order> = orders.query().partition(PARTITION).collect().await?;
    let mut lines = Vec::new();
    for check in checks() {
        let text = check.filter.to_odata();
        let found: Vec<Order> = orders
            .query()
            .partition(PARTITION)
            .filter(check.filter)
            .collect()
            .await
            .map_err(|e: Error| format!("{text}: {e}"))?;
        let found: Vec<&str> = found.iter().map(|o| o.id.as_str()).collect();
        let expected: Vec<&str> = all
            .iter()
            .filter(|o| (check.holds)(o))
            .map(|o| o.id.as_str())
            .collect();
        if found != expected {
            return Err(format!(
                "the filter `{text}` matched {found:?}, and the rows whose value satisfies it \
                 are {expected:?}"
            )
            .into());
        }
        lines.push(format!("{} of {} orders: {text}", found.len(), all.len()));
    }
    Ok(lines)
}
