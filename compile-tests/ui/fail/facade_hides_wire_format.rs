// The facade does not export the wire codec or the client's internal model
// helpers: they are `tables-core`'s, for engines.
use tables_client::model::check_writer;
use tables_client::odata::decode_entity;

fn main() {}
