//! The server on threads of its own: each connection is handed to one of its
//! threads and served there, and stopping the server ends every thread.
//!
//! Alone in its test binary: it reads the process's threads from `/proc`, and
//! another test's server would add threads of the same names.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)] // tests

use std::collections::BTreeMap;
use std::time::Duration;

use tables_server::Server;

/// The server's threads (`tables-server`, `tables-server-<n>`) by name, with the
/// CPU time each has run so far (nanoseconds, from `/proc/self/task/*/schedstat`).
fn server_threads() -> BTreeMap<String, u64> {
    let mut threads = BTreeMap::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let dir = task.unwrap().path();
        // A thread may end between the listing and the read: skip it then.
        let (Ok(name), Ok(schedstat)) = (
            std::fs::read_to_string(dir.join("comm")),
            std::fs::read_to_string(dir.join("schedstat")),
        ) else {
            continue;
        };
        let name = name.trim().to_owned();
        if name.starts_with("tables-server") {
            let ran: u64 = schedstat
                .split_whitespace()
                .next()
                .unwrap()
                .parse()
                .unwrap();
            threads.insert(name, ran);
        }
    }
    threads
}

#[test]
fn each_thread_serves_the_connections_it_is_handed_and_stop_ends_them_all() {
    let server = Server::builder().port(0).start_on_own_thread(3).unwrap();
    // The serving threads name themselves as they start, which may be a moment
    // after `start_on_own_thread` returns (connections handed to one before then
    // wait for it): wait for all three, at most 10 s.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut before = server_threads();
    while before.len() < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        before = server_threads();
    }
    let names: Vec<&str> = before.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["tables-server", "tables-server-1", "tables-server-2"]
    );

    // Three clients, one keep-alive connection each, requests at the same time:
    // the connections go to the three threads in turn.
    let url = format!("http://{}/devstoreaccount1/Tables", server.addr());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = || {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(1)
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        let url = url.clone();
        async move {
            for _ in 0..200 {
                // Unsigned: refused, but read, routed and answered all the same.
                let status = client.get(&url).send().await.unwrap().status();
                assert_eq!(status, 403);
            }
        }
    };
    runtime.block_on(async { tokio::join!(client(), client(), client()) });
    let after = server_threads();
    for (name, ran_before) in &before {
        // A thread handed no connection stays parked and runs for no time at all.
        assert!(
            after[name] > *ran_before,
            "{name} did not run while its connection was served ({before:?} -> {after:?})"
        );
    }

    server.stop();
    assert!(
        server_threads().is_empty(),
        "threads outlived the server: {:?}",
        server_threads()
    );
}
