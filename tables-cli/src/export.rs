//! `tables export`: tables to files, losslessly, each table's key space read in
//! `--parallel` ranges side by side, each range into its own file, with a
//! checkpoint after each committed stretch so `--resume` finishes a killed run
//! with every row exactly once.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use clap::ArgMatches;
use futures::future::try_join_all;
use serde::{Deserialize, Serialize};
use tables_client::{ContinuationToken, DynamicEntity, Filter, QuerySpec, TableServiceClient};
use tables_core::odata::encode_stored_entity;

use crate::checkpoint::{same_job, Store};
use crate::files::{remove_if_there, Compression, Format, Records, Sink};
use crate::pages::{Pages, Rows};
use crate::progress::{Job, Progress};
use crate::query::{filter_arg, Columns, CsvWriter, RowWriter};
use crate::ranges::{cut, KeyRange};
use crate::Failure;

/// How often a range commits its file and saves the checkpoint, at most.
const COMMIT_EVERY: Duration = Duration::from_secs(1);

/// What an export was asked to do: a resumed run must ask the same.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Asked {
    tables: Vec<String>,
    format: String,
    compress: Option<String>,
    filter: Option<String>,
    parallel: u16,
    #[serde(default)]
    rows_per_file: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct State {
    asked: Asked,
    tables: Vec<TableState>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct TableState {
    table: String,
    /// The ranges, once cut (the cut is kept: a resumed run reads the same ranges).
    ranges: Option<Vec<RangeState>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct RangeState {
    range: KeyRange,
    /// The file's name in the output directory.
    file: String,
    /// Committed bytes of the file being written (the spool, for CSV).
    bytes: u64,
    /// Rows committed.
    rows: u64,
    /// Where reading goes on; `None` with `started` false: from the start.
    continuation: Option<String>,
    started: bool,
    /// Every row read and committed (CSV: spooled).
    read: bool,
    /// The file is complete.
    done: bool,
    /// Parquet: the files written whole (`file` is then their names' stem).
    #[serde(default)]
    segments: u64,
}

pub(crate) async fn export(
    service: &TableServiceClient,
    args: &ArgMatches,
    progress: &Progress,
) -> Result<(), Failure> {
    let tables: Vec<String> = args
        .get_many::<String>("tables")
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    let dir = PathBuf::from(args.get_one::<String>("to").map_or(".", String::as_str));
    let asked = Asked {
        tables: tables.clone(),
        format: args
            .get_one::<String>("format")
            .cloned()
            .unwrap_or_else(|| "jsonl".into()),
        compress: args.get_one::<String>("compress").cloned(),
        filter: args.get_one::<String>("filter").cloned(),
        parallel: args.get_one::<u16>("parallel").copied().unwrap_or(1),
        rows_per_file: args.get_one::<u32>("rows-per-file").copied(),
    };
    if asked.rows_per_file.is_some() && asked.format != "parquet" {
        return Err(Failure::usage(
            "--rows-per-file is for --format parquet (JSON Lines and CSV files grow as they are read)",
        ));
    }
    let filter = filter_arg(args)?;
    let format = Format::parse(&asked.format);
    let compression = Compression::parse(asked.compress.as_deref());
    fs::create_dir_all(&dir)
        .map_err(|e| Failure::service(format!("making {}: {e}", dir.display())))?;
    let checkpoint = args
        .get_one::<String>("checkpoint")
        .map_or_else(|| dir.join("tables-export.checkpoint"), PathBuf::from);
    let (store, saved) = Store::open::<State>(checkpoint, args.get_flag("resume"))?;
    let state = match saved {
        Some(saved) => {
            same_job(&store, &saved.asked, &asked)?;
            saved
        }
        None => {
            for table in &tables {
                let taken: Vec<PathBuf> = fs::read_dir(&dir)
                    .map_err(|e| Failure::service(format!("reading {}: {e}", dir.display())))?
                    .filter_map(|entry| entry.ok().map(|e| e.path()))
                    .filter(|path| is_file_of(path, table))
                    .collect();
                if let Some(path) = taken.first() {
                    return Err(Failure::usage(format!(
                        "{} is there already: remove it, or export to another directory (an \
                         export never writes over a file)",
                        path.display()
                    )));
                }
            }
            State {
                asked: asked.clone(),
                tables: tables
                    .iter()
                    .map(|t| TableState {
                        table: t.clone(),
                        ranges: None,
                    })
                    .collect(),
            }
        }
    };
    let shared = Shared {
        service: service.clone(),
        dir,
        format,
        compression,
        filter,
        rows_per_file: asked.rows_per_file.map_or(PARQUET_ROWS, |n| n as usize),
        store,
        state: Arc::new(Mutex::new(state)),
    };
    let run = async {
        for (t, table) in tables.iter().enumerate() {
            export_table(&shared, t, table, usize::from(asked.parallel), progress).await?;
        }
        Ok::<(), Failure>(())
    };
    tokio::select! {
        done = run => done?,
        _ = tokio::signal::ctrl_c() => return Err(interrupted(shared.store.path())),
    }
    shared.store.remove()?;
    Ok(())
}

/// The failure a Ctrl-C ends a checkpointed command with.
pub(crate) fn interrupted(checkpoint: &Path) -> Failure {
    Failure {
        code: Failure::INTERRUPTED,
        message: format!(
            "interrupted; {} keeps what is done: run the same command with --resume to finish",
            checkpoint.display()
        ),
    }
}

/// Whether `path` is an export file of `table` (`T.jsonl`, `T.003.csv.gz`, ...).
fn is_file_of(path: &Path, table: &str) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    name.strip_prefix(table)
        .and_then(|rest| rest.strip_prefix('.'))
        .is_some_and(|rest| ["jsonl", "csv", "parquet"].iter().any(|f| rest.contains(f)))
}

struct Shared {
    service: TableServiceClient,
    dir: PathBuf,
    format: Format,
    compression: Compression,
    filter: Option<Filter>,
    rows_per_file: usize,
    store: Store,
    state: Arc<Mutex<State>>,
}

impl Shared {
    fn with_state<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn save(&self) -> Result<(), Failure> {
        let state = self.with_state(|s| s.clone());
        self.store.save(&state)
    }
}

async fn export_table(
    shared: &Shared,
    t: usize,
    table: &str,
    parallel: usize,
    progress: &Progress,
) -> Result<(), Failure> {
    let known = shared.with_state(|s| s.tables[t].ranges.clone());
    let ranges = match known {
        Some(ranges) => ranges,
        None => {
            let cut = cut(&shared.service, table, parallel).await?;
            let many = cut.len() > 1;
            let ranges: Vec<RangeState> = cut
                .into_iter()
                .enumerate()
                .map(|(i, range)| RangeState {
                    range,
                    file: file_name(table, many.then_some(i), shared.format, shared.compression),
                    bytes: 0,
                    rows: 0,
                    continuation: None,
                    started: false,
                    read: false,
                    done: false,
                    segments: 0,
                })
                .collect();
            shared.with_state(|s| s.tables[t].ranges = Some(ranges.clone()));
            shared.save()?;
            ranges
        }
    };
    let job = progress.job(table, ranges.len());
    job.resume_from(ranges.iter().map(|r| r.rows).sum());
    let workers = ranges
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.done)
        .map(|(r, _)| export_range(shared, t, r, table, &job));
    try_join_all(workers).await?;
    job.finish();
    let (rows, files) = shared.with_state(|s| {
        let ranges = s.tables[t].ranges.as_deref().unwrap_or_default();
        (
            ranges.iter().map(|r| r.rows).sum::<u64>(),
            ranges.iter().map(|r| r.file.clone()).collect::<Vec<_>>(),
        )
    });
    progress.say(&format!(
        "exported {table}: {rows} rows to {} in {:.1} s",
        files.join(", "),
        progress.elapsed().as_secs_f64()
    ));
    Ok(())
}

fn file_name(table: &str, part: Option<usize>, format: Format, compression: Compression) -> String {
    let part = part.map_or(String::new(), |i| format!(".{i:03}"));
    match format {
        // The stem of the range's files, `T.003.00000.parquet` and on.
        Format::Parquet => format!("{table}{part}"),
        _ => format!(
            "{table}{part}.{}{}",
            format.extension(),
            compression.suffix()
        ),
    }
}

/// The query that reads `range` (and the user's filter), and where it goes on.
fn range_query(
    shared: &Shared,
    range: &RangeState,
) -> Result<(QuerySpec, Option<ContinuationToken>), Failure> {
    let mut spec = QuerySpec::new();
    if let Some(filter) = range.range.filter(shared.filter.as_ref()) {
        spec = spec.filter(filter);
    }
    let continuation = match &range.continuation {
        Some(text) => Some(text.parse()?),
        None => None,
    };
    Ok((spec, continuation))
}

/// The most rows, and about the most bytes, in one Parquet file: a file's rows are
/// held until it is written (its columns are theirs).
const PARQUET_ROWS: usize = 100_000;
const PARQUET_BYTES: usize = 32 << 20;

fn segment_name(stem: &str, segment: u64) -> String {
    format!("{stem}.{segment:05}.parquet")
}

/// A range into Parquet files, each written whole once it holds
/// [`PARQUET_ROWS`] rows (`--rows-per-file`; at least: a page is not split) or [`PARQUET_BYTES`] (or the range ends), the checkpoint
/// saved after each: a resumed run writes again the file a killed one was making.
async fn export_range_parquet(
    shared: &Shared,
    t: usize,
    r: usize,
    table: &str,
    job: &Job,
    mut range: RangeState,
) -> Result<(), Failure> {
    let (spec, mut continuation) = range_query(shared, &range)?;
    if range.started && continuation.is_none() {
        return Ok(());
    }
    let mut held: Vec<DynamicEntity> = Vec::new();
    let mut held_bytes = 0usize;
    let mut pages = Pages::new(&shared.service, table, spec, continuation.clone());
    loop {
        let Some(page) = pages.next().await? else {
            return Ok(());
        };
        continuation = page.continuation.clone();
        let items = page.into_rows()?;
        let bytes: usize = items.iter().map(tables_core::size::entity_size).sum();
        job.add(r, items.len() as u64, bytes as u64);
        held_bytes += bytes;
        held.extend(items);
        let end = continuation.is_none();
        if end || held.len() >= shared.rows_per_file || held_bytes >= PARQUET_BYTES {
            if !held.is_empty() || range.segments == 0 {
                let path = shared.dir.join(segment_name(&range.file, range.segments));
                crate::parquet::write(&path, &held, shared.compression)?;
                range.segments += 1;
            }
            range.rows += held.len() as u64;
            held.clear();
            held_bytes = 0;
            range.continuation = continuation.as_ref().map(ToString::to_string);
            range.started = true;
            range.read = end;
            range.done = end;
            shared.with_state(|s| {
                if let Some(ranges) = s.tables[t].ranges.as_mut() {
                    ranges[r] = range.clone();
                }
            });
            shared.save()?;
        }
        if end {
            return Ok(());
        }
    }
}

/// Writes `row` as one line of JSON Lines through `line` (a buffer kept between
/// rows); returns the bytes written.
fn write_line(sink: &mut Sink, line: &mut Vec<u8>, row: &DynamicEntity) -> Result<u64, Failure> {
    line.clear();
    encode_stored_entity(row, line);
    line.push(b'\n');
    sink.write_all(line)?;
    Ok(line.len() as u64)
}

/// Reads one range page by page into its file (CSV: into a JSON Lines spool, made
/// into the CSV file once the range is read: the header is every column of the
/// file's rows).
async fn export_range(
    shared: &Shared,
    t: usize,
    r: usize,
    table: &str,
    job: &Job,
) -> Result<(), Failure> {
    let state = shared.with_state(|s| s.tables[t].ranges.as_ref().map(|rs| rs[r].clone()));
    let Some(mut range) = state else {
        return Ok(());
    };
    if shared.format == Format::Parquet {
        return export_range_parquet(shared, t, r, table, job, range).await;
    }
    let target = shared.dir.join(&range.file);
    let spool = shared.dir.join(format!(".{}.spool.jsonl", range.file));
    if !range.read {
        let (path, compression) = match shared.format {
            Format::JsonLines | Format::Parquet => (&target, shared.compression),
            Format::Csv => (&spool, Compression::None),
        };
        let mut sink = Sink::open(
            path,
            compression,
            if range.started { range.bytes } else { 0 },
        )?;
        let (spec, mut continuation) = range_query(shared, &range)?;
        let mut line = Vec::with_capacity(512);
        let mut last_commit = Instant::now();
        let mut uncommitted = 0u64;
        let mut pages = Pages::as_json(&shared.service, table, spec, continuation.clone());
        loop {
            let Some(page) = pages.next().await? else {
                break;
            };
            let mut bytes = 0u64;
            let mut rows = 0u64;
            match &page.rows {
                // The service's JSON of each entity, as it came: a line each (an
                // object spread over lines, which no service sends, is re-encoded).
                Rows::Json(body) => {
                    // A raw line break can only be space between tokens (JSON
                    // escapes it in strings): one search of the page finds any.
                    let spread = memchr::memchr2(b'\n', b'\r', body).is_some();
                    for object in tables_core::odata::entity_page_objects(body)? {
                        bytes += if spread && object.iter().any(|&b| b == b'\n' || b == b'\r') {
                            write_line(
                                &mut sink,
                                &mut line,
                                &tables_core::odata::decode_entity(object)?,
                            )?
                        } else {
                            sink.write_all(object)?;
                            sink.write_all(b"\n")?;
                            object.len() as u64 + 1
                        };
                        rows += 1;
                    }
                }
                Rows::Decoded(items) => {
                    for row in items {
                        bytes += write_line(&mut sink, &mut line, row)?;
                        rows += 1;
                    }
                }
            }
            uncommitted += rows;
            job.add(r, rows, bytes);
            continuation = page.continuation;
            let end = continuation.is_none();
            if end || last_commit.elapsed() >= COMMIT_EVERY {
                range.bytes = sink.commit()?;
                range.rows += uncommitted;
                uncommitted = 0;
                range.continuation = continuation.as_ref().map(ToString::to_string);
                range.started = true;
                range.read = end;
                range.done = end && shared.format == Format::JsonLines;
                shared.with_state(|s| {
                    if let Some(ranges) = s.tables[t].ranges.as_mut() {
                        ranges[r] = range.clone();
                    }
                });
                shared.save()?;
                last_commit = Instant::now();
            }
            if end {
                break;
            }
        }
    }
    if shared.format == Format::Csv && !range.done {
        spool_to_csv(&spool, &target, shared.compression)?;
        remove_if_there(&spool)?;
        range.done = true;
        shared.with_state(|s| {
            if let Some(ranges) = s.tables[t].ranges.as_mut() {
                ranges[r] = range.clone();
            }
        });
        shared.save()?;
    }
    Ok(())
}

/// Writes the spooled rows as Storage Explorer's CSV: a first pass over the spool
/// learns the columns (names, not rows), the second writes.
fn spool_to_csv(spool: &Path, target: &Path, compression: Compression) -> Result<(), Failure> {
    let mut columns = Columns::default();
    let mut records = Records::open(spool)?;
    while let Some(record) = records.next()? {
        columns.learn(&spooled(record.row)?);
    }
    let mut sink = Sink::open(target, compression, 0)?;
    let mut writer = CsvWriter {
        columns,
        header: false,
    };
    let mut out = SinkWriter(&mut sink);
    let mut records = Records::open(spool)?;
    let mut page: Vec<DynamicEntity> = Vec::with_capacity(1_000);
    loop {
        let next = records.next()?;
        let end = next.is_none();
        if let Some(record) = next {
            page.push(spooled(record.row)?);
        }
        if page.len() == 1_000 || end {
            writer.page(&page, &mut out)?;
            page.clear();
        }
        if end {
            break;
        }
    }
    writer.finish(&mut out)?;
    sink.commit()?;
    Ok(())
}

fn spooled(row: Result<DynamicEntity, crate::files::Refusal>) -> Result<DynamicEntity, Failure> {
    row.map_err(|refusal| {
        Failure::service(format!("the export's spool is damaged: {}", refusal.reason))
    })
}

/// A [`Sink`] as an `io::Write`, for the CSV writer.
struct SinkWriter<'a>(&'a mut Sink);

impl std::io::Write for SinkWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .write_all(buf)
            .map_err(|f| std::io::Error::other(f.message))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
