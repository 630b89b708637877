use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
#[entity(unique_index(name = "by_address", row_key = "addr_{address}"))]
pub struct Employee {
    pub department: String,
    pub employee_id: u32,
    #[entity(json)]
    pub address: Vec<String>,
}

fn main() {}
