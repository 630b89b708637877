use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
pub struct Employee<T> {
    pub department: String,
    pub employee_id: u32,
    pub extra: T,
}

fn main() {}
