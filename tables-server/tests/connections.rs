//! What a client that misbehaves on purpose can hold of the server: a request that
//! never finishes its headers is closed after the header timeout, a body that never
//! finishes is answered `408` after the body timeout, connections past the cap and
//! bodies past the buffer budget are answered `503 ServerBusy` with `Retry-After`,
//! a body that ends early or is malformed is `400` (only one over the limit is
//! `413`), echoed headers are bounded, and a full descriptor table neither spins a
//! core nor stops the server for good. Each test bounds its waits; servers listen
//! on 127.0.0.1.

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tables_server::{Limits, RunningServer, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long any answer may take to come, at most (the timeouts under test are 1 s).
const PATIENCE: Duration = Duration::from_secs(10);

async fn server(limits: Limits) -> RunningServer {
    Server::builder()
        .port(0)
        .limits(limits)
        .start()
        .await
        .unwrap()
}

fn short(limits: Limits) -> Limits {
    Limits {
        header_timeout: Duration::from_secs(1),
        body_timeout: Duration::from_secs(1),
        ..limits
    }
}

/// A connection that has sent `bytes`.
async fn sent(addr: SocketAddr, bytes: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(bytes).await.unwrap();
    stream
}

/// What the server sends until it closes the connection (at most [`PATIENCE`]):
/// `None` if it is still open then.
async fn until_closed(stream: &mut TcpStream) -> Option<String> {
    let mut out = Vec::new();
    let read = async {
        let mut buf = [0_u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(PATIENCE, read).await.ok()?;
    Some(String::from_utf8_lossy(&out).into_owned())
}

fn get(path: &str, extra: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n{extra}\r\n")
        .into_bytes()
}

#[tokio::test]
async fn a_half_sent_request_is_closed_after_the_header_timeout() {
    let server = server(short(Limits::default())).await;
    let started = Instant::now();
    let mut stream = sent(server.addr(), b"GET /devstoreaccount1/Tables HT").await;
    let answer = until_closed(&mut stream).await;
    assert!(
        answer.is_some(),
        "a half-sent request line was still open after {PATIENCE:?}"
    );
    assert!(started.elapsed() >= Duration::from_millis(900));
}

#[tokio::test]
async fn connections_past_the_cap_are_answered_server_busy() {
    let limits = Limits {
        max_connections: 4,
        header_timeout: Duration::from_secs(30),
        ..Limits::default()
    };
    let server = server(limits).await;
    let mut parked = Vec::new();
    for _ in 0..4 {
        parked.push(sent(server.addr(), b"GET /devstoreaccount1/Tab").await);
    }
    // The server takes them in the order they came: give it a moment to.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut fifth = sent(server.addr(), &get("/devstoreaccount1/Tables", "")).await;
    let answer = until_closed(&mut fifth).await.unwrap();
    let lower = answer.to_ascii_lowercase();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(lower.contains("x-ms-error-code: serverbusy"), "{answer}");
    assert!(lower.contains("retry-after: 1"), "{answer}");
    drop(parked);
    // Their places free up: the next request is served (403: it is unsigned).
    let deadline = Instant::now() + PATIENCE;
    loop {
        let mut next = sent(server.addr(), &get("/devstoreaccount1/Tables", "")).await;
        let answer = until_closed(&mut next).await.unwrap();
        if answer.starts_with("HTTP/1.1 403") {
            break;
        }
        assert!(Instant::now() < deadline, "still busy: {answer}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn post(length: usize, extra: &str) -> Vec<u8> {
    format!(
        "POST /devstoreaccount1/Tables HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: \
         application/json\r\ncontent-length: {length}\r\n{extra}\r\n"
    )
    .into_bytes()
}

#[tokio::test]
async fn bodies_past_the_buffer_budget_are_answered_server_busy() {
    let limits = Limits {
        max_buffered_bytes: 256 << 10,
        ..Limits::default()
    };
    let server = server(limits).await;
    let mut first = sent(server.addr(), &post(200_000, "")).await;
    first.write_all(&[b' '; 100_000]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut second = sent(server.addr(), &post(100_000, "connection: close\r\n")).await;
    second.write_all(&[b' '; 100_000]).await.unwrap();
    let answer = until_closed(&mut second).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(
        answer.contains("ServerBusy") && answer.contains("retry-after: 1"),
        "{answer}"
    );
    // The first still gets its answer once its body is whole.
    first.write_all(&[b' '; 100_000]).await.unwrap();
    let mut head = [0_u8; 12];
    tokio::time::timeout(PATIENCE, first.read_exact(&mut head))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&head, b"HTTP/1.1 403");
}

#[tokio::test]
async fn an_incomplete_or_malformed_body_is_400_and_only_an_oversized_one_413() {
    let server = server(short(Limits::default())).await;
    // Content-Length 1000, 10 bytes, then the client's half of the connection closes.
    let mut early = sent(server.addr(), &post(1_000, "")).await;
    early.write_all(b"{\"a\":\"b\"}x").await.unwrap();
    early.shutdown().await.unwrap();
    let answer = until_closed(&mut early).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("InvalidInput"), "{answer}");
    // A chunk size that is not hexadecimal.
    let chunked = "POST /devstoreaccount1/Tables HTTP/1.1\r\nhost: 127.0.0.1\r\n\
                   transfer-encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n";
    let mut bad = sent(server.addr(), chunked.as_bytes()).await;
    let answer = until_closed(&mut bad).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("InvalidInput"), "{answer}");
    // A body that stops arriving: 408 after the body timeout.
    let mut stalled = sent(server.addr(), &post(1_000, "")).await;
    stalled.write_all(b"{\"a\":").await.unwrap();
    let answer = until_closed(&mut stalled).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("RequestTimeout"), "{answer}");
    // Only a body over the limit is 413, said before it is sent.
    let mut big = sent(server.addr(), &post(6 << 20, "")).await;
    let answer = until_closed(&mut big).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("RequestBodyTooLarge"), "{answer}");
}

#[tokio::test]
async fn echoed_headers_are_bounded() {
    let server = server(Limits::default()).await;
    let echo = |id: &str| {
        get(
            "/devstoreaccount1/Tables",
            &format!("x-ms-client-request-id: {id}\r\n"),
        )
    };
    let mut fine = sent(server.addr(), &echo("abc-123")).await;
    let answer = until_closed(&mut fine).await.unwrap();
    assert!(
        answer.contains("x-ms-client-request-id: abc-123"),
        "{answer}"
    );
    // Over the service's 1 KiB: refused, and not echoed.
    let long = "i".repeat(2_000);
    let mut refused = sent(server.addr(), &echo(&long)).await;
    let answer = until_closed(&mut refused).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 400"), "{}", &answer[..200]);
    assert!(answer.contains("InvalidHeaderValue") && !answer.contains(&long));
    // 300 KB of headers do not fit the read buffer: 431, nothing echoed.
    let huge = "h".repeat(300_000);
    let mut stream = TcpStream::connect(server.addr()).await.unwrap();
    let _ = stream.write_all(&echo(&huge)).await;
    let answer = until_closed(&mut stream).await.unwrap_or_default();
    assert!(answer.len() < 2_000, "{} bytes came back", answer.len());
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 431"),
        "{answer}"
    );
    // A long x-ms-version is answered with the server's own.
    let version = format!("x-ms-version: {}\r\n", "9".repeat(500));
    let mut stream = sent(server.addr(), &get("/devstoreaccount1/Tables", &version)).await;
    let answer = until_closed(&mut stream).await.unwrap();
    assert!(
        !answer.contains("99999") && answer.contains("x-ms-version: "),
        "{answer}"
    );
}

/// Out of descriptors, the server pauses accepting instead of retrying at once in a
/// loop (which took a whole core while new requests timed out), and serves again
/// once descriptors are free. The server runs as a child with `ulimit -n 64`.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_full_descriptor_table_costs_no_cpu_and_the_server_recovers() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    /// Kills the child however the test ends.
    struct Killed(std::process::Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    let binary = env!("CARGO_BIN_EXE_tables-server");
    let mut child = Killed(
        Command::new("sh")
            .args(["-c", "ulimit -n 64 && exec \"$0\" \"$@\""])
            .args([
                binary,
                "--port",
                "0",
                "--log-level",
                "error",
                "--threads",
                "1",
            ])
            .args(["--max-connections", "1000"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    let line = BufReader::new(stdout).lines().next().unwrap().unwrap();
    let addr: SocketAddr = line
        .strip_prefix("tables-server listening on http://")
        .unwrap()
        .parse()
        .unwrap();
    let pid = child.0.id();
    // Far more connections than the server has descriptors for.
    let mut parked = Vec::new();
    for _ in 0..120 {
        parked.push(TcpStream::connect(addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let ticks = || {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let after_name = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<u64> = after_name
            .split(' ')
            .skip(11)
            .take(2)
            .map(|f| f.parse().unwrap())
            .collect();
        fields[0] + fields[1]
    };
    let (before, at) = (ticks(), Instant::now());
    tokio::time::sleep(Duration::from_secs(2)).await;
    let spent = ticks() - before;
    let wall = at.elapsed().as_secs_f64() * 100.0; // clock ticks are 1/100 s
    eprintln!("out of descriptors: {spent} ticks of CPU in {wall:.0}");
    assert!(
        (spent as f64) < wall * 0.25,
        "the server used {spent} ticks of CPU in {wall:.0} while out of descriptors"
    );
    // Once the descriptors are free, it serves again.
    drop(parked);
    let deadline = Instant::now() + PATIENCE;
    loop {
        let mut next = sent(addr, &get("/devstoreaccount1/Tables", "")).await;
        let answer = until_closed(&mut next).await.unwrap_or_default();
        if answer.starts_with("HTTP/1.1 403") {
            break;
        }
        assert!(Instant::now() < deadline, "not served again: {answer:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
