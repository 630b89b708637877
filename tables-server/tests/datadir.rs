//! The data directory as the `tables-server` binary uses it: the folder lock is the
//! kernel's, so a stale `LOCK` file naming a live process (a reused process id)
//! blocks no restart, of two servers started together exactly one gets in, and a
//! server killed with `SIGKILL` leaves nothing that blocks the next; folders and
//! files are owner-only even under `umask 000`.

#![cfg(unix)]
#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

/// A folder of its own, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir = std::env::temp_dir().join(format!(
            "tables-datadir-{name}-{}-{nanos}",
            std::process::id()
        ));
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A server process, killed (`SIGKILL`) when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the binary on `dir` through `sh` (with `umask 000` when asked): its
/// address once it listens, or what it printed to stderr when it stopped first.
fn start(dir: &Path, umask_000: bool) -> (Server, Result<String, String>) {
    let script = if umask_000 {
        "umask 000 && exec \"$0\" \"$@\""
    } else {
        "exec \"$0\" \"$@\""
    };
    let mut child = Command::new("sh")
        .args(["-c", script, env!("CARGO_BIN_EXE_tables-server")])
        .args(["--port", "0", "--threads", "1", "--log-level", "error"])
        .arg("--data-dir")
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let line = BufReader::new(stdout).lines().next();
    let outcome = match line {
        Some(Ok(line)) => Ok(line
            .strip_prefix("tables-server listening on http://")
            .unwrap()
            .to_owned()),
        _ => {
            let mut stderr = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut stderr);
            Err(stderr)
        }
    };
    (Server(child), outcome)
}

fn account_dir(dir: &Path) -> PathBuf {
    dir.join(tables_core::auth::DEVELOPMENT_ACCOUNT)
}

#[test]
fn a_stale_lock_naming_a_live_process_blocks_no_restart() {
    let dir = TempDir::new("reused");
    std::fs::create_dir_all(account_dir(&dir.0)).unwrap();
    // A crash's LOCK, whose process id now belongs to a live process (this one).
    std::fs::write(
        account_dir(&dir.0).join("LOCK"),
        std::process::id().to_string(),
    )
    .unwrap();
    let (_server, outcome) = start(&dir.0, false);
    assert!(outcome.is_ok(), "the restart was refused: {outcome:?}");
}

#[test]
fn of_servers_started_together_exactly_one_gets_in_and_a_kill_frees_the_folder() {
    let dir = TempDir::new("together");
    std::fs::create_dir_all(account_dir(&dir.0)).unwrap();
    for round in 0..3 {
        // A stale lock of a process that is gone.
        std::fs::write(account_dir(&dir.0).join("LOCK"), "4194305").unwrap();
        let starters: Vec<_> = (0..4)
            .map(|_| {
                let path = dir.0.clone();
                std::thread::spawn(move || start(&path, false))
            })
            .collect();
        let outcomes: Vec<(Server, Result<String, String>)> =
            starters.into_iter().map(|s| s.join().unwrap()).collect();
        let (in_, out): (Vec<_>, Vec<_>) = outcomes.into_iter().partition(|(_, o)| o.is_ok());
        let refusals: Vec<String> = out.iter().map(|(_, o)| o.clone().unwrap_err()).collect();
        assert_eq!(
            in_.len(),
            1,
            "round {round}: {} got in; refused: {refusals:?}",
            in_.len()
        );
        assert!(
            refusals.iter().all(|r| r.contains("in use")),
            "{refusals:?}"
        );
        // SIGKILL: no chance to tidy up; the kernel releases the lock.
        drop(in_);
        drop(out);
        let (_again, outcome) = start(&dir.0, false);
        assert!(
            outcome.is_ok(),
            "round {round}: the folder stayed locked: {outcome:?}"
        );
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test]
async fn folders_and_files_are_owner_only_under_umask_000() {
    let dir = TempDir::new("modes");
    let data = dir.0.join("data");
    let (server, outcome) = start(&data, true);
    let addr = outcome.unwrap();
    let client = reqwest::Client::new();
    let body = Some(("application/json", r#"{"TableName":"modes"}"#.to_owned()));
    let created = common::signed(
        &client,
        addr.parse().unwrap(),
        "POST",
        "/devstoreaccount1/Tables",
        body,
    )
    .send()
    .await
    .unwrap();
    assert_eq!(created.status(), 201);
    drop(server);
    // The restart replays the journal and snapshots it.
    let (_server, outcome) = start(&data, true);
    outcome.unwrap();
    let account = account_dir(&data);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !account.join("snapshot").exists() {
        assert!(Instant::now() < deadline, "no snapshot was written");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(mode(&data), 0o700, "the data directory");
    assert_eq!(mode(&account), 0o700, "the account folder");
    for entry in std::fs::read_dir(&account).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() && !path.ends_with("snapshot.tmp") {
            assert_eq!(mode(&path), 0o600, "{}", path.display());
        }
    }
}
