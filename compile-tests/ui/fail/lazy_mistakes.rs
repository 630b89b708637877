//! `lazy` keeps a blob field unfetched on reads: it needs `blob`, and its type is
//! `LazyBlob<T>`, so it takes no codec, no default and no spill.
use tables_client::blob::LazyBlob;
use tables_client::Entity;

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "{id}")]
struct WithoutBlob {
    department: String,
    id: String,
    #[entity(lazy)]
    photo: LazyBlob<Vec<u8>>,
}

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "{id}")]
struct WithJson {
    department: String,
    id: String,
    #[entity(blob, lazy, json)]
    resume: LazyBlob<Vec<u8>>,
}

#[derive(Entity)]
#[entity(partition_key = "{department}", row_key = "{id}")]
struct WithSpill {
    department: String,
    id: String,
    #[entity(spill, lazy)]
    notes: LazyBlob<String>,
}

fn main() {}
