use tables_client::{DynamicEntity, Entity, EntityUnion};

#[derive(Entity)]
#[entity(partition_key = "{name}", row_key = "department")]
pub struct Department {
    pub name: String,
}

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
pub struct Employee {
    pub department: String,
    pub employee_id: u32,
}

#[derive(Entity)]
#[entity(
    kind = "Employee",
    partition_key = "{department}",
    row_key = "boss_{employee_id:06}"
)]
pub struct Boss {
    pub department: String,
    pub employee_id: u32,
}

#[derive(EntityUnion)]
pub enum SalesPartition {
    Department(Department),
    Employee(Employee),
    Boss(Boss),
}

fn main() {
    let _ = DynamicEntity::new("p", "r");
}
