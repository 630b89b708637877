//! Entity group transactions on the wire: the `multipart/mixed` body of a `$batch`
//! request, and the reading of the service's multipart answer.
//!
//! A request holds one changeset (`changeset_<id>`) inside the batch (`batch_<id>`),
//! with one `application/http` part per operation. The answer (`202 Accepted`) holds
//! one part per operation on success, or a single part for the failing operation.
//! The reader is lenient about framing details the service and Azurite vary on (CRLF
//! or LF, header case, quoted boundaries, a changeset nested in the batch or parts
//! directly under it), strict about what matters (every part's status line, the part
//! count), and never panics: malformed input is an [`ErrorKind::Decode`](crate::ErrorKind::Decode) error.

use std::borrow::Cow;

use super::header;
use crate::entity::ETag;
use crate::error::{Error, Result};
use crate::write::{WriteMode, WriteOp, WriteOutcome};

/// A `$batch` request body and its `Content-Type` header value.
#[derive(Debug, Clone)]
pub struct BatchRequest {
    /// `multipart/mixed; boundary=batch_<id>`.
    pub content_type: String,
    /// The multipart body (CRLF line endings).
    pub body: Vec<u8>,
}

/// Builds the multipart/mixed body of one changeset holding `ops` on `table`.
///
/// `base_url` is the account URL as sent (e.g. `http://127.0.0.1:10002/devstoreaccount1`
/// or `https://acct.table.core.windows.net`; a trailing `/` is ignored); sub-request
/// URLs are absolute: `{base_url}/{table}` for insert, `{base_url}/{entity_path}`
/// otherwise. `batch_id` and `changeset_id` go into the boundaries `batch_<id>` and
/// `changeset_<id>`. Line endings are CRLF.
///
/// Insert: `POST` with `Prefer: return-no-content`; Replace: `PUT` with `If-Match`;
/// Merge: `MERGE` with `If-Match`; UpsertReplace: `PUT`; UpsertMerge: `MERGE`; Delete:
/// `DELETE` with `If-Match`. Each part carries `Content-Type: application/http` and
/// `Content-Transfer-Encoding: binary`, then the request line, `Content-ID: <i+1>`,
/// `Accept`, `DataServiceVersion: 3.0;`, and for the modes with a body `Content-Type:
/// application/json` and the entity JSON of [`encode_entity`](super::encode_entity).
///
/// The caller validates the batch first ([`validate_batch`](crate::validate_batch)).
pub fn encode_batch(
    base_url: &str,
    table: &str,
    ops: &[WriteOp],
    batch_id: &str,
    changeset_id: &str,
) -> BatchRequest {
    let base = base_url.trim_end_matches('/');
    let mut body = Vec::with_capacity(256 + ops.len() * 512);
    line(&mut body, &["--batch_", batch_id]);
    line(
        &mut body,
        &[
            "Content-Type: multipart/mixed; boundary=changeset_",
            changeset_id,
        ],
    );
    line(&mut body, &[]);
    for (index, op) in ops.iter().enumerate() {
        let mode = op.mode();
        let (method, path) = super::path::write_target(table, op);
        let url = format!("{base}/{path}");
        line(&mut body, &["--changeset_", changeset_id]);
        line(&mut body, &["Content-Type: application/http"]);
        line(&mut body, &["Content-Transfer-Encoding: binary"]);
        line(&mut body, &[]);
        line(&mut body, &[method, " ", &url, " HTTP/1.1"]);
        line(
            &mut body,
            &[header::CONTENT_ID, ": ", &(index + 1).to_string()],
        );
        line(&mut body, &[header::ACCEPT, ": ", header::ACCEPT_JSON]);
        line(&mut body, &[header::DATA_SERVICE_VERSION, ": 3.0;"]);
        if mode == WriteMode::Insert {
            line(
                &mut body,
                &[header::PREFER, ": ", header::RETURN_NO_CONTENT],
            );
        }
        if let Some(if_match) = op.if_match() {
            line(
                &mut body,
                &[header::IF_MATCH, ": ", if_match.header_value()],
            );
        }
        if let Some(entity) = op.entity() {
            line(&mut body, &[header::CONTENT_TYPE, ": ", header::JSON]);
            line(&mut body, &[]);
            super::encode_entity(entity, &mut body);
        } else {
            line(&mut body, &[]);
        }
        // The CRLF before a boundary belongs to the boundary (RFC 2046).
        body.extend_from_slice(b"\r\n");
    }
    line(&mut body, &["--changeset_", changeset_id, "--"]);
    line(&mut body, &["--batch_", batch_id, "--"]);
    BatchRequest {
        content_type: format!("multipart/mixed; boundary=batch_{batch_id}"),
        body,
    }
}

fn line(out: &mut Vec<u8>, pieces: &[&str]) {
    for piece in pieces {
        out.extend_from_slice(piece.as_bytes());
    }
    out.extend_from_slice(b"\r\n");
}

/// Parses a `202` `$batch` response into one [`WriteOutcome`] per operation, in order.
///
/// `content_type` is the response's `Content-Type` header, holding `boundary=`;
/// `operations` is the number of operations sent. On success each outcome's ETag
/// comes from its part's `ETag` header and its timestamp from
/// [`ETag::timestamp`]; a part without them (an insert answered `201` with a body)
/// takes them from its JSON entity, if that can be read.
///
/// Accepts CRLF and LF line endings, header names in any case, a quoted or bare
/// boundary, and a changeset nested in the batch part (the normal form, its boundary
/// declared in the part's `Content-Type`) or parts directly under the batch boundary.
///
/// # Errors
///
/// - A part with status `>= 300`: that part's service error
///   ([`service_error`](super::service_error)), with [`Error::batch_index`] from the
///   message's `N:` prefix (which is then dropped from the message), else the part's
///   `Content-ID` minus one, else `0` when `operations == 1`. An index outside
///   `0..operations` is never set.
/// - [`ErrorKind::Decode`](crate::ErrorKind::Decode) with a short reason for malformed framing, a bad status
///   line, or a part count other than `operations` without a failing part.
pub fn parse_batch_response(
    content_type: &str,
    body: &[u8],
    operations: usize,
) -> Result<Vec<WriteOutcome>> {
    const WHAT: &str = "batch response";
    let parts = read_parts(content_type.as_bytes(), body).map_err(|why| decode(WHAT, &why))?;
    let mut responses = Vec::with_capacity(parts.len());
    for (number, part) in parts.iter().enumerate() {
        let (start, headers, body) = read_message(part.message);
        let status = start.and_then(parse_status_line).ok_or_else(|| {
            let shown = start.map_or_else(|| "nothing".to_owned(), snippet);
            decode(
                WHAT,
                &format!("part {number} has no HTTP status line (found {shown})"),
            )
        })?;
        let content_id = header(&headers, header::CONTENT_ID)
            .or_else(|| header(&part.headers, header::CONTENT_ID))
            .and_then(parse_content_id);
        responses.push(SubResponse {
            status,
            headers,
            content_id,
            body: body.trim_ascii(),
        });
    }
    if let Some(failed) = responses.iter().find(|r| r.status >= 300) {
        return Err(failure(failed, operations));
    }
    if responses.len() != operations {
        return Err(decode(
            WHAT,
            &format!(
                "{operations} operations were sent but the response holds {} parts",
                responses.len()
            ),
        ));
    }
    Ok(responses.iter().map(outcome).collect())
}

/// One part of a batch response: the inner HTTP response.
struct SubResponse<'a> {
    status: u16,
    headers: Vec<Header<'a>>,
    content_id: Option<usize>,
    body: &'a [u8],
}

fn failure(part: &SubResponse<'_>, operations: usize) -> Error {
    let code = header(&part.headers, header::X_MS_ERROR_CODE).map(text);
    let err = super::service_error(part.status, code.as_deref(), part.body);
    let (prefixed, rest) = super::split_batch_index(err.message());
    if let Some(index) = prefixed.filter(|index| *index < operations) {
        let rest = rest.trim_start().to_owned();
        let err = if rest.is_empty() {
            err
        } else {
            err.with_message(rest)
        };
        return err.with_batch_index(index);
    }
    let index = part
        .content_id
        .and_then(|id| id.checked_sub(1))
        .filter(|index| *index < operations)
        .or((operations == 1).then_some(0));
    match index {
        Some(index) => err.with_batch_index(index),
        None => err,
    }
}

fn outcome(part: &SubResponse<'_>) -> WriteOutcome {
    let mut etag = header(&part.headers, header::ETAG)
        .map(|value| text(value).trim().to_owned())
        .filter(|value| !value.is_empty())
        .map(ETag::new);
    let mut timestamp = etag.as_ref().and_then(ETag::timestamp);
    if (etag.is_none() || timestamp.is_none()) && !part.body.is_empty() {
        // The entity is extra information about a write that was applied: an entity
        // that cannot be read leaves the outcome without it rather than failing.
        if let Ok(entity) = super::decode_entity(part.body) {
            etag = etag.or(entity.etag);
            timestamp = timestamp
                .or(entity.timestamp)
                .or_else(|| etag.as_ref().and_then(ETag::timestamp));
        }
    }
    WriteOutcome::new(etag, timestamp)
}

/// One sub-request of a `$batch` request body, as [`parse_batch_request`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchSubRequest {
    /// The method of the request line (`POST`, `PUT`, `MERGE`, `DELETE`, ...).
    pub method: String,
    /// The URL of the request line, as written (absolute in a well-formed batch).
    pub url: String,
    /// The headers of the inner HTTP request, in order, as written.
    pub headers: Vec<(String, String)>,
    /// The body of the inner request (empty when there is none).
    pub body: Vec<u8>,
}

impl BatchSubRequest {
    /// The first header of that name (compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Reads a `$batch` request body, the server's side of [`encode_batch`]: one
/// [`BatchSubRequest`] per `application/http` part, in order, whether the parts sit in
/// a changeset nested in the batch or directly under the batch boundary.
///
/// For test servers and tests; the same framing rules as [`parse_batch_response`].
///
/// # Errors
///
/// [`ErrorKind::Decode`](crate::ErrorKind::Decode) for malformed framing or a part without a request line
/// (`<METHOD> <url> HTTP/<version>`).
pub fn parse_batch_request(content_type: &str, body: &[u8]) -> Result<Vec<BatchSubRequest>> {
    const WHAT: &str = "batch request";
    let parts = read_parts(content_type.as_bytes(), body).map_err(|why| decode(WHAT, &why))?;
    let mut requests = Vec::with_capacity(parts.len());
    for (number, part) in parts.iter().enumerate() {
        let (start, headers, body) = read_message(part.message);
        let (method, url) = start.and_then(parse_request_line).ok_or_else(|| {
            let shown = start.map_or_else(|| "nothing".to_owned(), snippet);
            decode(
                WHAT,
                &format!("part {number} has no request line (found {shown})"),
            )
        })?;
        requests.push(BatchSubRequest {
            method,
            url,
            headers: headers
                .iter()
                .map(|(n, v)| (text(n).into_owned(), text(v).into_owned()))
                .collect(),
            body: body.to_vec(),
        });
    }
    Ok(requests)
}

// ---- framing -------------------------------------------------------------------

type Header<'a> = (&'a [u8], &'a [u8]);

/// An `application/http` part: its MIME headers and the HTTP message it carries.
struct Part<'a> {
    headers: Vec<Header<'a>>,
    message: &'a [u8],
}

fn decode(what: &str, why: &str) -> Error {
    Error::decode(format!("malformed {what}: {why}"))
}

/// At most 40 bytes of `bytes`, lossily decoded and escaped, for error messages.
fn snippet(bytes: &[u8]) -> String {
    let cut = bytes.get(..40).unwrap_or(bytes);
    let mut shown = format!("{:?}", String::from_utf8_lossy(cut));
    if cut.len() < bytes.len() {
        shown.push('…');
    }
    shown
}

fn text(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// The `application/http` parts of a multipart body, one level of nested multipart
/// flattened in order.
fn read_parts<'a>(content_type: &'a [u8], body: &'a [u8]) -> Result<Vec<Part<'a>>, String> {
    let boundary = boundary_param(content_type).ok_or_else(|| {
        format!(
            "the Content-Type {} declares no multipart boundary",
            snippet(content_type)
        )
    })?;
    let mut parts = Vec::new();
    for outer in split_multipart(body, boundary)? {
        let (headers, rest) = read_mime_head(outer);
        match header(&headers, header::CONTENT_TYPE).filter(|ct| is_multipart(ct)) {
            Some(ct) => {
                let inner = boundary_param(ct)
                    .or_else(|| sniff_boundary(rest))
                    .ok_or("a nested multipart part declares no boundary")?;
                for part in split_multipart(rest, inner)? {
                    let (headers, message) = read_mime_head(part);
                    parts.push(Part { headers, message });
                }
            }
            None => parts.push(Part {
                headers,
                message: rest,
            }),
        }
    }
    Ok(parts)
}

fn is_multipart(content_type: &[u8]) -> bool {
    let ct = content_type.trim_ascii_start();
    ct.get(..10)
        .is_some_and(|head| head.eq_ignore_ascii_case(b"multipart/"))
}

/// The `boundary` parameter of a Content-Type value, quoted or bare.
fn boundary_param(content_type: &[u8]) -> Option<&[u8]> {
    let mut in_quotes = false;
    let mut start = 0;
    for end in 0..=content_type.len() {
        let byte = content_type.get(end).copied();
        match byte {
            Some(b'"') => in_quotes = !in_quotes,
            Some(b';') | None if !in_quotes || byte.is_none() => {
                let segment = content_type.get(start..end).unwrap_or_default();
                start = end + 1;
                if let Some(value) = param_value(segment, b"boundary") {
                    return Some(value);
                }
            }
            _ => {}
        }
    }
    None
}

fn param_value<'a>(segment: &'a [u8], wanted: &[u8]) -> Option<&'a [u8]> {
    let eq = segment.iter().position(|b| *b == b'=')?;
    let name = segment.get(..eq)?.trim_ascii();
    if !name.eq_ignore_ascii_case(wanted) {
        return None;
    }
    let value = segment.get(eq + 1..)?.trim_ascii();
    let value = match value.strip_prefix(b"\"") {
        Some(quoted) => {
            let close = quoted
                .iter()
                .position(|b| *b == b'"')
                .unwrap_or(quoted.len());
            quoted.get(..close)?
        }
        None => value,
    };
    (!value.is_empty()).then_some(value)
}

/// A nested multipart's boundary taken from its first delimiter line, when its
/// `multipart/*` Content-Type did not declare one.
fn sniff_boundary(body: &[u8]) -> Option<&[u8]> {
    let first = lines(body)
        .map(|l| l.text)
        .find(|t| !t.trim_ascii().is_empty())?;
    let candidate = first.strip_prefix(b"--")?.trim_ascii_end();
    // An empty multipart opens with its closing delimiter.
    let candidate = candidate.strip_suffix(b"--").unwrap_or(candidate);
    (!candidate.is_empty()).then_some(candidate)
}

/// One line of a body: where it starts, its text (without `\n` or a final `\r`), and
/// where the next line starts.
#[derive(Clone, Copy)]
struct Line<'a> {
    start: usize,
    text: &'a [u8],
    next: usize,
}

fn lines(data: &[u8]) -> impl Iterator<Item = Line<'_>> + '_ {
    let mut pos = 0;
    std::iter::from_fn(move || {
        let rest = data.get(pos..).filter(|r| !r.is_empty())?;
        let start = pos;
        let (raw, next) = match rest.iter().position(|b| *b == b'\n') {
            Some(nl) => (rest.get(..nl).unwrap_or_default(), start + nl + 1),
            None => (rest, data.len()),
        };
        pos = next;
        let text = raw.strip_suffix(b"\r").unwrap_or(raw);
        Some(Line { start, text, next })
    })
}

enum Delimiter {
    Part,
    Close,
}

fn delimiter(line: &[u8], boundary: &[u8]) -> Option<Delimiter> {
    let rest = line.strip_prefix(b"--")?.strip_prefix(boundary)?;
    if rest.trim_ascii().is_empty() {
        return Some(Delimiter::Part);
    }
    let after = rest.strip_prefix(b"--")?;
    after.trim_ascii().is_empty().then_some(Delimiter::Close)
}

/// The parts between `--boundary` lines, up to the closing `--boundary--` (required).
/// The line ending before a delimiter belongs to the delimiter.
fn split_multipart<'a>(body: &'a [u8], boundary: &[u8]) -> Result<Vec<&'a [u8]>, String> {
    let mut parts = Vec::new();
    let mut open: Option<usize> = None;
    for line in lines(body) {
        let Some(kind) = delimiter(line.text, boundary) else {
            continue;
        };
        if let Some(start) = open {
            parts.push(part_before(body, start, line.start));
        }
        match kind {
            Delimiter::Part => open = Some(line.next),
            Delimiter::Close => return Ok(parts),
        }
    }
    Err(format!(
        "no closing boundary --{}-- ({} parts before the end)",
        String::from_utf8_lossy(boundary.get(..60).unwrap_or(boundary)),
        parts.len()
    ))
}

fn part_before(body: &[u8], start: usize, delimiter_start: usize) -> &[u8] {
    let mut end = delimiter_start;
    if end > start && body.get(end - 1) == Some(&b'\n') {
        end -= 1;
        if end > start && body.get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
    }
    body.get(start..end).unwrap_or_default()
}

/// A `Name: value` line (the name without spaces), trimmed.
fn header_line(text: &[u8]) -> Option<Header<'_>> {
    let colon = text.iter().position(|b| *b == b':')?;
    let name = text.get(..colon)?;
    if name.is_empty() || name.iter().any(|b| b.is_ascii_whitespace()) {
        return None;
    }
    Some((name, text.get(colon + 1..)?.trim_ascii()))
}

fn header<'a>(headers: &[Header<'a>], name: &str) -> Option<&'a [u8]> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
        .map(|(_, v)| *v)
}

/// The MIME headers of a part and what follows them. Leading blank lines are skipped;
/// the headers end at a blank line (consumed) or at the first line that is not a header
/// (a part that goes straight to its status line has no MIME headers).
fn read_mime_head(part: &[u8]) -> (Vec<Header<'_>>, &[u8]) {
    let mut headers = Vec::new();
    let mut seen_text = false;
    for line in lines(part) {
        if line.text.trim_ascii().is_empty() {
            if seen_text {
                return (headers, part.get(line.next..).unwrap_or_default());
            }
            continue;
        }
        seen_text = true;
        match header_line(line.text) {
            Some(h) => headers.push(h),
            None => return (headers, part.get(line.start..).unwrap_or_default()),
        }
    }
    (headers, &[])
}

/// An HTTP message: its start line (after any blank lines), its headers (up to a blank
/// line; other lines are ignored), and its body.
fn read_message(message: &[u8]) -> (Option<&[u8]>, Vec<Header<'_>>, &[u8]) {
    let mut start = None;
    let mut headers = Vec::new();
    for line in lines(message) {
        let blank = line.text.trim_ascii().is_empty();
        if start.is_none() {
            if !blank {
                start = Some(line.text.trim_ascii());
            }
            continue;
        }
        if blank {
            return (start, headers, message.get(line.next..).unwrap_or_default());
        }
        headers.extend(header_line(line.text));
    }
    (start, headers, &[])
}

/// `HTTP/<version> <3-digit code>[ <reason>]` → the code (100..=599).
fn parse_status_line(line: &[u8]) -> Option<u16> {
    let rest = line.strip_prefix(b"HTTP/")?;
    let space = rest.iter().position(|b| *b == b' ' || *b == b'\t')?;
    let after = rest.get(space..)?.trim_ascii_start();
    let digits = after.get(..3)?;
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if after.get(3).is_some_and(|b| !b.is_ascii_whitespace()) {
        return None;
    }
    let code = digits
        .iter()
        .fold(0u16, |acc, d| acc * 10 + u16::from(d - b'0'));
    (100..=599).contains(&code).then_some(code)
}

/// `<METHOD> <url> HTTP/<version>` → (method, url).
fn parse_request_line(line: &[u8]) -> Option<(String, String)> {
    let line = std::str::from_utf8(line).ok()?;
    let mut tokens = line.split_ascii_whitespace();
    let method = tokens.next()?;
    let url = tokens.next()?;
    let version = tokens.next()?;
    if tokens.next().is_some() || !version.starts_with("HTTP/") {
        return None;
    }
    if !method.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    Some((method.to_owned(), url.to_owned()))
}

/// A `Content-ID` value (`3`, or `<3>`).
fn parse_content_id(value: &[u8]) -> Option<usize> {
    let value = value.trim_ascii();
    let value = value
        .strip_prefix(b"<")
        .and_then(|v| v.strip_suffix(b">"))
        .unwrap_or(value);
    std::str::from_utf8(value).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DateTime, DynamicEntity, EntityKey, ErrorKind, IfMatch};

    const BASE: &str = "http://127.0.0.1:10002/devstoreaccount1";
    const ETAG1: &str = "W/\"datetime'2026-11-21T22%3A27%3A39.1328500Z'\"";
    const ETAG2: &str = "W/\"datetime'2026-11-21T22%3A27%3A40.0000001Z'\"";

    /// A response: a batch holding one changeset holding `parts` (each given as lines).
    fn response(eol: &str, parts: &[&[&str]]) -> (String, Vec<u8>) {
        let mut lines = vec![
            "--batchresponse_b1",
            "Content-Type: multipart/mixed; boundary=changesetresponse_c1",
            "",
        ];
        for part in parts {
            lines.push("--changesetresponse_c1");
            lines.extend(part.iter().copied());
        }
        lines.extend(["--changesetresponse_c1--", "--batchresponse_b1--", ""]);
        let content_type = "multipart/mixed; boundary=batchresponse_b1".to_owned();
        (content_type, lines.join(eol).into_bytes())
    }

    fn http_part<'a>(status: &'a str, headers: &[&'a str], body: &'a str) -> Vec<&'a str> {
        let mut lines = vec![
            "Content-Type: application/http",
            "Content-Transfer-Encoding: binary",
            "",
            status,
        ];
        lines.extend(headers.iter().copied());
        lines.extend(["", body]);
        lines
    }

    #[test]
    fn encodes_the_two_operation_example_exactly() {
        let insert = DynamicEntity::new("bp", "1").with("v", 1);
        let merge = DynamicEntity::new("bp", "3").with("v", 3);
        let ops = vec![
            WriteOp::Insert(insert.clone()),
            WriteOp::Merge {
                entity: merge.clone(),
                if_match: IfMatch::Any,
            },
        ];
        let request = encode_batch(&format!("{BASE}/"), "probe1", &ops, "42d4", "9b0e");
        assert_eq!(request.content_type, "multipart/mixed; boundary=batch_42d4");
        let insert_json = super::super::entity_to_json(&insert);
        let merge_json = super::super::entity_to_json(&merge);
        let expected = [
            "--batch_42d4",
            "Content-Type: multipart/mixed; boundary=changeset_9b0e",
            "",
            "--changeset_9b0e",
            "Content-Type: application/http",
            "Content-Transfer-Encoding: binary",
            "",
            "POST http://127.0.0.1:10002/devstoreaccount1/probe1 HTTP/1.1",
            "Content-ID: 1",
            "Accept: application/json;odata=minimalmetadata",
            "DataServiceVersion: 3.0;",
            "Prefer: return-no-content",
            "Content-Type: application/json",
            "",
            &insert_json,
            "--changeset_9b0e",
            "Content-Type: application/http",
            "Content-Transfer-Encoding: binary",
            "",
            "MERGE http://127.0.0.1:10002/devstoreaccount1/probe1(PartitionKey='bp',RowKey='3') HTTP/1.1",
            "Content-ID: 2",
            "Accept: application/json;odata=minimalmetadata",
            "DataServiceVersion: 3.0;",
            "If-Match: *",
            "Content-Type: application/json",
            "",
            &merge_json,
            "--changeset_9b0e--",
            "--batch_42d4--",
            "",
        ]
        .join("\r\n");
        assert_eq!(String::from_utf8(request.body).unwrap(), expected);
        assert!(insert_json.starts_with("{\"PartitionKey\":\"bp\",\"RowKey\":\"1\""));
    }

    #[test]
    fn every_mode_gets_its_method_url_and_headers() {
        let e = DynamicEntity::new("p", "r").with("v", "x");
        let etag = IfMatch::Etag(ETag::new(ETAG1));
        let ops = vec![
            WriteOp::Insert(e.clone()),
            WriteOp::Replace {
                entity: e.clone(),
                if_match: etag.clone(),
            },
            WriteOp::Merge {
                entity: e.clone(),
                if_match: IfMatch::Any,
            },
            WriteOp::UpsertReplace(e.clone()),
            WriteOp::UpsertMerge(e.clone()),
            WriteOp::Delete {
                key: EntityKey::new("p", "r"),
                if_match: etag,
            },
        ];
        let request = encode_batch(BASE, "t", &ops, "b", "c");
        let parts = parse_batch_request(&request.content_type, &request.body).unwrap();
        let entity_url = format!("{BASE}/t(PartitionKey='p',RowKey='r')");
        let table_url = format!("{BASE}/t");
        let expected: [(&str, &str, Option<&str>, bool); 6] = [
            ("POST", &table_url, None, true),
            ("PUT", &entity_url, Some(ETAG1), false),
            ("MERGE", &entity_url, Some("*"), false),
            ("PUT", &entity_url, None, false),
            ("MERGE", &entity_url, None, false),
            ("DELETE", &entity_url, Some(ETAG1), false),
        ];
        assert_eq!(parts.len(), 6);
        for (i, (part, (method, url, if_match, prefer))) in parts.iter().zip(expected).enumerate() {
            assert_eq!((&*part.method, &*part.url), (method, url), "{i}");
            assert_eq!(part.header("if-match"), if_match, "{i}");
            assert_eq!(part.header("Prefer").is_some(), prefer, "{i}");
            let content_id = (i + 1).to_string();
            assert_eq!(part.header("Content-ID"), Some(&*content_id));
            assert_eq!(part.header("DataServiceVersion"), Some("3.0;"));
            let has_body = method != "DELETE";
            assert_eq!(part.header("content-type").is_some(), has_body, "{i}");
            assert_eq!(part.body.is_empty(), !has_body, "{i}");
        }
    }

    #[test]
    fn reads_the_observed_azurite_failure() {
        let body = concat!(
            "--batchresponse_744ab06a-1\r\n",
            "Content-Type: multipart/mixed; boundary=changesetresponse_699ed9a8-2\r\n\r\n",
            "--changesetresponse_699ed9a8-2\r\n",
            "Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n",
            "HTTP/1.1 409 Conflict\r\nContent-ID: 2\r\nDataServiceVersion: 3.0;\r\n",
            "Content-Type: application/json;odata=minimalmetadata;charset=utf-8\r\n\r\n",
            r#"{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","#,
            r#""value":"1:The specified entity already exists.\nRequestId:x\nTime:y"}}}"#,
            "\r\n--changesetresponse_699ed9a8-2--\r\n--batchresponse_744ab06a-1--\r\n",
        );
        let ct = "multipart/mixed; boundary=batchresponse_744ab06a-1";
        let err = parse_batch_response(ct, body.as_bytes(), 3).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
        assert_eq!(err.status(), Some(409));
        assert_eq!(err.service_code(), Some("EntityAlreadyExists"));
        assert_eq!(err.batch_index(), Some(1));
        assert!(!err.message().starts_with("1:"), "{}", err.message());
        // The prefix wins over the Content-ID; an out-of-range prefix is ignored.
        let other = body.replace("\"1:The", "\"0:The");
        let err = parse_batch_response(ct, other.as_bytes(), 3).unwrap_err();
        assert_eq!(err.batch_index(), Some(0));
        let other = body.replace("\"1:The", "\"7:The");
        let err = parse_batch_response(ct, other.as_bytes(), 3).unwrap_err();
        assert_eq!(err.batch_index(), Some(1));
    }

    #[test]
    fn reads_per_part_etags_and_timestamps() {
        let entity = concat!(
            r#"{"odata.etag":"W/\"datetime'2026-11-21T22%3A27%3A40.0000001Z'\"","#,
            r#""PartitionKey":"p","RowKey":"2","Timestamp":"2026-11-21T22:27:40.0000001Z"}"#
        );
        for eol in ["\r\n", "\n"] {
            let etag1 = format!("ETag: {ETAG1}");
            let (ct, body) = response(
                eol,
                &[
                    &http_part("HTTP/1.1 204 No Content", &["Content-ID: 1", &etag1], ""),
                    &http_part("HTTP/1.1 201 Created", &["Content-ID: 2"], entity),
                    &http_part("HTTP/1.1 204 No Content", &["Content-ID: 3"], ""),
                ],
            );
            let outcomes = parse_batch_response(&ct, &body, 3).unwrap();
            assert_eq!(outcomes.len(), 3);
            assert_eq!(outcomes[0].etag.as_ref().map(ETag::as_str), Some(ETAG1));
            let time = |text: &str| Some(text.parse::<DateTime>().unwrap());
            assert_eq!(outcomes[0].timestamp, time("2026-11-21T22:27:39.13285Z"));
            assert_eq!(outcomes[1].etag.as_ref().map(ETag::as_str), Some(ETAG2));
            assert_eq!(outcomes[1].timestamp, time("2026-11-21T22:27:40.0000001Z"));
            assert_eq!(outcomes[2], WriteOutcome::default());
            // A wrong operation count without a failure is a decode error.
            let err = parse_batch_response(&ct, &body, 4).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Decode);
        }
    }

    #[test]
    fn a_failure_without_index_prefix_falls_back_on_content_id() {
        let error = concat!(
            r#"{"odata.error":{"code":"UpdateConditionNotSatisfied","message":{"lang":"en-US","#,
            r#""value":"The update condition specified in the request was not satisfied."}}}"#
        );
        let part = http_part(
            "HTTP/1.1 412 Precondition Failed",
            &["content-id: 3"],
            error,
        );
        let (ct, body) = response("\n", &[&part]);
        let err = parse_batch_response(&ct, &body, 4).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::PreconditionFailed);
        assert_eq!((err.status(), err.batch_index()), (Some(412), Some(2)));
        let (ct, body) = response("\r\n", &[&http_part("HTTP/1.1 404 Not Found", &[], error)]);
        let index = |ops| {
            parse_batch_response(&ct, &body, ops)
                .unwrap_err()
                .batch_index()
        };
        assert_eq!((index(1), index(2)), (Some(0), None));
    }

    #[test]
    fn malformed_input_is_a_decode_error() {
        let ok = "--b\r\nHTTP/1.1 204 No Content\r\n\r\n--b--\r\n";
        assert!(parse_batch_response("multipart/mixed; boundary=b", ok.as_bytes(), 1).is_ok());
        const B: &str = "multipart/mixed; boundary=b";
        let cases: [(&str, &[u8]); 8] = [
            ("application/json", ok.as_bytes()),
            ("multipart/mixed; boundary=", ok.as_bytes()),
            ("multipart/mixed; boundary=\"\"", ok.as_bytes()),
            ("multipart/mixed; boundary=other", ok.as_bytes()),
            (B, b"--b\r\nHTTP/1.1 204 No Content\r\n"),
            (B, b"--b\r\nHTTP/1.1 2O4 No Content\r\n--b--"),
            (B, b"--b\nContent-Type: multipart/mixed\n\nx\n--b--"),
            (B, b"--b\n\xff\xfe--b\n\x00\x01\n--b--\n"),
        ];
        for (ct, body) in cases {
            let err = parse_batch_response(ct, body, 1).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Decode, "{ct} {body:?}");
            assert_eq!((err.status(), err.service_code()), (None, None));
            assert!(err.message().len() < 200, "{}", err.message());
            let err = parse_batch_request(ct, body).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Decode);
        }
    }
}
