//! The derives' output is clean under strict lints, for a user who depends on
//! `tables_client` alone.
#![deny(
    warnings,
    missing_docs,
    unreachable_pub,
    unused_qualifications,
    unused_results,
    clippy::all
)]

use tables_client::{DateTime, DynamicEntity, Entity, EntityUnion, Property, Row};

/// Where an employee stands.
#[derive(Property, Debug, Clone, Copy, PartialEq, Eq)]
#[entity(rename_all = "snake_case")]
pub enum Status {
    /// At work.
    Active,
    /// Away for a while.
    #[entity(rename = "leave")]
    OnLeave,
}

/// An e-mail address.
#[derive(Property, Debug, Clone, PartialEq, Eq)]
pub struct Email(pub String);

/// A badge number.
#[derive(Property, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Badge(pub u32);

/// A postal address, stored as JSON.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Address {
    /// The city.
    pub city: String,
}

/// A custom codec: cents as an Int64.
pub mod cents {
    use tables_client::{Result, Value};

    /// Encodes.
    ///
    /// # Errors
    ///
    /// Never.
    pub fn to_value(value: &i64) -> Result<Option<Value>> {
        Ok(Some(Value::Int64(*value)))
    }

    /// Decodes.
    ///
    /// # Errors
    ///
    /// Never.
    pub fn from_value(value: Option<Value>) -> Result<i64> {
        Ok(value.and_then(|v| v.as_i64()).unwrap_or_default())
    }
}

fn default_level() -> u8 {
    1
}

/// An employee.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    kind = "Employee",
    version = 2,
    upgrade_from(EmployeeV1),
    rename_all = "PascalCase"
)]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
#[entity(unique_index(
    name = "by_badge",
    table = "ByBadge",
    partition_key = "b",
    row_key = "{badge:010}",
    include(last_name, status)
))]
#[entity(unique_index(
    name = "by_boss",
    table = "ByBoss",
    partition_key = "{boss}",
    row_key = "{hired:rticks}"
))]
#[entity(index_entity(name = "last_name", row_key = "lastname_{last_name}"))]
pub struct Employee {
    /// The department: the `PartitionKey`.
    pub department: String,
    /// The id: the `RowKey`.
    pub employee_id: u32,
    /// Last name.
    pub last_name: String,
    /// E-mail.
    pub email: Email,
    /// Badge.
    pub badge: Badge,
    /// Status.
    pub status: Status,
    /// Hiring date.
    #[entity(rename = "Hired", column = "HIRED_AT")]
    pub hired: DateTime,
    /// The boss, if any.
    pub boss: Option<String>,
    /// Age.
    #[entity(default)]
    pub age: i32,
    /// Level.
    #[entity(default = default_level)]
    pub level: u8,
    /// Address.
    #[entity(json)]
    pub address: Address,
    /// Salary in cents.
    #[entity(with = cents)]
    pub salary: i64,
    /// Not stored.
    #[entity(skip)]
    pub scratch: Option<String>,
}

/// The first version of an employee.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Employee", version = 1)]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
pub struct EmployeeV1 {
    /// The department.
    pub department: String,
    /// The id.
    pub employee_id: u32,
}

impl From<EmployeeV1> for Employee {
    fn from(old: EmployeeV1) -> Employee {
        Employee {
            department: old.department,
            employee_id: old.employee_id,
            last_name: String::new(),
            email: Email(String::new()),
            badge: Badge(0),
            status: Status::Active,
            hired: DateTime::MIN,
            boss: None,
            age: 0,
            level: default_level(),
            address: Address::default(),
            salary: 0,
            scratch: None,
        }
    }
}

/// A department row, in the employees' partition.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "{name}", row_key = "department")]
pub struct Department {
    /// The name.
    pub name: String,
    /// Head count.
    pub employee_count: i32,
}

/// A price, over the field types beyond the basics.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    partition_key = "{shop}",
    row_key = "p_{grade}_{tier:07}_{from}_{rank:signed}"
)]
#[entity(index_entity(name = "by_label", row_key = "label_{label}"))]
pub struct Price {
    /// The shop: a whole key of another text type.
    pub shop: Box<str>,
    /// A grade, as the character.
    pub grade: char,
    /// A tier, as its code point.
    pub tier: char,
    /// From when.
    pub from: chrono::NaiveDate,
    /// Rank.
    pub rank: i8,
    /// Label.
    pub label: std::sync::Arc<str>,
    /// Note.
    pub note: std::borrow::Cow<'static, str>,
    /// Until when.
    pub until: Option<time::Date>,
    /// How long it holds.
    pub holds: std::time::Duration,
    /// The amount.
    pub amount: rust_decimal::Decimal,
    /// A picture.
    pub picture: bytes::Bytes,
}

/// The rows of a department's partition.
#[derive(EntityUnion, Debug, Clone, PartialEq)]
pub enum SalesPartition {
    /// A department.
    Department(Department),
    /// An employee.
    Employee(Employee),
    /// Anything else.
    #[entity(other)]
    Unknown(DynamicEntity),
}

fn main() -> tables_client::Result<()> {
    let e = Employee {
        department: "Sales".to_owned(),
        employee_id: 223,
        last_name: "Jones".to_owned(),
        email: Email("j@contoso.com".to_owned()),
        badge: Badge(7),
        status: Status::OnLeave,
        hired: DateTime::MIN,
        boss: Some("Ann".to_owned()),
        age: 34,
        level: 2,
        address: Address {
            city: "Oslo".to_owned(),
        },
        salary: 1250,
        scratch: None,
    };
    let price = Price {
        shop: "Oslo".into(),
        grade: 'a',
        tier: 'é',
        from: chrono::NaiveDate::MIN,
        rank: -1,
        label: "x".into(),
        note: "n".into(),
        until: None,
        holds: std::time::Duration::ZERO,
        amount: rust_decimal::Decimal::ONE,
        picture: bytes::Bytes::new(),
    };
    assert!(
        price.to_entity().is_err(),
        "a date before year 1 has no stored form"
    );
    assert!(Price::HOLDS
        .gt(std::time::Duration::ZERO)
        .to_odata()
        .contains("holds"));
    let row = e.to_entity()?;
    assert_eq!(e.index_copies(&row)?.len(), 3);
    assert_eq!(e.index_entries()?.len(), 1);
    assert_eq!(Employee::key("Sales", 223)?, e.entity_key()?);
    let _range = Employee::employee_id_range(100..200)?;
    let _filter = Employee::AGE.gt(30);
    assert_eq!(Employee::HIRED_AT.name(), "Hired");
    let union = SalesPartition::from_entity(row.clone())?;
    assert_eq!(union, SalesPartition::Employee(Employee::from_entity(row)?));
    let old = EmployeeV1 {
        department: "Sales".to_owned(),
        employee_id: 1,
    }
    .to_entity()?;
    assert_eq!(Employee::from_entity(old)?.employee_id, 1);
    let department = Department {
        name: "Sales".to_owned(),
        employee_count: 1,
    };
    assert_eq!(SalesPartition::from(department).kind(), Some("Department"));
    Ok(())
}
