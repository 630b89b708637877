use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "p", row_key = "{grade:signed}")]
pub struct Mark {
    pub grade: char,
}

fn main() {}
