use std::collections::BTreeMap;

use tables_client::{Entity, Property, Value};

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "x")]
pub struct Employee {
    pub department: String,
    #[entity(other_properties, rename = "Rest")]
    pub other: BTreeMap<String, Value>,
    #[entity(other_properties)]
    pub more: BTreeMap<String, Value>,
}

// Int enums take integer literal discriminants and no renames.
#[derive(Property)]
#[entity(int, rename_all = "snake_case")]
pub enum Role {
    Staff,
    Manager = 1 + 1,
}

fn main() {}
