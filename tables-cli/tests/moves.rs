//! `tables export`, `import` and `copy` on every engine: the mem engine (through the
//! library, as the binary runs it), Azurite and `tables-server` (through the
//! binary). Every Edm value at its extremes round-trips through every format and
//! compression; copies between Azurite and tables-server keep mixed row shapes; a
//! Storage Explorer CSV imports with its types; bad input is named with its file and
//! line and nothing is imported without a record of it; a SIGKILL during an export,
//! an import and a copy is finished by `--resume` with every row exactly once.

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tables_cli::{cli, run, Account, Accounts, Failure};
use tables_client::{BulkMode, DateTime, DynamicEntity, TableServiceClient, Value};
use tables_core::auth::DEVELOPMENT_ACCOUNT_KEY;
use tables_server::{RunningServer, Server};
use tables_tests::azurite;

/// Mem engine accounts by name: `mem:a`, `mem:b`.
struct Mem {
    accounts: BTreeMap<String, TableServiceClient>,
}

impl Mem {
    fn new() -> Mem {
        let accounts = ["mem:a", "mem:b"]
            .into_iter()
            .map(|n| (n.to_owned(), TableServiceClient::in_memory()))
            .collect();
        Mem { accounts }
    }

    fn get(&self, name: &str) -> TableServiceClient {
        self.accounts[name].clone()
    }

    /// Runs `tables ARGS` on these accounts (the default one is `mem:a`).
    async fn tables(&self, args: &[&str]) -> Result<(), Failure> {
        let matches = cli()
            .try_get_matches_from(std::iter::once("tables").chain(args.iter().copied()))
            .unwrap();
        run(&matches, self).await
    }
}

impl Accounts for Mem {
    fn connect(&self, account: Account<'_>) -> Result<TableServiceClient, Failure> {
        match account {
            Account::Default => Ok(self.get("mem:a")),
            Account::ConnectionString(name) => Ok(self.get(name)),
            Account::Url { url, .. } => Err(Failure::usage(format!("no mem account at {url}"))),
        }
    }
}

/// An account behind a connection string: tables-server here, or Azurite.
struct Remote {
    _server: Option<RunningServer>,
    connection: String,
    service: TableServiceClient,
}

async fn server() -> Remote {
    let server = Server::builder().port(0).start().await.unwrap();
    let connection = format!(
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={DEVELOPMENT_ACCOUNT_KEY};TableEndpoint={}",
        server.url()
    );
    Remote {
        service: TableServiceClient::from_connection_string(&connection).unwrap(),
        _server: Some(server),
        connection,
    }
}

fn azurite(test: &str) -> Option<Remote> {
    let url = azurite::url_or_skip(test)?;
    let connection = azurite::connection_string(&url);
    Some(Remote {
        service: TableServiceClient::from_connection_string(&connection).unwrap(),
        _server: None,
        connection,
    })
}

/// A table name no other test (nor an earlier run on the shared Azurite) uses.
fn unique(base: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{base}{}x{nanos}", NEXT.fetch_add(1, Ordering::Relaxed))
}

fn tables_command(account: &Remote, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tables"));
    command
        .args(args)
        .env("AZURE_STORAGE_CONNECTION_STRING", &account.connection)
        .env_remove("TABLES_CONNECTION_STRING")
        .stdin(Stdio::null());
    command
}

fn tables(account: &Remote, args: &[&str]) -> Output {
    tables_command(account, args).output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn ok(output: &Output) {
    assert!(
        output.status.success(),
        "{:?}: {}",
        output.status,
        stderr(output)
    );
}

/// Every Edm type at its extremes, rows of different shapes, a row with nothing.
fn rows() -> Vec<DynamicEntity> {
    let date = |s: &str| s.parse::<DateTime>().unwrap();
    let mut rows = vec![
        DynamicEntity::new("edge", "all")
            .with("I32Min", i32::MIN)
            .with("I32Max", i32::MAX)
            .with("I64Max", i64::MAX)
            .with("I64Min", i64::MIN)
            .with("Beyond53", 9_007_199_254_740_993i64)
            .with("NegZero", -0.0f64)
            .with("Tiny", 5e-324f64)
            .with("Huge", f64::MAX)
            .with("Inf", f64::INFINITY)
            .with("NegInf", f64::NEG_INFINITY)
            .with("Tenth", 0.1f64)
            .with("Late", date("9999-12-31T23:59:59.9999999Z"))
            .with("Early", date("1601-01-01T00:00:00.0000001Z"))
            .with(
                "Id",
                Value::Guid("c9da6455-213d-42c9-9a79-3e9149a57833".parse().unwrap()),
            )
            .with("Bytes", vec![0u8, 1, 254, 255])
            .with("NoBytes", Vec::<u8>::new())
            .with("Blank", "")
            .with("Text", "a,b \"c\"\nd\r\n— é 日本 \u{1F600}")
            .with("Yes", true)
            .with("No", false),
        DynamicEntity::new("edge", "empty"),
        DynamicEntity::new("edge", "keys with spaces, commas \"and\" quotes é"),
    ];
    for i in 0..460u32 {
        let mut row = DynamicEntity::new(format!("p{:02}", i % 23), format!("r{i:05}"));
        match i % 3 {
            0 => row.insert("Count", i),
            1 => row.insert("Name", format!("name {i}")),
            _ => row.insert("When", date("2026-11-28T10:00:00.1234567Z")),
        };
        if i % 5 == 0 {
            row.insert("Big", i64::from(i) << 40);
        }
        // One property, two Edm types: rows of a table need not agree.
        match i % 7 {
            0 => row.insert("Mixed", i),
            1 => row.insert("Mixed", format!("m{i}")),
            _ => None,
        };
        rows.push(row);
    }
    rows
}

/// `rows` as Azurite keeps them: it writes a Double `-0.0` back as `0`
/// (JavaScript's JSON; docs/service-behaviour.md), so a value that went through it
/// is compared as `0.0`.
fn through_azurite(rows: &[DynamicEntity]) -> Vec<DynamicEntity> {
    rows.iter()
        .map(|row| {
            let mut row = row.clone();
            let zeros: Vec<String> = row
                .properties()
                .filter(
                    |(_, v)| matches!(v, Value::Double(d) if d.to_bits() == (-0.0f64).to_bits()),
                )
                .map(|(n, _)| n.to_owned())
                .collect();
            for name in zeros {
                row.insert(name, 0.0f64);
            }
            row
        })
        .collect()
}

async fn fill(service: &TableServiceClient, table: &str, rows: &[DynamicEntity]) {
    service.create_table_if_not_exists(table).await.unwrap();
    service
        .bulk_writer::<DynamicEntity>(table)
        .mode(BulkMode::Insert)
        .write_all(rows.iter().cloned())
        .await
        .unwrap();
}

/// `table`'s rows equal `expected`, row by row, value by value (Doubles by bits).
async fn same_rows(
    service: &TableServiceClient,
    table: &str,
    expected: &[DynamicEntity],
    what: &str,
) {
    let stored = service.raw_rows(table).await.unwrap();
    let by_key: BTreeMap<_, _> = stored.iter().map(|r| (r.key(), r)).collect();
    assert_eq!(stored.len(), by_key.len(), "{what}: a key twice");
    assert_eq!(stored.len(), expected.len(), "{what}: row count");
    for row in expected {
        let got = by_key
            .get(&row.key())
            .unwrap_or_else(|| panic!("{what}: {:?} missing", row.key()));
        assert_eq!(got.len(), row.len(), "{what}: {:?}", row.key());
        for (name, value) in row.properties() {
            let other = got
                .get(name)
                .unwrap_or_else(|| panic!("{what}: {name} missing"));
            match (value, other) {
                (Value::Double(a), Value::Double(b)) => {
                    assert_eq!(a.to_bits(), b.to_bits(), "{what}: {name}")
                }
                _ => assert_eq!(value, other, "{what}: {:?} {name}", row.key()),
            }
        }
    }
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| !p.ends_with(".checkpoint"))
        .collect();
    names.sort();
    names
}

/// mem → file → Azurite → file → tables-server, in each format and compression,
/// compared row by row with what the mem engine held.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_format_round_trips_every_edm_value_across_engines() {
    let Some(azurite) = azurite("every_format_round_trips_every_edm_value_across_engines") else {
        return;
    };
    let server = server().await;
    let rows = rows();
    let kept_by_azurite = through_azurite(&rows);
    let mem = Mem::new();
    fill(&mem.get("mem:a"), "Source", &rows).await;
    for (format, compress) in [
        ("jsonl", None),
        ("jsonl", Some("gzip")),
        ("csv", Some("zstd")),
        ("csv", None),
        ("parquet", None),
        ("parquet", Some("zstd")),
        ("parquet", Some("gzip")),
    ] {
        let what = format!("{format} {compress:?}");
        let work = tempfile::tempdir().unwrap();
        let first = work.path().join("first");
        let mut args = vec![
            "--quiet",
            "export",
            "Source",
            "--to",
            first.to_str().unwrap(),
            "--format",
            format,
            "--parallel",
            "3",
        ];
        if let Some(c) = compress {
            args.extend(["--compress", c]);
        }
        mem.tables(&args).await.unwrap();
        let files = files_in(&first);
        assert_eq!(files.len(), 3, "{what}: a file per range: {files:?}");
        if format == "parquet" {
            for file in &files {
                assert!(file.ends_with(".parquet"), "{file}");
                assert!(std::fs::read(file).unwrap().starts_with(b"PAR1"), "{file}");
            }
        }

        let on_azurite = unique("RoundTrip");
        let mut import = vec!["import"];
        import.extend(files.iter().map(String::as_str));
        import.extend(["--table", &on_azurite, "--create"]);
        ok(&tables(&azurite, &import));
        same_rows(
            &azurite.service,
            &on_azurite,
            &kept_by_azurite,
            &format!("{what} on Azurite"),
        )
        .await;
        // The mem engine's files straight into tables-server: every bit kept.
        let mut strict = vec!["import"];
        strict.extend(files.iter().map(String::as_str));
        strict.extend(["--table", "Strict", "--create"]);
        ok(&tables(&server, &strict));
        same_rows(
            &server.service,
            "Strict",
            &rows,
            &format!("{what} mem to tables-server"),
        )
        .await;
        server.service.delete_table("Strict").await.unwrap();

        let second = work.path().join("second");
        let mut args = vec![
            "export",
            &on_azurite,
            "--to",
            second.to_str().unwrap(),
            "--format",
            format,
            "--parallel",
            "2",
        ];
        if let Some(c) = compress {
            args.extend(["--compress", c]);
        }
        ok(&tables(&azurite, &args));
        let files = files_in(&second);
        let mut import = vec!["import"];
        import.extend(files.iter().map(String::as_str));
        import.extend(["--table", "Back", "--create", "--mode", "replace"]);
        ok(&tables(&server, &import));
        same_rows(
            &server.service,
            "Back",
            &kept_by_azurite,
            &format!("{what} on tables-server"),
        )
        .await;
        azurite.service.delete_table(&on_azurite).await.unwrap();
        server.service.delete_table("Back").await.unwrap();
        // And back into the mem engine, through the library.
        let rejects = work.path().join("r.jsonl").display().to_string();
        let mut again = vec!["--quiet", "import"];
        again.extend(files.iter().map(String::as_str));
        again.extend(["--table", "Again", "--create", "--rejects", &rejects]);
        mem.tables(&again).await.unwrap();
        same_rows(
            &mem.get("mem:a"),
            "Again",
            &kept_by_azurite,
            &format!("{what} into mem"),
        )
        .await;
        mem.get("mem:a").delete_table("Again").await.unwrap();
    }
}

/// Copies between Azurite and tables-server (both ways) and between two mem
/// accounts keep every row shape; a second copy in insert mode writes nothing
/// twice and says so; `--keep-timestamp-as` keeps the source's Timestamps.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn copy_between_endpoints_keeps_mixed_shapes() {
    let Some(azurite) = azurite("copy_between_endpoints_keeps_mixed_shapes") else {
        return;
    };
    let server = server().await;
    let rows = rows();
    let source = unique("CopySource");
    fill(&azurite.service, &source, &rows).await;
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().to_str().unwrap();
    let checkpoint = format!("{dir}/copy.checkpoint");
    let rejects = format!("{dir}/copy.rejects.jsonl");
    let copy = |extra: &[&str]| {
        let mut args = vec![
            "copy",
            &source,
            "Copied",
            "--to-connection-string",
            &server.connection,
            "--parallel",
            "3",
            "--checkpoint",
            &checkpoint,
            "--rejects",
            &rejects,
        ];
        args.extend(extra);
        tables(&azurite, &args)
    };
    let output = copy(&["--keep-timestamp-as", "SourceTimestamp"]);
    ok(&output);
    assert!(
        stderr(&output).contains(&format!("{} written", rows.len())),
        "{}",
        stderr(&output)
    );
    let stored = server.service.raw_rows("Copied").await.unwrap();
    let sources = azurite.service.raw_rows(&source).await.unwrap();
    let stamps: BTreeMap<_, _> = sources
        .iter()
        .map(|r| (r.key(), r.timestamp.unwrap()))
        .collect();
    for row in &stored {
        assert_eq!(
            row.get("SourceTimestamp"),
            Some(&Value::DateTime(stamps[&row.key()]))
        );
    }
    let mut kept: Vec<DynamicEntity> = stored;
    kept.iter_mut().for_each(|r| {
        r.remove("SourceTimestamp");
    });
    server.service.delete_table("Copied").await.unwrap();
    fill(&server.service, "Copied", &kept).await;
    same_rows(
        &server.service,
        "Copied",
        &through_azurite(&rows),
        "Azurite to tables-server",
    )
    .await;

    // Again, insert mode: every row is there, identical.
    let output = copy(&[]);
    ok(&output);
    assert!(
        stderr(&output).contains(&format!(
            "0 written, {} already there identical",
            rows.len()
        )),
        "{}",
        stderr(&output)
    );

    // tables-server back to Azurite.
    let back = unique("CopyBack");
    let output = tables(
        &server,
        &[
            "copy",
            "Copied",
            &back,
            "--to-connection-string",
            &azurite.connection,
            "--checkpoint",
            &checkpoint,
            "--rejects",
            &rejects,
        ],
    );
    ok(&output);
    same_rows(
        &azurite.service,
        &back,
        &through_azurite(&rows),
        "tables-server to Azurite",
    )
    .await;
    azurite.service.delete_table(&back).await.unwrap();
    azurite.service.delete_table(&source).await.unwrap();

    // Between two mem accounts, through the library; with a filter.
    let mem = Mem::new();
    fill(&mem.get("mem:a"), "Tee", &rows).await;
    mem.tables(&[
        "--quiet",
        "copy",
        "Tee",
        "Tee",
        "--to-connection-string",
        "mem:b",
        "--checkpoint",
        &checkpoint,
        "--rejects",
        &rejects,
        "--filter",
        "PartitionKey ge 'p10'",
    ])
    .await
    .unwrap();
    let wanted: Vec<DynamicEntity> = rows
        .iter()
        .filter(|r| r.partition_key.as_str() >= "p10")
        .cloned()
        .collect();
    same_rows(&mem.get("mem:b"), "Tee", &wanted, "mem to mem").await;
}

/// A CSV as Storage Explorer writes it imports with its types: a column without a
/// `@type` column is a String; an empty type is an absent property.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_storage_explorer_csv_imports_with_its_types() {
    let server = server().await;
    let work = tempfile::tempdir().unwrap();
    let path = work.path().join("explorer.csv");
    std::fs::write(
        &path,
        "PartitionKey,RowKey,Timestamp,Age,Age@type,Big,Big@type,When,When@type,Ok,Ok@type,Note,Score,Score@type\r\n\
         Sales,001,2026-11-01T00:00:00.000Z,34,Edm.Int32,9007199254740993,Edm.Int64,2026-11-28T10:00:00.0000000Z,Edm.DateTime,true,Edm.Boolean,\"hello, \"\"world\"\"\",-0.0,Edm.Double\r\n\
         Sales,002,2026-11-01T00:00:00.000Z,,,,,,,false,Edm.Boolean,,1e300,Edm.Double\r\n",
    )
    .unwrap();
    ok(&tables(
        &server,
        &[
            "import",
            path.to_str().unwrap(),
            "--table",
            "Explorer",
            "--create",
        ],
    ));
    let rows = server.service.raw_rows("Explorer").await.unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].get("Age"), Some(&Value::Int32(34)));
    assert_eq!(
        rows[0].get("Big"),
        Some(&Value::Int64(9_007_199_254_740_993))
    );
    assert_eq!(
        rows[0].get("When"),
        Some(&Value::DateTime("2026-11-28T10:00:00Z".parse().unwrap()))
    );
    assert_eq!(rows[0].get("Ok"), Some(&Value::Boolean(true)));
    assert_eq!(
        rows[0].get("Note"),
        Some(&Value::String("hello, \"world\"".into()))
    );
    assert_eq!(
        rows[0]
            .get("Score")
            .and_then(Value::as_f64)
            .map(f64::to_bits),
        Some((-0.0f64).to_bits())
    );
    assert_eq!(
        rows[1].get("Age"),
        None,
        "an empty type is an absent property"
    );
    assert_eq!(
        rows[1].get("Note"),
        Some(&Value::String(String::new())),
        "an untyped column is a String"
    );
    assert_eq!(rows[1].get("Score"), Some(&Value::Double(1e300)));
}

/// Bad input: a clear error naming the file and line, or a rejected row in the
/// rejects file with its line and reason; nothing written without a record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_named_and_nothing_is_half_imported_unrecorded() {
    let server = server().await;
    let work = tempfile::tempdir().unwrap();
    let at = |name: &str| work.path().join(name).display().to_string();
    let write = |name: &str, text: &str| std::fs::write(at(name), text).unwrap();

    write("rows.jsonl", "{\"PartitionKey\":\"p\",\"RowKey\":\"1\"}\n");
    let output = tables(
        &server,
        &["import", &at("rows.jsonl"), "--table", "Missing"],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("table Missing doesn't exist"),
        "{}",
        stderr(&output)
    );
    assert!(stderr(&output).contains("--create"), "{}", stderr(&output));

    // A file of another tool: a JSON array, an XML feed, a CSV without keys, no
    // known extension. Nothing is written.
    write(
        "array.jsonl",
        "[{\"PartitionKey\":\"p\",\"RowKey\":\"1\"}]\n",
    );
    write("feed.jsonl", "<?xml version=\"1.0\"?><feed/>\n");
    write("people.csv", "Name,Age\nAda,36\n");
    write("rows.parquet", "PAR1");
    write("rows.xlsx", "PK");
    for (file, says) in [
        ("array.jsonl", "array.jsonl:1: not a JSON Lines file"),
        ("feed.jsonl", "feed.jsonl:1: not a JSON Lines file"),
        (
            "people.csv",
            "people.csv:1: not a table CSV: no PartitionKey column",
        ),
        ("rows.parquet", "rows.parquet: not a Parquet file of rows"),
        ("rows.xlsx", "can't tell the format"),
    ] {
        let output = tables(
            &server,
            &[
                "import",
                &at(file),
                "--table",
                "Bad",
                "--create",
                "--rejects",
                &at("bad.rejects"),
            ],
        );
        assert_eq!(output.status.code(), Some(2), "{file}: {}", stderr(&output));
        assert!(
            stderr(&output).contains(says),
            "{file}: {}",
            stderr(&output)
        );
    }
    assert!(server
        .service
        .raw_rows("Bad")
        .await
        .map_or(true, |r| r.is_empty()));

    // A wrong type annotation on line 3, a malformed value on line 5, a row that is
    // there already: each rejected with file, line and reason; the rest written.
    write(
        "mixed.jsonl",
        "{\"PartitionKey\":\"p\",\"RowKey\":\"1\",\"N\":1}\n\
         {\"PartitionKey\":\"p\",\"RowKey\":\"2\",\"N\":2}\n\
         {\"PartitionKey\":\"p\",\"RowKey\":\"3\",\"N@odata.type\":\"Edm.Int99\",\"N\":\"3\"}\n\
         \n\
         {\"PartitionKey\":\"p\",\"RowKey\":\"5\",\"N@odata.type\":\"Edm.Int64\",\"N\":\"five\"}\n\
         {\"PartitionKey\":\"p\",\"RowKey\":\"6\",\"N\":6}\n",
    );
    server.service.create_table("Mixed").await.unwrap();
    server
        .service
        .engine()
        .write(
            "Mixed",
            &tables_client::WriteOp::Insert(DynamicEntity::new("p", "6").with("N", 60)),
        )
        .await
        .unwrap();
    let output = tables(
        &server,
        &[
            "import",
            &at("mixed.jsonl"),
            "--table",
            "Mixed",
            "--rejects",
            &at("mixed.rejects"),
        ],
    );
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("2 written, 3 rejected"),
        "{}",
        stderr(&output)
    );
    assert!(
        stderr(&output).contains("3 rows rejected"),
        "{}",
        stderr(&output)
    );
    let rejects = std::fs::read_to_string(at("mixed.rejects")).unwrap();
    let lines: Vec<serde_json::Value> = rejects
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{rejects}");
    let line_of = |l: &serde_json::Value| l["line"].as_u64().unwrap();
    assert_eq!(lines.iter().map(line_of).collect::<Vec<_>>(), [3, 5, 6]);
    assert!(
        lines[0]["reason"].as_str().unwrap().contains("Edm.Int99"),
        "{rejects}"
    );
    assert!(lines[0]["source"]
        .as_str()
        .unwrap()
        .ends_with("mixed.jsonl"));
    assert_eq!(lines[2]["code"], "EntityAlreadyExists");
    assert_eq!(lines[2]["row"]["N"], 6);
    let stored = server.service.raw_rows("Mixed").await.unwrap();
    assert_eq!(stored.len(), 3, "1, 2 and the old 6");
    assert_eq!(
        stored[2].get("N"),
        Some(&Value::Int32(60)),
        "the old row kept"
    );

    // A second import refuses to write over the rejects of the first.
    let output = tables(
        &server,
        &[
            "import",
            &at("mixed.jsonl"),
            "--table",
            "Mixed",
            "--rejects",
            &at("mixed.rejects"),
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("is there already"),
        "{}",
        stderr(&output)
    );
}

/// Waits (at most 60 s) until `ready` says the child has made progress worth
/// killing it in, then kills it with SIGKILL.
fn kill_when(mut child: Child, ready: impl Fn() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "finished before it could be killed"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no progress in 60 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

/// Runs `tables ARGS` and kills it with SIGKILL once `ready` says so.
fn killed(server: &Remote, args: &[&str], ready: impl Fn() -> bool) {
    let child = tables_command(server, args)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    kill_when(child, ready);
}

/// The command line that finishes a killed `args`: the same job, unpaced (its
/// last two arguments, `--max-rps N`, dropped), with `--resume`.
fn resumed<'a>(args: &[&'a str]) -> Vec<&'a str> {
    assert_eq!(args[args.len() - 2], "--max-rps");
    let mut resume = args[..args.len() - 2].to_vec();
    resume.push("--resume");
    resume
}

/// Whether an export's file is longer than its checkpoint's committed length.
fn uncommitted_rows_on_disk(checkpoint: &str, dir: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(checkpoint) else {
        return false;
    };
    let Ok(state) = serde_json::from_str::<serde_json::Value>(&text) else {
        return false;
    };
    let ranges = state["tables"][0]["ranges"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    ranges.iter().any(|range| {
        let on_disk = std::fs::metadata(format!("{dir}/{}", range["file"].as_str().unwrap_or("")))
            .map_or(0, |m| m.len());
        let committed = if range["started"] == true {
            range["bytes"].as_u64().unwrap_or(u64::MAX)
        } else {
            0
        };
        on_disk > committed
    })
}

fn checkpoint_says(path: &str, text: &str) -> bool {
    std::fs::read_to_string(path).is_ok_and(|c| c.contains(text))
}

/// SIGKILL during an export, an import and a copy; `--resume` finishes each with
/// every row present exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_runs_finish_with_resume_every_row_once() {
    let server = server().await;
    let count = 5_000u32;
    let rows: Vec<DynamicEntity> = (0..count)
        .map(|i| {
            DynamicEntity::new(format!("k{:03}", i % 97), format!("{i:06}"))
                .with("N", i)
                .with("Pad", "x".repeat(400))
        })
        .collect();
    fill(&server.service, "Big", &rows).await;
    let work = tempfile::tempdir().unwrap();
    let at = |name: &str| work.path().join(name).display().to_string();

    // Export, paced so the kill comes mid-way: once a file holds more than its
    // range's committed length (rows written after the last checkpoint).
    let out = at("out");
    let checkpoint = format!("{out}/tables-export.checkpoint");
    let export = [
        "export",
        "Big",
        "--to",
        &out,
        "--parallel",
        "2",
        "--max-rps",
        "4",
    ];
    killed(&server, &export, || {
        uncommitted_rows_on_disk(&checkpoint, &out)
    });
    let refused = tables(&server, &export);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("--resume"));
    let resume = resumed(&export);
    ok(&tables(&server, &resume));
    assert!(
        !Path::new(&checkpoint).exists(),
        "a finished export removes its checkpoint"
    );
    let files = files_in(Path::new(&out));
    let mut import = vec!["import"];
    import.extend(files.iter().map(String::as_str));
    let rejects = at("e.rejects");
    import.extend(["--table", "Exported", "--create", "--rejects", &rejects]);
    ok(&tables(&server, &import));
    same_rows(
        &server.service,
        "Exported",
        &rows,
        "export killed and resumed",
    )
    .await;

    // Parquet: files of 1,000 rows, killed after one is written.
    let lake = at("lake");
    let checkpoint = format!("{lake}/tables-export.checkpoint");
    let parquet = [
        "export",
        "Big",
        "--to",
        &lake,
        "--format",
        "parquet",
        "--rows-per-file",
        "1000",
        "--parallel",
        "2",
        "--max-rps",
        "4",
    ];
    killed(&server, &parquet, || {
        checkpoint_says(&checkpoint, "\"segments\": 1")
    });
    let resume = resumed(&parquet);
    ok(&tables(&server, &resume));
    let parts = files_in(Path::new(&lake));
    let mut keys = std::collections::BTreeSet::new();
    let mut read = 0;
    for part in &parts {
        let file = std::fs::File::open(part).unwrap();
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap();
        for batch in reader {
            let batch = batch.unwrap();
            use arrow_array::cast::AsArray;
            let pk = batch
                .column_by_name("PartitionKey")
                .unwrap()
                .as_string::<i32>();
            let rk = batch.column_by_name("RowKey").unwrap().as_string::<i32>();
            for i in 0..batch.num_rows() {
                keys.insert((pk.value(i).to_owned(), rk.value(i).to_owned()));
                read += 1;
            }
        }
    }
    assert_eq!(read, rows.len(), "rows in the Parquet files");
    assert_eq!(keys.len(), rows.len(), "distinct rows in the Parquet files");

    // Import, killed after its first stretch.
    let file = files[0].clone();
    let mut jsonl = Vec::new();
    for f in &files {
        jsonl.extend(std::fs::read(f).unwrap());
    }
    // The files themselves hold every row once: nothing a killed run wrote after
    // its checkpoint survives the resume.
    let text = String::from_utf8(jsonl.clone()).unwrap();
    let keys: std::collections::BTreeSet<(String, String)> = text
        .lines()
        .map(|line| {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            (
                row["PartitionKey"].as_str().unwrap().to_owned(),
                row["RowKey"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        text.lines().count(),
        rows.len(),
        "rows in the exported files"
    );
    assert_eq!(
        keys.len(),
        rows.len(),
        "distinct rows in the exported files"
    );
    let plain = at("all.jsonl");
    std::fs::write(&plain, &jsonl).unwrap();
    let _ = file;
    let checkpoint = at("import.checkpoint");
    let import = [
        "import",
        &plain,
        "--table",
        "Imported",
        "--create",
        "--parallel",
        "1",
        "--checkpoint",
        &checkpoint,
        "--rejects",
        &at("i.rejects"),
        "--max-rps",
        "25",
    ];
    // Half a second into the second stretch: rows written the checkpoint doesn't
    // count, which the resumed run writes again and finds there.
    killed(&server, &import, || {
        checkpoint_says(&checkpoint, "\"records\": 2500") && {
            std::thread::sleep(Duration::from_millis(500));
            true
        }
    });
    let resume = resumed(&import);
    let output = tables(&server, &resume);
    ok(&output);
    same_rows(
        &server.service,
        "Imported",
        &rows,
        "import killed and resumed",
    )
    .await;
    assert!(
        !Path::new(&at("i.rejects")).exists(),
        "nothing rejected: {}",
        stderr(&output)
    );

    // Copy, killed after a page.
    let checkpoint = at("copy.checkpoint");
    let copy = [
        "copy",
        "Big",
        "Copied",
        "--parallel",
        "2",
        "--checkpoint",
        &checkpoint,
        "--rejects",
        &at("c.rejects"),
        "--max-rps",
        "25",
    ];
    killed(&server, &copy, || {
        checkpoint_says(&checkpoint, "\"started\": true")
    });
    let resume = resumed(&copy);
    let output = tables(&server, &resume);
    ok(&output);
    same_rows(&server.service, "Copied", &rows, "copy killed and resumed").await;
}

/// The Parquet schema: each Edm type in an Arrow type that holds it exactly, the
/// property and Edm type in each field's metadata, a column per type of a mixed
/// property; and a Parquet file of another tool (microsecond timestamps, large
/// strings, no metadata) imports with the types its columns say.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parquet_columns_hold_every_edm_type_exactly() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use arrow_array::Array;
    use arrow_schema::DataType;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    let mem = Mem::new();
    fill(&mem.get("mem:a"), "Source", &rows()).await;
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("p");
    mem.tables(&[
        "--quiet",
        "export",
        "Source",
        "--to",
        dir.to_str().unwrap(),
        "--format",
        "parquet",
        "--parallel",
        "1",
    ])
    .await
    .unwrap();
    let file = std::fs::File::open(dir.join("Source.00000.parquet")).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let schema = builder.schema().clone();
    let field = |name: &str| schema.field_with_name(name).unwrap().clone();
    let meta = |name: &str, key: &str| field(name).metadata().get(key).cloned();
    assert_eq!(field("PartitionKey").data_type(), &DataType::Utf8);
    assert!(!field("PartitionKey").is_nullable());
    assert_eq!(field("Late").data_type(), &DataType::Int64);
    assert_eq!(meta("Late", "tables.edm").as_deref(), Some("Edm.DateTime"));
    assert_eq!(
        meta("Late", "tables.unit").as_deref(),
        Some("100ns ticks since 0001-01-01T00:00:00Z")
    );
    assert_eq!(field("Id").data_type(), &DataType::FixedSizeBinary(16));
    assert_eq!(field("Bytes").data_type(), &DataType::Binary);
    assert_eq!(field("Tiny").data_type(), &DataType::Float64);
    assert_eq!(field("I32Min").data_type(), &DataType::Int32);
    assert_eq!(field("Yes").data_type(), &DataType::Boolean);
    // "Mixed": Int32 first, then String in its own column.
    assert_eq!(field("Mixed").data_type(), &DataType::Int32);
    assert_eq!(field("Mixed@Edm.String").data_type(), &DataType::Utf8);
    assert_eq!(
        meta("Mixed@Edm.String", "tables.property").as_deref(),
        Some("Mixed")
    );
    let batch = builder.build().unwrap().next().unwrap().unwrap();
    let late = batch
        .column_by_name("Late")
        .unwrap()
        .as_primitive::<Int64Type>();
    let row = (0..batch.num_rows()).find(|&i| !late.is_null(i)).unwrap();
    assert_eq!(
        late.value(row),
        3_155_378_975_999_999_999,
        "9999-12-31T23:59:59.9999999 in ticks"
    );

    // Another tool's file.
    use arrow_array::{
        ArrayRef, LargeStringArray, RecordBatch, StringArray, TimestampMicrosecondArray,
    };
    let other = work.path().join("other.parquet");
    let batch = RecordBatch::try_from_iter([
        (
            "PartitionKey",
            std::sync::Arc::new(StringArray::from(vec!["p", "p"])) as ArrayRef,
        ),
        (
            "RowKey",
            std::sync::Arc::new(StringArray::from(vec!["1", "2"])) as ArrayRef,
        ),
        (
            "Note",
            std::sync::Arc::new(LargeStringArray::from(vec![Some("long"), None])) as ArrayRef,
        ),
        (
            "At",
            std::sync::Arc::new(TimestampMicrosecondArray::from(vec![
                Some(1_764_324_000_123_456),
                Some(0),
            ])) as ArrayRef,
        ),
    ])
    .unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&other).unwrap(),
        batch.schema(),
        None,
    )
    .unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    mem.tables(&[
        "--quiet",
        "import",
        other.to_str().unwrap(),
        "--table",
        "Other",
        "--create",
        "--rejects",
        work.path().join("r").to_str().unwrap(),
    ])
    .await
    .unwrap();
    let rows = mem.get("mem:a").raw_rows("Other").await.unwrap();
    assert_eq!(rows[0].get("Note"), Some(&Value::String("long".into())));
    assert_eq!(rows[1].get("Note"), None, "null: no property");
    assert_eq!(
        rows[0].get("At"),
        Some(&Value::DateTime(
            DateTime::from_unix_nanos(1_764_324_000_123_456_000).unwrap()
        ))
    );
    assert_eq!(
        rows[1].get("At"),
        Some(&Value::DateTime("1970-01-01T00:00:00Z".parse().unwrap()))
    );
}

/// On Cosmos DB for Table's rules (the mem engine's Cosmos profile: results in no
/// order, 2 MB batches, 255-byte RowKeys): an export cut in ranges, an import and a
/// copy lose and double nothing, large rows that fill its batches included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_cosmos_rules_nothing_is_lost_or_doubled() {
    use tables_client::mem::{MemEngine, MemOptions};
    let cosmos = |seed| TableServiceClient::new(MemEngine::with_options(MemOptions::cosmos(seed)));
    let mem = Mem {
        accounts: [
            ("mem:a".to_owned(), cosmos(3)),
            ("mem:b".to_owned(), cosmos(5)),
        ]
        .into_iter()
        .collect(),
    };
    let mut rows = rows();
    // 150 rows of 30 KB in one partition: 100 of them would pass 4 MiB's half.
    rows.extend(
        (0..150).map(|i| {
            DynamicEntity::new("large", format!("{i:03}")).with("Blob", "y".repeat(30_000))
        }),
    );
    let source = mem.get("mem:a");
    source.create_table("Source").await.unwrap();
    for row in &rows {
        source
            .engine()
            .write("Source", &tables_client::WriteOp::Insert(row.clone()))
            .await
            .unwrap();
    }
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("out");
    mem.tables(&[
        "--quiet",
        "export",
        "Source",
        "--to",
        dir.to_str().unwrap(),
        "--parallel",
        "4",
    ])
    .await
    .unwrap();
    let files = files_in(&dir);
    let rejects = work.path().join("r").display().to_string();
    let mut import = vec!["--quiet", "--connection-string", "mem:b", "import"];
    import.extend(files.iter().map(String::as_str));
    import.extend(["--table", "Imported", "--create", "--rejects", &rejects]);
    mem.tables(&import).await.unwrap();
    same_rows(
        &mem.get("mem:b"),
        "Imported",
        &rows,
        "Cosmos export and import",
    )
    .await;
    let checkpoint = work.path().join("c").display().to_string();
    mem.tables(&[
        "--quiet",
        "copy",
        "Source",
        "Copied",
        "--to-connection-string",
        "mem:b",
        "--parallel",
        "3",
        "--checkpoint",
        &checkpoint,
        "--rejects",
        &rejects,
    ])
    .await
    .unwrap();
    same_rows(&mem.get("mem:b"), "Copied", &rows, "Cosmos copy").await;
}

/// ls, create, query and drop on the mem engine (through the library) and on
/// Azurite (through the binary).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_table_commands_on_mem_and_azurite() {
    let mem = Mem::new();
    mem.tables(&["--quiet", "create", "Listed"]).await.unwrap();
    mem.tables(&["ls"]).await.unwrap();
    assert_eq!(mem.get("mem:a").list_tables().await.unwrap(), ["Listed"]);
    fill(&mem.get("mem:a"), "Listed", &rows()[..10]).await;
    mem.tables(&["query", "Listed", "--top", "3", "-o", "jsonl"])
        .await
        .unwrap();
    mem.tables(&["--quiet", "drop", "Listed", "--yes"])
        .await
        .unwrap();
    assert!(mem.get("mem:a").list_tables().await.unwrap().is_empty());

    let Some(azurite) = azurite("the_table_commands_on_mem_and_azurite") else {
        return;
    };
    let name = unique("Listed");
    ok(&tables(&azurite, &["create", &name]));
    let listed = tables(&azurite, &["ls", "--prefix", &name]);
    ok(&listed);
    assert_eq!(String::from_utf8(listed.stdout).unwrap().trim(), name);
    fill(&azurite.service, &name, &rows()[..10]).await;
    let queried = tables(&azurite, &["query", &name, "--top", "3", "-o", "jsonl"]);
    ok(&queried);
    assert_eq!(
        String::from_utf8(queried.stdout).unwrap().lines().count(),
        3
    );
    ok(&tables(&azurite, &["drop", &name, "--yes"]));
    let listed = tables(&azurite, &["ls", "--prefix", &name]);
    assert!(listed.stdout.is_empty());
}

/// Ctrl-C (SIGINT) stops an export with exit code 130, saying how to finish; the
/// checkpoint is kept and `--resume` finishes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_keeps_the_checkpoint_for_resume() {
    let server = server().await;
    let rows: Vec<DynamicEntity> = (0..3_000u32)
        .map(|i| DynamicEntity::new(format!("k{:02}", i % 30), format!("{i:05}")).with("N", i))
        .collect();
    fill(&server.service, "Stopped", &rows).await;
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out").display().to_string();
    let checkpoint = format!("{out}/tables-export.checkpoint");
    let export = [
        "export",
        "Stopped",
        "--to",
        &out,
        "--parallel",
        "2",
        "--max-rps",
        "3",
    ];
    let child = tables_command(&server, &export)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !checkpoint_says(&checkpoint, "\"ranges\": [") {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no checkpoint in 30 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    assert!(stderr(&output).contains("--resume"), "{}", stderr(&output));
    assert!(Path::new(&checkpoint).exists(), "the checkpoint is kept");
    ok(&tables(
        &server,
        &[
            "export",
            "Stopped",
            "--to",
            &out,
            "--parallel",
            "2",
            "--resume",
        ],
    ));
    let text: String = files_in(Path::new(&out))
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    assert_eq!(text.lines().count(), rows.len());
}
