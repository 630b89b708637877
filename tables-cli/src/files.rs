//! The files exports write and imports read: JSON Lines (each row the service's
//! JSON, `@odata.type` annotations and Timestamp included) or CSV in Storage
//! Explorer's layout (`Name@type` beside each property), plain, gzip or zstd.
//!
//! Writing appends through [`Sink`], which can [`Sink::commit`]: everything written
//! so far is closed off (a compressed member or frame ended), on disk, and its
//! length known, so a resumed run cuts the file back to that length and goes on.
//! Both compressions read a file of several members or frames as one stream.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use serde_json::{Map, Value as Json};
use tables_client::DynamicEntity;
use tables_core::odata::decode_entity;

use crate::parquet::ParquetRows;
use crate::Failure;

/// A file's row format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    JsonLines,
    Csv,
    Parquet,
}

impl Format {
    pub(crate) fn parse(name: &str) -> Format {
        match name {
            "csv" => Format::Csv,
            "parquet" => Format::Parquet,
            _ => Format::JsonLines,
        }
    }

    pub(crate) fn extension(self) -> &'static str {
        match self {
            Format::JsonLines => "jsonl",
            Format::Csv => "csv",
            Format::Parquet => "parquet",
        }
    }
}

/// A file's compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    pub(crate) fn parse(name: Option<&str>) -> Compression {
        match name {
            Some("gzip") => Compression::Gzip,
            Some("zstd") => Compression::Zstd,
            _ => Compression::None,
        }
    }

    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Compression::None => "",
            Compression::Gzip => ".gz",
            Compression::Zstd => ".zst",
        }
    }
}

/// What a file's name says it holds: `x.jsonl`, `x.csv.gz`, `x.ndjson.zst`, ...
pub(crate) fn kind_of(path: &Path) -> Result<(Format, Compression), Failure> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let (stem, compression) = if let Some(stem) = name.strip_suffix(".gz") {
        (stem, Compression::Gzip)
    } else if let Some(stem) = name.strip_suffix(".zst") {
        (stem, Compression::Zstd)
    } else {
        (name.as_str(), Compression::None)
    };
    let format = if stem.ends_with(".jsonl") || stem.ends_with(".ndjson") || stem.ends_with(".json")
    {
        Format::JsonLines
    } else if stem.ends_with(".csv") {
        Format::Csv
    } else if stem.ends_with(".parquet") && compression == Compression::None {
        Format::Parquet
    } else {
        return Err(Failure::usage(format!(
            "{}: can't tell the format from the name; imports read .jsonl (.ndjson) and .csv \
             files, optionally .gz or .zst, and .parquet files",
            path.display()
        )));
    };
    Ok((format, compression))
}

fn open_failed(path: &Path, e: &io::Error) -> Failure {
    Failure::service(format!("{}: {e}", path.display()))
}

/// An output file, appended to through its compression.
pub(crate) struct Sink {
    path: PathBuf,
    compression: Compression,
    out: Option<Encoder>,
}

enum Encoder {
    Plain(BufWriter<File>),
    Gzip(GzEncoder<BufWriter<File>>),
    Zstd(zstd::Encoder<'static, BufWriter<File>>),
}

impl Sink {
    /// Opens `path` to append after its first `keep` bytes (cutting off whatever a
    /// killed run wrote after its last commit); `keep` 0 starts it empty.
    pub(crate) fn open(path: &Path, compression: Compression, keep: u64) -> Result<Sink, Failure> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| open_failed(path, &e))?;
        file.set_len(keep).map_err(|e| open_failed(path, &e))?;
        let mut file = file;
        io::Seek::seek(&mut file, io::SeekFrom::Start(keep)).map_err(|e| open_failed(path, &e))?;
        let mut sink = Sink {
            path: path.to_owned(),
            compression,
            out: None,
        };
        sink.out = Some(sink.encoder(file)?);
        Ok(sink)
    }

    fn encoder(&self, file: File) -> Result<Encoder, Failure> {
        let file = BufWriter::with_capacity(256 * 1024, file);
        Ok(match self.compression {
            Compression::None => Encoder::Plain(file),
            Compression::Gzip => {
                Encoder::Gzip(GzEncoder::new(file, flate2::Compression::default()))
            }
            Compression::Zstd => {
                Encoder::Zstd(zstd::Encoder::new(file, 3).map_err(|e| open_failed(&self.path, &e))?)
            }
        })
    }

    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        let result = match self.out.as_mut() {
            Some(Encoder::Plain(w)) => w.write_all(bytes),
            Some(Encoder::Gzip(w)) => w.write_all(bytes),
            Some(Encoder::Zstd(w)) => w.write_all(bytes),
            None => Ok(()),
        };
        result.map_err(|e| open_failed(&self.path, &e))
    }

    /// Ends what was written (its compressed member or frame), puts it on disk and
    /// returns the file's length: where a resumed run cuts back to.
    pub(crate) fn commit(&mut self) -> Result<u64, Failure> {
        let failed = |e: io::Error| open_failed(&self.path, &e);
        let buffered = match self.out.take() {
            Some(Encoder::Plain(w)) => w,
            Some(Encoder::Gzip(w)) => w.finish().map_err(failed)?,
            Some(Encoder::Zstd(w)) => w.finish().map_err(failed)?,
            None => return Err(Failure::service("the output was closed")),
        };
        let file = buffered.into_inner().map_err(|e| failed(e.into_error()))?;
        file.sync_data().map_err(failed)?;
        let length = file.metadata().map_err(failed)?.len();
        self.out = Some(self.encoder(file)?);
        Ok(length)
    }
}

/// Where a row came from, for the rejects file and error messages.
#[derive(Debug, Clone)]
pub(crate) struct Origin {
    /// The file, or for a copy the source table.
    pub(crate) source: String,
    /// The line a file's record starts on (0 for a copy).
    pub(crate) line: u64,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}", self.source, self.line)
        } else {
            f.write_str(&self.source)
        }
    }
}

/// One record of a file: its row, or why it isn't one (and its text).
#[derive(Debug)]
pub(crate) struct Record {
    pub(crate) origin: Origin,
    pub(crate) row: Result<DynamicEntity, Refusal>,
}

/// Why a record was not a row, and the record as it was.
#[derive(Debug, Clone)]
pub(crate) struct Refusal {
    pub(crate) reason: String,
    pub(crate) text: String,
}

/// The records of an input file, one at a time.
pub(crate) struct Records {
    path: String,
    inner: Inner,
}

enum Inner {
    JsonLines {
        lines: Box<dyn BufRead + Send>,
        line: u64,
        buffer: String,
    },
    Csv {
        reader: csv::Reader<Box<dyn Read + Send>>,
        header: CsvHeader,
    },
    Parquet(ParquetRows),
}

impl Records {
    /// Opens `path` for reading, by its name's format and compression.
    ///
    /// # Errors
    ///
    /// A name of no known format; a file that can't be opened; a CSV file without
    /// PartitionKey and RowKey columns.
    pub(crate) fn open(path: &Path) -> Result<Records, Failure> {
        let (format, compression) = kind_of(path)?;
        if format == Format::Parquet {
            return Ok(Records {
                path: path.display().to_string(),
                inner: Inner::Parquet(ParquetRows::open(path)?),
            });
        }
        let file = File::open(path).map_err(|e| open_failed(path, &e))?;
        let read: Box<dyn Read + Send> = match compression {
            Compression::None => Box::new(file),
            Compression::Gzip => Box::new(MultiGzDecoder::new(BufReader::new(file))),
            Compression::Zstd => {
                Box::new(zstd::Decoder::new(file).map_err(|e| open_failed(path, &e))?)
            }
        };
        let name = path.display().to_string();
        let inner = match format {
            Format::JsonLines => Inner::JsonLines {
                lines: Box::new(BufReader::with_capacity(256 * 1024, read)),
                line: 0,
                buffer: String::new(),
            },
            Format::Csv => {
                let mut reader = csv::ReaderBuilder::new()
                    .has_headers(true)
                    .from_reader(read);
                let fields = reader.headers().map_err(|e| csv_failed(&name, &e))?.clone();
                let header = CsvHeader::read(&fields)
                    .map_err(|why| Failure::usage(format!("{name}:1: not a table CSV: {why}")))?;
                Inner::Csv { reader, header }
            }
            Format::Parquet => unreachable!("opened above"),
        };
        Ok(Records { path: name, inner })
    }

    /// The next record; `None` at the end of the file.
    ///
    /// # Errors
    ///
    /// The file can't be read (or decompressed), or isn't of its format at all: a
    /// first line that is not a JSON object, a CSV record with the wrong number of
    /// fields. A record that is of the format but not a valid row is a
    /// [`Record`] with a [`Refusal`].
    pub(crate) fn next(&mut self) -> Result<Option<Record>, Failure> {
        match &mut self.inner {
            Inner::JsonLines {
                lines,
                line,
                buffer,
            } => loop {
                buffer.clear();
                let read = lines.read_line(buffer).map_err(|e| {
                    Failure::usage(format!("{}:{}: can't be read: {e}", self.path, *line + 1))
                })?;
                if read == 0 {
                    return Ok(None);
                }
                *line += 1;
                let text = buffer.trim_end_matches(['\n', '\r']);
                if text.trim().is_empty() {
                    continue;
                }
                let origin = Origin {
                    source: self.path.clone(),
                    line: *line,
                };
                let row = decode_entity(text.as_bytes()).map_err(|e| Refusal {
                    reason: e.message().to_owned(),
                    text: text.to_owned(),
                });
                if let Err(refusal) = &row {
                    if *line == 1 && !text.trim_start().starts_with('{') {
                        return Err(Failure::usage(format!(
                            "{}:1: not a JSON Lines file of rows (one JSON object a line, \
                             as tables export writes): {}",
                            self.path, refusal.reason
                        )));
                    }
                }
                return Ok(Some(Record { origin, row }));
            },
            Inner::Csv { reader, header } => {
                let mut record = csv::StringRecord::new();
                let more = reader
                    .read_record(&mut record)
                    .map_err(|e| csv_failed(&self.path, &e))?;
                if !more {
                    return Ok(None);
                }
                let line = record.position().map_or(0, csv::Position::line);
                let origin = Origin {
                    source: self.path.clone(),
                    line,
                };
                let row = header.row(&record).map_err(|reason| Refusal {
                    reason,
                    text: record.iter().collect::<Vec<_>>().join(","),
                });
                Ok(Some(Record { origin, row }))
            }
            Inner::Parquet(rows) => {
                let Some(row) = rows.next()? else {
                    return Ok(None);
                };
                let origin = Origin {
                    source: self.path.clone(),
                    line: rows.row_number,
                };
                let row = row.map_err(|reason| Refusal {
                    reason,
                    text: format!("row {} of the file", rows.row_number),
                });
                Ok(Some(Record { origin, row }))
            }
        }
    }
}

fn csv_failed(path: &str, e: &csv::Error) -> Failure {
    let line = e
        .position()
        .map_or(String::new(), |p| format!(":{}", p.line()));
    Failure::usage(format!("{path}{line}: not a well-formed CSV file: {e}"))
}

/// The columns of a Storage Explorer CSV: where the keys are, and each property's
/// value column and (when there is one) its `@type` column.
#[derive(Debug)]
struct CsvHeader {
    partition_key: usize,
    row_key: usize,
    properties: Vec<(String, usize, Option<usize>)>,
}

impl CsvHeader {
    fn read(fields: &csv::StringRecord) -> Result<CsvHeader, String> {
        let at = |name: &str| fields.iter().position(|f| f == name);
        let partition_key = at("PartitionKey").ok_or("no PartitionKey column")?;
        let row_key = at("RowKey").ok_or("no RowKey column")?;
        let mut properties = Vec::new();
        for (i, name) in fields.iter().enumerate() {
            if ["PartitionKey", "RowKey", "Timestamp"].contains(&name) || name.ends_with("@type") {
                continue;
            }
            if name.is_empty() {
                return Err(format!("column {} has no name", i + 1));
            }
            properties.push((name.to_owned(), i, at(&format!("{name}@type"))));
        }
        Ok(CsvHeader {
            partition_key,
            row_key,
            properties,
        })
    }

    /// A record as a row: each value read as its `@type` column says (a String
    /// where there is none); an empty type cell with an empty value is a property
    /// the row doesn't have. The values go through the service's JSON reader, so
    /// they are checked exactly as a JSON Lines file's are.
    fn row(&self, record: &csv::StringRecord) -> Result<DynamicEntity, String> {
        let cell = |i: usize| record.get(i).unwrap_or("");
        let mut json = Map::new();
        json.insert(
            "PartitionKey".into(),
            Json::String(cell(self.partition_key).into()),
        );
        json.insert("RowKey".into(), Json::String(cell(self.row_key).into()));
        for (name, value_at, type_at) in &self.properties {
            let value = cell(*value_at);
            let edm = type_at.map_or("Edm.String", |t| cell(t));
            if edm.is_empty() {
                if value.is_empty() {
                    continue;
                }
                return Err(format!(
                    "{name}: the value {value:?} has no type in {name}@type"
                ));
            }
            let typed = match edm {
                "Edm.String" | "Edm.Int64" | "Edm.DateTime" | "Edm.Guid" | "Edm.Binary" => {
                    Json::String(value.into())
                }
                "Edm.Boolean" => match value {
                    "true" | "True" | "TRUE" => Json::Bool(true),
                    "false" | "False" | "FALSE" => Json::Bool(false),
                    _ => {
                        return Err(format!(
                            "{name}: {value:?} is not an Edm.Boolean (true or false)"
                        ))
                    }
                },
                "Edm.Int32" | "Edm.Double" => match value {
                    "Infinity" | "-Infinity" | "NaN" if edm == "Edm.Double" => {
                        Json::String(value.into())
                    }
                    _ => serde_json::from_str::<serde_json::Number>(value)
                        .map(Json::Number)
                        .map_err(|_| format!("{name}: {value:?} is not an {edm}"))?,
                },
                other => {
                    return Err(format!(
                        "{name}: unknown type {other:?} in {name}@type (Edm.String, Edm.Int32, \
                         Edm.Int64, Edm.Double, Edm.Boolean, Edm.DateTime, Edm.Guid or Edm.Binary)"
                    ))
                }
            };
            json.insert(format!("{name}@odata.type"), Json::String(edm.into()));
            json.insert(name.clone(), typed);
        }
        let bytes = serde_json::to_vec(&Json::Object(json)).map_err(|e| e.to_string())?;
        decode_entity(&bytes).map_err(|e| e.message().to_owned())
    }
}

/// Removes `path` if it is there.
pub(crate) fn remove_if_there(path: &Path) -> Result<(), Failure> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(open_failed(path, &e)),
    }
}
