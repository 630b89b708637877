//! Derived `to_entity` / `from_entity` against a hand-written conversion of the same
//! struct (target: derived within 1.2x of hand-written).
//!
//! Run: `cargo bench -p tables-client --bench derive_codec`.

#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use tables_client::{DateTime, DynamicEntity, Entity, Error, ErrorKind, Result, Row, Value};

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Employee", rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
pub struct Employee {
    department: String,
    employee_id: u32,
    first_name: String,
    last_name: String,
    age: i32,
    email: String,
    salary: i64,
    active: bool,
    hired: DateTime,
    rating: f64,
}

/// What a careful user writes by hand: the same keys, discriminator and properties.
fn hand_to_entity(e: &Employee) -> Result<DynamicEntity> {
    if e.employee_id > 999_999 {
        return Err(Error::new(ErrorKind::InvalidKey, "employee_id too wide"));
    }
    let pk = e.department.clone();
    tables_client::key::validate_partition_key(&pk)?;
    let rk = format!("empid_{:06}", e.employee_id);
    let mut row = DynamicEntity::new(pk, rk);
    row.insert("EntityType", "Employee");
    row.insert("EntityVersion", 1);
    row.insert("FirstName", e.first_name.clone());
    row.insert("LastName", e.last_name.clone());
    row.insert("Age", e.age);
    row.insert("Email", e.email.clone());
    row.insert("Salary", e.salary);
    row.insert("Active", e.active);
    row.insert("Hired", e.hired);
    row.insert("Rating", e.rating);
    Ok(row)
}

fn get<T: TryFrom<Value, Error = Error>>(row: &mut DynamicEntity, name: &str) -> Result<T> {
    let value = row
        .remove(name)
        .ok_or_else(|| Error::new(ErrorKind::Decode, format!("missing {name}")))?;
    T::try_from(value)
}

fn hand_from_entity(mut row: DynamicEntity) -> Result<Employee> {
    if row.get("EntityType").and_then(Value::as_str) != Some("Employee") {
        return Err(Error::new(ErrorKind::Decode, "not an Employee"));
    }
    let id = row
        .row_key
        .strip_prefix("empid_")
        .filter(|d| d.len() == 6)
        .and_then(|d| d.parse::<u32>().ok())
        .ok_or_else(|| Error::new(ErrorKind::Decode, "bad RowKey"))?;
    Ok(Employee {
        department: std::mem::take(&mut row.partition_key),
        employee_id: id,
        first_name: get(&mut row, "FirstName")?,
        last_name: get(&mut row, "LastName")?,
        age: get(&mut row, "Age")?,
        email: get(&mut row, "Email")?,
        salary: get(&mut row, "Salary")?,
        active: get(&mut row, "Active")?,
        hired: get(&mut row, "Hired")?,
        rating: get(&mut row, "Rating")?,
    })
}

fn sample() -> Employee {
    Employee {
        department: "Sales".into(),
        employee_id: 223,
        first_name: "Ann".into(),
        last_name: "Jones".into(),
        age: 34,
        email: "jonesj@contoso.com".into(),
        salary: 95_000,
        active: true,
        hired: DateTime::from_ymd_hms(2019, 4, 1, 9, 0, 0).unwrap_or(DateTime::MIN),
        rating: 4.5,
    }
}

fn bench(c: &mut Criterion) {
    let e = sample();
    let row = e.to_entity().unwrap_or_default();
    assert_eq!(hand_from_entity(row.clone()).ok(), Some(e.clone()));
    assert_eq!(Employee::from_entity(row.clone()).ok(), Some(e.clone()));

    let mut group = c.benchmark_group("to_entity");
    group.bench_function("derived", |b| b.iter(|| black_box(&e).to_entity()));
    group.bench_function("hand_written", |b| b.iter(|| hand_to_entity(black_box(&e))));
    group.finish();

    let mut group = c.benchmark_group("from_entity");
    group.bench_function("derived", |b| {
        b.iter_batched(
            || row.clone(),
            Employee::from_entity,
            criterion::BatchSize::SmallInput,
        )
    });
    group.bench_function("hand_written", |b| {
        b.iter_batched(
            || row.clone(),
            hand_from_entity,
            criterion::BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
