use tables_client::Entity;

#[derive(Entity)]
#[entity(kind = "Employee", kind = "Staff")]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
pub struct Employee {
    pub department: String,
    pub employee_id: u32,
}

fn main() {}
