use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06")]
pub struct Employee {
    pub department: String,
    pub employee_id: u32,
}

// The builders exist as meant: using them adds no error.
fn main() {
    let _ = Employee::key("Sales", 7);
    let _ = Employee::employee_id_range(1..5);
}
