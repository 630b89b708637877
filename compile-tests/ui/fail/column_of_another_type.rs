use tables_client::{Entity, TableServiceClient};

#[derive(Entity, Debug, Clone)]
#[entity(partition_key = "{customer}", row_key = "{id}")]
pub struct Order {
    pub customer: String,
    pub id: String,
    pub status: String,
}

#[derive(Entity, Debug, Clone)]
#[entity(partition_key = "{order}", row_key = "{at:ticks}")]
pub struct StatusChange {
    pub order: String,
    pub at: tables_client::DateTime,
    pub to: String,
}

// A column of StatusChange can't filter the rows of a Table<Order>.
fn main() {
    let service = TableServiceClient::in_memory();
    let orders = service.table::<Order>("Orders");
    let _ = orders.query().filter(StatusChange::TO.eq("open"));
}
