use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id}")]
pub struct Employee {
    pub department: String,
    pub employee_id: u32,
}

fn main() {}
