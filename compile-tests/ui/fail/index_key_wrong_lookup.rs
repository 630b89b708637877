// A copy index is looked up with `get_by_index`, an index entity with
// `get_all_by_index`: the key knows which it is.
use tables_client::{Entity, Table};

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "empid_{id:06}")]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
#[entity(index_entity(name = "last_name", row_key = "lastname_{last_name}"))]
pub struct Employee {
    pub department: String,
    pub id: u32,
    pub email: String,
    pub last_name: String,
}

async fn mistakes(employees: Table<Employee>) -> tables_client::Result<()> {
    employees.get_by_index(Employee::last_name_key("Sales", "Jones")?).await?;
    employees.get_all_by_index(Employee::email_key("Sales", "ann@x.com")?).await?;
    Ok(())
}

fn main() {
    let _ = mistakes;
}
