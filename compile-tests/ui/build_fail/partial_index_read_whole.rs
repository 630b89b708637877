use tables_client::{Entity, TableServiceClient};

#[derive(Entity, Debug, Clone)]
#[entity(partition_key = "{project}", row_key = "t{id:05}")]
#[entity(unique_index(name = "by_title", table = "TicketTitles",
                      partition_key = "{project}", row_key = "{title}", include(title)))]
pub struct Ticket {
    pub project: String,
    pub id: u32,
    pub title: String,
    pub body: String,
}

// The by_title copies carry only the title: they can't be read as whole tickets.
fn main() {
    let tickets = TableServiceClient::in_memory().table::<Ticket>("Tickets");
    let _ = tickets.query_index(Ticket::by_title_partition("web").unwrap());
}
