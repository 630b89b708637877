// A plain `EntityKey` (or an index row's key) is not a key of an entity: typed
// calls take the derive's keys, or a key declared with `Key::from_entity_key`.
use tables_client::{Entity, EntityKey, Table};

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "empid_{id:06}")]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
pub struct Employee {
    pub department: String,
    pub id: u32,
    pub email: String,
}

async fn mistakes(employees: Table<Employee>) -> tables_client::Result<()> {
    employees.get(EntityKey::new("Sales", "empid_000007")).await?;
    employees.get(Employee::email_key("Sales", "ann@x.com")?).await?;
    Ok(())
}

fn main() {
    let _ = mistakes;
}
