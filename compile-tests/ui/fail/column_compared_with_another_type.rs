use tables_client::Entity;

#[derive(Entity, Debug, Clone)]
#[entity(partition_key = "{customer}", row_key = "{id}")]
pub struct Order {
    pub customer: String,
    pub id: String,
    pub total: f64,
}

// An f64 column compares with an f64: `100.0`, not `100`.
fn main() {
    let _ = Order::TOTAL.gt(100);
}
