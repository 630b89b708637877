//! The progress display: bars (one per worker and one for the table) drawn in a
//! real terminal, read back from tmux; plain lines and no escape codes when stderr
//! is a pipe.

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tables_client::{BulkMode, DynamicEntity, TableServiceClient};
use tables_core::auth::DEVELOPMENT_ACCOUNT_KEY;
use tables_server::{RunningServer, Server};
use tables_tests::azurite::under_ci;

async fn server_with_rows() -> (RunningServer, String) {
    let server = Server::builder().port(0).start().await.unwrap();
    let connection = format!(
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={DEVELOPMENT_ACCOUNT_KEY};TableEndpoint={}",
        server.url()
    );
    let service = TableServiceClient::from_connection_string(&connection).unwrap();
    service.create_table("Shown").await.unwrap();
    let rows = (0..4_000u32)
        .map(|i| DynamicEntity::new(format!("k{:02}", i % 40), format!("{i:05}")).with("N", i));
    service
        .bulk_writer::<DynamicEntity>("Shown")
        .mode(BulkMode::Insert)
        .write_all(rows)
        .await
        .unwrap();
    (server, connection)
}

fn tmux_or_skip() -> bool {
    let there = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !there {
        assert!(
            !under_ci(),
            "tmux is required under CI: scripts/test.sh installs it"
        );
        eprintln!("SKIPPED: progress_bars_in_a_terminal: tmux is not installed (scripts/test.sh installs it)");
    }
    there
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_bars_in_a_terminal() {
    if !tmux_or_skip() {
        return;
    }
    let (_server, connection) = server_with_rows().await;
    let work = tempfile::tempdir().unwrap();
    let socket = format!("tables-progress-{}", std::process::id());
    let tmux = |args: &[&str]| {
        Command::new("tmux")
            .arg("-L")
            .arg(&socket)
            .args(args)
            .output()
            .unwrap()
    };
    let script = format!(
        "AZURE_STORAGE_CONNECTION_STRING='{connection}' '{}' export Shown --to '{}' --parallel 2 --max-rps 3; sleep 60",
        env!("CARGO_BIN_EXE_tables"),
        work.path().join("out").display()
    );
    let started = tmux(&[
        "new-session",
        "-d",
        "-s",
        "progress",
        "-x",
        "150",
        "-y",
        "20",
        &script,
    ]);
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    let start = Instant::now();
    let mut screen = String::new();
    while start.elapsed() < Duration::from_secs(30) {
        screen = String::from_utf8_lossy(&tmux(&["capture-pane", "-p", "-t", "progress"]).stdout)
            .into_owned();
        if screen.contains("worker 2") && screen.contains("Shown") && screen.contains(" rows") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    tmux(&["kill-server"]);
    assert!(screen.contains("worker 1"), "{screen}");
    assert!(screen.contains("worker 2"), "{screen}");
    assert!(
        screen
            .lines()
            .any(|l| l.contains("Shown") && l.contains("rows")),
        "{screen}"
    );
    assert!(screen.contains("/s"), "a rate: {screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_lines_when_stderr_is_a_pipe() {
    let (_server, connection) = server_with_rows().await;
    let work = tempfile::tempdir().unwrap();
    let run = |quiet: bool| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tables"));
        command
            .args(["export", "Shown", "--to"])
            .arg(work.path().join(if quiet { "quiet" } else { "loud" }))
            .args(["--parallel", "2", "--max-rps", "8"])
            .env("AZURE_STORAGE_CONNECTION_STRING", &connection)
            .env("TABLES_PROGRESS_SECONDS", "0.2")
            .stdin(Stdio::null());
        if quiet {
            command.arg("--quiet");
        }
        command.output().unwrap()
    };
    let output = run(false);
    assert!(output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        !stderr.contains('\u{1b}'),
        "no escape codes in a pipe: {stderr:?}"
    );
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("Shown: ") && l.contains("rows/s")),
        "{stderr}"
    );
    assert!(stderr.contains("exported Shown: 4000 rows"), "{stderr}");
    let quiet = run(true);
    assert!(quiet.status.success());
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
}
