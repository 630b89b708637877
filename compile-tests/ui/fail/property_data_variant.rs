use tables_client::Property;

#[derive(Property)]
pub enum Status {
    Active,
    OnLeave(u32),
}

fn main() {}
