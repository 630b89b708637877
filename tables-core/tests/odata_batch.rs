//! Property tests of the `$batch` codec (`tables_core::odata::batch`): the response
//! reader never panics on any bytes or content type, reads well-formed responses
//! (generated here, independently of the reader) to the right outcomes or errors,
//! survives mutations of them, and `encode_batch` output reads back part for part.
//!
//! The case count comes from `TABLES_FUZZ_CASES` (default 2,000).

use proptest::prelude::*;
use proptest::sample::Index;
use tables_core::odata::batch::{encode_batch, parse_batch_request, parse_batch_response};
use tables_core::odata::{decode_entity, encode_entity, entity_path};
use tables_core::{
    DateTime, DynamicEntity, ETag, EntityKey, ErrorKind, IfMatch, WriteOp, WriteOutcome,
};

mod support;

/// What must hold for any input: `Ok` has one outcome per operation; a decode error
/// carries no status; a batch index is always in range.
fn check_response(content_type: &str, body: &[u8], operations: usize) {
    match parse_batch_response(content_type, body, operations) {
        Ok(outcomes) => assert_eq!(outcomes.len(), operations),
        Err(err) => {
            if err.kind() == ErrorKind::Decode {
                assert_eq!(err.status(), None, "{err}");
            } else {
                assert!(err.status().is_some_and(|s| s >= 300), "{err:?}");
            }
            if let Some(index) = err.batch_index() {
                assert!(index < operations, "{err:?}");
            }
        }
    }
    let _ = parse_batch_request(content_type, body);
}

fn datetime() -> impl Strategy<Value = DateTime> {
    (
        1601i32..=9999,
        1u32..=12,
        1u32..=28,
        0u32..24,
        0u32..60,
        0u32..60,
        0u32..10_000_000,
    )
        .prop_filter_map("in range", |(y, mo, d, h, mi, s, sub)| {
            DateTime::from_ymd_hms(y, mo, d, h, mi, s)?.with_subsec_ticks(sub)
        })
}

/// How a response is laid out.
#[derive(Debug, Clone)]
struct Style {
    crlf: bool,
    nested: bool,
    quoted: bool,
    mime_headers: bool,
    case: u8,
    content_id: bool,
    boundary: String,
}

fn style() -> impl Strategy<Value = Style> {
    (
        any::<bool>(),
        prop::bool::weighted(0.8),
        any::<bool>(),
        prop::bool::weighted(0.8),
        0u8..3,
        any::<bool>(),
        "[A-Za-z0-9_-]{1,40}",
    )
        .prop_map(
            |(crlf, nested, quoted, mime_headers, case, content_id, boundary)| Style {
                crlf,
                nested,
                quoted,
                mime_headers,
                case,
                content_id,
                boundary,
            },
        )
}

impl Style {
    fn name(&self, name: &str) -> String {
        match self.case {
            0 => name.to_ascii_lowercase(),
            1 => name.to_ascii_uppercase(),
            _ => name.to_owned(),
        }
    }

    /// One `application/http` part: status line, headers (names in this style's case),
    /// body.
    fn part(&self, status: &str, headers: &[(&str, String)], body: &str) -> Vec<String> {
        let mut lines = Vec::new();
        if self.mime_headers {
            lines.push(format!("{}: application/http", self.name("Content-Type")));
            lines.push(format!(
                "{}: binary",
                self.name("Content-Transfer-Encoding")
            ));
            lines.push(String::new());
        }
        lines.push(status.to_owned());
        for (name, value) in headers {
            lines.push(format!("{}: {value}", self.name(name)));
        }
        lines.push(String::new());
        lines.push(body.to_owned());
        lines
    }

    /// The Content-Type and body of a response holding `parts`.
    fn render(&self, parts: &[Vec<String>]) -> (String, Vec<u8>) {
        let batch = format!("batchresponse_{}", self.boundary);
        let changeset = format!("changesetresponse_{}", self.boundary);
        let inner = if self.nested { &changeset } else { &batch };
        let mut lines = Vec::new();
        if self.nested {
            lines.push(format!("--{batch}"));
            let ct = self.name("Content-Type");
            lines.push(format!("{ct}: multipart/mixed; boundary={changeset}"));
            lines.push(String::new());
        }
        for part in parts {
            lines.push(format!("--{inner}"));
            lines.extend(part.iter().cloned());
        }
        if self.nested {
            lines.push(format!("--{changeset}--"));
        }
        lines.push(format!("--{batch}--"));
        lines.push(String::new());
        let eol = if self.crlf { "\r\n" } else { "\n" };
        let content_type = if self.quoted {
            format!("multipart/mixed; boundary=\"{batch}\"")
        } else {
            format!("multipart/mixed; boundary={batch}")
        };
        (content_type, lines.join(eol).into_bytes())
    }
}

/// One successful part and the outcome it stands for.
#[derive(Debug, Clone)]
struct Success {
    status: u16,
    header_etag: Option<ETag>,
    body_time: Option<DateTime>,
}

fn success() -> impl Strategy<Value = Success> {
    let etag = prop_oneof![
        Just(None),
        datetime().prop_map(|t| Some(ETag::from_timestamp(t))),
        "W/\"[a-z0-9]{1,12}\"".prop_map(|s| Some(ETag::new(s))),
    ];
    (
        prop::sample::select(vec![200u16, 201, 204]),
        etag,
        datetime(),
    )
        .prop_map(|(status, header_etag, time)| Success {
            status,
            header_etag,
            body_time: (status == 201).then_some(time),
        })
}

impl Success {
    fn expected(&self) -> WriteOutcome {
        let body_etag = self.body_time.map(ETag::from_timestamp);
        let etag = self.header_etag.clone().or(body_etag);
        let timestamp = self
            .header_etag
            .as_ref()
            .and_then(ETag::timestamp)
            .or(self.body_time);
        WriteOutcome::new(etag, timestamp)
    }

    fn render(&self, style: &Style, index: usize) -> Vec<String> {
        let reason = match self.status {
            200 => "OK",
            201 => "Created",
            _ => "No Content",
        };
        let mut headers = vec![("X-Content-Type-Options", "nosniff".to_owned())];
        if style.content_id {
            headers.push(("Content-ID", (index + 1).to_string()));
        }
        headers.push(("DataServiceVersion", "3.0;".to_owned()));
        headers.push((
            "Location",
            "http://127.0.0.1:10002/a/t(PartitionKey='p',RowKey='r')".to_owned(),
        ));
        if let Some(etag) = &self.header_etag {
            headers.push(("ETag", etag.as_str().to_owned()));
        }
        let body = match self.body_time {
            Some(t) => {
                let etag =
                    serde_json::to_string(ETag::from_timestamp(t).as_str()).expect("a string");
                format!(
                    r#"{{"odata.etag":{etag},"PartitionKey":"p","RowKey":"r","Timestamp":"{t}"}}"#
                )
            }
            None => String::new(),
        };
        style.part(
            &format!("HTTP/1.1 {} {reason}", self.status),
            &headers,
            &body,
        )
    }
}

/// One failing part of a batch of `operations`.
#[derive(Debug, Clone)]
struct Failure {
    operations: usize,
    index: usize,
    status: u16,
    code: &'static str,
    prefixed: bool,
    text: String,
}

fn failure() -> impl Strategy<Value = Failure> {
    let codes = vec![
        (409u16, "EntityAlreadyExists"),
        (404, "ResourceNotFound"),
        (404, "TableNotFound"),
        (412, "UpdateConditionNotSatisfied"),
        (400, "InvalidInput"),
        (400, "InvalidDuplicateRow"),
        (400, "CommandsInBatchActOnDifferentPartitions"),
        (413, "RequestBodyTooLarge"),
    ];
    (
        1usize..=100,
        any::<Index>(),
        prop::sample::select(codes),
        any::<bool>(),
        "[A-Za-z .:']{0,40}",
    )
        .prop_map(
            |(operations, index, (status, code), prefixed, text)| Failure {
                operations,
                index: index.index(operations),
                status,
                code,
                prefixed,
                text,
            },
        )
}

impl Failure {
    fn render(&self, style: &Style) -> Vec<String> {
        let prefix = if self.prefixed {
            format!("{}:", self.index)
        } else {
            String::new()
        };
        let value = format!(
            "{prefix}{}\nRequestId:0f-11\nTime:2026-01-01T00:00:00.0000000Z",
            self.text
        );
        let body = serde_json::json!({
            "odata.error": {"code": self.code, "message": {"lang": "en-US", "value": value}}
        });
        let mut headers = Vec::new();
        if style.content_id {
            headers.push(("Content-ID", (self.index + 1).to_string()));
        }
        headers.push(("DataServiceVersion", "3.0;".to_owned()));
        headers.push((
            "Content-Type",
            "application/json;odata=minimalmetadata;charset=utf-8".to_owned(),
        ));
        style.part(
            &format!("HTTP/1.1 {} Whatever", self.status),
            &headers,
            &body.to_string(),
        )
    }

    fn expected_index(&self, style: &Style) -> Option<usize> {
        if self.prefixed || style.content_id {
            Some(self.index)
        } else {
            (self.operations == 1).then_some(0)
        }
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(Index),
    Flip(Index, u8),
    DuplicateLine(Index),
    RemoveLine(Index),
    Insert(Index, Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let fragment = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..8),
        prop::sample::select(vec!["\r\n", "\n", "--", ":", "HTTP/1.1 ", "{", "\"", "\r"])
            .prop_map(|s| s.as_bytes().to_vec()),
    ];
    prop_oneof![
        any::<Index>().prop_map(Mutation::Truncate),
        (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        any::<Index>().prop_map(Mutation::DuplicateLine),
        any::<Index>().prop_map(Mutation::RemoveLine),
        (any::<Index>(), fragment).prop_map(|(i, f)| Mutation::Insert(i, f)),
    ]
}

fn mutate(body: &mut Vec<u8>, mutation: &Mutation) {
    if body.is_empty() {
        return;
    }
    let line_bounds = |body: &[u8], at: usize| {
        let start = body[..at]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |p| p + 1);
        let end = body[at..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(body.len(), |p| at + p + 1);
        (start, end)
    };
    match mutation {
        Mutation::Truncate(i) => body.truncate(i.index(body.len())),
        Mutation::Flip(i, b) => {
            let at = i.index(body.len());
            body[at] ^= b | 1;
        }
        Mutation::DuplicateLine(i) => {
            let (start, end) = line_bounds(body, i.index(body.len()));
            let line = body[start..end].to_vec();
            body.splice(end..end, line);
        }
        Mutation::RemoveLine(i) => {
            let (start, end) = line_bounds(body, i.index(body.len()));
            body.drain(start..end);
        }
        Mutation::Insert(i, bytes) => {
            let at = i.index(body.len() + 1);
            body.splice(at..at, bytes.iter().copied());
        }
    }
}

/// Fragments that make random bodies reach past the framing into the parts.
fn soup() -> impl Strategy<Value = Vec<u8>> {
    let fragment = prop_oneof![
        prop::sample::select(vec![
            "--b",
            "--b--",
            "--c",
            "--c--",
            "\r\n",
            "\n",
            "\n",
            "\r\n\r\n",
            " ",
            "Content-Type: multipart/mixed; boundary=c",
            "Content-Type: multipart/mixed",
            "Content-Type: application/http",
            "HTTP/1.1 204 No Content",
            "HTTP/1.1 201 Created",
            "HTTP/1.1 409 Conflict",
            "HTTP/1.1 ",
            "Content-ID: 1",
            "content-id: <2>",
            "ETag: W/\"datetime'2026-11-21T22%3A27%3A39.1328500Z'\"",
            "x-ms-error-code: X",
            r#"{"odata.error":{"code":"EntityAlreadyExists","message":{"value":"0:x"}}}"#,
            r#"{"PartitionKey":"p","RowKey":"r","Timestamp":"2026-01-01T00:00:00Z"}"#,
            "POST http://h/a/t HTTP/1.1",
            "{",
            ":",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        prop::collection::vec(any::<u8>(), 0..6),
    ];
    prop::collection::vec(fragment, 0..60).prop_map(|fs| fs.concat())
}

fn content_type() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[ -~]{0,60}",
        "multipart/mixed; ?[Bb][Oo][Uu][Nn][Dd][Aa][Rr][Yy]=\"?[a-c\"; -]{0,6}\"?;?[ -~]{0,10}",
        Just("multipart/mixed; boundary=b".to_owned()),
    ]
}

fn write_op() -> impl Strategy<Value = WriteOp> {
    let key = prop_oneof!["[ -~]{0,12}", any::<String>(), "[a-z'%()=, ]{0,8}"];
    let props = prop::collection::vec(
        (
            "[A-Za-z][A-Za-z0-9_]{0,10}",
            prop_oneof![
                any::<String>().prop_map(tables_core::Value::from),
                any::<i32>().prop_map(tables_core::Value::from),
                any::<bool>().prop_map(tables_core::Value::from),
            ],
        ),
        0..4,
    );
    let if_match = prop_oneof![
        Just(IfMatch::Any),
        datetime().prop_map(|t| IfMatch::Etag(ETag::from_timestamp(t))),
    ];
    (0u8..6, key.clone(), key, props, if_match).prop_map(|(mode, pk, rk, props, if_match)| {
        let mut entity = DynamicEntity::new(pk.clone(), rk.clone());
        for (name, value) in props {
            entity.insert(name, value);
        }
        match mode {
            0 => WriteOp::Insert(entity),
            1 => WriteOp::Replace { entity, if_match },
            2 => WriteOp::Merge { entity, if_match },
            3 => WriteOp::UpsertReplace(entity),
            4 => WriteOp::UpsertMerge(entity),
            _ => WriteOp::Delete {
                key: EntityKey::new(pk, rk),
                if_match,
            },
        }
    })
}

proptest! {
    #![proptest_config(support::fuzz_config())]

    #[test]
    fn arbitrary_bytes_never_panic(
        ct in content_type(),
        body in prop::collection::vec(any::<u8>(), 0..1024),
        operations in 0usize..4,
    ) {
        check_response(&ct, &body, operations);
    }

    #[test]
    fn structured_garbage_never_panics(
        ct in content_type(),
        body in soup(),
        operations in 0usize..4,
    ) {
        check_response(&ct, &body, operations);
        check_response("multipart/mixed; boundary=b", &body, operations);
    }

    #[test]
    fn well_formed_successes_read_back(
        style in style(),
        parts in prop::collection::vec(success(), 0..12),
    ) {
        let rendered: Vec<_> =
            parts.iter().enumerate().map(|(i, p)| p.render(&style, i)).collect();
        let (ct, body) = style.render(&rendered);
        let outcomes = parse_batch_response(&ct, &body, parts.len());
        let expected: Vec<_> = parts.iter().map(Success::expected).collect();
        prop_assert_eq!(outcomes.unwrap(), expected);
        if !parts.is_empty() {
            let err = parse_batch_response(&ct, &body, parts.len() + 1).unwrap_err();
            prop_assert_eq!(err.kind(), ErrorKind::Decode);
        }
    }

    #[test]
    fn well_formed_failures_read_back(style in style(), failure in failure()) {
        let (ct, body) = style.render(&[failure.render(&style)]);
        let err = parse_batch_response(&ct, &body, failure.operations).unwrap_err();
        prop_assert_eq!(err.kind(), ErrorKind::from_service(failure.status, failure.code));
        prop_assert_eq!(err.status(), Some(failure.status));
        prop_assert_eq!(err.service_code(), Some(failure.code));
        prop_assert_eq!(err.batch_index(), failure.expected_index(&style));
    }

    #[test]
    fn mutated_responses_never_panic(
        style in style(),
        parts in prop::collection::vec(success(), 1..6),
        failure in failure(),
        failing in any::<bool>(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let (ct, mut body, operations) = if failing {
            let (ct, body) = style.render(&[failure.render(&style)]);
            (ct, body, failure.operations)
        } else {
            let rendered: Vec<_> =
                parts.iter().enumerate().map(|(i, p)| p.render(&style, i)).collect();
            let (ct, body) = style.render(&rendered);
            (ct, body, parts.len())
        };
        for m in &mutations {
            mutate(&mut body, m);
        }
        check_response(&ct, &body, operations);
    }

    #[test]
    fn encoded_batches_read_back_part_for_part(
        ops in prop::collection::vec(write_op(), 1..8),
        table in "[A-Za-z][A-Za-z0-9]{2,20}",
        base in prop::sample::select(vec![
            "http://127.0.0.1:10002/devstoreaccount1",
            "https://acct.table.core.windows.net",
        ]),
        ids in ("[a-f0-9-]{1,36}", "[a-f0-9-]{1,36}"),
        etag_time in datetime(),
    ) {
        let request = encode_batch(base, &table, &ops, &ids.0, &ids.1);
        let parts = parse_batch_request(&request.content_type, &request.body).unwrap();
        prop_assert_eq!(parts.len(), ops.len());
        let mut response = Vec::new();
        for (i, (op, part)) in ops.iter().zip(&parts).enumerate() {
            let (method, url) = match op {
                WriteOp::Insert(_) => ("POST", format!("{base}/{table}")),
                WriteOp::Replace { .. } | WriteOp::UpsertReplace(_) => ("PUT", String::new()),
                WriteOp::Merge { .. } | WriteOp::UpsertMerge(_) => ("MERGE", String::new()),
                WriteOp::Delete { .. } => ("DELETE", String::new()),
            };
            let url = if url.is_empty() {
                format!("{base}/{}", entity_path(&table, &op.key()))
            } else {
                url
            };
            prop_assert_eq!(&part.method, method);
            prop_assert_eq!(&part.url, &url);
            let content_id = (i + 1).to_string();
            prop_assert_eq!(part.header("content-id"), Some(content_id.as_str()));
            prop_assert_eq!(part.header("If-Match"), op.if_match().map(IfMatch::header_value));
            prop_assert_eq!(part.header("Prefer").is_some(), method == "POST");
            let mut json = Vec::new();
            if let Some(entity) = op.entity() {
                encode_entity(entity, &mut json);
                let decoded = decode_entity(&part.body).unwrap();
                prop_assert_eq!(decoded.key(), op.key());
            }
            prop_assert_eq!(&part.body, &json);
            // Answer like the service: 204 + ETag, echoing the Content-ID.
            let etag = ETag::from_timestamp(etag_time);
            let answer = format!(
                "--changesetresponse_x\r\nContent-Type: application/http\r\n\r\n\
                 HTTP/1.1 204 No Content\r\nContent-ID: {content_id}\r\nETag: {etag}\r\n\r\n\r\n"
            );
            response.extend_from_slice(answer.as_bytes());
        }
        let mut body = b"--batchresponse_x\r\n\
            Content-Type: multipart/mixed; boundary=changesetresponse_x\r\n\r\n"
            .to_vec();
        body.extend(response);
        body.extend_from_slice(b"--changesetresponse_x--\r\n--batchresponse_x--\r\n");
        let ct = "multipart/mixed; boundary=batchresponse_x";
        let outcomes = parse_batch_response(ct, &body, ops.len()).unwrap();
        let expected = WriteOutcome::new(Some(ETag::from_timestamp(etag_time)), Some(etag_time));
        prop_assert_eq!(outcomes, vec![expected; ops.len()]);
    }
}

#[test]
fn tolerates_framing_variants() {
    // Parts directly under a quoted batch boundary, without MIME headers, with odd
    // header case, and a changeset whose boundary is found from its first line.
    let body = concat!(
        "preamble\n--batchresponse_q\nHTTP/1.1 204 No Content\nETAG:   W/\"x\"  \n\n",
        "--batchresponse_q\ncontent-type: MULTIPART/mixed\n\n--cs\n\nhttp-ish: yes\n",
        "HTTP/1.0 200 OK\n\n--cs--\n--batchresponse_q--\nepilogue",
    );
    let ct = "Multipart/Mixed; charset=utf-8; BOUNDARY=\"batchresponse_q\"";
    let outcomes = parse_batch_response(ct, body.as_bytes(), 2).unwrap();
    assert_eq!(outcomes[0].etag.as_ref().map(ETag::as_str), Some("W/\"x\""));
    assert_eq!(outcomes[0].timestamp, None);
    assert_eq!(outcomes[1], WriteOutcome::default());
    // An empty changeset is zero parts.
    let empty = "--b\nContent-Type: multipart/mixed\n\n--c--\n--b--\n";
    let ct = "multipart/mixed; boundary=b";
    assert_eq!(
        parse_batch_response(ct, empty.as_bytes(), 0).unwrap(),
        vec![]
    );
}

#[test]
fn status_lines_and_content_ids() {
    let ct = "multipart/mixed; boundary=b";
    let part = |status: &str, headers: &str| format!("--b\n{status}\n{headers}\n\n--b--\n");
    for bad in [
        "HTTP/1.1 20",
        "HTTP/1.1 2045 x",
        "HTTP/1.1 099 x",
        "HTTP/1.1",
        "HTTP 204",
        "204",
    ] {
        let err = parse_batch_response(ct, part(bad, "").as_bytes(), 1).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode, "{bad}");
    }
    let err = parse_batch_response(ct, part("HTTP/1.1 409", "").as_bytes(), 1).unwrap_err();
    assert_eq!((err.status(), err.batch_index()), (Some(409), Some(0)));
    let err = parse_batch_response(ct, part("HTTP/1.1 404 x", "Content-ID: <3>").as_bytes(), 5)
        .unwrap_err();
    assert_eq!(
        (err.kind(), err.batch_index()),
        (ErrorKind::EntityNotFound, Some(2))
    );
    let err = parse_batch_response(ct, part("HTTP/1.1 404 x", "Content-ID: 9").as_bytes(), 5)
        .unwrap_err();
    assert_eq!(err.batch_index(), None);
}

#[test]
fn pathological_bodies_take_linear_time() {
    let started = std::time::Instant::now();
    let ct = "multipart/mixed; boundary=b";
    let many_parts = "--b\n".repeat(1 << 20) + "--b--\n";
    let many_headers = format!("--b\nHTTP/1.1 204 x\n{}\n--b--\n", "a: b\n".repeat(800_000));
    let long_line = format!("--b\n{}\n--b--", "-".repeat(4 << 20));
    let nested = format!(
        "--b\nContent-Type: multipart/mixed; boundary=c\n\n{}--c--\n--b--\n",
        "--c\n\n".repeat(500_000)
    );
    assert!(parse_batch_response(ct, many_parts.as_bytes(), 1).is_err());
    assert!(parse_batch_request(ct, many_parts.as_bytes()).is_err());
    assert_eq!(
        parse_batch_response(ct, many_headers.as_bytes(), 1)
            .unwrap()
            .len(),
        1
    );
    assert!(parse_batch_request(ct, many_headers.as_bytes()).is_err());
    assert!(parse_batch_response(ct, long_line.as_bytes(), 1).is_err());
    assert!(parse_batch_request(ct, long_line.as_bytes()).is_err());
    assert!(parse_batch_response(ct, nested.as_bytes(), 1).is_err());
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}
