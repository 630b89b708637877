// A key of one type can't read, delete or look up rows of another.
use tables_client::{Entity, IfMatch, Table};

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "empid_{id:06}")]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
pub struct Employee {
    pub department: String,
    pub id: u32,
    pub email: String,
}

#[derive(Entity)]
#[entity(partition_key = "{name}", row_key = "department")]
#[entity(unique_index(name = "by_manager", row_key = "manager_{manager}"))]
pub struct Department {
    pub name: String,
    pub manager: String,
}

async fn mistakes(employees: Table<Employee>) -> tables_client::Result<()> {
    employees.get(Department::key("Sales")?).await?;
    employees.delete(Department::key("Sales")?, IfMatch::Any).await?;
    employees.get_by_index(Department::by_manager_key("Sales", "Ann")?).await?;
    Ok(())
}

fn main() {
    let _ = mistakes;
}
