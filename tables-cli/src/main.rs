//! `tables`: list, create, drop and query the tables of an Azure Table storage
//! account (Azure Storage, Cosmos DB for Table, Azurite, `tables-server`) from the
//! command line. Queries stream page by page: a result is never held whole.
//!
//! Exit codes: 0 done; 1 the service or the network failed the command; 2 the
//! command line or its input is wrong; 3 a drop was not confirmed.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use base64::Engine as _;
use clap::{Arg, ArgAction, ArgMatches, Command};
use tables_client::{
    ContinuationToken, DynamicEntity, Error, ErrorKind, Filter, QuerySpec, TableServiceClient,
    Value,
};
use tables_core::odata::encode_stored_entity;

/// Where the connection string comes from, in order.
const CONNECTION_ENV: [&str; 2] = [
    "AZURE_STORAGE_CONNECTION_STRING",
    "TABLES_CONNECTION_STRING",
];

fn cli() -> Command {
    let connection = Arg::new("connection-string")
        .long("connection-string")
        .global(true)
        .value_name("CS")
        .help(
            "the account's connection string; else AZURE_STORAGE_CONNECTION_STRING, else \
             TABLES_CONNECTION_STRING",
        );
    let table = || Arg::new("table").required(true).value_name("TABLE");
    Command::new("tables")
        .about("List, create, drop and query the tables of an Azure Table storage account")
        .version(env!("CARGO_PKG_VERSION"))
        .subcommand_required(true)
        .arg(connection)
        .arg(
            Arg::new("quiet")
                .long("quiet")
                .short('q')
                .global(true)
                .action(ArgAction::SetTrue)
                .help("no messages on stderr, errors excepted"),
        )
        .after_help(
            "Exit codes: 0 done; 1 the service or the network failed; 2 a wrong command line \
             or input; 3 a drop not confirmed.\n\nExamples:\n  \
             export AZURE_STORAGE_CONNECTION_STRING='UseDevelopmentStorage=true'\n  \
             tables ls\n  tables query Orders --partition 2026-11 --output jsonl > orders.jsonl",
        )
        .subcommand(
            Command::new("ls")
                .about("List the account's tables, one name a line")
                .arg(Arg::new("prefix").long("prefix").value_name("P").help("only names starting with P"))
                .after_help("Examples:\n  tables ls\n  tables ls --prefix audit"),
        )
        .subcommand(
            Command::new("create")
                .about("Create a table")
                .arg(table())
                .after_help("Examples:\n  tables create Orders"),
        )
        .subcommand(
            Command::new("drop")
                .about("Delete a table and every row in it (asks first, unless --yes)")
                .arg(table())
                .arg(
                    Arg::new("yes")
                        .long("yes")
                        .short('y')
                        .action(ArgAction::SetTrue)
                        .help("don't ask; required when stdin is not a terminal"),
                )
                .after_help("Examples:\n  tables drop Scratch\n  tables drop Scratch --yes"),
        )
        .subcommand(
            Command::new("query")
                .about("Print a table's rows, streaming page by page")
                .arg(table())
                .arg(Arg::new("filter").long("filter").value_name("ODATA").help(
                    "an OData filter, as the service reads it: \"Price gt 10.0 and Kind eq 'book'\"",
                ))
                .arg(Arg::new("select").long("select").value_name("A,B").help("only these properties"))
                .arg(
                    Arg::new("top")
                        .long("top")
                        .value_name("N")
                        .value_parser(clap::value_parser!(u64))
                        .help("at most N rows in all"),
                )
                .arg(Arg::new("partition").long("partition").value_name("PK").help("only this PartitionKey"))
                .arg(
                    Arg::new("output")
                        .long("output")
                        .short('o')
                        .value_name("FORMAT")
                        .value_parser(["table", "json", "jsonl", "csv"])
                        .help(
                            "table (aligned, page by page), json, jsonl (one row a line, the \
                             service's JSON with @odata.type annotations and Timestamp) or csv \
                             (Storage Explorer's layout: a Name@type column beside each \
                             property; reads the result twice). Default: table on a terminal, \
                             else jsonl",
                        ),
                )
                .after_help(
                    "Examples:\n  tables query Orders --top 20\n  \
                     tables query Orders --filter \"Total gt 100.0\" --select Total,Customer -o csv\n  \
                     tables query Orders --partition 2026-11 -o jsonl | wc -l",
                ),
        )
}

/// Why a command failed, and its exit code.
#[derive(Debug)]
struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    fn usage(message: impl Into<String>) -> Failure {
        Failure {
            code: 2,
            message: message.into(),
        }
    }
}

impl From<Error> for Failure {
    fn from(err: Error) -> Failure {
        let code = match err.kind() {
            ErrorKind::InvalidInput | ErrorKind::InvalidFilter | ErrorKind::InvalidKey => 2,
            _ => 1,
        };
        Failure {
            code,
            message: err.to_string(),
        }
    }
}

impl From<io::Error> for Failure {
    fn from(err: io::Error) -> Failure {
        Failure {
            code: 1,
            message: format!("writing the output failed: {err}"),
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let matches = cli().get_matches();
    match run(&matches).await {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) ends the output, not in failure.
        Err(failure) if failure.message.contains("Broken pipe") => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("tables: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

async fn run(matches: &ArgMatches) -> Result<(), Failure> {
    let service = connect(matches)?;
    let quiet = matches.get_flag("quiet");
    let say = |message: String| {
        if !quiet {
            eprintln!("{message}");
        }
    };
    match matches.subcommand() {
        Some(("ls", args)) => {
            let names = match args.get_one::<String>("prefix") {
                Some(prefix) => service.list_tables_with_prefix(prefix).await?,
                None => service.list_tables().await?,
            };
            let mut out = BufWriter::new(io::stdout().lock());
            for name in names {
                writeln!(out, "{name}")?;
            }
            out.flush()?;
        }
        Some(("create", args)) => {
            let table = table_arg(args);
            service.create_table(table).await?;
            say(format!("created table {table}"));
        }
        Some(("drop", args)) => {
            let table = table_arg(args);
            if !args.get_flag("yes") {
                confirm_drop(table)?;
            }
            service.delete_table(table).await?;
            say(format!("dropped table {table}"));
        }
        Some(("query", args)) => query(&service, args).await?,
        _ => {
            return Err(Failure::usage(
                "a command is needed: ls, create, drop or query",
            ))
        }
    }
    Ok(())
}

fn table_arg(args: &ArgMatches) -> &str {
    args.get_one::<String>("table").map_or("", String::as_str)
}

fn connect(matches: &ArgMatches) -> Result<TableServiceClient, Failure> {
    let given = matches.get_one::<String>("connection-string").cloned();
    let from_env = || {
        CONNECTION_ENV
            .iter()
            .find_map(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
    };
    let connection = given.or_else(from_env).ok_or_else(|| {
        Failure::usage(format!(
            "no account to talk to: give --connection-string, or set {} or {} (for the \
             local emulator: UseDevelopmentStorage=true)",
            CONNECTION_ENV[0], CONNECTION_ENV[1]
        ))
    })?;
    Ok(TableServiceClient::from_connection_string(&connection)?)
}

/// Asks on the terminal for the table's name before a drop.
fn confirm_drop(table: &str) -> Result<(), Failure> {
    let refused = |why: &str| Failure {
        code: 3,
        message: format!("not dropping table {table}: {why}"),
    };
    if !io::stdin().is_terminal() {
        return Err(refused("stdin is not a terminal to confirm on; add --yes"));
    }
    eprint!("Drop table {table} and every row in it? Type its name to confirm: ");
    io::stderr().flush()?;
    let mut answer = String::new();
    io::stdin().read_line(&mut answer)?;
    if answer.trim() == table {
        Ok(())
    } else {
        Err(refused("the name typed was not the table's"))
    }
}

async fn query(service: &TableServiceClient, args: &ArgMatches) -> Result<(), Failure> {
    let table = table_arg(args);
    let mut filter = args
        .get_one::<String>("partition")
        .map(Filter::partition_key);
    if let Some(text) = args.get_one::<String>("filter") {
        let parsed = Filter::parse(text)?;
        filter = Some(match filter {
            Some(partition) => partition & parsed,
            None => parsed,
        });
    }
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
trait RowWriter {
    fn page(&mut self, rows: &[DynamicEntity], out: &mut dyn Write) -> Result<(), Failure>;
    fn finish(&mut self, _out: &mut dyn Write) -> Result<(), Failure> {
        Ok(())
    }
}

/// One row a line, as the service stores it (lossless: `@odata.type` annotations,
/// Timestamp).
struct JsonLines;

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
fn text(value: &Value) -> String {
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
const SYSTEM: [&str; 3] = ["PartitionKey", "RowKey", "Timestamp"];

fn system_value(row: &DynamicEntity, column: &str) -> String {
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
#[derive(Default)]
struct Columns {
    names: Vec<(String, String)>,
}

impl Columns {
    fn learn(&mut self, row: &DynamicEntity) {
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
struct CsvWriter {
    columns: Columns,
    header: bool,
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
fn write_csv_line(out: &mut dyn Write, fields: &[String]) -> io::Result<()> {
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

    #[test]
    fn the_command_line_is_well_formed() {
        cli().debug_assert();
    }
}
