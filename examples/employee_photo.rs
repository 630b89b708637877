//! Large entities: an employee's photo (far over the 64 KiB a property holds) kept
//! in a blob beside the table, the row holding a reference to it.
//!
//! ```text
//! cargo run --example employee_photo
//! ```
//!
//! The design guide's large-entities pattern: `#[entity(blob)]` marks the field;
//! `TableServiceClient::with_blob_store` names the blob store and container. A write
//! uploads the value to a new blob first, then writes the row, then deletes the
//! blob it replaced, so a row never points at a missing or half-written blob. The
//! write lists the blobs it uploads in an intent row before uploading them, so a
//! crash in between leaves at most an orphan blob that `reconcile()` finds and
//! removes.
#![allow(clippy::print_stdout)]

use std::sync::Arc;
use std::time::Duration;

use tables_client::blob::ListBlobsOptions;
use tables_client::mem::{CallKind, Fault};
use tables_client::{Entity, ErrorKind};
use tables_examples::{blob_container, ensure, BoxResult, Example};

const TABLE: &str = "Employees";

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
struct Employee {
    department: String,
    employee_id: u32,
    name: String,
    #[entity(blob)]
    photo: Vec<u8>,
}

fn photo(seed: u8) -> Vec<u8> {
    (0..300_000u32).map(|i| (i % 251) as u8 ^ seed).collect()
}

#[tokio::main]
async fn main() -> BoxResult<()> {
    tables_examples::run(employee_photo).await
}

async fn employee_photo(example: Example) -> BoxResult<()> {
    let (blobs, container) = blob_container("employee-photo").await?;
    let result = run(&example, blobs.clone(), &container).await;
    blobs.delete_container(&container).await?;
    result
}

async fn run(
    example: &Example,
    blobs: Arc<dyn tables_client::blob::BlobStore>,
    container: &str,
) -> BoxResult<()> {
    let plain = example.service();
    plain.create_table(TABLE).await?;
    let service = plain.clone().with_blob_store(blobs.clone(), container);
    let employees = service.table::<Employee>(TABLE);
    let count = || async {
        let page = blobs
            .list_blobs(container, &ListBlobsOptions::default())
            .await?;
        Ok::<usize, tables_client::Error>(page.blobs.len())
    };

    // 1. A 300 KB photo: the row keeps a reference, the blob the bytes.
    let ann = Employee {
        department: "HR".into(),
        employee_id: 7,
        name: "Ann".into(),
        photo: photo(1),
    };
    employees.insert(&ann).await?;
    let read = employees
        .get(Employee::key("HR", 7)?)
        .await?
        .ok_or("written")?
        .value;
    println!(
        "\n1. inserted; read back {} bytes of photo; blobs: {}",
        read.photo.len(),
        count().await?
    );
    ensure(
        read == ann && count().await? == 1,
        "one blob holds the photo",
    )?;

    // 2. A new photo: a new blob, then the row, then the old blob goes.
    let new_photo = Employee {
        photo: photo(2),
        ..ann.clone()
    };
    employees.upsert(&new_photo).await?;
    let read = employees
        .get(Employee::key("HR", 7)?)
        .await?
        .ok_or("written")?
        .value;
    println!("2. replaced the photo; blobs: {}", count().await?);
    ensure(
        read == new_photo && count().await? == 1,
        "the old blob is gone",
    )?;

    // 3. The row's write fails after the upload: the row keeps its photo, and the
    //    new blob is removed (the write did not apply).
    example
        .faults()
        .inject(Fault::fail(ErrorKind::Server).on(CallKind::Batch));
    let failed = employees
        .upsert(&Employee {
            photo: photo(3),
            ..ann.clone()
        })
        .await;
    example.faults().clear();
    let read = employees
        .get(Employee::key("HR", 7)?)
        .await?
        .ok_or("written")?
        .value;
    println!(
        "3. a failed write: error = {}, the row still reads its photo: {}",
        failed.is_err(),
        read == new_photo
    );
    ensure(
        failed.is_err() && read == new_photo,
        "a failed write changes nothing",
    )?;

    // 4. The writer crashes after uploading a new photo, before writing the row
    //    (here: its row write never returns and the write is dropped). The row
    //    keeps its photo; reconcile() finds the write's intent, fences it so the
    //    write can never commit, and deletes the orphan blob.
    example
        .faults()
        .inject(Fault::delay(Duration::from_secs(3600)).on(CallKind::Batch));
    let crashed = tokio::time::timeout(
        Duration::from_millis(300),
        employees.upsert(&Employee {
            photo: photo(4),
            ..ann.clone()
        }),
    )
    .await;
    example.faults().clear();
    let blobs_after_crash = count().await?;
    let report = employees.reconcile().await?;
    let read = employees
        .get(Employee::key("HR", 7)?)
        .await?
        .ok_or("written")?
        .value;
    println!(
        "4. a crash after the upload (finished: {}): blobs {blobs_after_crash}; reconcile: {}; \
         blobs: {}",
        crashed.is_ok(),
        report,
        count().await?
    );
    ensure(
        crashed.is_err() && blobs_after_crash == 2,
        "the crash left an orphan blob",
    )?;
    ensure(
        read == new_photo && count().await? == 1 && report.layers.blobs_deleted == 1,
        "reconcile removed the orphan; the row kept its photo",
    )?;

    // 5. Deleting the employee deletes the photo.
    employees
        .delete(Employee::key("HR", 7)?, tables_client::IfMatch::Any)
        .await?;
    println!("5. deleted; blobs: {}", count().await?);
    ensure(count().await? == 0, "no blob left")?;
    Ok(())
}
