use rust_decimal::Decimal;
use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{sku}", row_key = "price")]
pub struct Price {
    pub sku: String,
    pub amount: Decimal,
}

// Decimals are stored as exact text, which the service compares as text.
fn main() {
    let _ = Price::AMOUNT.gt(Decimal::ONE);
}
