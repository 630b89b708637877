use tables_client::Entity;

// One mistake: `employe_id` in the row_key. The key builders, range helpers,
// index builders and columns still exist as meant, so the uses below add no
// "no function named .." errors.
#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "empid_{employe_id:06}")]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
pub struct Employee {
    pub department: String,
    pub employee_id: u32,
    pub email: String,
    pub age: i32,
}

fn main() {
    let _ = Employee::key("Sales", 7);
    let _ = Employee::row_key(7);
    let _ = Employee::employee_id_range(1..5);
    let _ = Employee::email_key("Sales", "a@b.c");
    let _ = Employee::AGE.gt(30);
    let _ = Employee::KIND;
}
