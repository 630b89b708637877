use tables_client::Property;

#[derive(Property)]
pub enum Status {
    Active,
    #[entity(rename = "Active")]
    Enabled,
}

fn main() {}
