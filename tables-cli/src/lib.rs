//! `tables`: list, create, drop, query, export, import and copy the tables of an
//! Azure Table storage account (Azure Storage, Cosmos DB for Table, Azurite,
//! `tables-server`) from the command line. Everything streams: a result, a file or
//! a copy is never held whole. Exports, imports and copies keep a checkpoint and
//! finish after a crash or Ctrl-C with `--resume`, no row missing and none twice.
//!
//! The binary is `src/main.rs`; this library is what it runs, so tests can run the
//! commands on any [`TableServiceClient`] (the in-memory engine among them) through
//! [`Accounts`].
//!
//! Exit codes ([`Failure::code`]): 0 done; 1 the service or the network failed the
//! command; 2 the command line or its input is wrong; 3 a drop was not confirmed;
//! 4 the command finished but rows were rejected (each is in the rejects file);
//! 130 interrupted (Ctrl-C): the checkpoint is kept for `--resume`.

mod account_url;
mod checkpoint;
mod copy;
mod export;
mod files;
mod import;
mod limit;
mod load;
mod pages;
mod parquet;
mod progress;
mod query;
mod ranges;

use std::io::{self, IsTerminal, Write};
use std::sync::Arc;

use clap::{Arg, ArgAction, ArgMatches, Command};
use tables_client::{Error, ErrorKind, TableServiceClient};

/// Where the connection string comes from when `--connection-string` is not given,
/// in order.
pub const CONNECTION_ENV: [&str; 2] = [
    "AZURE_STORAGE_CONNECTION_STRING",
    "TABLES_CONNECTION_STRING",
];

/// An account a command line names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Account<'a> {
    /// None named: the environment's connection string ([`CONNECTION_ENV`]).
    Default,
    /// `--connection-string` (or `--to-connection-string`).
    ConnectionString(&'a str),
    /// `--account-url` (or `--to-account-url`): a SAS in its query signs the
    /// requests; without one, Entra ID through the Azure CLI's sign-in (`az
    /// login`). `ca_file` (`--ca-file`) adds a trusted root for HTTPS.
    Url {
        /// The account's URL, with or without a SAS.
        url: &'a str,
        /// A PEM file of certificates to trust besides the system's.
        ca_file: Option<&'a str>,
    },
}

/// Turns the accounts of a command line into clients: the binary uses
/// [`ConnectionStrings`]; tests may hand out in-memory clients.
pub trait Accounts: Send + Sync {
    /// The client for `account`.
    ///
    /// # Errors
    ///
    /// A [`Failure`] with code 2 when no account is given or what names it is wrong.
    fn connect(&self, account: Account<'_>) -> Result<TableServiceClient, Failure>;
}

/// Connection strings as the service's SDKs read them; the default account from
/// [`CONNECTION_ENV`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ConnectionStrings;

impl Accounts for ConnectionStrings {
    fn connect(&self, account: Account<'_>) -> Result<TableServiceClient, Failure> {
        let connection_string = match account {
            Account::Default => None,
            Account::ConnectionString(text) => Some(text),
            Account::Url { url, ca_file } => return account_url::connect(url, ca_file),
        };
        let from_env = || {
            CONNECTION_ENV
                .iter()
                .find_map(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
        };
        let connection = connection_string
            .map(str::to_owned)
            .or_else(from_env)
            .ok_or_else(|| {
                Failure::usage(format!(
                    "no account to talk to: give --connection-string or --account-url, or set \
                     {} or {} (for the local emulator: UseDevelopmentStorage=true)",
                    CONNECTION_ENV[0], CONNECTION_ENV[1]
                ))
            })?;
        Ok(TableServiceClient::from_connection_string(&connection)?)
    }
}

/// Why a command failed, and the exit code that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The process's exit code (see the crate docs).
    pub code: u8,
    /// What went wrong, and where; printed after `tables: `.
    pub message: String,
}

impl Failure {
    /// A wrong command line or input: exit code 2.
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure {
            code: 2,
            message: message.into(),
        }
    }

    /// The service or the network failed: exit code 1.
    pub fn service(message: impl Into<String>) -> Failure {
        Failure {
            code: 1,
            message: message.into(),
        }
    }

    /// Exit code of a command that finished but rejected rows.
    pub const REJECTED: u8 = 4;
    /// Exit code of a command stopped by Ctrl-C (its checkpoint kept).
    pub const INTERRUPTED: u8 = 130;
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<Error> for Failure {
    fn from(err: Error) -> Failure {
        Failure::from(&err)
    }
}

impl From<&Error> for Failure {
    fn from(err: &Error) -> Failure {
        let code = match err.kind() {
            ErrorKind::InvalidInput
            | ErrorKind::InvalidFilter
            | ErrorKind::InvalidKey
            | ErrorKind::InvalidTableName => 2,
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
        Failure::service(format!("writing the output failed: {err}"))
    }
}

/// The command line: every command, its arguments, help and examples.
pub fn cli() -> Command {
    let connection = Arg::new("connection-string")
        .long("connection-string")
        .global(true)
        .value_name("CS")
        .help(
            "the account's connection string (an account key, a SAS, or \
             UseDevelopmentStorage=true); else AZURE_STORAGE_CONNECTION_STRING, else \
             TABLES_CONNECTION_STRING",
        );
    let account_url = Arg::new("account-url")
        .long("account-url")
        .global(true)
        .value_name("URL")
        .conflicts_with("connection-string")
        .help(
            "the account's URL instead of a connection string: with a SAS in its query \
             (https://acct.table.core.windows.net/?sv=...&sig=...), or without one to sign in \
             with Entra ID through the Azure CLI (az login)",
        );
    let ca_file = Arg::new("ca-file")
        .long("ca-file")
        .global(true)
        .value_name("PEM")
        .help("trust the certificates in this PEM file too (an emulator's own HTTPS certificate)");
    let table = || Arg::new("table").required(true).value_name("TABLE");
    let filter = || {
        Arg::new("filter")
            .long("filter")
            .value_name("ODATA")
            .help("an OData filter, as the service reads it: \"Price gt 10.0 and Kind eq 'book'\"")
    };
    let parallel = || {
        Arg::new("parallel")
            .long("parallel")
            .short('p')
            .value_name("N")
            .value_parser(clap::value_parser!(u16).range(1..=64))
            .default_value("4")
            .help("workers at once (key ranges read, or batches written, side by side)")
    };
    let resume = || {
        Arg::new("resume")
            .long("resume")
            .action(ArgAction::SetTrue)
            .help("finish the interrupted run its checkpoint describes")
    };
    let checkpoint = || {
        Arg::new("checkpoint")
            .long("checkpoint")
            .value_name("FILE")
            .help("where the checkpoint is kept (default: see the command's help)")
    };
    let max_rps = || {
        Arg::new("max-rps")
            .long("max-rps")
            .value_name("N")
            .value_parser(clap::value_parser!(u32).range(1..))
            .help("at most N requests a second to the service, all workers together")
    };
    let mode = || {
        Arg::new("mode")
            .long("mode")
            .value_name("MODE")
            .value_parser(["insert", "merge", "replace"])
            .default_value("insert")
            .help(
                "insert (a row already there is rejected), merge (insert or merge) or \
                 replace (insert or replace)",
            )
    };
    let rejects = || {
        Arg::new("rejects")
            .long("rejects")
            .value_name("FILE")
            .help("where rows that fail are written, one JSON line each with its reason")
    };
    Command::new("tables")
        .about("List, create, drop, query, export, import and copy Azure Table storage tables")
        .version(env!("CARGO_PKG_VERSION"))
        .subcommand_required(true)
        .arg(connection)
        .arg(account_url)
        .arg(ca_file)
        .arg(
            Arg::new("quiet")
                .long("quiet")
                .short('q')
                .global(true)
                .action(ArgAction::SetTrue)
                .help("no progress or summary on stderr, errors excepted"),
        )
        .after_help(
            "Exit codes: 0 done; 1 the service or the network failed; 2 a wrong command line \
             or input; 3 a drop not confirmed; 4 done, but rows were rejected (see the \
             rejects file); 130 interrupted (finish with --resume).\n\nExamples:\n  \
             export AZURE_STORAGE_CONNECTION_STRING='UseDevelopmentStorage=true'\n  \
             tables ls\n  tables query Orders --partition 2026-11 --output jsonl > orders.jsonl\n  \
             tables export Orders --to backup/ --compress zstd\n  \
             tables import backup/Orders.jsonl.zst --table Orders",
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
                .arg(filter())
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
        .subcommand(
            Command::new("export")
                .about("Write tables to files, losslessly: every Edm type, every value, every row shape")
                .arg(Arg::new("tables").required(true).num_args(1..).value_name("TABLE"))
                .arg(
                    Arg::new("to")
                        .long("to")
                        .required(true)
                        .value_name("DIR")
                        .help("the directory the files go to (made if missing): TABLE.jsonl, or TABLE.NNN.jsonl with --parallel"),
                )
                .arg(
                    Arg::new("format")
                        .long("format")
                        .short('f')
                        .value_name("FORMAT")
                        .value_parser(["jsonl", "csv", "parquet"])
                        .default_value("jsonl")
                        .help(
                            "jsonl: each row the service's JSON with its @odata.type \
                             annotations and Timestamp; csv: Storage Explorer's layout (a \
                             Name@type column beside each property; the header is the union \
                             of the file's columns); parquet: a column per property and Edm \
                             type, exact (DateTime as 100 ns ticks), files of at most 100,000 \
                             rows (TABLE.00000.parquet, ...)",
                        ),
                )
                .arg(filter())
                .arg(parallel())
                .arg(
                    Arg::new("compress")
                        .long("compress")
                        .value_name("ALG")
                        .value_parser(["gzip", "zstd"])
                        .help("compress the files (.gz, .zst; Parquet compresses its columns)"),
                )
                .arg(
                    Arg::new("rows-per-file")
                        .long("rows-per-file")
                        .value_name("N")
                        .value_parser(clap::value_parser!(u32).range(1..))
                        .help("Parquet: start a new file after N rows (default 100,000; whole pages, so a file may hold up to a page more)"),
                )
                .arg(resume())
                .arg(checkpoint())
                .arg(max_rps())
                .after_help(
                    "The checkpoint is DIR/tables-export.checkpoint unless --checkpoint says; \
                     it is removed when the export is done.\n\nExamples:\n  \
                     tables export Orders Customers --to backup/\n  \
                     tables export Orders --to backup/ --format csv --filter \"Year eq 2026\"\n  \
                     tables export Events --to backup/ --parallel 8 --compress zstd\n  \
                     tables export Events --to lake/ --format parquet --compress zstd\n  \
                     tables export Events --to backup/ --parallel 8 --compress zstd --resume",
                ),
        )
        .subcommand(
            Command::new("import")
                .about("Write rows from files into a table, in batches per partition")
                .arg(
                    Arg::new("paths")
                        .required(true)
                        .num_args(1..)
                        .value_name("PATH")
                        .help("files written by export or Storage Explorer: .jsonl or .csv, optionally .gz or .zst, or .parquet"),
                )
                .arg(Arg::new("table").long("table").short('t').required(true).value_name("TABLE"))
                .arg(mode())
                .arg(parallel())
                .arg(
                    Arg::new("create")
                        .long("create")
                        .action(ArgAction::SetTrue)
                        .help("create the table if it doesn't exist"),
                )
                .arg(rejects())
                .arg(resume())
                .arg(checkpoint())
                .arg(max_rps())
                .after_help(
                    "Rows that fail (a wrong value, a key already there in insert mode) go to \
                     the rejects file (default TABLE.rejects.jsonl) with their file, line and \
                     reason; the exit code is then 4. The checkpoint is \
                     TABLE.import.checkpoint unless --checkpoint says.\n\nExamples:\n  \
                     tables import backup/Orders.jsonl --table Orders --create\n  \
                     tables import export.csv --table Orders --mode merge\n  \
                     tables import backup/Events.*.jsonl.zst --table Events --parallel 8 --resume",
                ),
        )
        .subcommand(
            Command::new("copy")
                .about("Copy a table's rows to another table, in this account or another")
                .arg(Arg::new("source").required(true).value_name("SRC_TABLE"))
                .arg(Arg::new("dest").required(true).value_name("DEST_TABLE"))
                .arg(
                    Arg::new("to-connection-string")
                        .long("to-connection-string")
                        .value_name("CS")
                        .help("the destination's account (default: the source's)"),
                )
                .arg(
                    Arg::new("to-account-url")
                        .long("to-account-url")
                        .value_name("URL")
                        .conflicts_with("to-connection-string")
                        .help("the destination's account by URL (with a SAS, or Entra ID)"),
                )
                .arg(filter())
                .arg(mode())
                .arg(parallel())
                .arg(
                    Arg::new("keep-timestamp-as")
                        .long("keep-timestamp-as")
                        .value_name("PROPERTY")
                        .help("store each source row's Timestamp in this property (the service sets Timestamp anew)"),
                )
                .arg(rejects())
                .arg(resume())
                .arg(checkpoint())
                .arg(max_rps())
                .after_help(
                    "The destination table is created if missing. Rejected rows go to the \
                     rejects file (default DEST_TABLE.rejects.jsonl), exit code 4. The \
                     checkpoint is SRC_TABLE-DEST_TABLE.copy.checkpoint unless --checkpoint \
                     says.\n\nExamples:\n  tables copy Orders OrdersBackup\n  \
                     tables copy Orders Orders --to-connection-string \"$DEST\" --parallel 8\n  \
                     tables copy Orders Orders --to-connection-string \"$DEST\" --keep-timestamp-as SourceTimestamp",
                ),
        )
}

/// Runs a parsed command line; `accounts` turns its connection strings into clients.
///
/// # Errors
///
/// The [`Failure`] to print, with its exit code.
pub async fn run(matches: &ArgMatches, accounts: &dyn Accounts) -> Result<(), Failure> {
    let ca_file = matches.get_one::<String>("ca-file").map(String::as_str);
    let source = match (
        matches.get_one::<String>("connection-string"),
        matches.get_one::<String>("account-url"),
    ) {
        (Some(cs), _) => Account::ConnectionString(cs),
        (None, Some(url)) => Account::Url { url, ca_file },
        (None, None) => Account::Default,
    };
    let quiet = matches.get_flag("quiet");
    let say = |message: String| {
        if !quiet {
            eprintln!("{message}");
        }
    };
    let Some((name, args)) = matches.subcommand() else {
        return Err(Failure::usage("a command is needed: see tables --help"));
    };
    let limit = args
        .try_get_one::<u32>("max-rps")
        .ok()
        .flatten()
        .copied()
        .map(limit::RateLimit::per_second);
    let connect = |account: Account<'_>| -> Result<TableServiceClient, Failure> {
        let service = accounts.connect(account)?;
        Ok(match &limit {
            Some(limit) => limit::limited(&service, Arc::clone(limit)),
            None => service,
        })
    };
    let service = connect(source)?;
    let progress = progress::Progress::new(quiet);
    match name {
        "ls" => {
            let names = match args.get_one::<String>("prefix") {
                Some(prefix) => service.list_tables_with_prefix(prefix).await?,
                None => service.list_tables().await?,
            };
            let mut out = io::BufWriter::new(io::stdout().lock());
            for name in names {
                writeln!(out, "{name}")?;
            }
            out.flush()?;
        }
        "create" => {
            let table = table_arg(args);
            service.create_table(table).await?;
            say(format!("created table {table}"));
        }
        "drop" => {
            let table = table_arg(args);
            if !args.get_flag("yes") {
                confirm_drop(table)?;
            }
            service.delete_table(table).await?;
            say(format!("dropped table {table}"));
        }
        "query" => query::query(&service, args).await?,
        "export" => export::export(&service, args, &progress).await?,
        "import" => import::import(&service, args, &progress).await?,
        "copy" => {
            let dest = match (
                args.get_one::<String>("to-connection-string"),
                args.get_one::<String>("to-account-url"),
            ) {
                (Some(cs), _) => connect(Account::ConnectionString(cs))?,
                (None, Some(url)) => connect(Account::Url { url, ca_file })?,
                (None, None) => service.clone(),
            };
            copy::copy(&service, &dest, args, &progress).await?;
        }
        other => return Err(Failure::usage(format!("unknown command {other}"))),
    }
    Ok(())
}

pub(crate) fn table_arg(args: &ArgMatches) -> &str {
    args.get_one::<String>("table").map_or("", String::as_str)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        cli().debug_assert();
    }
}
