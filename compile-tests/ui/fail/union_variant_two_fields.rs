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

#[derive(EntityUnion)]
pub enum SalesPartition {
    Department(Department),
    Employee(Employee, Department),
}

fn main() {
    let _ = DynamicEntity::new("p", "r");
}
