//! `tables query`: a table's rows on stdout, page by page, as an aligned table,
//! JSON, JSON Lines or CSV.

use std::io::{self, BufWriter, IsTerminal, Write};

use base64::Engine as _;
use clap::ArgMatches;
use tables_client::{
    ContinuationToken, DynamicEntity, Filter, QuerySpec, TableServiceClient, Value,
};
use tables_core::odata::encode_stored_entity;

use crate::{table_arg, Failure};

/// The filter the command line asks for: `--partition` and `--filter`, both if given.
pub(crate) fn filter_arg(args: &ArgMatches) -> Result<Option<Filter>, Failure> {
    let mut filter = args
        .try_get_one::<String>("partition")
        .ok()
        .flatten()
        .map(Filter::partition_key);
    if let Some(text) = args.get_one::<String>("filter") {
        let parsed = Filter::parse(text)?;
        filter = Some(match filter {
            Some(partition) => partition & parsed,
            None => parsed,
        });
    }
    Ok(filter)
}

pub(crate) async fn query(service: &TableServiceClient, args: &ArgMatches) -> Result<(), Failure> {
    let table = table_arg(args);
    let filter = filter_arg(args)?;
    let mut spec = QuerySpec::new();
    if let Some(filter) = filter {
        spec = spec.filter(filter);
    }
    if let Some(select) = args.get_one::<String>("select") {
        let names: Vec<String> = select
            .split(',')
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty())
            .collect();
        if names.is_empty() {
            return Err(Failure::usage(format!(
                "--select {select:?} names no property"
            )));
        }
        spec = spec.select(names);
    }
    let top = args.get_one::<u64>("top").copied();
    let terminal = io::stdout().is_terminal();
    let output = args
        .get_one::<String>("output")
        .map_or(if terminal { "table" } else { "jsonl" }, String::as_str);
    let mut out = BufWriter::new(io::stdout().lock());
    let mut writer: Box<dyn RowWriter> = match output {
        "table" => Box::new(TableWriter::default()),
        "json" => Box::new(JsonWriter { rows: 0 }),
        "csv" => {
            // Storage Explorer's layout needs every column in the header: a first
            // pass learns them (names and types, not rows).
            let mut columns = Columns::default();
            pages(service, table, &spec, top, |rows| {
                rows.iter().for_each(|row| columns.learn(row));
                Ok(())
            })
            .await?;
            Box::new(CsvWriter {
                columns,
                header: false,
            })
        }
        _ => Box::new(JsonLines),
    };
    pages(service, table, &spec, top, |rows| {
        writer.page(rows, &mut out)
    })
    .await?;
    writer.finish(&mut out)?;
    out.flush()?;
    Ok(())
}

/// Reads the query page by page, at most `top` rows in all, handing each page on.
async fn pages(
    service: &TableServiceClient,
    table: &str,
    spec: &QuerySpec,
    top: Option<u64>,
    mut each: impl FnMut(&[DynamicEntity]) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let mut continuation: Option<ContinuationToken> = None;
    let mut left = top.unwrap_or(u64::MAX);
    while left > 0 {
        let page = service
            .engine()
            .query(table, spec, continuation.as_ref())
            .await?;
        let take = usize::try_from(left)
            .unwrap_or(usize::MAX)
            .min(page.items.len());
        each(&page.items[..take])?;
        left -= take as u64;
        continuation = page.continuation;
        if continuation.is_none() {
            break;
        }
    }
    Ok(())
}

/// An output format, written page by page.
pub(crate) trait RowWriter {
    fn page(&mut self, rows: &[DynamicEntity], out: &mut dyn Write) -> Result<(), Failure>;
    fn finish(&mut self, _out: &mut dyn Write) -> Result<(), Failure> {
        Ok(())
    }
}

/// One row a line, as the service stores it (lossless: `@odata.type` annotations,
/// Timestamp).
pub(crate) struct JsonLines;

impl RowWriter for JsonLines {
    fn page(&mut self, rows: &[DynamicEntity], out: &mut dyn Write) -> Result<(), Failure> {
        let mut line = Vec::with_capacity(256);
        for row in rows {
            line.clear();
            encode_stored_entity(row, &mut line);
            line.push(b'\n');
            out.write_all(&line)?;
        }
        Ok(())
    }
}

/// One JSON array, written as the rows come.
struct JsonWriter {
    rows: u64,
}

impl RowWriter for JsonWriter {
    fn page(&mut self, rows: &[DynamicEntity], out: &mut dyn Write) -> Result<(), Failure> {
        let mut json = Vec::with_capacity(256);
        for row in rows {
            json.clear();
            json.extend_from_slice(if self.rows == 0 { b"[\n" } else { b",\n" });
            encode_stored_entity(row, &mut json);
            out.write_all(&json)?;
            self.rows += 1;
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut dyn Write) -> Result<(), Failure> {
        out.write_all(if self.rows == 0 { b"[]\n" } else { b"\n]\n" })?;
        Ok(())
    }
}

/// A value as text: strings as they are, Binary in base64, the rest in the
/// service's JSON forms (a Double's shortest exact form; `Infinity`, `NaN`).
pub(crate) fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Double(d) if d.is_infinite() => {
            if *d > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
        }
        Value::Double(d) => format!("{d:?}"),
        Value::Int32(n) => n.to_string(),
        Value::Int64(n) => n.to_string(),
        Value::Boolean(b) => b.to_string(),
        Value::DateTime(t) => t.to_string(),
        Value::Guid(g) => g.to_string(),
        Value::Binary(bytes) => base64::engine::general_purpose::STANDARD.encode(bytes),
    }
}

/// The system columns every row has.
pub(crate) const SYSTEM: [&str; 3] = ["PartitionKey", "RowKey", "Timestamp"];

pub(crate) fn system_value(row: &DynamicEntity, column: &str) -> String {
    match column {
        "PartitionKey" => row.partition_key.clone(),
        "RowKey" => row.row_key.clone(),
        _ => row.timestamp.map(|t| t.to_string()).unwrap_or_default(),
    }
}

/// An aligned table, page by page (a page's widths are its own; the header again
/// when a page has other columns).
#[derive(Default)]
struct TableWriter {
    header: Vec<String>,
}

/// The widest a table cell is shown; longer values end in `…`.
const MAX_CELL: usize = 40;

impl RowWriter for TableWriter {
    fn page(&mut self, rows: &[DynamicEntity], out: &mut dyn Write) -> Result<(), Failure> {
        if rows.is_empty() {
            return Ok(());
        }
        let mut columns: Vec<String> = SYSTEM.iter().map(|c| (*c).to_owned()).collect();
        for row in rows {
            for (name, _) in row.properties() {
                if !columns.iter().any(|c| c == name) {
                    columns.push(name.to_owned());
                }
            }
        }
        let cells: Vec<Vec<String>> = rows
            .iter()
            .map(|row| {
                columns
                    .iter()
                    .map(|c| {
                        let value = match row.get(c) {
                            Some(v) => text(v),
                            None if SYSTEM.contains(&c.as_str()) => system_value(row, c),
                            None => String::new(),
                        };
                        cut(&value.replace(['\n', '\r', '\t'], " "))
                    })
                    .collect()
            })
            .collect();
        let widths: Vec<usize> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                cells
                    .iter()
                    .map(|r| r[i].chars().count())
                    .chain([c.chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| -> String {
            let padded: Vec<String> = cells
                .iter()
                .zip(&widths)
                .map(|(cell, width)| format!("{cell:<width$}"))
                .collect();
            padded.join("  ").trim_end().to_owned() + "\n"
        };
        if columns != self.header {
            out.write_all(line(&columns).as_bytes())?;
            self.header = columns;
        }
        for row in &cells {
            out.write_all(line(row).as_bytes())?;
        }
        Ok(())
    }
}

fn cut(value: &str) -> String {
    if value.chars().count() <= MAX_CELL {
        value.to_owned()
    } else {
        value.chars().take(MAX_CELL - 1).chain(['…']).collect()
    }
}

/// The columns of a result, in order of first appearance, each with the Edm type
/// it was first seen with.
#[derive(Default, Debug)]
pub(crate) struct Columns {
    names: Vec<(String, String)>,
}

impl Columns {
    pub(crate) fn learn(&mut self, row: &DynamicEntity) {
        for (name, value) in row.properties() {
            if !self.names.iter().any(|(n, _)| n == name) {
                self.names
                    .push((name.to_owned(), value.edm_type().to_string()));
            }
        }
    }
}

/// Storage Explorer's CSV layout: the system columns, then each property beside a
/// `Name@type` column holding its row's Edm type.
pub(crate) struct CsvWriter {
    pub(crate) columns: Columns,
    pub(crate) header: bool,
}

impl RowWriter for CsvWriter {
    fn page(&mut self, rows: &[DynamicEntity], out: &mut dyn Write) -> Result<(), Failure> {
        if !self.header {
            let mut header: Vec<String> = SYSTEM.iter().map(|c| (*c).to_owned()).collect();
            for (name, _) in &self.columns.names {
                header.push(name.clone());
                header.push(format!("{name}@type"));
            }
            write_csv_line(out, &header)?;
            self.header = true;
        }
        for row in rows {
            let mut fields: Vec<String> = SYSTEM.iter().map(|c| system_value(row, c)).collect();
            for (name, _) in &self.columns.names {
                match row.get(name) {
                    Some(value) => {
                        fields.push(text(value));
                        fields.push(value.edm_type().to_string());
                    }
                    None => fields.extend([String::new(), String::new()]),
                }
            }
            write_csv_line(out, &fields)?;
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut dyn Write) -> Result<(), Failure> {
        if !self.header {
            let header: Vec<String> = SYSTEM.iter().map(|c| (*c).to_owned()).collect();
            write_csv_line(out, &header)?;
        }
        Ok(())
    }
}

/// One CSV record (RFC 4180: a field with a comma, quote or line break is quoted,
/// its quotes doubled).
pub(crate) fn write_csv_line(out: &mut dyn Write, fields: &[String]) -> io::Result<()> {
    let mut line = String::new();
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        if field.contains([',', '"', '\n', '\r']) {
            line.push('"');
            line.push_str(&field.replace('"', "\"\""));
            line.push('"');
        } else {
            line.push_str(field);
        }
    }
    line.push_str("\r\n");
    out.write_all(line.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_as_text_are_exact() {
        assert_eq!(text(&Value::Double(-0.0)), "-0.0");
        assert_eq!(text(&Value::Double(0.1)), "0.1");
        assert_eq!(text(&Value::Double(f64::NEG_INFINITY)), "-Infinity");
        assert_eq!(text(&Value::Int64(i64::MIN)), "-9223372036854775808");
        assert_eq!(text(&Value::Binary(vec![0, 255])), "AP8=");
    }

    #[test]
    fn csv_quotes_what_needs_it() {
        let mut out = Vec::new();
        write_csv_line(&mut out, &["a".into(), "b,c".into(), "say \"hi\"".into()]).unwrap();
        assert_eq!(out, b"a,\"b,c\",\"say \"\"hi\"\"\"\r\n");
    }

    #[test]
    fn long_cells_are_cut() {
        let long = "x".repeat(100);
        assert_eq!(cut(&long).chars().count(), MAX_CELL);
        assert!(cut(&long).ends_with('…'));
        assert_eq!(cut("short"), "short");
    }
}
