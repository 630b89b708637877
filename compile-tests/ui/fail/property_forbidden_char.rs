use tables_client::Property;

#[derive(Property)]
pub enum Status {
    Active,
    #[entity(rename = "on/leave")]
    OnLeave,
}

fn main() {}
