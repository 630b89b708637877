//! Damage in the data directory's files, told apart from a write a crash cut
//! short, and salvaged when asked.
//!
//! A frame that fails its checksum, or a file that ends inside one, is a torn tail
//! only at the end of the last journal segment with no intact record after it: the
//! last writes, cut short by a crash before they were synced, so never
//! acknowledged. They are dropped, and logged with their size. Anything else is
//! damage: bytes that were synced changed on the disk. A checksum failure with
//! intact records after it, damage in an earlier segment, damage in a snapshot (it is
//! written whole and renamed into place). Damage stops the start with an error that
//! names the file, the offset and the intact records at stake, and changes nothing;
//! [`Recovery::Salvage`] instead keeps every intact record, sets the damaged file
//! aside (`<name>.damaged-<unix seconds>`, never deleted) and reports what was lost.

use std::fmt::Write as _;
use std::fs;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::record::{frame_at, guess_at, next_intact, Damage, Record, Row};

/// What the server does when its data directory holds damage at start (not a
/// write cut short by a crash: that is always dropped).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Recovery {
    /// Refuse to start, with an error naming the file, the offset and the intact
    /// records at stake; nothing is changed (the default).
    #[default]
    Strict,
    /// Keep every intact record, set each damaged file aside under a new name
    /// (never deleted), report what was lost, and start (`--salvage`).
    Salvage,
}

/// The readable records after a damaged offset, and the byte ranges that are not.
#[derive(Debug)]
pub(crate) struct Survey {
    pub(crate) records: Vec<Record>,
    /// Unreadable byte ranges, relative to the surveyed bytes.
    pub(crate) lost: Vec<(usize, usize)>,
}

/// Reads `bytes` (from a damaged frame to the end of its file) frame by frame,
/// skipping each unreadable stretch to the next intact frame.
pub(crate) fn survey(bytes: &[u8]) -> Survey {
    let mut survey = Survey {
        records: Vec::new(),
        lost: Vec::new(),
    };
    let mut at = 0;
    while at < bytes.len() {
        match frame_at(bytes, at) {
            Some((record, end)) => {
                survey.records.push(record);
                at = end;
            }
            None => {
                let next = next_intact(bytes, at + 1).unwrap_or(bytes.len());
                survey.lost.push((at, next));
                at = next;
            }
        }
    }
    survey
}

/// The bytes of `path` from `at` to its end.
pub(crate) fn read_from(path: &Path, at: usize) -> io::Result<Vec<u8>> {
    let read = || {
        let mut file = fs::File::open(path)?;
        file.seek(SeekFrom::Start(at as u64))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok(bytes)
    };
    read().map_err(|err: io::Error| {
        io::Error::new(err.kind(), format!("can't read {}: {err}", path.display()))
    })
}

/// The error that stops the start: the file, the offset, what is wrong, and the
/// intact records after it that a cut there would lose.
pub(crate) fn damaged(
    path: &Path,
    what: &str,
    at: usize,
    damage: &Damage,
    survey: &Survey,
) -> io::Error {
    let lost: u64 = survey.lost.iter().map(|(a, b)| (b - a) as u64).sum();
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "the {what} {} is damaged at byte {at} ({damage}): {} unreadable bytes, and {} \
             intact records after them, acknowledged writes that a cut there would lose. This \
             is not a write cut short by a crash; nothing was changed. Start with --salvage to \
             keep every intact record (the file is set aside, not deleted, and what was lost \
             is reported), or restore the folder from a backup",
            path.display(),
            lost,
            survey.records.len()
        ),
    )
}

/// What salvaging one damaged file kept and lost.
#[derive(Debug)]
pub(crate) struct Salvaged {
    file: PathBuf,
    aside: Option<PathBuf>,
    damage: String,
    /// Unreadable byte ranges, in the file.
    lost: Vec<(u64, u64)>,
    /// What the unreadable frames seem to have held (read without their checksums).
    guesses: Vec<String>,
    /// Intact records kept before and after the damage.
    kept_before: u64,
    kept_after: u64,
    /// Intact records after the damage that could not be applied, and why.
    refused: Vec<String>,
}

impl Salvaged {
    /// Applies the surveyed records of `path` (damaged at `at`, `bytes` being the
    /// file from there) with `apply`, noting what was kept and lost.
    pub(crate) fn new(
        path: &Path,
        at: usize,
        damage: &Damage,
        bytes: &[u8],
        survey: Survey,
        kept_before: u64,
        mut apply: impl FnMut(Record) -> Result<(), String>,
    ) -> Salvaged {
        let mut salvaged = Salvaged {
            file: path.to_owned(),
            aside: None,
            damage: damage.to_string(),
            lost: survey
                .lost
                .iter()
                .map(|&(a, b)| ((at + a) as u64, (at + b) as u64))
                .collect(),
            guesses: survey
                .lost
                .iter()
                .filter_map(|&(a, _)| guess_at(bytes, a))
                .map(|record| describe(&record))
                .collect(),
            kept_before,
            kept_after: 0,
            refused: Vec::new(),
        };
        for record in survey.records {
            let described = describe(&record);
            match apply(record) {
                Ok(()) => salvaged.kept_after += 1,
                Err(why) => salvaged.refused.push(format!("{described}: {why}")),
            }
        }
        salvaged
    }

    /// A file with no damaged frame that is still not whole (a snapshot without its
    /// end marker, or with another count of records): everything read was kept.
    pub(crate) fn incomplete(path: &Path, why: String, kept: u64) -> Salvaged {
        Salvaged {
            file: path.to_owned(),
            aside: None,
            damage: why,
            lost: Vec::new(),
            guesses: Vec::new(),
            kept_before: kept,
            kept_after: 0,
            refused: Vec::new(),
        }
    }

    /// The intact records kept after the damage.
    pub(crate) fn kept_after(&self) -> u64 {
        self.kept_after
    }

    /// Sets the file aside beside itself, `<name>.damaged-<unix seconds>`: a hard
    /// link (a copy where links can't be made), so its bytes outlive the snapshot
    /// that replaces it; a start cut short before that snapshot finds the file where
    /// it was and salvages it again.
    pub(crate) fn set_aside(&mut self) -> io::Result<()> {
        let seconds = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let name = self
            .file
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let mut aside = self
            .file
            .with_file_name(format!("{name}.damaged-{seconds}"));
        for n in 1.. {
            if !aside.exists() {
                break;
            }
            aside = self
                .file
                .with_file_name(format!("{name}.damaged-{seconds}-{n}"));
        }
        if fs::hard_link(&self.file, &aside).is_err() {
            fs::copy(&self.file, &aside).map_err(|err| {
                io::Error::new(
                    err.kind(),
                    format!(
                        "can't set the damaged {} aside as {}: {err}",
                        self.file.display(),
                        aside.display()
                    ),
                )
            })?;
        }
        self.aside = Some(aside);
        Ok(())
    }

    /// The report: the file and where it was set aside, what was kept, and what
    /// was lost.
    pub(crate) fn report(&self) -> String {
        let mut out = format!(
            "salvaged the damaged {} ({}); ",
            self.file.display(),
            self.damage
        );
        if let Some(aside) = &self.aside {
            let _ = write!(out, "its bytes are kept in {}; ", aside.display());
        }
        let _ = write!(
            out,
            "kept {} intact records before the damage and {} after it",
            self.kept_before, self.kept_after
        );
        if self.lost.is_empty() {
            out.push_str("; no byte was unreadable");
        } else {
            let ranges: Vec<String> = self.lost.iter().map(|(a, b)| format!("{a}..{b}")).collect();
            let bytes: u64 = self.lost.iter().map(|(a, b)| b - a).sum();
            let _ = write!(
                out,
                "; LOST {bytes} unreadable bytes at {}",
                ranges.join(", ")
            );
        }
        if !self.guesses.is_empty() {
            let _ = write!(
                out,
                "; they seem to have held (read without their checksums, so perhaps wrongly): {}",
                self.guesses.join("; ")
            );
        }
        if !self.refused.is_empty() {
            let _ = write!(
                out,
                "; LOST {} intact records that no longer apply: {}",
                self.refused.len(),
                self.refused.join("; ")
            );
        }
        out
    }
}

/// A record in words, for a report.
fn describe(record: &Record) -> String {
    match record {
        Record::TableCreated(name) => format!("the creation of table {name:?}"),
        Record::TableDeleted(name) => format!("the deletion of table {name:?}"),
        Record::Rows { table, rows } => {
            let keys: Vec<String> = rows
                .iter()
                .take(5)
                .map(|row| match row {
                    Row::Stored(entity) => {
                        format!("({:?}, {:?})", entity.partition_key, entity.row_key)
                    }
                    Row::Removed(key) => {
                        format!("({:?}, {:?}) removed", key.partition_key, key.row_key)
                    }
                })
                .collect();
            let more = if rows.len() > 5 { ", ..." } else { "" };
            format!(
                "{} row changes in table {table:?}: {}{more}",
                rows.len(),
                keys.join(", ")
            )
        }
        Record::Acl { table, .. } => format!("the stored access policies of table {table:?}"),
        Record::Properties(_) => "the service properties".to_owned(),
        Record::SnapshotHeader { .. } => "the snapshot's header".to_owned(),
        Record::SnapshotEnd { .. } => "the snapshot's end marker".to_owned(),
    }
}
