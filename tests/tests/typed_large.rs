//! Large entities (`#[entity(blob)]`, `TableServiceClient::with_blob_store`): a
//! field's value kept in a blob, the row holding its reference; on every engine of
//! the typed matrix with its blob store (the mem store, or Azurite's blob service),
//! and a crash matrix: a fault at each step of a write (upload, the row's write, the
//! old blob's delete, with lost answers) never leaves a row pointing at a missing
//! blob, and sweeping leaves exactly the blobs rows refer to.

#![allow(clippy::unwrap_used)] // tests

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use tables_client::blob::{BlobStore, LazyBlob, ListBlobsOptions};
use tables_client::mem::{CallKind, Fault, FaultInjector};
use tables_client::{
    Engine, Entity, ErrorKind, IfMatch, Origin, Result, Row, TableServiceClient, Value, WriteOp,
};
use tables_tests::read::{all_rows, get};
use tables_tests::typed::{check, Backend, Tagged};

/// An employee with a photo: far more than a property holds.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Employee", partition_key = "{department}", row_key = "e_{id}")]
struct Employee {
    department: String,
    id: String,
    name: String,
    #[entity(blob)]
    photo: Vec<u8>,
    #[entity(blob, json)]
    resume: Option<Vec<String>>,
}

const TABLE: &str = "Staff";

fn employee(id: &str, seed: u8) -> Employee {
    Employee {
        department: "hr".to_owned(),
        id: id.to_owned(),
        name: format!("employee {id}"),
        photo: (0..200_000u32)
            .map(|i| (i as u8).wrapping_add(seed))
            .collect(),
        resume: Some(vec![format!("job {seed}"); 3]),
    }
}

async fn blob_names(store: &dyn BlobStore, container: &str) -> BTreeSet<String> {
    let page = store
        .list_blobs(container, &ListBlobsOptions::default())
        .await
        .unwrap();
    page.blobs.into_iter().map(|b| b.name).collect()
}

/// The names every row of the table refers to.
async fn referenced(engine: &dyn Engine) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for row in all_rows(engine, TABLE).await.unwrap() {
        for (_, value) in row.properties() {
            if let Value::Binary(bytes) = value {
                if let Some(json) = bytes.strip_prefix(&b"\0tblref1"[..]) {
                    let reference: serde_json::Value = serde_json::from_slice(json).unwrap();
                    names.insert(reference["n"].as_str().unwrap().to_owned());
                }
            }
        }
    }
    names
}

/// A document whose body reads leave in its blob.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Document", partition_key = "{folder}", row_key = "d_{id}")]
struct Document {
    folder: String,
    id: String,
    title: String,
    #[entity(blob, lazy)]
    body: LazyBlob<Vec<u8>>,
}

fn document(id: &str, seed: u8) -> Document {
    Document {
        folder: "f".to_owned(),
        id: id.to_owned(),
        title: format!("document {id}"),
        body: LazyBlob::new((0..150_000u32).map(|i| (i as u8) ^ seed).collect()),
    }
}

/// A lazy blob field: reads and queries give a handle (with the blob's size), the
/// value is fetched on demand; writing the entity back with the handle untouched
/// keeps the blob (nothing uploaded); a handle written into another entity
/// becomes a copy of its own; a new value replaces the blob.
async fn lazy_blob_fields_are_fetched_on_demand(backend: Backend) -> Result<()> {
    let Some((store, container)) = backend.blob_store("typed_large::lazy").await else {
        return Ok(());
    };
    let plain = backend.service();
    plain.create_table("Docs").await?;
    let service = plain
        .clone()
        .with_blob_store(store.clone(), container.clone());
    let docs = service.table::<Document>("Docs");
    let first = document("1", 1);
    let content = first.body.value().unwrap().clone();
    docs.insert(&first).await?;

    let read = docs.get(Document::key("f", "1")?).await?.unwrap().value;
    assert_eq!(read.body.value(), None, "not fetched");
    assert_eq!(read.body.stored_size(), Some(150_000));
    assert_eq!(read.body.fetch(store.as_ref()).await?, content);
    let names = blob_names(store.as_ref(), &container).await;
    assert_eq!(names.len(), 1);

    // The handle written back untouched: the same blob, nothing uploaded.
    let retitled = Document {
        title: "renamed".into(),
        ..read.clone()
    };
    docs.upsert(&retitled).await?;
    assert_eq!(blob_names(store.as_ref(), &container).await, names);
    let again = docs.get(Document::key("f", "1")?).await?.unwrap().value;
    assert_eq!(again.title, "renamed");
    assert_eq!(again.body.fetch(store.as_ref()).await?, content);

    // The handle in another entity: a copy of its own.
    let copy = Document {
        id: "2".into(),
        ..again.clone()
    };
    docs.insert(&copy).await?;
    assert_eq!(blob_names(store.as_ref(), &container).await.len(), 2);
    docs.delete(Document::key("f", "1")?, IfMatch::Any).await?;
    let second = docs.get(Document::key("f", "2")?).await?.unwrap().value;
    assert_eq!(second.body.fetch(store.as_ref()).await?, content);

    // Queries give handles too.
    docs.insert(&document("3", 3)).await?;
    let all = docs.query().collect().await?;
    assert_eq!(all.len(), 2);
    assert!(all.iter().all(|d| d.body.value().is_none()));

    // A new value replaces the blob.
    let replaced = Document {
        body: LazyBlob::new(vec![9; 70_000]),
        ..second
    };
    docs.upsert(&replaced).await?;
    let read = docs.get(Document::key("f", "2")?).await?.unwrap().value;
    assert_eq!(read.body.fetch(store.as_ref()).await?, vec![9; 70_000]);
    assert_eq!(
        blob_names(store.as_ref(), &container).await.len(),
        2,
        "2 and 3"
    );

    docs.delete(Document::key("f", "2")?, IfMatch::Any).await?;
    docs.delete(Document::key("f", "3")?, IfMatch::Any).await?;
    assert!(blob_names(store.as_ref(), &container).await.is_empty());
    store.delete_container(&container).await
}

fn tagged(i: usize) -> Tagged {
    Tagged {
        group: "g".into(),
        name: format!("{i:04}{}", "x".repeat(490)),
        tag: "hot".into(),
    }
}

/// Whether the table holds no row at all (nothing was half-written).
async fn tag_rows_absent(engine: &dyn Engine) -> bool {
    tables_tests::read::all_rows(engine, "BigTags")
        .await
        .unwrap()
        .is_empty()
}

/// The index entity's row as stored (its `Members` a reference when in a blob).
async fn tag_row(engine: &dyn Engine) -> tables_client::DynamicEntity {
    get(engine, "BigTags", "g", "tag_hot")
        .await
        .unwrap()
        .unwrap()
}

/// Writes 1,050 `Tagged` primaries and their index entity, whose list is over
/// 1 MiB. 1,050 members of 499 characters: 1,004 bytes each in the list (UTF-16,
/// with quotes and comma), 1.05 MB, over the 1,040,384 one entity leaves for it.
/// The primaries are written past the client, and the index entity too, as the
/// upkeep writes it (through `service`'s blob layer, which uploads the list).
async fn seed_big_list(plain: &TableServiceClient, service: &TableServiceClient) -> Result<()> {
    let mut members = BTreeSet::new();
    for chunk in (0..1050).collect::<Vec<_>>().chunks(100) {
        let ops: Vec<WriteOp> = chunk
            .iter()
            .map(|&i| WriteOp::Insert(tagged(i).to_entity().unwrap()))
            .collect();
        for op in &ops {
            members.insert(op.key().row_key);
        }
        plain.engine().submit_batch("BigTags", &ops).await?;
    }
    let list = serde_json::to_string(&members).unwrap();
    let mut held = b"\0tables:inblob1\0\x01".to_vec();
    held.extend_from_slice(list.as_bytes());
    let entry = tables_client::DynamicEntity::new("g", "tag_hot")
        .with("EntityType", "Tagged#by_tag")
        .with("Members", Value::Binary(held));
    service
        .engine()
        .write("BigTags", &WriteOp::Insert(entry))
        .await?;
    Ok(())
}

/// A member list over what one entity holds (1 MiB) continues in a blob: the row
/// keeps a reference under the same ETag discipline, every member is listed, a
/// change writes a new blob and deletes the old one, and shrinking below 1 MiB
/// brings the list back into the row.
async fn index_lists_past_one_entity_live_in_a_blob(backend: Backend) -> Result<()> {
    let Some((store, container)) = backend.blob_store("typed_large::index").await else {
        return Ok(());
    };
    let plain = backend.service();
    plain.create_table("BigTags").await?;
    let service = plain
        .clone()
        .with_blob_store(store.clone(), container.clone());
    let tags = service.table::<Tagged>("BigTags");
    let row_key_bytes = Tagged::key("g", &tagged(0).name)?.row_key.len();
    if row_key_bytes > plain.engine().capabilities().max_row_key_bytes {
        // Cosmos DB for Table: RowKeys of at most 255 bytes, so the list this
        // scenario builds (1,050 members of about 500 bytes) can't be; the typed
        // write of such a member is refused before anything is sent, naming the
        // template.
        let err = tags.insert(&tagged(0)).await.unwrap_err();
        assert_eq!(err.kind(), tables_client::ErrorKind::InvalidKey, "{err}");
        assert_eq!(err.origin(), tables_client::Origin::Local, "{err}");
        assert!(err.to_string().contains("item_{name}"), "{err}");
        assert!(tag_rows_absent(plain.engine().as_ref()).await);
        return store.delete_container(&container).await;
    }
    seed_big_list(&plain, &service).await?;
    let raw = tag_row(plain.engine().as_ref()).await;
    assert!(
        matches!(raw.get("Members"), Some(Value::Binary(b)) if b.len() < 400),
        "the row holds a reference"
    );
    let read = tag_row(service.engine().as_ref()).await;
    assert_eq!(
        tables_client::model::index_entity_members(&read)?.len(),
        1050
    );
    check::<Tagged>(service.engine().as_ref(), "BigTags").await?;
    let first = blob_names(store.as_ref(), &container).await;
    assert_eq!(first.len(), 1);

    // One more member: a new blob, the old one gone.
    tags.insert(&tagged(1050)).await?;
    let second = blob_names(store.as_ref(), &container).await;
    assert_eq!(second.len(), 1);
    assert!(second.is_disjoint(&first));
    let read = tag_row(service.engine().as_ref()).await;
    assert_eq!(
        tables_client::model::index_entity_members(&read)?.len(),
        1051
    );

    // Below 1 MiB again (1,031 members): back in the row, no blob left.
    for i in 0..20 {
        tags.delete(tagged(i).entity_key()?, IfMatch::Any).await?;
    }
    let raw = tag_row(plain.engine().as_ref()).await;
    assert!(matches!(raw.get("Members"), Some(Value::String(_))));
    assert_eq!(
        tables_client::model::index_entity_members(&raw)?.len(),
        1031
    );
    assert!(blob_names(store.as_ref(), &container).await.is_empty());
    check::<Tagged>(service.engine().as_ref(), "BigTags").await?;

    // Past 1 MiB again (1,037 members), then a client without the blob store can't
    // read the list to change it: nothing written.
    for i in 0..6 {
        tags.insert(&tagged(i)).await?;
    }
    let err = plain
        .table::<Tagged>("BigTags")
        .insert(&tagged(1999))
        .await
        .unwrap_err();
    assert!(err.message().contains("blob store"), "{err}");
    assert!(plain
        .table::<Tagged>("BigTags")
        .get(tagged(1999).entity_key()?)
        .await?
        .is_none());
    store.delete_container(&container).await
}

/// Values round-trip; the row holds a reference, the blob the value; a replace
/// swaps the blob and deletes the old one; a delete deletes it; a projection
/// without the field fetches nothing.
async fn blob_fields_live_in_blobs(backend: Backend) -> Result<()> {
    let Some((store, container)) = backend.blob_store("typed_large::live").await else {
        return Ok(());
    };
    let plain = backend.service();
    plain.create_table(TABLE).await?;
    let service = plain
        .clone()
        .with_blob_store(store.clone(), container.clone());
    let staff = service.table::<Employee>(TABLE);
    let ann = employee("ann", 1);
    staff.insert(&ann).await?;
    assert_eq!(
        staff.get(Employee::key("hr", "ann")?).await?.unwrap().value,
        ann
    );

    let raw = get(plain.engine().as_ref(), TABLE, "hr", "e_ann")
        .await?
        .unwrap();
    let Some(Value::Binary(reference)) = raw.get("photo") else {
        panic!("no reference: {raw:?}")
    };
    assert!(
        reference.len() < 400,
        "the row holds a reference, not the photo"
    );
    let first = blob_names(store.as_ref(), &container).await;
    assert_eq!(first.len(), 2, "photo and resume");
    assert_eq!(first, referenced(plain.engine().as_ref()).await);

    let mut changed = employee("ann", 2);
    changed.resume = None;
    staff.upsert(&changed).await?;
    assert_eq!(
        staff.get(Employee::key("hr", "ann")?).await?.unwrap().value,
        changed
    );
    let second = blob_names(store.as_ref(), &container).await;
    assert_eq!(second.len(), 1, "the new photo only: {second:?}");
    assert!(second.is_disjoint(&first), "the old blobs are gone");

    staff.insert(&employee("bob", 3)).await?;
    let all = staff.query().collect().await?;
    assert_eq!(all.len(), 2);
    // A projection without the field: through the layer, no blob to fetch.
    let spec = tables_client::QuerySpec::default().select(["name"]);
    let mut projected = Vec::new();
    let mut token = None;
    loop {
        let page = service.engine().query(TABLE, &spec, token.as_ref()).await?;
        projected.extend(page.items);
        match page.continuation {
            Some(next) => token = Some(next),
            None => break,
        }
    }
    assert_eq!(projected.len(), 2);
    assert!(projected.iter().all(|row| row.get("photo").is_none()));

    staff
        .delete(Employee::key("hr", "ann")?, IfMatch::Any)
        .await?;
    staff
        .delete(Employee::key("hr", "bob")?, IfMatch::Any)
        .await?;
    assert!(
        blob_names(store.as_ref(), &container).await.is_empty(),
        "deletes take the blobs"
    );
    store.delete_container(&container).await
}

/// Without a blob store nothing is written, and a blob field can't be read.
async fn without_a_blob_store_nothing_is_written(backend: Backend) -> Result<()> {
    let Some((store, container)) = backend.blob_store("typed_large::without").await else {
        return Ok(());
    };
    let plain = backend.service();
    plain.create_table(TABLE).await?;
    let err = plain
        .table::<Employee>(TABLE)
        .insert(&employee("ann", 1))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert_eq!(err.origin(), Origin::Local);
    assert!(get(plain.engine().as_ref(), TABLE, "hr", "e_ann")
        .await?
        .is_none());
    plain
        .clone()
        .with_blob_store(store.clone(), container.clone())
        .table::<Employee>(TABLE)
        .insert(&employee("ann", 1))
        .await?;
    let err = plain
        .table::<Employee>(TABLE)
        .get(Employee::key("hr", "ann")?)
        .await
        .unwrap_err();
    assert!(err.message().contains("blob store"), "{err}");
    store.delete_container(&container).await
}

/// A note whose body stays in the row while it fits one property, and spills to a
/// blob when it doesn't.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Note", partition_key = "notes", row_key = "{id}")]
struct Note {
    id: String,
    #[entity(spill)]
    body: String,
}

const NOTES: &str = "Notes";

/// `spill`: a short body is a plain String property; a long one (past 64 KiB) a
/// blob; changing between the two writes the new form and removes the old blob.
async fn spilling_fields_stay_inline_while_they_fit(backend: Backend) -> Result<()> {
    let Some((store, container)) = backend.blob_store("typed_large::spill").await else {
        return Ok(());
    };
    let plain = backend.service();
    plain.create_table(NOTES).await?;
    let service = plain
        .clone()
        .with_blob_store(store.clone(), container.clone());
    let notes = service.table::<Note>(NOTES);
    let short = Note {
        id: "n".into(),
        body: "short".into(),
    };
    let long = Note {
        id: "n".into(),
        body: "é".repeat(40_000),
    }; // 80 KB as UTF-16
    let raw = || async {
        get(plain.engine().as_ref(), NOTES, "notes", "n")
            .await
            .unwrap()
            .unwrap()
    };

    notes.insert(&short).await?;
    assert_eq!(
        raw().await.get("body"),
        Some(&Value::from("short")),
        "inline"
    );
    assert!(blob_names(store.as_ref(), &container).await.is_empty());
    assert_eq!(notes.get(Note::key("n")?).await?.unwrap().value, short);

    notes.upsert(&long).await?;
    assert!(
        matches!(raw().await.get("body"), Some(Value::Binary(_))),
        "a reference"
    );
    assert_eq!(blob_names(store.as_ref(), &container).await.len(), 1);
    assert_eq!(notes.get(Note::key("n")?).await?.unwrap().value, long);

    notes.upsert(&short).await?;
    assert_eq!(
        raw().await.get("body"),
        Some(&Value::from("short")),
        "inline again"
    );
    assert!(
        blob_names(store.as_ref(), &container).await.is_empty(),
        "the blob went"
    );
    assert_eq!(notes.get(Note::key("n")?).await?.unwrap().value, short);
    store.delete_container(&container).await
}

tables_tests::typed_matrix!(
    index_lists_past_one_entity_live_in_a_blob,
    lazy_blob_fields_are_fetched_on_demand,
    spilling_fields_stay_inline_while_they_fit,
    blob_fields_live_in_blobs,
    without_a_blob_store_nothing_is_written,
);

/// How a crash-matrix write ended.
#[derive(Debug, Clone, Copy)]
enum Step {
    Insert,
    Replace,
    Delete,
}

/// A fresh mem engine and mem blob store behind fault injectors, a client with the
/// blob store over them, and the staff table (with ann, unless `step` inserts her).
async fn crash_rig(
    step: Step,
) -> (
    FaultInjector<tables_client::mem::MemEngine>,
    FaultInjector<tables_client::mem::MemBlobStore>,
    tables_client::Table<Employee>,
) {
    let engine = FaultInjector::new(tables_client::mem::MemEngine::new());
    let blobs = FaultInjector::new(tables_client::mem::MemBlobStore::new());
    blobs.create_container("photos").await.unwrap();
    let service =
        TableServiceClient::new(engine.clone()).with_blob_store(Arc::new(blobs.clone()), "photos");
    service.create_table(TABLE).await.unwrap();
    let staff = service.table::<Employee>(TABLE);
    if !matches!(step, Step::Insert) {
        staff.insert(&employee("ann", 1)).await.unwrap();
    }
    (engine, blobs, staff)
}

async fn run_step(staff: &tables_client::Table<Employee>, step: Step) -> Result<()> {
    let key = Employee::key("hr", "ann").unwrap();
    match step {
        Step::Insert => staff.insert(&employee("ann", 2)).await.map(|_| ()),
        Step::Replace => staff.upsert(&employee("ann", 2)).await.map(|_| ()),
        Step::Delete => staff.delete(&key, IfMatch::Any).await.map(|_| ()),
    }
}

/// How long a crash-matrix write may take before the test drops it as crashed.
const CRASH_AFTER: Duration = Duration::from_millis(300);

/// The blob layer's intent rows left in the table.
async fn intent_rows(engine: &dyn Engine) -> usize {
    all_rows(engine, TABLE)
        .await
        .unwrap()
        .iter()
        .filter(|row| row.get("EntityType") == Some(&Value::String("$blobs".into())))
        .count()
}

/// The crash matrix, on the mem engine and mem blob store (both behind fault
/// injectors): an insert, a replace and a delete, with a fault at *every* call
/// the write makes, to the table or to the blob store, of each kind (refused,
/// answer lost after applying, in doubt before reaching the store, and the writer
/// crashing there, its call never made and nothing after it done). Then: the row
/// reads back whole (the old value or the new, never a mix or a missing blob); a
/// success wrote the new value and an error that says the write did not apply
/// changed nothing; every blob a row refers to exists; and `reconcile()` leaves
/// exactly those blobs and no intent row.
#[tokio::test]
async fn crash_matrix_never_leaves_a_row_without_its_blob() {
    type MakeFault = fn() -> Fault;
    let kinds: Vec<(&str, MakeFault)> = vec![
        ("refused", || Fault::fail(ErrorKind::Server)),
        ("lost", || Fault::fail_after_applying(ErrorKind::Timeout)),
        ("in doubt", || Fault::fail_in_doubt(ErrorKind::Timeout)),
        // The call never returns: the writer crashes there (the test drops it).
        ("crash", || Fault::delay(Duration::from_secs(3600))),
    ];
    let mut cases = 0;
    for step in [Step::Insert, Step::Replace, Step::Delete] {
        // How many calls the write makes to each store when nothing fails.
        let (engine, blobs, staff) = crash_rig(step).await;
        let (table_calls, blob_calls) = (engine.faults().calls(), blobs.faults().calls());
        run_step(&staff, step).await.unwrap();
        let table_calls = engine.faults().calls() - table_calls;
        let blob_calls = blobs.faults().calls() - blob_calls;
        assert!(
            table_calls >= 3,
            "{step:?}: read, intent and commit ({table_calls})"
        );
        for on_blobs in [false, true] {
            let calls = if on_blobs { blob_calls } else { table_calls };
            for n in 1..=calls {
                for (kind, fault) in &kinds {
                    cases += 1;
                    let store = if on_blobs { "blob store" } else { "table" };
                    let case = format!("{step:?}, {store} call {n} {kind}");
                    let (engine, blobs, staff) = crash_rig(step).await;
                    if on_blobs {
                        blobs.faults().inject(fault().nth(n));
                    } else {
                        engine.faults().inject(fault().nth(n));
                    }
                    let outcome =
                        match tokio::time::timeout(CRASH_AFTER, run_step(&staff, step)).await {
                            Ok(outcome) => outcome,
                            // The writer stopped there: its future dropped, as by a crash.
                            Err(_) => Err(tables_client::Error::new(ErrorKind::Timeout, "crashed")
                                .with_may_have_applied()),
                        };
                    engine.faults().clear();
                    blobs.faults().clear();
                    check_after_crash(&case, step, &outcome, &engine, &blobs, &staff).await;
                }
            }
        }
    }
    eprintln!("{cases} crash cases");
    assert!(cases >= 50, "{cases} cases");
}

async fn check_after_crash(
    case: &str,
    step: Step,
    outcome: &Result<()>,
    engine: &FaultInjector<tables_client::mem::MemEngine>,
    blobs: &FaultInjector<tables_client::mem::MemBlobStore>,
    staff: &tables_client::Table<Employee>,
) {
    let key = Employee::key("hr", "ann").unwrap();
    let got = staff
        .get(&key)
        .await
        .unwrap_or_else(|e| panic!("{case}: the row does not read: {e}"))
        .map(|v| v.value);
    let (old, new) = match step {
        Step::Insert => (None, Some(employee("ann", 2))),
        Step::Replace => (Some(employee("ann", 1)), Some(employee("ann", 2))),
        Step::Delete => (Some(employee("ann", 1)), None),
    };
    match outcome {
        Ok(()) => assert_eq!(got, new, "{case}: the write succeeded"),
        Err(e) if !e.may_have_applied() => {
            assert_eq!(got, old, "{case}: the write said it did not apply: {e}")
        }
        Err(_) => assert!(got == old || got == new, "{case}: a mixed or damaged value"),
    }
    let refs = referenced(engine).await;
    let stored = blob_names(blobs, "photos").await;
    assert!(
        refs.is_subset(&stored),
        "{case}: a row points at a missing blob"
    );
    let report = staff
        .reconcile()
        .await
        .unwrap_or_else(|e| panic!("{case}: reconcile failed: {e}"));
    assert_eq!(
        blob_names(blobs, "photos").await,
        refs,
        "{case}: after reconcile ({report})"
    );
    assert_eq!(
        intent_rows(engine).await,
        0,
        "{case}: an intent row is left"
    );
    assert_eq!(
        staff.get(&key).await.unwrap().map(|v| v.value),
        got,
        "{case}: reconcile changed the row"
    );
}

/// A blob changed behind the client's back is reported, not read as the value.
#[tokio::test]
async fn a_blob_changed_outside_the_client_is_an_error() {
    let blobs = Arc::new(tables_client::mem::MemBlobStore::new());
    blobs.create_container("photos").await.unwrap();
    let service = TableServiceClient::in_memory().with_blob_store(blobs.clone(), "photos");
    service.create_table(TABLE).await.unwrap();
    let staff = service.table::<Employee>(TABLE);
    staff.insert(&employee("ann", 1)).await.unwrap();
    let name = blob_names(blobs.as_ref(), "photos")
        .await
        .into_iter()
        .next()
        .unwrap();
    blobs
        .put_blob(
            "photos",
            &name,
            vec![1, 2, 3],
            &tables_client::blob::BlobCondition::Any,
        )
        .await
        .unwrap();
    let err = staff
        .get(Employee::key("hr", "ann").unwrap())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::BlobNotFound, "{err}");
}

/// `reconcile()` while a write is between its uploads and its commit: it fences
/// the write's intent and deletes the uploads; the write's transaction, which
/// carries the intent's pending version, then fails and is planned again, so the
/// row never refers to the blobs reconcile() deleted.
#[tokio::test]
async fn reconcile_during_a_write_fences_it_and_the_write_is_planned_again() {
    let (engine, blobs, staff) = crash_rig(Step::Replace).await;
    let before = blob_names(&blobs, "photos").await;
    // Hold the write's commit (its transaction) until reconcile() has run.
    engine.faults().inject(
        Fault::delay(Duration::from_millis(500))
            .on(CallKind::Batch)
            .nth(1),
    );
    let writer = {
        let staff = staff.clone();
        tokio::spawn(async move { staff.upsert(&employee("ann", 2)).await })
    };
    // The uploads are done when the store holds the new blobs too.
    for _ in 0..200 {
        if blob_names(&blobs, "photos").await.len() > before.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let report = staff.reconcile().await.unwrap();
    assert_eq!(report.layers.blob_writes_fenced, 1, "{report}");
    assert_eq!(report.layers.blobs_deleted, 2, "{report}");

    let outcome = writer.await.unwrap().unwrap();
    assert!(outcome.attempts >= 2, "planned again: {outcome:?}");
    let got = staff
        .get(Employee::key("hr", "ann").unwrap())
        .await
        .unwrap();
    assert_eq!(got.map(|v| v.value), Some(employee("ann", 2)));
    assert_eq!(
        blob_names(&blobs, "photos").await,
        referenced(&engine).await,
        "exactly the blobs the row refers to"
    );
    assert_eq!(intent_rows(&engine).await, 0);
}

/// Reading entities with a lazy blob field reads no blob.
#[tokio::test]
async fn reads_of_lazy_fields_fetch_no_blob() {
    let blobs = FaultInjector::new(tables_client::mem::MemBlobStore::new());
    blobs.create_container("docs").await.unwrap();
    let service = TableServiceClient::in_memory().with_blob_store(Arc::new(blobs.clone()), "docs");
    service.create_table("Docs").await.unwrap();
    let docs = service.table::<Document>("Docs");
    for i in 0..5 {
        docs.insert(&document(&i.to_string(), i)).await.unwrap();
    }
    let before = blobs.faults().calls_of(CallKind::GetBlob);
    let all = docs.query().collect().await.unwrap();
    docs.get(Document::key("f", "1").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(all.len(), 5);
    assert_eq!(
        blobs.faults().calls_of(CallKind::GetBlob),
        before,
        "no blob read"
    );
    all[0].body.fetch(&blobs).await.unwrap();
    assert_eq!(blobs.faults().calls_of(CallKind::GetBlob), before + 1);
}

/// Concurrent writers adding members to a list kept in a blob lose none: each
/// change replaces the row (and so its blob reference) under the ETag read; the
/// blob of every losing attempt is removed.
#[tokio::test]
async fn concurrent_writers_keep_every_member_of_a_list_in_a_blob() {
    let blobs = Arc::new(tables_client::mem::MemBlobStore::new());
    blobs.create_container("lists").await.unwrap();
    let plain = TableServiceClient::in_memory();
    plain.create_table("BigTags").await.unwrap();
    let service = plain.clone().with_blob_store(blobs.clone(), "lists");
    seed_big_list(&plain, &service).await.unwrap();
    let tags = service.table::<Tagged>("BigTags");
    let tasks: Vec<_> = (0..4usize)
        .map(|writer| {
            let tags = tags.clone();
            tokio::spawn(async move {
                let mut written = Vec::new();
                for i in 0..5 {
                    let item = tagged(2000 + writer * 10 + i);
                    match tags.insert(&item).await {
                        Ok(_) => written.push(item.entity_key().unwrap().into_entity_key().row_key),
                        Err(e) => assert!(!e.may_have_applied(), "{e}"),
                    }
                }
                written
            })
        })
        .collect();
    let mut written = BTreeSet::new();
    for task in tasks {
        written.extend(task.await.unwrap());
    }
    assert!(
        written.len() >= 10,
        "most inserts go through ({})",
        written.len()
    );
    let read = tag_row(service.engine().as_ref()).await;
    let listed: BTreeSet<String> = tables_client::model::index_entity_members(&read)
        .unwrap()
        .into_iter()
        .filter(|m| !m.starts_with("item_0") && !m.starts_with("item_1"))
        .collect();
    assert_eq!(
        listed, written,
        "every written member listed, and only those"
    );
    check::<Tagged>(service.engine().as_ref(), "BigTags")
        .await
        .unwrap();
    assert_eq!(
        blob_names(blobs.as_ref(), "lists").await.len(),
        1,
        "one blob, the list's"
    );
}
