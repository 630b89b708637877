use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "{salary}")]
pub struct Employee {
    pub department: String,
    pub salary: f64,
}

fn main() {}
