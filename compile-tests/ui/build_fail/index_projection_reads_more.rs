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
pub struct TicketBody {
    pub project: String,
    pub id: u32,
    pub body: String,
}

// The projection reads `body`, which the by_title copies don't carry.
fn main() {
    let tickets = TableServiceClient::in_memory().table::<Ticket>("Tickets");
    let partition = Ticket::by_title_partition("web").unwrap();
    let _ = tickets.query_index(partition.project::<TicketBody>());
}
