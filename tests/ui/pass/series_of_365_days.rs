// The guide's 365 daily counts need more properties than one row holds: the type is
// wide without saying so (its entities span two rows; tests/tests/typed_wide.rs).
use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{page}", row_key = "{year:04}")]
pub struct DailyCounts {
    pub page: String,
    pub year: u16,
    #[entity(series)]
    pub daily: [u32; 365],
}

fn main() {
    const _: () = assert!(<DailyCounts as tables_client::model::Row>::WIDE);
}
