//! The guide's 365 daily counts need more properties than one row holds: the type is
//! wide without saying so (its entities span two rows; tests/tests/typed_wide.rs).
use tables_client::Entity;

/// A page's visits, one count a day.
#[derive(Entity, Debug)]
#[entity(partition_key = "{page}", row_key = "{year:04}")]
pub struct DailyCounts {
    /// The page.
    pub page: String,
    /// The year.
    pub year: u16,
    /// The counts, 1 January first.
    #[entity(series)]
    pub daily: [u32; 365],
}

fn main() {
    const _: () = assert!(<DailyCounts as tables_client::model::Row>::WIDE);
}
