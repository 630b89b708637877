use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "{employee_id:06}")]
#[entity(unique_index(name = "email", row_key = "{email}"))]
pub struct Employee {
    pub department: String,
    pub employee_id: u32,
    pub email: String,
}

fn main() {}
