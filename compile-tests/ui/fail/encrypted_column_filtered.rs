use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "{id}")]
pub struct Employee {
    pub department: String,
    pub id: String,
    #[entity(encrypted)]
    pub ssn: String,
}

fn main() {
    let _ = Employee::SSN.eq("123-45-6789");
}
