use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department}")]
pub struct Employee {
    pub department: String,
    pub employee_id: u32,
}

fn main() {}
