use tables_client::Entity;

// One mistake: `tags` has no key form. It is used in two templates and reported
// once.
#[derive(Entity)]
#[entity(partition_key = "p", row_key = "item_{tags}")]
#[entity(index_entity(name = "by_tag", row_key = "tag_{tags}"))]
pub struct Tagged {
    pub tags: Vec<String>,
}

fn main() {
    let _ = Tagged::key(vec![]);
}
