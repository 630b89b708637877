use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
#[entity(index_entity(name = "last_name", row_key = "lastname_{last_name}", unique))]
pub struct Employee {
    pub department: String,
    pub employee_id: u32,
    pub last_name: String,
}

fn main() {}
