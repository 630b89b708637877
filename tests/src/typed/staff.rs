//! The staff entities of the typed index tests: an employee with every kind of
//! index, a clerk indexed only in its own partition, and a department with no
//! index; their tables, and values to write.

use tables_client::{Entity, Result, TableServiceClient};

/// The table of the primaries.
pub const STAFF: &str = "Staff";
/// The table of the partial `by_email` copies.
pub const BY_EMAIL: &str = "EmployeesByEmail";
/// The table of the `by_city` index entities.
pub const BY_CITY: &str = "EmployeesByCity";

/// An employee with every kind of index:
/// - `email`: a full copy in the primary's partition (same EGT);
/// - `by_email`: a partial copy in another table (eventual);
/// - `by_badge`: a full copy in another partition of the same table (eventual);
/// - `last_name`: an index entity in the primary's partition (same EGT);
/// - `by_city`: an index entity in another table (eventual).
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Employee", rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
#[entity(unique_index(
    name = "by_email",
    table = "EmployeesByEmail",
    partition_key = "email_{department}",
    row_key = "{email}",
    include(first_name, last_name)
))]
#[entity(unique_index(name = "by_badge", partition_key = "badges", row_key = "badge_{badge}"))]
#[entity(index_entity(name = "last_name", row_key = "lastname_{last_name}"))]
#[entity(index_entity(
    name = "by_city",
    table = "EmployeesByCity",
    partition_key = "{city}",
    row_key = "members"
))]
pub struct Employee {
    /// The PartitionKey.
    pub department: String,
    /// The RowKey, `empid_` and six digits.
    pub employee_id: u32,
    /// Copied into `by_email`.
    pub first_name: String,
    /// Copied into `by_email`; the `last_name` index entity's key.
    pub last_name: String,
    /// The `email` and `by_email` copies' key.
    pub email: String,
    /// The `by_badge` copy's key.
    pub badge: String,
    /// The `by_city` index entity's PartitionKey.
    pub city: String,
    /// Not indexed.
    pub age: i32,
    /// Not indexed; absent when `None`.
    pub nickname: Option<String>,
}

/// An employee indexed only in its own partition: every write is one EGT.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Clerk", rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "clerk_{id:06}")]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
#[entity(unique_index(name = "desk", row_key = "desk_{desk}"))]
#[entity(index_entity(name = "team", row_key = "team_{team}"))]
pub struct Clerk {
    /// The PartitionKey.
    pub department: String,
    /// The RowKey, `clerk_` and six digits.
    pub id: u32,
    /// The `email` copy's key.
    pub email: String,
    /// The `desk` copy's key.
    pub desk: String,
    /// The `team` index entity's key.
    pub team: String,
}

/// No index at all.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Department", rename_all = "PascalCase")]
#[entity(partition_key = "{name}", row_key = "department")]
pub struct Department {
    /// The PartitionKey (the RowKey is `department`).
    pub name: String,
    /// Not indexed.
    pub employee_count: i32,
}

/// An employee numbered `id`, with indexed values derived from `version`
/// (unique per employee, so copy indexes never collide).
pub fn employee(department: &str, id: u32, version: u32) -> Employee {
    Employee {
        department: department.into(),
        employee_id: id,
        first_name: format!("First{id}"),
        last_name: ["Jones", "Smith", "Lee"][(version % 3) as usize].into(),
        email: format!("e{id}v{version}@contoso.com"),
        badge: format!("b{id}v{version}"),
        city: ["Oslo", "Rome"][(version % 2) as usize].into(),
        age: 30 + (version % 20) as i32,
        nickname: (version % 2 != 1).then(|| format!("nick{version}")),
    }
}

/// Creates the primary table and every index table.
pub async fn create_tables(service: &TableServiceClient) -> Result<()> {
    service
        .table::<Employee>(STAFF)
        .create_if_not_exists()
        .await?;
    Ok(())
}

/// An item with a tag, and an index entity listing the items of each tag: for
/// member lists that outgrow one property (and one entity).
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Tagged", partition_key = "{group}", row_key = "item_{name}")]
#[entity(index_entity(name = "by_tag", row_key = "tag_{tag}"))]
pub struct Tagged {
    /// The partition.
    pub group: String,
    /// The item's name, in its RowKey.
    pub name: String,
    /// The tag the index entity lists it under.
    pub tag: String,
}
