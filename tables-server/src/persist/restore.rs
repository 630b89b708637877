//! Restoring an account from its folder: the snapshot loaded, the journal segments
//! replayed, and damage in either told apart from a write a crash cut short
//! ([`super::damage`]).

use std::fs::OpenOptions;
use std::io;
use std::path::Path;

use tables_mem::{Change, MemEngine, RowChange};

use super::damage::{self, Recovery, Salvaged};
use super::record::{read_frames, Damage, Record, Row};
use super::{context, open_to_read, Restored, Stats};

/// Where restored records go, and what to do with damage.
pub(super) struct Load<'a> {
    pub(super) engine: &'a MemEngine,
    pub(super) restored: &'a mut Restored,
    pub(super) recovery: Recovery,
    pub(super) salvaged: &'a mut Vec<Salvaged>,
}

impl Load<'_> {
    /// Applies one restored record.
    fn apply(&mut self, record: Record) -> Result<(), String> {
        apply(record, self.engine, self.restored)
    }
}

/// Applies one restored record.
fn apply(record: Record, engine: &MemEngine, restored: &mut Restored) -> Result<(), String> {
    let change = |c: &Change<'_>| engine.restore(c).map_err(|e| e.to_string());
    match record {
        Record::TableCreated(name) => change(&Change::TableCreated(&name)),
        Record::TableDeleted(name) => {
            restored.acls.remove(&name.to_ascii_lowercase());
            change(&Change::TableDeleted(&name))
        }
        Record::Rows { table, rows } => {
            let rows: Vec<RowChange<'_>> = rows.iter().map(Row::as_change).collect();
            change(&Change::Rows {
                table: &table,
                rows: &rows,
            })
        }
        Record::Acl { table, identifiers } => {
            if identifiers.is_empty() {
                restored.acls.remove(&table);
            } else {
                restored.acls.insert(table, identifiers);
            }
            Ok(())
        }
        Record::Properties(properties) => {
            restored.properties = properties;
            Ok(())
        }
        Record::SnapshotHeader { .. } | Record::SnapshotEnd { .. } => {
            Err("a snapshot marker inside the data".to_owned())
        }
    }
}

/// What a snapshot's records said so far.
#[derive(Default)]
struct SnapshotRead {
    next: Option<u64>,
    end: Option<u64>,
    records: u64,
}

impl SnapshotRead {
    /// Takes one record of the snapshot: its header, its end, or data to apply.
    /// Under salvage, the header and end are not required where they belong.
    fn visit(
        &mut self,
        load: &mut Load<'_>,
        stats: &mut Stats,
        record: Record,
    ) -> Result<(), String> {
        let salvage = load.recovery == Recovery::Salvage;
        match record {
            Record::SnapshotHeader { next_segment } if self.next.is_none() && self.records == 0 => {
                self.next = Some(next_segment);
                Ok(())
            }
            _ if self.end.is_some() && !salvage => Err("records follow the end marker".to_owned()),
            _ if self.next.is_none() && !salvage => {
                Err("it does not start with its header".to_owned())
            }
            Record::SnapshotEnd { records } => {
                self.end = Some(records);
                Ok(())
            }
            record => {
                self.records += 1;
                match &record {
                    Record::TableCreated(_) => stats.tables += 1,
                    Record::Rows { rows, .. } => stats.rows += rows.len() as u64,
                    _ => {}
                }
                load.apply(record)
            }
        }
    }
}

/// Loads `snapshot` into the engine; returns the first segment after it.
pub(super) fn load_snapshot(
    path: &Path,
    load: &mut Load<'_>,
    stats: &mut Stats,
) -> io::Result<u64> {
    let (file, size) = open_to_read(path)?;
    let salvage = load.recovery == Recovery::Salvage;
    let mut read = SnapshotRead::default();
    let result = read_frames(file, size, |record, _| read.visit(load, stats, record))
        .map_err(context(path, "can't read"))?;
    let mut salvaged = false;
    if let Err((at, damage)) = result {
        let bytes = damage::read_from(path, at)?;
        let survey = damage::survey(&bytes);
        if !salvage {
            return Err(damage::damaged(path, "snapshot", at, &damage, &survey));
        }
        let kept = read.records;
        let report = Salvaged::new(path, at, &damage, &bytes, survey, kept, |record| {
            read.visit(load, stats, record)
        });
        load.salvaged.push(report);
        salvaged = true;
    }
    let SnapshotRead { next, end, records } = read;
    let whole = |why: String| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "the snapshot {} is not whole ({why}); it was written whole and renamed into \
                 place, so the disk changed it. Nothing was changed: start with --salvage to keep \
                 every record it holds (it is set aside, not deleted), or restore the folder \
                 from a backup",
                path.display()
            ),
        )
    };
    match (next, end) {
        (Some(next), Some(count)) if count == records || salvaged => Ok(next.max(1)),
        (next, end) if salvage => {
            let why = match (next, end) {
                (None, _) => {
                    "its header was lost: every journal segment left is replayed".to_owned()
                }
                (_, Some(count)) => {
                    format!("it holds {records} records but its end marker says {count}")
                }
                (_, None) => "it has no end marker".to_owned(),
            };
            if !salvaged {
                load.salvaged.push(Salvaged::incomplete(path, why, records));
            }
            Ok(next.unwrap_or(1).max(1))
        }
        (_, Some(count)) => Err(whole(format!(
            "it holds {records} records but its end marker says {count}"
        ))),
        _ => Err(whole("it has no end marker".to_owned())),
    }
}

/// Replays a journal segment into the engine; returns how many records it applied.
/// In the last segment, a record cut short or failing its checksum with no intact
/// record after it ends the journal: the file is cut there. Other damage is an
/// error, or salvaged.
pub(super) fn replay_segment(path: &Path, last: bool, load: &mut Load<'_>) -> io::Result<u64> {
    let (file, size) = open_to_read(path)?;
    let mut records = 0;
    let result = read_frames(file, size, |record, _| {
        records += 1;
        load.apply(record)
    })
    .map_err(context(path, "can't read"))?;
    let Err((at, damage)) = result else {
        return Ok(records);
    };
    if matches!(damage, Damage::Unreadable(_)) {
        // The record at `at` was counted but not applied.
        records -= 1;
    }
    let bytes = damage::read_from(path, at)?;
    let survey = damage::survey(&bytes);
    if last && survey.records.is_empty() && matches!(damage, Damage::Torn | Damage::Checksum) {
        let dropped = size - at as u64;
        tracing::warn!(
            file = %path.display(),
            at,
            dropped_bytes = dropped,
            "the journal ends with {dropped} bytes of a write that never finished (a crash cut \
             it short before it was on disk, so it was never acknowledged); they are dropped"
        );
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(context(path, "can't open"))?;
        file.set_len(at as u64)
            .map_err(context(path, "can't cut"))?;
        file.sync_all().map_err(context(path, "can't sync"))?;
        return Ok(records);
    }
    if load.recovery == Recovery::Strict {
        return Err(damage::damaged(
            path,
            "journal segment",
            at,
            &damage,
            &survey,
        ));
    }
    let report = Salvaged::new(path, at, &damage, &bytes, survey, records, |record| {
        load.apply(record)
    });
    records += report.kept_after();
    load.salvaged.push(report);
    Ok(records)
}
