//! [`FakeServer`] driven by a raw TCP client.

use super::*;
use std::time::Instant;

/// A response as the raw client read it.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Reads one response (Content-Length framed, or to end of stream) from `stream`,
/// keeping extra bytes in `buf`; `None` if the connection ends (or resets) first.
async fn read_answer(stream: &mut TcpStream, buf: &mut Vec<u8>, head_only: bool) -> Option<Answer> {
    let (head_len, body_start) = loop {
        if let Some(found) = find_head_end(buf, 0) {
            break found;
        }
        buf.reserve(4096);
        match stream.read_buf(buf).await {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
    };
    let head = String::from_utf8(buf[..head_len].to_vec()).unwrap();
    let mut lines = head.lines();
    let status_line = lines.next().unwrap();
    let status: u16 = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap();
            (n.to_owned(), v.trim().to_owned())
        })
        .collect();
    let length = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map(|(_, v)| v.parse::<usize>().unwrap());
    let bodiless = head_only || (100..200).contains(&status) || status == 204 || status == 304;
    let length = if bodiless { Some(0) } else { length };
    let body = match length {
        Some(length) => {
            while buf.len() < body_start + length {
                buf.reserve(4096);
                match stream.read_buf(buf).await {
                    Ok(0) | Err(_) => return None,
                    Ok(_) => {}
                }
            }
            let body = buf[body_start..body_start + length].to_vec();
            buf.drain(..body_start + length);
            body
        }
        None => {
            let _ = stream.read_to_end(buf).await;
            let body = buf[body_start..].to_vec();
            buf.clear();
            body
        }
    };
    Some(Answer {
        status,
        headers,
        body,
    })
}

/// Whether the server ends the connection (EOF or reset) within a second.
async fn ends(stream: &mut TcpStream) -> bool {
    let mut byte = [0u8; 1];
    match tokio::time::timeout(Duration::from_secs(1), stream.read(&mut byte)).await {
        Ok(Ok(0) | Err(_)) => true,
        Ok(Ok(_)) | Err(_) => false,
    }
}

async fn connect(server: &FakeServer) -> TcpStream {
    TcpStream::connect(server.addr()).await.unwrap()
}

fn get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n")
}

/// Answers `<n> <method> <path>` as JSON-ish text, so responses name their request.
fn echo(request: &Recorded, n: usize) -> Reply {
    Reply::json(
        200,
        &format!("{n} {} {}", request.method, request.path_and_query),
    )
}

#[tokio::test]
async fn keep_alive_serves_several_requests_on_one_connection() {
    let server = FakeServer::start(echo).await;
    let mut stream = connect(&server).await;
    let mut buf = Vec::new();

    stream
        .write_all(get("/devstoreaccount1/Tables").as_bytes())
        .await
        .unwrap();
    let first = read_answer(&mut stream, &mut buf, false).await.unwrap();
    assert_eq!(first.status, 200);
    assert_eq!(first.body, b"0 GET /devstoreaccount1/Tables");
    assert_eq!(
        first.header("content-type"),
        Some("application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
    );
    assert_eq!(first.header("content-length"), Some("30"));
    assert_eq!(first.header("connection"), None);

    stream
        .write_all(b"DELETE /devstoreaccount1/t1 HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        .await
        .unwrap();
    let second = read_answer(&mut stream, &mut buf, false).await.unwrap();
    assert_eq!(second.body, b"1 DELETE /devstoreaccount1/t1");

    // Pipelined: two requests in one write, two answers in order.
    let two = format!("{}{}", get("/a"), get("/b?x=1"));
    stream.write_all(two.as_bytes()).await.unwrap();
    let a = read_answer(&mut stream, &mut buf, false).await.unwrap();
    let b = read_answer(&mut stream, &mut buf, false).await.unwrap();
    assert_eq!(
        (a.body.as_slice(), b.body.as_slice()),
        (&b"2 GET /a"[..], &b"3 GET /b?x=1"[..])
    );
    assert_eq!(server.request_count(), 4);
    assert!(buf.is_empty());
}

#[tokio::test]
async fn requests_are_recorded_with_headers_and_body() {
    let server = FakeServer::start(|_, _| Reply::empty(204)).await;
    let mut stream = connect(&server).await;
    let body: Vec<u8> = (0..=255u8)
        .chain(b"\r\n\r\nGET / HTTP/1.1".iter().copied())
        .collect();
    let mut request = format!(
        "MERGE /devstoreaccount1/t(PartitionKey='p',RowKey='r')?a=%20b HTTP/1.1\r\n\
         Host: 127.0.0.1\r\nIf-Match: *\r\nx-ms-version:2019-02-02\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    stream.write_all(&request).await.unwrap();
    let mut buf = Vec::new();
    let answer = read_answer(&mut stream, &mut buf, false).await.unwrap();
    assert_eq!(answer.status, 204);
    assert_eq!(answer.header("content-length"), None, "no length on a 204");

    let recorded = server.requests();
    assert_eq!(recorded.len(), 1);
    let r = &recorded[0];
    assert_eq!(r.method, "MERGE");
    assert_eq!(
        r.path_and_query,
        "/devstoreaccount1/t(PartitionKey='p',RowKey='r')?a=%20b"
    );
    assert_eq!(r.path(), "/devstoreaccount1/t(PartitionKey='p',RowKey='r')");
    assert_eq!(r.query(), "a=%20b");
    assert_eq!(r.header("IF-MATCH"), Some("*"));
    assert_eq!(r.header("x-ms-version"), Some("2019-02-02"));
    assert_eq!(r.header("missing"), None);
    assert_eq!(r.headers[0], ("Host".to_owned(), "127.0.0.1".to_owned()));
    assert_eq!(r.body, body);
    // The body's embedded request line was not taken for a second request.
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn reply_options_shape_the_answer() {
    let server = FakeServer::start(|request, _| match request.path() {
        "/length" => Reply::json(200, "{}").with_header("Content-Length", "2"),
        "/close" => Reply::empty(200).with_header("Connection", "close"),
        "/delayed" => Reply::empty(503)
            .with_header("Retry-After", "1")
            .after(Duration::from_millis(10))
            .with_header("x-ms-error-code", "ServerBusy"),
        _ => Reply::json(200, "hello"),
    })
    .await;
    let mut buf = Vec::new();

    let mut stream = connect(&server).await;
    stream.write_all(get("/length").as_bytes()).await.unwrap();
    let answer = read_answer(&mut stream, &mut buf, false).await.unwrap();
    assert_eq!(answer.body, b"{}");
    let lengths = answer
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .count();
    assert_eq!(
        lengths, 1,
        "a scripted Content-Length replaces the computed one"
    );

    stream.write_all(get("/delayed").as_bytes()).await.unwrap();
    let answer = read_answer(&mut stream, &mut buf, false).await.unwrap();
    assert_eq!(answer.status, 503);
    assert_eq!(answer.header("retry-after"), Some("1"));
    assert_eq!(answer.header("x-ms-error-code"), Some("ServerBusy"));

    // HEAD: the length of the body, but no body.
    stream.write_all(b"HEAD /x HTTP/1.1\r\n\r\n").await.unwrap();
    let answer = read_answer(&mut stream, &mut buf, true).await.unwrap();
    assert_eq!(answer.header("content-length"), Some("5"));
    stream.write_all(get("/x").as_bytes()).await.unwrap();
    let answer = read_answer(&mut stream, &mut buf, false).await.unwrap();
    assert_eq!(answer.body, b"hello", "the HEAD answer had no body bytes");

    // A scripted `Connection: close` closes after answering.
    stream.write_all(get("/close").as_bytes()).await.unwrap();
    let answer = read_answer(&mut stream, &mut buf, false).await.unwrap();
    assert_eq!(answer.status, 200);
    assert!(ends(&mut stream).await);

    // So does a request's `Connection: close`, which the answer confirms.
    let mut stream = connect(&server).await;
    stream
        .write_all(b"GET /x HTTP/1.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let answer = read_answer(&mut stream, &mut buf, false).await.unwrap();
    assert_eq!(answer.header("connection"), Some("close"));
    assert!(ends(&mut stream).await);

    // An HTTP/1.0 request without keep-alive too.
    let mut stream = connect(&server).await;
    stream.write_all(b"GET /x HTTP/1.0\r\n\r\n").await.unwrap();
    assert!(read_answer(&mut stream, &mut buf, false).await.is_some());
    assert!(ends(&mut stream).await);
}

#[tokio::test]
async fn drop_replies_close_without_answering() {
    let server = FakeServer::start(|request, _| match request.path() {
        "/drop" => Reply::Drop,
        "/drop-after-reading" => Reply::DropAfterReading,
        "/late-drop" => Reply::Drop.after(Duration::from_millis(20)),
        _ => Reply::empty(200),
    })
    .await;
    let mut buf = Vec::new();
    for path in ["/drop", "/drop-after-reading", "/late-drop"] {
        let mut stream = connect(&server).await;
        // A healthy exchange first: the drop cuts a kept-alive connection.
        stream.write_all(get("/ok").as_bytes()).await.unwrap();
        assert_eq!(
            read_answer(&mut stream, &mut buf, false)
                .await
                .unwrap()
                .status,
            200
        );
        let request = format!("PUT {path} HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(1), stream.read_to_end(&mut rest))
            .await
            .expect("the connection must end");
        assert!(rest.is_empty(), "{path}: no answer bytes, got {rest:?}");
        if path == "/drop-after-reading" {
            assert!(read.is_ok(), "{path}: a clean end of stream, got {read:?}");
        }
    }
    let dropped: Vec<Vec<u8>> = server
        .requests()
        .into_iter()
        .filter(|r| r.method == "PUT")
        .map(|r| r.body)
        .collect();
    assert_eq!(
        dropped, [b"abc"; 3],
        "dropped requests were read and recorded"
    );
    // The server goes on.
    let mut stream = connect(&server).await;
    stream.write_all(get("/ok").as_bytes()).await.unwrap();
    assert!(read_answer(&mut stream, &mut buf, false).await.is_some());
}

#[tokio::test]
async fn delay_delays_the_answer() {
    let server = FakeServer::start(|_, n| {
        Reply::json(200, &n.to_string()).after(Duration::from_millis(if n == 0 { 300 } else { 0 }))
    })
    .await;
    let mut buf = Vec::new();
    let mut stream = connect(&server).await;
    let started = Instant::now();
    stream.write_all(get("/slow").as_bytes()).await.unwrap();
    let answer = read_answer(&mut stream, &mut buf, false).await.unwrap();
    let waited = started.elapsed();
    assert_eq!(answer.body, b"0");
    assert!(waited >= Duration::from_millis(300), "{waited:?}");

    // The request was recorded before the wait.
    let mut stream = connect(&server).await;
    let slow = FakeServer::start(|_, _| Reply::empty(200).after(Duration::from_secs(30))).await;
    let mut slow_stream = connect(&slow).await;
    slow_stream
        .write_all(get("/pending").as_bytes())
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    while slow.request_count() == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(slow.request_count(), 1);
    assert_eq!(slow.requests()[0].path(), "/pending");
    let mut byte = [0u8; 1];
    let early = tokio::time::timeout(Duration::from_millis(100), slow_stream.read(&mut byte)).await;
    assert!(early.is_err(), "no answer during the delay");

    // Dropping the server cuts a connection waiting in a delay.
    drop(slow);
    assert!(ends(&mut slow_stream).await);
    stream.write_all(get("/fast").as_bytes()).await.unwrap();
    assert_eq!(
        read_answer(&mut stream, &mut buf, false)
            .await
            .unwrap()
            .body,
        b"1"
    );
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn dropping_the_server_closes_connections_and_the_port() {
    let server = FakeServer::start(echo).await;
    let addr = server.addr();
    let mut stream = connect(&server).await;
    let mut buf = Vec::new();
    stream.write_all(get("/x").as_bytes()).await.unwrap();
    assert!(read_answer(&mut stream, &mut buf, false).await.is_some());
    drop(server);
    assert!(
        ends(&mut stream).await,
        "an idle kept-alive connection is cut"
    );
    // The listener closes too (once the runtime has run the cancellation).
    let deadline = Instant::now() + Duration::from_secs(2);
    while TcpStream::connect(addr).await.is_ok() {
        assert!(Instant::now() < deadline, "the port stays open");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn serves_fifty_connections_concurrently() {
    // Every answer waits 200 ms: served one at a time, 50 would take 10 s.
    let server = FakeServer::start(|_, n| {
        Reply::json(200, &n.to_string()).after(Duration::from_millis(200))
    })
    .await;
    let started = Instant::now();
    let mut clients = JoinSet::new();
    for i in 0..50 {
        let addr = server.addr();
        clients.spawn(async move {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            let mut buf = Vec::new();
            stream
                .write_all(get(&format!("/c{i}")).as_bytes())
                .await
                .unwrap();
            let answer = read_answer(&mut stream, &mut buf, false).await.unwrap();
            String::from_utf8(answer.body)
                .unwrap()
                .parse::<usize>()
                .unwrap()
        });
    }
    let mut numbers = Vec::new();
    while let Some(n) = clients.join_next().await {
        numbers.push(n.unwrap());
    }
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
    numbers.sort_unstable();
    assert_eq!(numbers, (0..50).collect::<Vec<_>>());
    assert_eq!(server.request_count(), 50);
    let mut paths: Vec<String> = server
        .requests()
        .into_iter()
        .map(|r| r.path_and_query)
        .collect();
    paths.sort();
    let mut expected: Vec<String> = (0..50).map(|i| format!("/c{i}")).collect();
    expected.sort();
    assert_eq!(paths, expected);
}

#[tokio::test]
async fn garbage_gets_400_and_never_stops_the_server() {
    let server = FakeServer::start(echo).await;
    let too_long = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD + 10));
    let garbage: Vec<Vec<u8>> = vec![
        b"\x00\xff\xfe garbage\r\n\r\n".to_vec(),
        b"GET /\r\n\r\n".to_vec(),
        b"GET / HTTP/2.0\r\n\r\n".to_vec(),
        b"GET  / HTTP/1.1\r\n\r\n".to_vec(),
        b"G(T / HTTP/1.1\r\n\r\n".to_vec(),
        b"GET /\x7f HTTP/1.1\r\n\r\n".to_vec(),
        b"GET / HTTP/1.1\r\nno colon here\r\n\r\n".to_vec(),
        b"GET / HTTP/1.1\r\n: empty name\r\n\r\n".to_vec(),
        b"GET / HTTP/1.1\r\n folded: x\r\n\r\n".to_vec(),
        b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n".to_vec(),
        b"POST / HTTP/1.1\r\nContent-Length: 1e3\r\n\r\n".to_vec(),
        b"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n".to_vec(),
        b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab".to_vec(),
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n".to_vec(),
        too_long.into_bytes(),
    ];
    let mut buf = Vec::new();
    for input in &garbage {
        let mut stream = connect(&server).await;
        let _ = stream.write_all(input).await;
        let answer = read_answer(&mut stream, &mut buf, false).await;
        let shown = String::from_utf8_lossy(&input[..input.len().min(60)]).into_owned();
        let answer = answer.unwrap_or_else(|| panic!("no answer to {shown:?}"));
        assert_eq!(answer.status, 400, "{shown:?}");
        assert_eq!(answer.header("connection"), Some("close"));
        assert!(
            ends(&mut stream).await,
            "{shown:?}: the connection is closed"
        );
        buf.clear();
    }
    // Cut off mid-head, mid-body, or silent: the connection just ends.
    for partial in [
        &b"GET / HT"[..],
        b"PUT / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc",
        b"",
    ] {
        let mut stream = connect(&server).await;
        stream.write_all(partial).await.unwrap();
        stream.shutdown().await.unwrap();
        assert!(ends(&mut stream).await);
    }
    assert_eq!(
        server.request_count(),
        0,
        "nothing malformed reached the handler"
    );

    // Blank lines before a request and bare-LF line ends are tolerated.
    let mut stream = connect(&server).await;
    stream
        .write_all(b"\r\n\r\nGET /lf HTTP/1.1\nA: b\n\n")
        .await
        .unwrap();
    let answer = read_answer(&mut stream, &mut buf, false).await.unwrap();
    assert_eq!(answer.body, b"0 GET /lf");
    assert_eq!(
        server.requests()[0].headers,
        [("A".to_owned(), "b".to_owned())]
    );
}

#[tokio::test]
async fn expect_continue_is_answered_before_the_body() {
    let server =
        FakeServer::start(|request, _| Reply::json(201, &request.body.len().to_string())).await;
    let mut stream = connect(&server).await;
    stream
        .write_all(b"POST /t HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let interim = read_answer(&mut stream, &mut buf, false).await.unwrap();
    assert_eq!(interim.status, 100);
    stream.write_all(b"data").await.unwrap();
    let answer = read_answer(&mut stream, &mut buf, false).await.unwrap();
    assert_eq!((answer.status, answer.body.as_slice()), (201, &b"4"[..]));
}

#[tokio::test]
async fn unrecorded_server_counts_only() {
    let server = FakeServer::start_unrecorded(echo).await;
    let mut stream = connect(&server).await;
    let mut buf = Vec::new();
    for i in 0..3 {
        stream.write_all(get("/x").as_bytes()).await.unwrap();
        let answer = read_answer(&mut stream, &mut buf, false).await.unwrap();
        assert_eq!(answer.body, format!("{i} GET /x").as_bytes());
    }
    assert_eq!(server.request_count(), 3);
    assert!(server.requests().is_empty());
}

#[test]
fn reply_builders() {
    let reply = Reply::json(200, "{}").with_header("ETag", "W/\"1\"");
    let Reply::Respond {
        status,
        headers,
        body,
    } = &reply
    else {
        panic!("{reply:?}");
    };
    assert_eq!(*status, 200);
    assert_eq!(headers.len(), 2);
    assert_eq!(headers[1], ("ETag".to_owned(), "W/\"1\"".to_owned()));
    assert_eq!(body, b"{}");
    assert_eq!(
        Reply::empty(404),
        Reply::Respond {
            status: 404,
            headers: Vec::new(),
            body: Vec::new()
        }
    );
    assert_eq!(Reply::Drop.with_header("a", "b"), Reply::Drop);
    assert_eq!(
        Reply::empty(200)
            .after(Duration::from_secs(1))
            .with_header("a", "b"),
        Reply::Delay(
            Duration::from_secs(1),
            Box::new(Reply::empty(200).with_header("a", "b"))
        )
    );
}
