use tables_client::Entity;

// Two employees with one email would write one copy and overwrite each other's.
#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
#[entity(index(name = "email", row_key = "email_{email}"))]
pub struct Employee {
    pub department: String,
    pub employee_id: u32,
    pub email: String,
}

fn main() {}
