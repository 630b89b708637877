//! Rows written by the official Azure Tables JS SDK (pinned in `tools/js-sdk`) on the
//! run's Azurite are read, updated and written back through derived types, and the
//! JS SDK then reads every column it wrote, with its type, plus the changes, and
//! nothing the typed layer would add. Skipped loudly without Azurite or node (a
//! failure under `CI=true`).

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value as Json;
use tables_client::{DateTime, Entity, EntityUnion, IfMatch, Property, TableServiceClient, Value};
use tables_tests::azurite::{connection_string, url_or_skip};

#[derive(Property, Debug, Clone, Copy, PartialEq, Eq)]
#[entity(int)]
pub enum Role {
    Staff,
    Manager,
    Director,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Employee", tag(row_key_prefix), rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "EMPLOYEE_{employee_id:06}")]
pub struct Employee {
    pub department: String,
    pub employee_id: u32,
    pub first_name: String,
    pub age: i32,
    pub role: Role,
    pub hire_date: DateTime,
    pub salary: i64,
    pub active: bool,
    #[entity(other_properties)]
    pub other: BTreeMap<String, Value>,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Department", tag(property = "Type", value = "Department"))]
#[entity(rename_all = "PascalCase")]
#[entity(partition_key = "{name}", row_key = "DEPARTMENT")]
pub struct Department {
    pub name: String,
    pub budget: f64,
    pub employee_count: i32,
    #[entity(other_properties)]
    pub other: BTreeMap<String, Value>,
}

#[derive(EntityUnion, Debug, Clone, PartialEq)]
pub enum Sales {
    Employee(Employee),
    Department(Department),
}

fn js(tool: &PathBuf, command: &str, connection: &str, table: &str) -> String {
    let out = Command::new("node")
        .arg(tool)
        .args([command, connection, table])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "node seed.mjs {command} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The JS SDK's view of the row at `rk`: property name to (EDM type, value).
fn js_row(read: &str, rk: &str) -> BTreeMap<String, (String, String)> {
    let rows: Json = serde_json::from_str(read).unwrap();
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["rowKey"] == rk)
        .unwrap();
    row["properties"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, typed)| {
            let edm = typed["type"].as_str().unwrap().to_owned();
            let value = match &typed["value"] {
                // The same instant may be written with 3 or 7 fraction digits.
                Json::String(text) if edm == "DateTime" => {
                    text.parse::<DateTime>().unwrap().to_string()
                }
                Json::String(text) => text.clone(),
                other => other.to_string(),
            };
            (name.clone(), (edm, value))
        })
        .collect()
}

#[tokio::test]
async fn rows_the_js_sdk_wrote_survive_a_typed_read_modify_write() {
    let Some(url) =
        url_or_skip("js_sdk_interop::rows_the_js_sdk_wrote_survive_a_typed_read_modify_write")
    else {
        return;
    };
    let Some(tool) = tables_tests::js_sdk::script_or_skip("js_sdk_interop", "seed.mjs") else {
        return;
    };
    let connection = connection_string(&url);
    let table = format!("JsSdk{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    js(&tool, "write", &connection, &table);
    let before = js(&tool, "read", &connection, &table);

    let service = TableServiceClient::from_connection_string(&connection).unwrap();
    let partition: Vec<Sales> = service
        .table::<Sales>(&table)
        .query()
        .partition("Sales")
        .collect()
        .await
        .unwrap();
    assert_eq!(partition.len(), 3);
    let Sales::Department(sales) = &partition[0] else {
        panic!("the department row is first: {partition:?}")
    };
    assert_eq!(sales.budget, 1_250_000.5);
    assert_eq!(
        sales.other.get("FloorPlan"),
        Some(&Value::Binary(vec![1, 2, 3, 4]))
    );

    // Ann: promoted under the ETag read; Bob: upserted unchanged.
    let employees = service.table::<Employee>(&table);
    let read = employees
        .get(Employee::key("Sales", 100).unwrap())
        .await
        .unwrap()
        .unwrap();
    let mut ann = read.value;
    assert_eq!(ann.role, Role::Manager);
    assert_eq!(ann.salary, 95_000);
    ann.role = Role::Director;
    ann.age += 1;
    employees
        .replace(&ann, IfMatch::Etag(read.etag))
        .await
        .unwrap();
    let bob = employees
        .get(Employee::key("Sales", 150).unwrap())
        .await
        .unwrap()
        .unwrap()
        .value;
    employees.upsert(&bob).await.unwrap();

    let after = js(&tool, "read", &connection, &table);
    let mut expected = js_row(&before, "EMPLOYEE_000100");
    expected.insert("Role".into(), ("Int32".into(), "2".into()));
    expected.insert("Age".into(), ("Int32".into(), "35".into()));
    assert_eq!(js_row(&after, "EMPLOYEE_000100"), expected);
    assert_eq!(
        js_row(&after, "EMPLOYEE_000150"),
        js_row(&before, "EMPLOYEE_000150"),
        "an unchanged write-back changes nothing the JS SDK sees"
    );
    service.delete_table(&table).await.unwrap();
}
