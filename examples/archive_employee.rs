//! An eventually consistent transaction across two tables: archiving employees from
//! the `Current` table to the `Archive` table, with simulated crashes and
//! `reconcile()` finishing the work.
//!
//! ```text
//! cargo run --example archive_employee
//! ```
//!
//! No transaction spans two tables. So the move is made of steps that are each
//! atomic and idempotent, with the intent recorded durably first:
//!
//! 1. in the employee's partition of `Current`, one entity group transaction deletes
//!    the employee and inserts a `Departure` record; the `Departure`'s index copy
//!    lives in the `Archive` table, so the client adds an *intent* row to that same
//!    transaction;
//! 2. the client then writes the archived record (the full copy of the `Departure`)
//!    to `Archive` (derived from the departure as stored, written conditionally:
//!    harmless to repeat) and deletes the intent.
//!
//! If only the answer to step 1 is lost, the client reads the intent (the
//! transaction's commit marker), learns the transaction committed, and carries on.
//! If the process dies between the two steps, the intent remains, and `reconcile()`
//! finishes the work from what the `Current` table holds now. Readers can see the
//! intermediate state (an employee that has left but is not archived yet): this is
//! consistency in the end, not isolation.
//!
//! The crashes are simulated by fault injection in front of the engine
//! ([`tables_examples::Example::faults`]), on the in-memory engine and on a remote one
//! alike.
#![allow(clippy::print_stdout)]

use tables_client::mem::{CallKind, Fault};
use tables_client::{
    DateTime, Entity, ErrorKind, IfMatch, PendingUpkeep, Row, Table, TableServiceClient,
};
use tables_examples::{ensure, pending_intents, raw_rows, BoxResult, Example};

const CURRENT: &str = "Current";
const ARCHIVE: &str = "Archive";

/// A current employee.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Employee", rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
struct Employee {
    department: String,
    employee_id: u32,
    name: String,
    title: String,
}

/// What archiving leaves in `Current` (a small tombstone that also keeps the id
/// from being reused), with its full copy, the archived record, in `Archive`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Departure", rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "left_{employee_id:06}")]
#[entity(index(
    name = "archive",
    table = "Archive",
    partition_key = "{department}",
    row_key = "empid_{employee_id:06}"
))]
struct Departure {
    department: String,
    employee_id: u32,
    name: String,
    title: String,
    left_on: DateTime,
}

fn staff(employee_id: u32, name: &str, title: &str) -> Employee {
    Employee {
        department: "Sales".into(),
        employee_id,
        name: name.into(),
        title: title.into(),
    }
}

/// Archives employee `id` of Sales: step 1 (one transaction in `Current`) and,
/// inside the client, step 2 (the copy to `Archive`, then the intent's removal).
/// Returns the upkeep left for `reconcile()`, if step 2 could not finish.
async fn archive(
    service: &TableServiceClient,
    id: u32,
    left_on: DateTime,
) -> tables_client::Result<Option<PendingUpkeep>> {
    let current: Table<Employee> = service.table(CURRENT);
    let found = current
        .get(Employee::key("Sales", id)?)
        .await?
        .ok_or_else(|| {
            tables_client::Error::new(ErrorKind::EntityNotFound, "no such current employee")
        })?;
    let e = found.value;
    let departure = Departure {
        department: e.department.clone(),
        employee_id: e.employee_id,
        name: e.name.clone(),
        title: e.title.clone(),
        left_on,
    };
    let outcomes = current
        .transaction(&e)
        .delete(e.entity_key()?, IfMatch::Etag(found.etag))
        .insert(&departure)
        .submit()
        .await?;
    Ok(outcomes.into_iter().find_map(|o| o.pending_upkeep))
}

/// Where employee `id` is now: (current?, departed?, archived?), and how many intents
/// are pending in `Current`.
async fn state(service: &TableServiceClient, id: u32) -> BoxResult<(bool, bool, bool, usize)> {
    let current = service
        .table::<Employee>(CURRENT)
        .get(Employee::key("Sales", id)?)
        .await?;
    let departures: Table<Departure> = service.table(CURRENT);
    let departed = departures.get(Departure::key("Sales", id)?).await?;
    let archived = departures
        .get_by_index(Departure::archive_key("Sales", id)?)
        .await?;
    let intents = pending_intents(&raw_rows(service, CURRENT).await?);
    Ok((
        current.is_some(),
        departed.is_some(),
        archived.is_some(),
        intents,
    ))
}

fn show(id: u32, (current, departed, archived, intents): (bool, bool, bool, usize)) -> String {
    format!(
        "employee {id}: current {current}, departure recorded {departed}, archived {archived}; intents pending in {CURRENT}: {intents}"
    )
}

#[tokio::main]
async fn main() -> BoxResult<()> {
    tables_examples::run(archive_employee).await
}

async fn archive_employee(example: Example) -> BoxResult<()> {
    let service = example.service();
    let current: Table<Employee> = service.table(CURRENT);
    let departures: Table<Departure> = service.table(CURRENT);
    current.create_if_not_exists().await?;
    departures.create_if_not_exists().await?; // also creates Archive, its index's table
    for e in [
        staff(456, "Ann Jones", "Account manager"),
        staff(457, "Raj Patel", "Sales engineer"),
        staff(458, "Mia Smith", "Sales lead"),
        staff(459, "Leo Novak", "Intern"),
        staff(460, "Ola Berg", "Sales engineer"),
    ] {
        current.insert(&e).await?;
    }
    let left_on = DateTime::from_ymd_hms(2024, 6, 28, 17, 0, 0).ok_or("bad date")?;
    println!("\n1. Five employees in {CURRENT}; {ARCHIVE} is empty.");

    // 2. The normal case: both steps run; nothing is left pending.
    let pending = archive(&service, 456, left_on).await?;
    let s = state(&service, 456).await?;
    println!("\n2. Archived 456 without incident: {}", show(456, s));
    ensure(
        pending.is_none() && s == (false, true, true, 0),
        "456 moved to the archive, no intent left",
    )?;

    // The failures below are injected in front of the engine, so they happen the
    // same way in memory and on a remote endpoint.
    let faults = example.faults();

    // 3. A failure *before* the transaction is applied: nothing happens at all, and
    //    the error says the write did not apply.
    faults.inject(Fault::fail(ErrorKind::Timeout).on(CallKind::Batch).nth(1));
    let failed = archive(&service, 459, left_on)
        .await
        .err()
        .ok_or("the failed transaction was reported as a success")?;
    let s = state(&service, 459).await?;
    println!(
        "\n3. The transaction fails before it is applied (error {:?}, may have applied: {}): {}",
        failed.kind(),
        failed.may_have_applied(),
        show(459, s)
    );
    ensure(
        failed.kind() == ErrorKind::Timeout && !failed.may_have_applied(),
        "the failure is reported as one that did not apply",
    )?;
    ensure(
        s == (true, false, false, 0),
        "all or nothing: 459 is still current",
    )?;

    // 4. The answer to the transaction is lost: the client reads the transaction's
    //    intent, its commit marker, learns it committed, and finishes step 2 itself.
    faults.inject(
        Fault::fail_after_applying(ErrorKind::Timeout)
            .on(CallKind::Batch)
            .nth(1),
    );
    let pending = archive(&service, 458, left_on).await?;
    let s = state(&service, 458).await?;
    println!(
        "\n4. Lost answer, settled by the commit marker: {}",
        show(458, s)
    );
    ensure(
        pending.is_none() && s == (false, true, true, 0),
        "the write succeeded once: 458 archived, nothing pending",
    )?;

    // 5. The answer is lost and then the process can't reach the service at all (it
    //    "dies"): the client can't read the marker, so it says the write *may* have
    //    applied. It had: 457 has left Current, the departure and the intent are
    //    recorded, but the archive copy was never written.
    faults.inject(
        Fault::fail_after_applying(ErrorKind::Timeout)
            .on(CallKind::Batch)
            .nth(1),
    );
    // Every later read (the first is the archiving's own) and write fails.
    faults.inject(
        Fault::fail(ErrorKind::Transport)
            .on(CallKind::GetEntity)
            .nth(2)
            .times(1_000),
    );
    faults.inject(
        Fault::fail(ErrorKind::Transport)
            .on(CallKind::Write)
            .times(1_000),
    );
    let crashed = archive(&service, 457, left_on)
        .await
        .err()
        .ok_or("the doubtful write was reported as a success")?;
    faults.clear();
    let s457 = state(&service, 457).await?;
    println!(
        "\n5. Lost answer, then no service (error {:?}, may have applied: {}): {}",
        crashed.kind(),
        crashed.may_have_applied(),
        show(457, s457)
    );
    ensure(
        crashed.may_have_applied(),
        "the doubtful write says it may have applied",
    )?;
    ensure(
        s457 == (false, true, false, 1),
        "intermediate state: left, not archived, one intent pending",
    )?;

    // 6. A failure in step 2: the archive copy is written but its answer is lost, so
    //    the client stops there. The write itself succeeded and says its upkeep is
    //    pending; the intent waits.
    faults.inject(
        Fault::fail_after_applying(ErrorKind::Timeout)
            .on(CallKind::Write)
            .nth(1),
    );
    let pending = archive(&service, 460, left_on).await?;
    let s460 = state(&service, 460).await?;
    println!(
        "\n6. Failure in step 2 (pending upkeep reported: {}): {}",
        pending.is_some(),
        show(460, s460)
    );
    ensure(pending.is_some(), "the write reports its pending upkeep")?;
    ensure(
        (s460.0, s460.1, s460.2) == (false, true, true),
        "460 left Current and its archive copy is written",
    )?;
    let s457 = state(&service, 457).await?;
    ensure(s457.3 == 2, "the intents of 457 and 460 are both pending")?;

    // 7. Recovery: reconcile() finds every intent and finishes it from what Current
    //    holds now. Running it again is harmless (it re-derives the archive copy
    //    from the departure; it never replays a stored payload).
    let report = departures.reconcile().await?;
    println!(
        "\n7. reconcile(): {} pending intent(s) found and finished, {} archive rows written.",
        report.intents_finished,
        report.index_rows_written()
    );
    ensure(
        report.intents_finished == 2 && report.failures.is_empty(),
        "both pending intents are finished",
    )?;
    for id in [456, 457, 458, 460] {
        let s = state(&service, id).await?;
        println!("   {}", show(id, s));
        ensure(s == (false, true, true, 0), "archived, nothing pending")?;
    }
    let again = departures.reconcile().await?;
    println!(
        "   reconcile() again: {} intent(s) finished, {} rows touched.",
        again.intents_finished,
        again.touched.len()
    );
    ensure(
        again.intents_finished == 0 && again.touched.is_empty(),
        "a second reconcile has nothing to do",
    )?;

    // 8. The tables in the end: Archive holds exactly the four archived records,
    //    each a full copy of its departure.
    let archive_rows = raw_rows(&service, ARCHIVE).await?;
    let still_current = current.query().partition("Sales").collect().await?;
    println!(
        "\n8. {ARCHIVE} holds {} rows; {CURRENT} still employs {:?}.",
        archive_rows.len(),
        still_current
            .iter()
            .map(|e| e.employee_id)
            .collect::<Vec<_>>()
    );
    for row in &archive_rows {
        println!(
            "   ({}, {}) {}",
            row.partition_key,
            row.row_key,
            tables_examples::entity_type(row)
        );
    }
    ensure(
        archive_rows.len() == 4,
        "four archived records, no duplicate",
    )?;
    let archived_457 = departures
        .get_by_index(Departure::archive_key("Sales", 457)?)
        .await?
        .ok_or("457 is not archived")?;
    ensure(
        archived_457.value.name == "Raj Patel" && archived_457.value.left_on == left_on,
        "the archived record holds the employee's data",
    )?;
    ensure(
        still_current.len() == 1 && still_current[0].employee_id == 459,
        "only 459 is still current",
    )?;

    println!("\narchive_employee finished: every check passed.");
    Ok(())
}
