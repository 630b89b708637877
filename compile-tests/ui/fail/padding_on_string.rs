use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department:06}", row_key = "empid_{employee_id:06}")]
pub struct Employee {
    pub department: String,
    pub employee_id: u32,
}

fn main() {}
