use tables_client::Entity;

// A version needs the default tag (EntityVersion), a RowKey prefix needs literal
// text at the start of the RowKey template.
#[derive(Entity)]
#[entity(tag(row_key_prefix), version = 2)]
#[entity(partition_key = "{department}", row_key = "{employee_id:06}")]
pub struct Employee {
    pub department: String,
    pub employee_id: u32,
}

// The tag's property can't also be a field.
#[derive(Entity)]
#[entity(tag(property = "Type", value = 3))]
#[entity(partition_key = "{department}", row_key = "DEPARTMENT")]
pub struct Department {
    pub department: String,
    #[entity(rename = "Type")]
    pub label: String,
}

// One form at a time.
#[derive(Entity)]
#[entity(tag(property = "Type", row_key_prefix))]
#[entity(partition_key = "{department}", row_key = "X")]
pub struct Both {
    pub department: String,
}

fn main() {}
