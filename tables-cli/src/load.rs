//! Writing rows for `import` and `copy`: each stretch of rows goes through the bulk
//! writer (entity group transactions per partition, at most 100 operations and the
//! endpoint's batch size), and every row of a chunk that failed is written again
//! alone, so one bad row costs only itself: it goes to the rejects file with its
//! origin and reason, and the summary counts it. Nothing is skipped silently.
//!
//! A row already there that is identical to the one being inserted (a resumed run
//! writing again what the killed one wrote, or an answer lost after it applied) is
//! counted as such, not rejected and not written twice.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tables_client::{
    BulkMode, DynamicEntity, Error, ErrorKind, TableServiceClient, Value, WriteOp,
};
use tables_core::odata::encode_stored_entity;

use crate::files::{Origin, Refusal};
use crate::Failure;

/// `--mode`.
pub(crate) fn mode_arg(args: &clap::ArgMatches) -> BulkMode {
    match args.get_one::<String>("mode").map(String::as_str) {
        Some("merge") => BulkMode::Merge,
        Some("replace") => BulkMode::Upsert,
        _ => BulkMode::Insert,
    }
}

/// What happened to the rows, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Counts {
    /// Written by this job.
    pub(crate) written: u64,
    /// Inserts that found the identical row already there.
    pub(crate) already_there: u64,
    /// Rows that failed, each in the rejects file.
    pub(crate) rejected: u64,
}

impl Counts {
    pub(crate) fn summary(&self) -> String {
        let mut text = format!("{} written", self.written);
        if self.already_there > 0 {
            text.push_str(&format!(
                ", {} already there identical (not written again)",
                self.already_there
            ));
        }
        text.push_str(&format!(", {} rejected", self.rejected));
        text
    }
}

/// The rejects file: one JSON object a line, `{"source", "line", "reason",
/// "code", "row"}` (`row` the stored JSON of the row, or `text` the record as read
/// when it was no row).
#[derive(Debug)]
pub(crate) struct Rejects {
    path: PathBuf,
    file: Option<File>,
    /// Bytes written (and flushed); a resumed run cuts the file back to the
    /// checkpoint's count.
    pub(crate) bytes: u64,
}

impl Rejects {
    /// The rejects file at `path`, cut back to `keep` bytes (0: a new run); made
    /// only when a row is rejected.
    pub(crate) fn open(path: PathBuf, keep: u64) -> Result<Rejects, Failure> {
        let mut rejects = Rejects {
            path,
            file: None,
            bytes: keep,
        };
        if keep > 0 || rejects.path.exists() {
            rejects.file()?;
        }
        Ok(rejects)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Refuses a new run's rejects file where one is already: it holds another
    /// run's record.
    pub(crate) fn must_be_new(path: &Path) -> Result<(), Failure> {
        if path.exists() {
            return Err(Failure::usage(format!(
                "{} is there already (the rejects of an earlier run?): move it away, or name \
                 another with --rejects",
                path.display()
            )));
        }
        Ok(())
    }

    fn file(&mut self) -> Result<&mut File, Failure> {
        let failed = |e: std::io::Error| Failure::service(format!("{}: {e}", self.path.display()));
        if self.file.is_none() {
            let mut file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&self.path)
                .map_err(failed)?;
            file.set_len(self.bytes).map_err(failed)?;
            file.seek(SeekFrom::Start(self.bytes)).map_err(failed)?;
            self.file = Some(file);
        }
        Ok(self.file.as_mut().expect("opened above"))
    }

    /// Appends lines [`Loaded::rejects`] rendered.
    pub(crate) fn append(&mut self, lines: &[u8]) -> Result<(), Failure> {
        if lines.is_empty() {
            return Ok(());
        }
        let path = self.path.clone();
        let file = self.file()?;
        file.write_all(lines)
            .map_err(|e| Failure::service(format!("{}: {e}", path.display())))?;
        self.bytes += lines.len() as u64;
        Ok(())
    }

    /// Puts what was written on disk (before a checkpoint names its length).
    pub(crate) fn sync(&mut self) -> Result<(), Failure> {
        if let Some(file) = &self.file {
            file.sync_data()
                .map_err(|e| Failure::service(format!("{}: {e}", self.path.display())))?;
        }
        Ok(())
    }
}

/// One line of the rejects file.
fn reject_line(
    out: &mut Vec<u8>,
    origin: &Origin,
    code: &str,
    reason: &str,
    row: Result<&DynamicEntity, &str>,
) {
    out.extend_from_slice(
        format!(
            "{{\"source\":{},\"line\":{},\"code\":{},\"reason\":{},",
            json_string(&origin.source),
            origin.line,
            json_string(code),
            json_string(reason)
        )
        .as_bytes(),
    );
    match row {
        Ok(row) => {
            out.extend_from_slice(b"\"row\":");
            encode_stored_entity(row, out);
        }
        Err(text) => {
            out.extend_from_slice(b"\"text\":");
            out.extend_from_slice(json_string(text).as_bytes());
        }
    }
    out.extend_from_slice(b"}\n");
}

fn json_string(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

/// Writes rows into one table.
#[derive(Debug, Clone)]
pub(crate) struct Loader {
    pub(crate) service: TableServiceClient,
    pub(crate) table: String,
    pub(crate) mode: BulkMode,
    pub(crate) concurrency: usize,
}

/// What one [`Loader::load`] did: counts, and the rejects file's lines for its
/// rejected rows. The caller appends and counts them when it moves its
/// checkpoint, so a resumed run neither loses nor repeats them.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    pub(crate) counts: Counts,
    pub(crate) rejects: Vec<u8>,
}

impl Loaded {
    fn reject(
        &mut self,
        origin: &Origin,
        code: &str,
        reason: &str,
        row: Result<&DynamicEntity, &str>,
    ) {
        reject_line(&mut self.rejects, origin, code, reason, row);
        self.counts.rejected += 1;
    }
}

impl Counts {
    pub(crate) fn add(&mut self, other: Counts) {
        self.written += other.written;
        self.already_there += other.already_there;
        self.rejected += other.rejected;
    }

    pub(crate) fn rows(&self) -> u64 {
        self.written + self.already_there + self.rejected
    }
}

impl Loader {
    /// Writes a stretch of records: each is written, counted as already there, or
    /// rejected, before this returns.
    ///
    /// # Errors
    ///
    /// A failure that is no row's fault (the network, the account, a missing
    /// table): the stretch is unfinished, and the caller's checkpoint is not moved.
    pub(crate) async fn load(
        &self,
        records: Vec<(Origin, Result<DynamicEntity, Refusal>)>,
    ) -> Result<Loaded, Failure> {
        let mut loaded = Loaded::default();
        let capabilities = self.service.engine().capabilities();
        let mut rows: Vec<(Origin, DynamicEntity)> = Vec::with_capacity(records.len());
        let mut keys = HashSet::new();
        for (origin, row) in records {
            let row = match row {
                Ok(row) => row,
                Err(refusal) => {
                    loaded.reject(&origin, "InvalidInput", &refusal.reason, Err(&refusal.text));
                    continue;
                }
            };
            let checked = tables_core::size::validate_entity(&row)
                .and_then(|()| capabilities.check_key(&row.key()));
            if let Err(err) = checked {
                loaded.reject(
                    &origin,
                    &format!("{:?}", err.kind()),
                    err.message(),
                    Ok(&row),
                );
                continue;
            }
            // A key twice in one stretch: the earlier write must land first, and a
            // failed chunk is written again after the others; so the stretch
            // splits there.
            if !keys.insert(row.key()) {
                self.write(std::mem::take(&mut rows), &mut loaded).await?;
                keys.clear();
                keys.insert(row.key());
            }
            rows.push((origin, row));
        }
        self.write(rows, &mut loaded).await?;
        Ok(loaded)
    }

    async fn write(
        &self,
        rows: Vec<(Origin, DynamicEntity)>,
        loaded: &mut Loaded,
    ) -> Result<(), Failure> {
        if rows.is_empty() {
            return Ok(());
        }
        let mut failed_items: Vec<usize> = Vec::new();
        let mut written = 0u64;
        let result = self
            .service
            .bulk_writer::<DynamicEntity>(&self.table)
            .mode(self.mode)
            .concurrency(self.concurrency)
            .write_each(rows.iter().map(|(_, row)| row.clone()), |chunk| {
                if chunk.is_written() {
                    written += chunk.items.len() as u64;
                } else {
                    failed_items.extend(&chunk.items);
                }
            })
            .await;
        if let Err(err) = &result {
            if tables_client::BulkSummary::from_error(err).is_none() {
                return Err(Failure::from(err));
            }
        }
        loaded.counts.written += written;
        failed_items.sort_unstable();
        for i in failed_items {
            let (origin, row) = &rows[i];
            self.write_alone(origin, row, loaded).await?;
        }
        Ok(())
    }

    /// One row of a failed chunk, written alone.
    async fn write_alone(
        &self,
        origin: &Origin,
        row: &DynamicEntity,
        loaded: &mut Loaded,
    ) -> Result<(), Failure> {
        let op = match self.mode {
            BulkMode::Insert => WriteOp::Insert(row.clone()),
            BulkMode::Merge => WriteOp::UpsertMerge(row.clone()),
            _ => WriteOp::UpsertReplace(row.clone()),
        };
        let engine = self.service.engine();
        let err = match engine.write(&self.table, &op).await {
            Ok(_) => {
                loaded.counts.written += 1;
                return Ok(());
            }
            Err(err) => err,
        };
        if err.kind() == ErrorKind::EntityAlreadyExists {
            let stored = engine.get_entity(&self.table, &row.key(), None).await?;
            if stored.is_some_and(|stored| same_properties(&stored, row)) {
                loaded.counts.already_there += 1;
                return Ok(());
            }
        }
        if is_the_rows_fault(&err) {
            loaded.reject(origin, &format!("{:?}", err.kind()), err.message(), Ok(row));
            Ok(())
        } else {
            Err(Failure::from(err))
        }
    }
}

/// Whether the row itself is why its write failed (another row would go through),
/// rather than the network, the account or the table.
fn is_the_rows_fault(err: &Error) -> bool {
    matches!(
        err.kind(),
        ErrorKind::EntityAlreadyExists
            | ErrorKind::InvalidInput
            | ErrorKind::InvalidKey
            | ErrorKind::InvalidValue
            | ErrorKind::PropertyValueTooLarge
            | ErrorKind::EntityTooLarge
            | ErrorKind::TooManyProperties
            | ErrorKind::InvalidProperty
            | ErrorKind::RequestTooLarge
    )
}

/// The same properties with the same values (Doubles by their bits: `-0.0` is not
/// `0.0`); keys, Timestamp and ETag aside.
pub(crate) fn same_properties(a: &DynamicEntity, b: &DynamicEntity) -> bool {
    a.len() == b.len()
        && a.properties().all(|(name, value)| {
            b.get(name).is_some_and(|other| match (value, other) {
                (Value::Double(x), Value::Double(y)) => x.to_bits() == y.to_bits(),
                _ => value == other,
            })
        })
}
