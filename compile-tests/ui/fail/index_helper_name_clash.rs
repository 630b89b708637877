use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
#[entity(unique_index(
    name = "partition",
    table = "ByEmail",
    partition_key = "{email}",
    row_key = "e"
))]
pub struct Employee {
    pub department: String,
    pub employee_id: u32,
    pub email: String,
}

fn main() {}
