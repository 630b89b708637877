//! Typed answers on rows other programs wrote, on every engine of the typed matrix:
//! a typed filter matches exactly the rows whose value, as the field's reader reads
//! it, satisfies the comparison, whatever numeric type each row stored (an `i32`
//! field reads Int32 and Int64, an `f64` field Double and integers, an `f32` field
//! rounds); untagged types beside tagged ones; ISO 8601 RowKeys.
//!
//! The random cases (`TABLES_FOREIGN_CASES`, default 48 on the mem engine and 12
//! elsewhere) write rows through the raw engine with a random stored type per value,
//! then compare each typed query with the reader's own verdict on every row.

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::cmp::Ordering;

use tables_client::{
    CmpOp, DateTime, DynamicEntity, Engine, Entity, EntityUnion, ErrorKind, Row, TypedFilter,
    Value, WriteOp,
};
use tables_tests::read::all_rows;
use tables_tests::typed::{Backend, Fixture};

/// Rows another program wrote: no mark, a value of any numeric type in each column.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Reading", untagged)]
#[entity(partition_key = "{case}", row_key = "{id}")]
pub struct Reading {
    pub case: String,
    pub id: String,
    pub small: Option<i32>,
    pub count: Option<u32>,
    pub big: Option<i64>,
    pub total: Option<f64>,
    pub ratio: Option<f32>,
}

const TABLE: &str = "Readings";

/// Writes `row` as another program would: through the raw engine.
async fn write_raw(fixture: &Fixture, table: &str, row: DynamicEntity) {
    fixture
        .engine
        .write(table, &WriteOp::Insert(row))
        .await
        .unwrap();
}

/// Inserts `value` through its typed table.
async fn insert<T: Row>(fixture: &Fixture, table: &str, value: &T) {
    fixture
        .service
        .table::<T>(table)
        .insert(value)
        .await
        .unwrap();
}

/// A number from the environment, or `default`.
fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// A seeded generator of stored values and operands.
struct Gen(fastrand::Rng);

impl Gen {
    fn small_int(&mut self) -> i64 {
        self.0.i64(-40..=40)
    }

    /// An integer as another program may store it: Int32 when it fits, or Int64.
    fn stored_int(&mut self, n: i64) -> Value {
        match i32::try_from(n) {
            Ok(small) if self.0.bool() => Value::Int32(small),
            _ => Value::Int64(n),
        }
    }

    /// A double: whole, half, or any fraction, around the small integers.
    fn double(&mut self) -> f64 {
        let whole = self.small_int() as f64;
        match self.0.u8(0..4) {
            0 => whole,
            1 => whole + 0.5,
            2 => whole + self.0.f64(),
            _ => whole * 1_000.0 + self.0.f64(),
        }
    }

    /// A number for an f64 field: a Double, or an integer stored as Int32 or Int64.
    fn stored_number(&mut self) -> Value {
        if self.0.bool() {
            Value::Double(self.double())
        } else {
            let n = self.small_int();
            self.stored_int(n)
        }
    }

    /// A double near an f32 (exactly one, a midpoint between two, or just off one).
    fn near_single(&mut self) -> f64 {
        let x = (self.double() as f32) as f64;
        let ulp = f64::from(f32::EPSILON) * x.abs().max(1.0);
        match self.0.u8(0..4) {
            0 => x,
            1 => x + ulp / 2.0,
            2 => x - ulp / 2.0,
            _ => x + ulp / 8.0,
        }
    }

    fn maybe(&mut self, value: Value) -> Option<Value> {
        (self.0.u8(0..8) != 0).then_some(value)
    }

    fn op(&mut self) -> CmpOp {
        CmpOp::ALL[self.0.usize(0..CmpOp::ALL.len())]
    }
}

fn holds<T: PartialOrd>(value: &T, op: CmpOp, operand: &T) -> bool {
    match (value.partial_cmp(operand), op) {
        (None, op) => op == CmpOp::Ne,
        (Some(order), CmpOp::Eq) => order == Ordering::Equal,
        (Some(order), CmpOp::Ne) => order != Ordering::Equal,
        (Some(order), CmpOp::Gt) => order == Ordering::Greater,
        (Some(order), CmpOp::Ge) => order != Ordering::Less,
        (Some(order), CmpOp::Lt) => order == Ordering::Less,
        (Some(order), CmpOp::Le) => order != Ordering::Greater,
    }
}

/// One typed comparison and the reader's own verdict on a row.
struct Comparison {
    filter: TypedFilter<Reading>,
    verdict: Box<dyn Fn(&Reading) -> bool>,
    text: String,
}

fn comparison<T: PartialOrd + Copy + std::fmt::Debug + 'static>(
    filter: TypedFilter<Reading>,
    field: fn(&Reading) -> Option<T>,
    op: CmpOp,
    operand: T,
) -> Comparison {
    let text = format!("{} ({op:?} {operand:?})", filter.to_odata());
    Comparison {
        filter,
        verdict: Box::new(move |row| field(row).is_some_and(|v| holds(&v, op, &operand))),
        text,
    }
}

fn random_comparison(gen: &mut Gen) -> Comparison {
    let op = gen.op();
    match gen.0.u8(0..5) {
        0 => {
            let x = gen.small_int() as i32;
            comparison(Reading::SMALL.compare(op, x), |r| r.small, op, x)
        }
        1 => {
            let x = gen.small_int().unsigned_abs() as u32;
            comparison(Reading::COUNT.compare(op, x), |r| r.count, op, x)
        }
        2 => {
            let x = gen.small_int();
            comparison(Reading::BIG.compare(op, x), |r| r.big, op, x)
        }
        3 => {
            let x = gen.double();
            comparison(Reading::TOTAL.compare(op, x), |r| r.total, op, x)
        }
        _ => {
            let x = gen.near_single() as f32;
            comparison(Reading::RATIO.compare(op, x), |r| r.ratio, op, x)
        }
    }
}

fn random_row(gen: &mut Gen, case: &str, id: usize) -> DynamicEntity {
    let mut row = DynamicEntity::new(case, format!("{id:03}"));
    let small = gen.small_int();
    let count = gen.small_int().abs();
    let big = gen.small_int();
    let values = [
        ("small", gen.stored_int(small)),
        ("count", gen.stored_int(count)),
        ("big", gen.stored_int(big)),
        ("total", gen.stored_number()),
        (
            "ratio",
            if gen.0.bool() {
                Value::Double(gen.near_single())
            } else {
                let n = gen.small_int();
                gen.stored_int(n)
            },
        ),
    ];
    for (name, value) in values {
        if let Some(value) = gen.maybe(value) {
            row = row.with(name, value);
        }
    }
    row
}

/// For random rows of mixed stored types, every typed comparison returns exactly the
/// rows whose value, as the reader reads it, satisfies it.
async fn typed_filters_match_what_the_reader_reads(backend: Backend) {
    let cases = match backend {
        Backend::Mem => env_number("TABLES_FOREIGN_CASES", 48),
        _ => env_number("TABLES_FOREIGN_CASES", 12),
    };
    let fixture = backend.fresh();
    fixture.service.create_table(TABLE).await.unwrap();
    let readings = fixture.service.table::<Reading>(TABLE);
    let mut gen = Gen(fastrand::Rng::with_seed(0x7ab1e5));
    for case in 0..cases {
        let case = format!("case{case:03}");
        let rows: Vec<DynamicEntity> = (0..12).map(|id| random_row(&mut gen, &case, id)).collect();
        let mut read = Vec::new();
        for row in rows {
            read.push(Reading::from_entity(row.clone()).unwrap());
            write_raw(&fixture, TABLE, row).await;
        }
        for _ in 0..8 {
            let comparison = random_comparison(&mut gen);
            let expected: Vec<&str> = read
                .iter()
                .filter(|r| (comparison.verdict)(r))
                .map(|r| r.id.as_str())
                .collect();
            let found = readings
                .query()
                .partition(case.as_str())
                .filter(comparison.filter.clone())
                .collect()
                .await
                .unwrap_or_else(|e| panic!("{}: {e}", comparison.text));
            let found: Vec<&str> = found.iter().map(|r| r.id.as_str()).collect();
            assert_eq!(found, expected, "{case}: {}", comparison.text);
        }
    }
    fixture.drop_tables().await;
}

/// The edges of each stored type: the largest integers, integers beyond what a
/// double holds exactly (never read by a float field), f32 rounding boundaries.
/// (Azurite compares numbers as JavaScript doubles, so not beyond 2^53 there.)
async fn typed_filters_hold_at_the_edges_of_each_type(backend: Backend) {
    if !backend.capabilities().strict_filter_typing {
        return;
    }
    let fixture = backend.fresh();
    fixture.service.create_table(TABLE).await.unwrap();
    let readings = fixture.service.table::<Reading>(TABLE);
    let rows = [
        ("a", "big", Value::Int64(i64::MAX)),
        ("b", "big", Value::Int64(i64::MIN)),
        ("c", "big", Value::Int32(i32::MIN)),
        ("d", "count", Value::Int64(i64::from(u32::MAX))),
        ("e", "count", Value::Int32(i32::MAX)),
        ("f", "total", Value::Int64(1 << 53)),
        ("g", "total", Value::Double(-0.0)),
        ("h", "ratio", Value::Double(f64::from(f32::MAX))),
        ("i", "ratio", Value::Double(0.1)),
        ("j", "ratio", Value::Int64(16_777_217)),
        ("k", "small", Value::Int64(i64::from(i32::MIN))),
    ];
    for (id, name, value) in &rows {
        let row = DynamicEntity::new("edges", *id).with(*name, value.clone());
        write_raw(&fixture, TABLE, row).await;
    }
    let ids = |found: Vec<Reading>| found.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let query =
        |filter: TypedFilter<Reading>| readings.query().partition("edges").filter(filter).collect();
    let cases: Vec<(TypedFilter<Reading>, &[&str])> = vec![
        (Reading::BIG.eq(i64::MAX), &["a"]),
        (Reading::BIG.lt(i64::from(i32::MIN)), &["b"]),
        (Reading::BIG.le(i64::from(i32::MIN)), &["b", "c"]),
        (Reading::BIG.gt(0), &["a"]),
        (Reading::COUNT.gt(u32::MAX - 1), &["d"]),
        (Reading::COUNT.ge(i32::MAX as u32), &["d", "e"]),
        (Reading::TOTAL.eq(9_007_199_254_740_992.0), &["f"]),
        (Reading::TOTAL.eq(0.0), &["g"]),
        (Reading::RATIO.eq(f32::MAX), &["h"]),
        (Reading::RATIO.eq(0.1f32), &["i"]),
        (Reading::RATIO.gt(0.1f32), &["h", "j"]),
        // 16_777_217 has no f32: it reads as the nearest, 16_777_216.
        (Reading::RATIO.eq(16_777_216.0f32), &["j"]),
        (Reading::SMALL.eq(i32::MIN), &["k"]),
    ];
    for (filter, expected) in cases {
        let text = filter.to_odata();
        assert_eq!(ids(query(filter).await.unwrap()), expected, "{text}");
    }
    fixture.drop_tables().await;
}

/// A kind marked by a `Type` column, beside an untagged type in the same partition.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Shipment", tag(property = "Type", value = "Shipment"))]
#[entity(partition_key = "{order}", row_key = "ship_{number:04}")]
pub struct Shipment {
    pub order: String,
    pub number: u16,
    pub carrier: String,
}

/// Orders another program wrote, with no mark.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Order", untagged, rename_all = "PascalCase")]
#[entity(partition_key = "{customer}", row_key = "{id}")]
pub struct Order {
    pub customer: String,
    pub id: String,
    pub items: u32,
}

/// A kind this SDK writes (marked by `EntityType`).
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Note")]
#[entity(partition_key = "{customer}", row_key = "note_{at:ticks}")]
pub struct Note {
    pub customer: String,
    pub at: DateTime,
    pub text: String,
}

/// A kind marked by its RowKey prefix: an untagged `Order` (RowKey `{id}`) could
/// have such a key too, so only a union tells its rows apart.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Address", tag(row_key_prefix), rename_all = "PascalCase")]
#[entity(partition_key = "{customer}", row_key = "ADDR_{n:02}")]
pub struct Address {
    pub customer: String,
    pub n: u8,
    pub street: String,
}

/// The partition as a union, the untagged variant first: it still takes only the
/// rows no tagged variant's tag marks.
#[derive(EntityUnion, Debug, Clone, PartialEq)]
pub enum CustomerRow {
    Order(Order),
    Shipment(Shipment),
    Note(Note),
    Address(Address),
}

/// An untagged type skips rows another kind of the program marks (by `EntityType`
/// or its tag column); a get of such a row says what it is; a union with the
/// untagged variant first still gives each row its own variant.
async fn untagged_types_skip_other_kinds_rows(backend: Backend) {
    let fixture = backend.fresh();
    fixture.service.create_table(TABLE).await.unwrap();
    for (id, items) in [("o1", 2), ("o2", 5)] {
        let row = DynamicEntity::new("ann", id).with("Items", Value::Int32(items));
        write_raw(&fixture, TABLE, row).await;
    }
    let shipment = Shipment {
        order: "ann".into(),
        number: 1,
        carrier: "Post".into(),
    };
    insert(&fixture, TABLE, &shipment).await;
    let note = Note {
        customer: "ann".into(),
        at: "2026-11-27T10:00:00Z".parse().unwrap(),
        text: "called".into(),
    };
    insert(&fixture, TABLE, &note).await;
    assert_eq!(all_rows(&fixture.engine, TABLE).await.unwrap().len(), 4);

    let orders = fixture.service.table::<Order>(TABLE);
    let found: Vec<Order> = orders.query().partition("ann").collect().await.unwrap();
    let ids: Vec<&str> = found.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(
        ids,
        ["o1", "o2"],
        "the Order query skips the Shipment and the Note"
    );
    let busy = orders
        .query()
        .partition("ann")
        .filter(Order::ITEMS.gt(3))
        .collect()
        .await
        .unwrap();
    assert_eq!(busy.len(), 1);
    // `take` counts only the rows it returns.
    let first = orders
        .query()
        .partition("ann")
        .order_in_client(1_000)
        .take(2)
        .collect()
        .await
        .unwrap();
    assert_eq!(first.len(), 2);

    // A get of another kind's row is an error that says what the row is.
    let key = Order::key("ann", "ship_0001").unwrap();
    let err = orders.get(key).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode);
    let message = err.to_string();
    assert!(message.contains("is a row of kind Shipment"), "{message}");
    assert!(message.contains("EntityUnion"), "{message}");

    let customers = fixture.service.table::<CustomerRow>(TABLE);
    let partition = || customers.query().partition("ann").collect();
    let rows = partition().await.unwrap();
    let kinds = |rows: &[CustomerRow]| -> Vec<&'static str> {
        rows.iter()
            .map(|row| match row {
                CustomerRow::Order(_) => "order",
                CustomerRow::Shipment(_) => "shipment",
                CustomerRow::Note(_) => "note",
                CustomerRow::Address(_) => "address",
            })
            .collect()
    };
    assert_eq!(kinds(&rows), ["note", "order", "order", "shipment"]);
    // A RowKey-prefix kind beside the untagged one: the tagged variant wins.
    let address = Address {
        customer: "ann".into(),
        n: 1,
        street: "Main St".into(),
    };
    insert(&fixture, TABLE, &address).await;
    let rows = partition().await.unwrap();
    assert_eq!(
        kinds(&rows),
        ["address", "note", "order", "order", "shipment"]
    );
    assert_eq!(rows[0], CustomerRow::Address(address));
    // Read as an Order, that row fails; the error names the likely cause first.
    let err = orders.query().partition("ann").collect().await.unwrap_err();
    let message = err.to_string();
    let cause = message.find("mark of kind Address").expect(&message);
    let field = message.find("can't read field `items`").expect(&message);
    assert!(cause < field, "{message}");
    // A property under another case is named as such.
    let row = DynamicEntity::new("bob", "o9").with("items", Value::Int32(1));
    write_raw(&fixture, TABLE, row).await;
    let err = orders
        .get(Order::key("bob", "o9").unwrap())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode);
    let message = err.to_string();
    assert!(
        message.contains("`items`, which differs from `Items` only in case"),
        "{message}"
    );
    assert!(
        message.find("only in case").unwrap() < message.find("make the field an Option").unwrap(),
        "{message}"
    );
    fixture.drop_tables().await;
}

/// Log rows another program keyed by ISO 8601 instants with milliseconds
/// (`2026-11-27T10:00:00.000Z_0001`, as JavaScript's `toISOString` writes them).
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Event", untagged)]
#[entity(partition_key = "{device}", row_key = "{at:iso(3)}_{seq:04}")]
pub struct Event {
    pub device: String,
    pub at: DateTime,
    pub seq: u16,
    pub level: String,
}

/// ISO 8601 RowKeys read back into their fields, and ranges over them (with owned
/// `String` bounds for text placeholders too).
async fn iso_row_keys_read_back_and_range(backend: Backend) {
    let fixture = backend.fresh();
    fixture.service.create_table(TABLE).await.unwrap();
    let keys = [
        "2026-11-27T09:59:59.999Z_0001",
        "2026-11-27T10:00:00.000Z_0001",
        "2026-11-27T10:00:00.000Z_0002",
        "2026-11-27T10:30:00.500Z_0001",
        "2026-11-27T11:00:00.000Z_0001",
    ];
    for key in keys {
        let row = DynamicEntity::new("dev1", key).with("level", "info");
        write_raw(&fixture, TABLE, row).await;
    }
    let events = fixture.service.table::<Event>(TABLE);
    let ten: DateTime = "2026-11-27T10:00:00Z".parse().unwrap();
    let eleven: DateTime = "2026-11-27T11:00:00Z".parse().unwrap();
    let hour: Vec<Event> = events
        .query()
        .partition("dev1")
        .row_range(Event::at_range(ten..eleven).unwrap())
        .collect()
        .await
        .unwrap();
    let seen: Vec<(String, u16)> = hour.iter().map(|e| (e.at.to_string(), e.seq)).collect();
    assert_eq!(
        seen,
        [
            ("2026-11-27T10:00:00.0000000Z".to_owned(), 1),
            ("2026-11-27T10:00:00.0000000Z".to_owned(), 2),
            ("2026-11-27T10:30:00.5000000Z".to_owned(), 1),
        ]
    );
    // The newest first of that hour: the range read, reversed.
    let newest = hour.last().unwrap();
    assert_eq!(newest.seq, 1);
    assert_eq!(
        newest.at,
        "2026-11-27T10:30:00.5Z".parse::<DateTime>().unwrap()
    );
    // A value finer than the form's milliseconds is refused, not cut.
    let fine = Event {
        device: "dev1".into(),
        at: "2026-11-27T12:00:00.0001Z".parse().unwrap(),
        seq: 1,
        level: "debug".into(),
    };
    let err = events.insert(&fine).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidKey);
    // Owned bounds for a text placeholder.
    let (from, to) = (String::from("o1"), String::from("o2"));
    let range = Order::id_range(from..=to).unwrap();
    assert!(range.contains("o2") && !range.contains("o3"));
    fixture.drop_tables().await;
}

/// A missing table's error gives its advice once, and a refused condition names its
/// entity once, on every engine.
async fn error_messages_say_each_thing_once(backend: Backend) {
    let fixture = backend.fresh();
    let orders = fixture.service.table::<Order>("NoSuchOrders");
    let order = Order {
        customer: "ann".into(),
        id: "o1".into(),
        items: 1,
    };
    let missing = orders.insert(&order).await.unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::TableNotFound);
    let text = missing.to_string();
    assert_eq!(text.matches("create_table").count(), 1, "{text}");
    assert!(text.matches("PartitionKey=\"ann\"").count() <= 1, "{text}");

    orders.create().await.unwrap();
    let written = orders.insert(&order).await.unwrap();
    orders
        .replace(&order, tables_client::IfMatch::Any)
        .await
        .unwrap();
    let stale = orders
        .replace(&order, tables_client::IfMatch::Etag(written.etag.unwrap()))
        .await
        .unwrap_err();
    assert_eq!(stale.kind(), ErrorKind::PreconditionFailed);
    let text = stale.to_string();
    assert!(text.matches("PartitionKey=\"ann\"").count() <= 1, "{text}");
    fixture.drop_tables().await;
}

tables_tests::typed_matrix!(
    error_messages_say_each_thing_once,
    typed_filters_match_what_the_reader_reads,
    typed_filters_hold_at_the_edges_of_each_type,
    untagged_types_skip_other_kinds_rows,
    iso_row_keys_read_back_and_range,
);
