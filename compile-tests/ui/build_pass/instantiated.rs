// The same index read as the build_fail cases, with a projection the copies carry:
// it builds, so their errors come from what they read, not from the call.
use tables_client::{Entity, TableServiceClient};

#[derive(Entity, Debug, Clone)]
#[entity(kind = "Ticket", partition_key = "{project}", row_key = "t{id:05}")]
#[entity(unique_index(name = "by_title", table = "TicketTitles",
                      partition_key = "{project}", row_key = "{title}", include(title)))]
pub struct Ticket {
    pub project: String,
    pub id: u32,
    pub title: String,
    pub body: String,
}

#[derive(Entity, Debug, Clone)]
#[entity(kind = "Ticket", partition_key = "{project}", row_key = "t{id:05}")]
pub struct TicketTitle {
    pub project: String,
    pub id: u32,
    pub title: String,
}

fn main() {
    let tickets = TableServiceClient::in_memory().table::<Ticket>("Tickets");
    let partition = Ticket::by_title_partition("web").unwrap();
    let _ = tickets.query_index(partition.project::<TicketTitle>());
}
