//! The `tables` binary against a `tables-server` started here: each command's
//! output, its refusals and exit codes, and JSON Lines that read back every Edm
//! value exactly.

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::process::{Command, Output, Stdio};

use tables_client::{DateTime, DynamicEntity, TableServiceClient, WriteOp};
use tables_core::auth::DEVELOPMENT_ACCOUNT_KEY;
use tables_server::{RunningServer, Server};

struct Account {
    _server: RunningServer,
    connection: String,
    service: TableServiceClient,
}

async fn account() -> Account {
    let server = Server::builder().port(0).start().await.unwrap();
    let connection = format!(
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={DEVELOPMENT_ACCOUNT_KEY};TableEndpoint={}",
        server.url()
    );
    let service = TableServiceClient::from_connection_string(&connection).unwrap();
    Account {
        _server: server,
        connection,
        service,
    }
}

/// Runs `tables` with `args`, the account's connection string in the environment,
/// stdin empty (not a terminal).
fn tables(account: &Account, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tables"))
        .args(args)
        .env("AZURE_STORAGE_CONNECTION_STRING", &account.connection)
        .env_remove("TABLES_CONNECTION_STRING")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// Every Edm type at its extremes, and the empty and odd ones.
fn extremes(pk: &str, rk: &str) -> DynamicEntity {
    DynamicEntity::new(pk, rk)
        .with("I32", i32::MIN)
        .with("I64", i64::MAX)
        .with("I64Min", i64::MIN)
        .with("NegZero", -0.0f64)
        .with("Tiny", 5e-324f64)
        .with(
            "Late",
            "9999-12-31T23:59:59.9999999Z".parse::<DateTime>().unwrap(),
        )
        .with(
            "Early",
            "1601-01-01T00:00:00.0000001Z".parse::<DateTime>().unwrap(),
        )
        .with("Id", uuid_like())
        .with("Bytes", vec![0u8, 1, 254, 255])
        .with("NoBytes", Vec::<u8>::new())
        .with("Blank", "")
        .with("Text", "a,b \"c\"\nd — é")
        .with("Yes", true)
}

fn uuid_like() -> tables_client::Value {
    tables_client::Value::Guid("c9da6455-213d-42c9-9a79-3e9149a57833".parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_ls_query_and_drop() {
    let account = account().await;
    let created = tables(&account, &["create", "CliOrders"]);
    assert!(created.status.success(), "{}", stderr(&created));
    assert!(stderr(&created).contains("created table CliOrders"));
    assert!(tables(&account, &["create", "CliOther"]).status.success());

    let listed = tables(&account, &["ls"]);
    assert_eq!(stdout(&listed), "CliOrders\nCliOther\n");
    let prefixed = tables(&account, &["ls", "--prefix", "CliO"]);
    assert_eq!(stdout(&prefixed).lines().count(), 2);
    let none = tables(&account, &["ls", "--prefix", "Nothing"]);
    assert_eq!(stdout(&none), "");

    for i in 0..1_205 {
        let row = DynamicEntity::new(format!("p{}", i % 3), format!("{i:05}")).with("N", i);
        account
            .service
            .engine()
            .write("CliOrders", &WriteOp::Insert(row))
            .await
            .unwrap();
    }
    let special = extremes("x", "extremes");
    account
        .service
        .engine()
        .write("CliOrders", &WriteOp::Insert(special.clone()))
        .await
        .unwrap();

    // Piped: JSON Lines by default, every row once, across pages of 1,000.
    let all = tables(&account, &["query", "CliOrders"]);
    assert!(all.status.success(), "{}", stderr(&all));
    let text = stdout(&all);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1_206);
    // Lossless: each line reads back as the stored row, Timestamp included.
    let read: Vec<DynamicEntity> = lines
        .iter()
        .map(|line| tables_core::odata::decode_entity(line.as_bytes()).unwrap())
        .collect();
    let back = read.iter().find(|r| r.row_key == "extremes").unwrap();
    for (name, value) in special.properties() {
        assert_eq!(back.get(name), Some(value), "{name}");
    }
    assert!(back.timestamp.is_some());
    let n_of = |rk: &str| {
        read.iter()
            .find(|r| r.row_key == rk)
            .unwrap()
            .get("N")
            .cloned()
    };
    assert_eq!(n_of("00007"), Some(7.into()));

    // --top, --partition, --filter and --select together.
    let some = tables(
        &account,
        &[
            "query",
            "CliOrders",
            "--partition",
            "p1",
            "--filter",
            "N ge 600",
            "--select",
            "N",
            "--top",
            "5",
        ],
    );
    let text = stdout(&some);
    let rows: Vec<DynamicEntity> = text
        .lines()
        .map(|l| tables_core::odata::decode_entity(l.as_bytes()).unwrap())
        .collect();
    assert_eq!(rows.len(), 5);
    assert!(rows.iter().all(|r| r.partition_key == "p1"));
    assert!(rows.iter().all(|r| r.properties().count() == 1));
    assert_eq!(rows[0].get("N"), Some(&601.into()));

    // JSON: one array.
    let json = tables(
        &account,
        &["query", "CliOrders", "--top", "3", "-o", "json"],
    );
    assert_eq!(json_array_rows(&stdout(&json)), 3);

    // CSV in Storage Explorer's layout: a Name@type column beside each property.
    let csv = tables(
        &account,
        &["query", "CliOrders", "--partition", "x", "-o", "csv"],
    );
    let text = stdout(&csv);
    let mut lines = text.split("\r\n");
    let header = lines.next().unwrap();
    assert!(
        header.starts_with("PartitionKey,RowKey,Timestamp,I32,I32@type,I64,I64@type"),
        "{header}"
    );
    let row = lines.next().unwrap();
    assert!(
        row.contains(",-2147483648,Edm.Int32,9223372036854775807,Edm.Int64,"),
        "{row}"
    );
    assert!(row.contains(",-0.0,Edm.Double,"), "{row}");
    assert!(
        row.contains(",9999-12-31T23:59:59.9999999Z,Edm.DateTime,"),
        "{row}"
    );
    assert!(
        row.contains(",AAH+/w==,Edm.Binary,,Edm.Binary,,Edm.String,"),
        "{row}"
    );
    assert!(
        text.contains("\"a,b \"\"c\"\"\nd — é\",Edm.String"),
        "{text}"
    );

    // An aligned table when asked for.
    let table = tables(
        &account,
        &[
            "query",
            "CliOrders",
            "--partition",
            "p0",
            "--top",
            "2",
            "-o",
            "table",
        ],
    );
    let text = stdout(&table);
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with("PartitionKey  RowKey  Timestamp"),
        "{header}"
    );
    let first = lines.next().unwrap();
    assert_eq!(
        first.find("00000"),
        header.find("RowKey"),
        "aligned:\n{text}"
    );

    // Drop: refused without --yes when stdin isn't a terminal (exit 3), then done.
    let refused = tables(&account, &["drop", "CliOther"]);
    assert_eq!(refused.status.code(), Some(3));
    assert!(
        stderr(&refused).contains("add --yes"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(stdout(&tables(&account, &["ls"])).lines().count(), 2);
    let dropped = tables(&account, &["drop", "CliOther", "--yes", "--quiet"]);
    assert!(dropped.status.success());
    assert_eq!(stderr(&dropped), "");
    assert_eq!(stdout(&tables(&account, &["ls"])), "CliOrders\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mistakes_say_what_and_exit_as_documented() {
    let account = account().await;
    // No connection string anywhere: 2, saying where one comes from.
    let bare = Command::new(env!("CARGO_BIN_EXE_tables"))
        .arg("ls")
        .env_remove("AZURE_STORAGE_CONNECTION_STRING")
        .env_remove("TABLES_CONNECTION_STRING")
        .output()
        .unwrap();
    assert_eq!(bare.status.code(), Some(2));
    assert!(
        stderr(&bare).contains("AZURE_STORAGE_CONNECTION_STRING"),
        "{}",
        stderr(&bare)
    );
    // A filter the service would refuse: 2, before anything is sent.
    let bad = tables(&account, &["query", "Nope", "--filter", "N eq"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("filter"), "{}", stderr(&bad));
    // A missing table: 1, naming it.
    let missing = tables(&account, &["query", "Nope"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("Nope"), "{}", stderr(&missing));
    // A wrong command line: clap's 2, with the usage.
    let wrong = tables(&account, &["query"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(stderr(&wrong).contains("<TABLE>"), "{}", stderr(&wrong));
    // Every command's help has examples.
    for command in ["ls", "create", "drop", "query", "export", "import", "copy"] {
        let help = tables(&account, &[command, "--help"]);
        assert!(stdout(&help).contains("Examples:"), "{command}");
    }
}

/// The rows of a `--output json` array (each must read as an entity).
fn json_array_rows(text: &str) -> usize {
    let inner = text
        .trim()
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or_else(|| panic!("not an array: {text}"));
    let rows: Vec<DynamicEntity> = inner
        .split(",\n")
        .filter(|row| !row.trim().is_empty())
        .map(|row| tables_core::odata::decode_entity(row.trim().as_bytes()).unwrap())
        .collect();
    rows.len()
}

/// The remote engine hands a page as the service's JSON (what a JSON Lines export
/// copies), also behind the pointers an engine is shared or boxed by: a client
/// built over an `Arc` or a `Box` of it reaches it through their forwarding impls.
#[tokio::test]
async fn the_remote_engine_hands_pages_as_json() {
    let account = account().await;
    account.service.create_table("Raw").await.unwrap();
    let row = DynamicEntity::new("p", "r").with("N", 1);
    account
        .service
        .engine()
        .write("Raw", &WriteOp::Insert(row))
        .await
        .unwrap();
    let remote = std::sync::Arc::clone(account.service.engine());
    let clients = [
        ("the client", account.service.clone()),
        (
            "an Arc",
            TableServiceClient::new(std::sync::Arc::clone(&remote)),
        ),
        (
            "a Box",
            TableServiceClient::new(Box::new(std::sync::Arc::clone(&remote))),
        ),
    ];
    for (through, client) in clients {
        let page = client
            .engine()
            .query_json("Raw", &tables_client::QuerySpec::new(), None)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("through {through}: no wire form"));
        let objects = tables_core::odata::entity_page_objects(&page.body).unwrap();
        assert_eq!(objects.len(), 1, "through {through}");
        assert_eq!(
            tables_core::odata::decode_entity(objects[0])
                .unwrap()
                .get("N"),
            Some(&tables_client::Value::Int32(1)),
            "through {through}"
        );
    }
    assert!(TableServiceClient::in_memory()
        .engine()
        .query_json("Raw", &tables_client::QuerySpec::new(), None)
        .await
        .unwrap()
        .is_none());
}
