//! Parquet files of rows, exact for every Edm value.
//!
//! Each property is a nullable column (null: the row doesn't have it) whose Arrow
//! type holds every value of its Edm type exactly:
//!
//! | Edm | Arrow |
//! |---|---|
//! | String | Utf8 (`""` is a value, not null) |
//! | Int32, Int64 | Int32, Int64 |
//! | Double | Float64 (`-0.0`, the infinities and NaN kept) |
//! | Boolean | Boolean |
//! | DateTime | Int64: 100 ns ticks since 0001-01-01T00:00:00Z (the service's own unit; no Arrow timestamp unit reaches both 1601 and 9999 at 100 ns) |
//! | Guid | FixedSizeBinary(16), the UUID's bytes |
//! | Binary | Binary |
//!
//! Every field's metadata names its property (`tables.property`) and Edm type
//! (`tables.edm`). A property with values of several Edm types in one file (rows of
//! a table need not agree) gets a column per type: the first seen keeps the name,
//! the others are `Name@Edm.Int64` and so on. `PartitionKey` and `RowKey` are Utf8,
//! `Timestamp` Int64 ticks. Reading takes the metadata when it is there, else the
//! Arrow type (Parquet from other tools: timestamps of any unit, large strings).

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, FixedSizeBinaryBuilder, Float64Builder, Int32Builder,
    Int64Builder, StringBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float64Type, Int32Type, Int64Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression as Codec, GzipLevel, ZstdLevel};
use parquet::file::properties::WriterProperties;
use tables_client::{DateTime, DynamicEntity, EdmType, Value};

use crate::files::Compression;
use crate::Failure;

const PROPERTY: &str = "tables.property";
const EDM: &str = "tables.edm";
const UNIT: &str = "tables.unit";
const TICKS: &str = "100ns ticks since 0001-01-01T00:00:00Z";

fn failed(path: &Path, what: impl std::fmt::Display) -> Failure {
    Failure::service(format!("{}: {what}", path.display()))
}

/// A column of the file: a property and one of its Edm types.
struct Column {
    property: String,
    edm: EdmType,
    field: String,
}

fn arrow_type(edm: EdmType) -> DataType {
    match edm {
        EdmType::String => DataType::Utf8,
        EdmType::Int32 => DataType::Int32,
        EdmType::Int64 | EdmType::DateTime => DataType::Int64,
        EdmType::Double => DataType::Float64,
        EdmType::Boolean => DataType::Boolean,
        EdmType::Guid => DataType::FixedSizeBinary(16),
        EdmType::Binary => DataType::Binary,
    }
}

fn field(name: &str, property: &str, edm: EdmType, nullable: bool) -> Field {
    let mut metadata = HashMap::from([
        (PROPERTY.to_owned(), property.to_owned()),
        (EDM.to_owned(), edm.odata_name().to_owned()),
    ]);
    if edm == EdmType::DateTime {
        metadata.insert(UNIT.to_owned(), TICKS.to_owned());
    }
    Field::new(name, arrow_type(edm), nullable).with_metadata(metadata)
}

/// Writes `rows` as one Parquet file at `path` (made anew), on disk when this
/// returns; `compression` is the file's column compression.
pub(crate) fn write(
    path: &Path,
    rows: &[DynamicEntity],
    compression: Compression,
) -> Result<(), Failure> {
    let mut columns: Vec<Column> = Vec::new();
    let mut seen: HashMap<(String, EdmType), usize> = HashMap::new();
    let mut names: HashMap<String, usize> = HashMap::new();
    for row in rows {
        for (name, value) in row.properties() {
            let edm = value.edm_type();
            if seen.contains_key(&(name.to_owned(), edm)) {
                continue;
            }
            let types_before = names.entry(name.to_owned()).or_insert(0);
            let field = if *types_before == 0 {
                name.to_owned()
            } else {
                format!("{name}@{}", edm.odata_name())
            };
            *types_before += 1;
            seen.insert((name.to_owned(), edm), columns.len());
            columns.push(Column {
                property: name.to_owned(),
                edm,
                field,
            });
        }
    }
    let mut fields = vec![
        field("PartitionKey", "PartitionKey", EdmType::String, false),
        field("RowKey", "RowKey", EdmType::String, false),
        field("Timestamp", "Timestamp", EdmType::DateTime, true),
    ];
    fields.extend(
        columns
            .iter()
            .map(|c| field(&c.field, &c.property, c.edm, true)),
    );
    let schema = Arc::new(Schema::new(fields).with_metadata(HashMap::from([(
        "tables.format".to_owned(),
        "1".to_owned(),
    )])));
    let mut arrays: Vec<ArrayRef> = vec![
        strings(rows, |r| Some(r.partition_key.as_str())),
        strings(rows, |r| Some(r.row_key.as_str())),
        {
            let mut b = Int64Builder::with_capacity(rows.len());
            rows.iter()
                .for_each(|r| b.append_option(r.timestamp.map(DateTime::ticks)));
            Arc::new(b.finish())
        },
    ];
    for column in &columns {
        let value = |row: &'_ DynamicEntity| {
            row.get(&column.property)
                .filter(|v| v.edm_type() == column.edm)
                .cloned()
        };
        arrays.push(array(rows, column.edm, value).map_err(|e| failed(path, e))?);
    }
    let batch = RecordBatch::try_new(Arc::clone(&schema), arrays).map_err(|e| failed(path, e))?;
    let codec = match compression {
        Compression::None => Codec::UNCOMPRESSED,
        Compression::Gzip => Codec::GZIP(GzipLevel::default()),
        Compression::Zstd => Codec::ZSTD(ZstdLevel::default()),
    };
    let properties = WriterProperties::builder().set_compression(codec).build();
    let mut file = File::create(path).map_err(|e| failed(path, e))?;
    let mut writer =
        ArrowWriter::try_new(&mut file, schema, Some(properties)).map_err(|e| failed(path, e))?;
    writer.write(&batch).map_err(|e| failed(path, e))?;
    writer.close().map_err(|e| failed(path, e))?;
    file.sync_all().map_err(|e| failed(path, e))
}

fn strings<'r>(
    rows: &'r [DynamicEntity],
    get: impl Fn(&'r DynamicEntity) -> Option<&'r str>,
) -> ArrayRef {
    let mut b = StringBuilder::new();
    rows.iter().for_each(|r| b.append_option(get(r)));
    Arc::new(b.finish())
}

fn array(
    rows: &[DynamicEntity],
    edm: EdmType,
    value: impl Fn(&DynamicEntity) -> Option<Value>,
) -> Result<ArrayRef, arrow_schema::ArrowError> {
    let n = rows.len();
    Ok(match edm {
        EdmType::String => {
            let mut b = StringBuilder::new();
            rows.iter()
                .for_each(|r| b.append_option(value(r).as_ref().and_then(Value::as_str)));
            Arc::new(b.finish())
        }
        EdmType::Int32 => {
            let mut b = Int32Builder::with_capacity(n);
            rows.iter()
                .for_each(|r| b.append_option(value(r).and_then(|v| v.as_i32())));
            Arc::new(b.finish())
        }
        EdmType::Int64 => {
            let mut b = Int64Builder::with_capacity(n);
            rows.iter()
                .for_each(|r| b.append_option(value(r).and_then(|v| v.as_i64())));
            Arc::new(b.finish())
        }
        EdmType::DateTime => {
            let mut b = Int64Builder::with_capacity(n);
            rows.iter().for_each(|r| {
                b.append_option(value(r).and_then(|v| v.as_datetime()).map(DateTime::ticks))
            });
            Arc::new(b.finish())
        }
        EdmType::Double => {
            let mut b = Float64Builder::with_capacity(n);
            rows.iter()
                .for_each(|r| b.append_option(value(r).and_then(|v| v.as_f64())));
            Arc::new(b.finish())
        }
        EdmType::Boolean => {
            let mut b = BooleanBuilder::with_capacity(n);
            rows.iter()
                .for_each(|r| b.append_option(value(r).and_then(|v| v.as_bool())));
            Arc::new(b.finish())
        }
        EdmType::Guid => {
            let mut b = FixedSizeBinaryBuilder::with_capacity(n, 16);
            for row in rows {
                match value(row).and_then(|v| v.as_guid()) {
                    Some(guid) => b.append_value(guid.as_bytes())?,
                    None => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        EdmType::Binary => {
            let mut b = BinaryBuilder::new();
            for row in rows {
                match value(row) {
                    Some(Value::Binary(bytes)) => b.append_value(bytes),
                    _ => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
    })
}

/// How a file's column is read back.
#[derive(Debug)]
enum Role {
    PartitionKey,
    RowKey,
    Ignored,
    Property { name: String, read: Read },
}

#[derive(Debug, Clone, Copy)]
enum Read {
    String,
    LargeString,
    Int32,
    Int64,
    Ticks,
    Timestamp(TimeUnit),
    Double,
    Boolean,
    Guid,
    Binary,
    LargeBinary,
}

/// The rows of a Parquet file, one at a time.
pub(crate) struct ParquetRows {
    path: String,
    reader: ParquetRecordBatchReader,
    roles: Vec<Role>,
    batch: Option<RecordBatch>,
    at: usize,
    /// Rows handed out so far (a rejected row's "line" is its number, from 1).
    pub(crate) row_number: u64,
}

impl ParquetRows {
    pub(crate) fn open(path: &Path) -> Result<ParquetRows, Failure> {
        let name = path.display().to_string();
        let not_rows =
            |why: String| Failure::usage(format!("{name}: not a Parquet file of rows: {why}"));
        let file = File::open(path).map_err(|e| failed(path, e))?;
        let builder =
            ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| not_rows(e.to_string()))?;
        let schema = Arc::clone(builder.schema());
        let mut roles = Vec::with_capacity(schema.fields().len());
        for field in schema.fields() {
            let metadata = field.metadata();
            let property = metadata
                .get(PROPERTY)
                .map_or(field.name().as_str(), String::as_str);
            let role = match property {
                "PartitionKey" => Role::PartitionKey,
                "RowKey" => Role::RowKey,
                "Timestamp" => Role::Ignored,
                _ => {
                    let edm = metadata.get(EDM).map(String::as_str);
                    let read = match (edm, field.data_type()) {
                        (Some("Edm.DateTime"), DataType::Int64) => Read::Ticks,
                        (_, DataType::Utf8) => Read::String,
                        (_, DataType::LargeUtf8) => Read::LargeString,
                        (_, DataType::Int32) => Read::Int32,
                        (_, DataType::Int64) => Read::Int64,
                        (_, DataType::Float64) => Read::Double,
                        (_, DataType::Boolean) => Read::Boolean,
                        (_, DataType::FixedSizeBinary(16)) => Read::Guid,
                        (_, DataType::Binary) => Read::Binary,
                        (_, DataType::LargeBinary) => Read::LargeBinary,
                        (_, DataType::Timestamp(unit, _)) => Read::Timestamp(*unit),
                        (_, other) => {
                            return Err(not_rows(format!(
                                "column {} is {other}, which no Edm type holds exactly",
                                field.name()
                            )))
                        }
                    };
                    Role::Property {
                        name: property.to_owned(),
                        read,
                    }
                }
            };
            roles.push(role);
        }
        for (wanted, is) in [("PartitionKey", 0), ("RowKey", 1)] {
            let found = roles.iter().any(|r| match is {
                0 => matches!(r, Role::PartitionKey),
                _ => matches!(r, Role::RowKey),
            });
            if !found {
                return Err(not_rows(format!("no {wanted} column")));
            }
        }
        let reader = builder
            .with_batch_size(1_024)
            .build()
            .map_err(|e| not_rows(e.to_string()))?;
        Ok(ParquetRows {
            path: name,
            reader,
            roles,
            batch: None,
            at: 0,
            row_number: 0,
        })
    }

    /// The next row, or why it isn't one; `None` at the end.
    pub(crate) fn next(&mut self) -> Result<Option<Result<DynamicEntity, String>>, Failure> {
        loop {
            if let Some(batch) = &self.batch {
                if self.at < batch.num_rows() {
                    let row = self.row(batch, self.at);
                    self.at += 1;
                    self.row_number += 1;
                    return Ok(Some(row));
                }
            }
            match self.reader.next() {
                Some(batch) => {
                    self.batch = Some(batch.map_err(|e| {
                        Failure::usage(format!("{}: row {}: {e}", self.path, self.row_number + 1))
                    })?);
                    self.at = 0;
                }
                None => return Ok(None),
            }
        }
    }

    fn row(&self, batch: &RecordBatch, i: usize) -> Result<DynamicEntity, String> {
        let mut row = DynamicEntity::default();
        for (column, role) in batch.columns().iter().zip(&self.roles) {
            let key = |column: &ArrayRef| -> Result<String, String> {
                match column.data_type() {
                    DataType::Utf8 if !column.is_null(i) => {
                        Ok(column.as_string::<i32>().value(i).to_owned())
                    }
                    DataType::LargeUtf8 if !column.is_null(i) => {
                        Ok(column.as_string::<i64>().value(i).to_owned())
                    }
                    _ => Err("a key is null or not text".to_owned()),
                }
            };
            match role {
                Role::PartitionKey => row.partition_key = key(column)?,
                Role::RowKey => row.row_key = key(column)?,
                Role::Ignored => {}
                Role::Property { name, read } => {
                    if column.is_null(i) {
                        continue;
                    }
                    let value =
                        read_value(column, *read, i).map_err(|why| format!("{name}: {why}"))?;
                    if row.insert(name.clone(), value).is_some() {
                        return Err(format!("{name}: values in two of its columns"));
                    }
                }
            }
        }
        Ok(row)
    }
}

fn read_value(column: &ArrayRef, read: Read, i: usize) -> Result<Value, String> {
    let datetime =
        |nanos: i128| DateTime::from_unix_nanos_exact(nanos).map_err(|e| e.message().to_owned());
    Ok(match read {
        Read::String => Value::String(column.as_string::<i32>().value(i).to_owned()),
        Read::LargeString => Value::String(column.as_string::<i64>().value(i).to_owned()),
        Read::Int32 => Value::Int32(column.as_primitive::<Int32Type>().value(i)),
        Read::Int64 => Value::Int64(column.as_primitive::<Int64Type>().value(i)),
        Read::Ticks => {
            let ticks = column.as_primitive::<Int64Type>().value(i);
            Value::DateTime(DateTime::from_ticks(ticks).ok_or_else(|| {
                format!("{ticks} ticks is outside Edm.DateTime's range (1601 to 9999)")
            })?)
        }
        Read::Timestamp(unit) => {
            let (value, nanos_per) = match unit {
                TimeUnit::Second => (
                    column.as_primitive::<TimestampSecondType>().value(i),
                    1_000_000_000,
                ),
                TimeUnit::Millisecond => (
                    column.as_primitive::<TimestampMillisecondType>().value(i),
                    1_000_000,
                ),
                TimeUnit::Microsecond => (
                    column.as_primitive::<TimestampMicrosecondType>().value(i),
                    1_000,
                ),
                TimeUnit::Nanosecond => {
                    (column.as_primitive::<TimestampNanosecondType>().value(i), 1)
                }
            };
            Value::DateTime(datetime(i128::from(value) * nanos_per)?)
        }
        Read::Double => Value::Double(column.as_primitive::<Float64Type>().value(i)),
        Read::Boolean => Value::Boolean(column.as_boolean().value(i)),
        Read::Guid => {
            let bytes = column.as_fixed_size_binary().value(i);
            Value::Guid(uuid::Uuid::from_slice(bytes).map_err(|e| e.to_string())?)
        }
        Read::Binary => Value::Binary(column.as_binary::<i32>().value(i).to_vec()),
        Read::LargeBinary => Value::Binary(column.as_binary::<i64>().value(i).to_vec()),
    })
}
