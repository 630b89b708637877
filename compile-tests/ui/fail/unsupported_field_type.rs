use tables_client::{Entity, Property, Row};

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
pub struct Employee {
    pub department: String,
    pub employee_id: u32,
    pub age: i32,
    pub tags: Vec<String>,
}

// Uses of the type add no errors to the one about `tags`.
fn main() {
    let key = Employee::key("Sales", 7);
    let _ = Employee::employee_id_range(1..5);
    let _ = Employee::AGE.gt(30);
    let _ = 7u32.to_value();
    let _ = key.and_then(|_| Employee::from_entity(tables_client::DynamicEntity::new("Sales", "empid_000007")));
}
