use tables_client::{DateTime, Entity};

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "{submitted}")]
pub struct Employee {
    pub department: String,
    pub submitted: DateTime,
}

fn main() {}
