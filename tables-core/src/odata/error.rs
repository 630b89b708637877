//! Error responses: what the service said ([`ServiceError`]) and the SDK error it
//! becomes ([`service_error`]).
//!
//! The service answers errors in JSON when the request asked for JSON
//! (`{"odata.error":{"code":..,"message":{"value":..}}}`), in XML for authentication
//! failures and the XML-only APIs (`<Error><Code>..</Code><Message>..</Message></Error>`),
//! and proxies in front of it may answer anything at all. Every form is read here,
//! and none of them can make the reader fail.

use std::fmt;

use crate::error::Error;

/// The longest service message kept, in characters.
const MAX_MESSAGE_CHARS: usize = 1024;
/// The longest prefix of an unrecognised body used as the message, in characters.
const MAX_BODY_PREFIX_CHARS: usize = 100;

/// What an error response said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceError {
    /// The service error code (`EntityAlreadyExists`), or empty when neither the body
    /// nor the `x-ms-error-code` header named one.
    pub code: String,
    /// The message as sent, including any `RequestId:`/`Time:` lines, or a short
    /// description of the response when it had none.
    pub message: String,
}

/// Reads an error response body.
///
/// Understands JSON (`{"odata.error":{"code":..,"message":{"value":..}}}`, and the
/// `{"code":..,"message":..}` form of Cosmos DB) and XML
/// (`<Error><Code>..</Code><Message>..</Message></Error>`, as in Azurite's 403s). For
/// anything else the code comes from `header_code` (`x-ms-error-code`) and the message
/// is a short, lossy prefix of the body, or the status text when the body is empty.
/// The header's code is used whenever the body names none (Azurite sends an empty
/// code for table-name errors).
///
/// ```
/// use tables_core::odata::parse_error_body;
///
/// let body = br#"{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"The specified entity already exists.\nRequestId:1"}}}"#;
/// let err = parse_error_body(409, Some("EntityAlreadyExists"), body);
/// assert_eq!(err.code, "EntityAlreadyExists");
/// assert_eq!(err.message, "The specified entity already exists.\nRequestId:1");
/// assert_eq!(parse_error_body(503, None, b"").message, "Service Unavailable");
/// ```
pub fn parse_error_body(status: u16, header_code: Option<&str>, body: &[u8]) -> ServiceError {
    let header_code = header_code.map(str::trim).filter(|c| !c.is_empty());
    let parsed = from_json(body).or_else(|| from_xml(body));
    let recognised = parsed.is_some();
    let (code, message) = parsed.unwrap_or_default();
    let code = match code.filter(|c| !c.is_empty()) {
        Some(code) => code,
        None => header_code.unwrap_or_default().to_owned(),
    };
    let message = match message.filter(|m| !m.trim().is_empty()) {
        Some(message) => truncate(message, MAX_MESSAGE_CHARS),
        None if recognised => status_text(status),
        None => body_prefix(body).unwrap_or_else(|| status_text(status)),
    };
    ServiceError { code, message }
}

/// Splits the index prefix off a batch failure message: `"1:The specified entity
/// already exists."` gives `(Some(1), "The specified entity already exists.")`; a
/// message without one is returned whole.
///
/// ```
/// use tables_core::odata::split_batch_index;
///
/// assert_eq!(split_batch_index("1:Bad entity."), (Some(1), "Bad entity."));
/// assert_eq!(split_batch_index("Bad entity."), (None, "Bad entity."));
/// ```
pub fn split_batch_index(message: &str) -> (Option<usize>, &str) {
    let digits = message.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        if let Some(rest) = message[digits..].strip_prefix(':') {
            if let Ok(index) = message[..digits].parse() {
                return (Some(index), rest);
            }
        }
    }
    (None, message)
}

/// The SDK error for an error response: [`Error::from_service`] with the status, the
/// code ([`parse_error_body`]) and the first line of the message (the service appends
/// `\nRequestId:..\nTime:..`, which the response headers carry anyway).
///
/// ```
/// use tables_core::{odata, ErrorKind};
///
/// let body = br#"{"odata.error":{"code":"ResourceNotFound","message":{"value":"The specified resource does not exist.\nRequestId:x\nTime:y"}}}"#;
/// let err = odata::service_error(404, None, body);
/// assert_eq!(err.kind(), ErrorKind::EntityNotFound);
/// assert_eq!(err.message(), "The specified resource does not exist.");
/// assert_eq!(err.status(), Some(404));
/// ```
pub fn service_error(status: u16, header_code: Option<&str>, body: &[u8]) -> Error {
    let ServiceError { code, message } = parse_error_body(status, header_code, body);
    let first = message.lines().next().unwrap_or_default().trim_end();
    let message = if first.is_empty() {
        status_text(status)
    } else {
        first.to_owned()
    };
    Error::from_service(status, &code, message)
}

/// `(code, message)` of a JSON error body, `None` when the body is not one.
fn from_json(body: &[u8]) -> Option<(Option<String>, Option<String>)> {
    use serde_json::Value as Json;
    let json: Json = serde_json::from_slice(body).ok()?;
    let root = json.as_object()?;
    let error = match root.get("odata.error").or_else(|| root.get("error")) {
        Some(Json::Object(inner)) => inner,
        _ => root,
    };
    let code = error.get("code").and_then(Json::as_str).map(str::to_owned);
    let message = match error.get("message") {
        Some(Json::String(text)) => Some(text.clone()),
        Some(Json::Object(inner)) => inner.get("value").and_then(Json::as_str).map(str::to_owned),
        _ => None,
    };
    (code.is_some() || message.is_some()).then_some((code, message))
}

/// `(code, message)` of an XML error body, `None` when the body is not one.
fn from_xml(body: &[u8]) -> Option<(Option<String>, Option<String>)> {
    let text = String::from_utf8_lossy(body);
    let text = text.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if !text.starts_with('<') {
        return None;
    }
    let code = xml_element(text, &["Code", "m:code", "code"]);
    let message = xml_element(text, &["Message", "m:message", "message"]);
    (code.is_some() || message.is_some()).then_some((code, message))
}

/// The unescaped text of the first element named one of `names`.
fn xml_element(text: &str, names: &[&str]) -> Option<String> {
    names.iter().find_map(|name| {
        let mut rest = text;
        loop {
            let start = rest.find('<')?;
            rest = &rest[start + 1..];
            let Some(after) = rest.strip_prefix(name) else {
                continue;
            };
            // `<Code>` or `<m:message xml:lang="en-US">`, not `<CodeDetail>`.
            if !after.starts_with(['>', ' ', '\t', '\r', '\n']) {
                continue;
            }
            let open_end = after.find('>')?;
            let content = &after[open_end + 1..];
            let close = format!("</{name}>");
            let end = content.find(&close)?;
            return Some(xml_unescape(&content[..end]));
        }
    })
}

/// Resolves the predefined and numeric XML entities; anything else stays as is.
fn xml_unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let entity = rest.find(';').map(|semi| (&rest[1..semi], semi));
        let decoded = entity.and_then(|(name, semi)| {
            let c = match name {
                "amp" => '&',
                "lt" => '<',
                "gt" => '>',
                "quot" => '"',
                "apos" => '\'',
                _ => {
                    let code = match name.strip_prefix("#x").or_else(|| name.strip_prefix("#X")) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                        None => name.strip_prefix('#')?.parse().ok()?,
                    };
                    char::from_u32(code)?
                }
            };
            Some((c, semi))
        });
        match decoded {
            Some((c, semi)) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A short, lossy prefix of a body that is not a recognised error document, or
/// `None` if it is blank.
fn body_prefix(body: &[u8]) -> Option<String> {
    // Enough bytes for the prefix even if every character takes four.
    let head = &body[..body.len().min(MAX_BODY_PREFIX_CHARS * 4)];
    let text = String::from_utf8_lossy(head);
    let text = text.trim();
    (!text.is_empty()).then(|| Short(text, MAX_BODY_PREFIX_CHARS).to_string())
}

fn truncate(text: String, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text,
    }
}

/// The reason phrase of a status, for responses without a message.
pub(super) fn status_text(status: u16) -> String {
    let reason = match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => return format!("HTTP status {status}"),
    };
    reason.to_owned()
}

/// Text cut to at most `.1` characters, with `...` when cut: for quoting input in
/// messages without quoting all of it.
pub(super) struct Short<'a>(pub(super) &'a str, pub(super) usize);

impl Short<'_> {
    /// The kept part and whether anything was cut.
    fn split(&self) -> (&str, bool) {
        match self.0.char_indices().nth(self.1) {
            Some((end, _)) => (&self.0[..end], true),
            None => (self.0, false),
        }
    }
}

impl fmt::Display for Short<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kept, cut) = self.split();
        f.write_str(kept)?;
        if cut {
            f.write_str("...")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Short<'_> {
    /// Quoted like a `str`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kept, cut) = self.split();
        write!(f, "{kept:?}")?;
        if cut {
            f.write_str("...")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn json_bodies_give_code_and_message() {
        let body = br#"{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"The specified entity already exists.\nRequestId:9a\nTime:2026-11-21T22:27:39.140Z"}}}"#;
        let parsed = parse_error_body(409, None, body);
        assert_eq!(parsed.code, "EntityAlreadyExists");
        assert!(parsed
            .message
            .starts_with("The specified entity already exists.\nRequestId:"));
        let err = service_error(409, Some("EntityAlreadyExists"), body);
        assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
        assert_eq!(err.message(), "The specified entity already exists.");
        assert_eq!(err.service_code(), Some("EntityAlreadyExists"));

        // Cosmos DB's flat form.
        let cosmos = parse_error_body(
            400,
            None,
            br#"{"code":"BadRequest","message":"The input name is invalid."}"#,
        );
        assert_eq!(cosmos.code, "BadRequest");
        assert_eq!(cosmos.message, "The input name is invalid.");
    }

    #[test]
    fn empty_body_code_falls_back_on_the_header() {
        // Azurite's table-name errors carry an empty code.
        let body = br#"{"odata.error":{"code":"","message":{"value":"The specified resource name contains invalid characters"}}}"#;
        let parsed = parse_error_body(400, Some("InvalidResourceName"), body);
        assert_eq!(parsed.code, "InvalidResourceName");
        let parsed = parse_error_body(400, None, body);
        assert_eq!(parsed.code, "");
        assert_eq!(
            service_error(400, None, body).kind(),
            ErrorKind::InvalidInput
        );
        // The body's code wins over the header's.
        let body = br#"{"odata.error":{"code":"TableNotFound","message":{"value":"x"}}}"#;
        assert_eq!(
            parse_error_body(404, Some("Other"), body).code,
            "TableNotFound"
        );
    }

    #[test]
    fn xml_bodies_give_code_and_message() {
        let body = b"\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Error><Code>AuthorizationFailure</Code><Message>Server failed to &lt;authenticate&gt; &amp; &#39;more&#x27;\nRequestId:1</Message><AuthenticationErrorDetail>x</AuthenticationErrorDetail></Error>";
        let parsed = parse_error_body(403, None, body);
        assert_eq!(parsed.code, "AuthorizationFailure");
        assert_eq!(
            parsed.message,
            "Server failed to <authenticate> & 'more'\nRequestId:1"
        );
        let err = service_error(403, None, body);
        assert_eq!(err.kind(), ErrorKind::Auth);
        assert_eq!(err.message(), "Server failed to <authenticate> & 'more'");
        let odata = br#"<?xml version="1.0"?><m:error xmlns:m="x"><m:code>InvalidInput</m:code><m:message xml:lang="en-US">Bad &bogus; &#xZZ;</m:message></m:error>"#;
        let parsed = parse_error_body(400, None, odata);
        assert_eq!(
            (parsed.code.as_str(), parsed.message.as_str()),
            ("InvalidInput", "Bad &bogus; &#xZZ;")
        );
    }

    #[test]
    fn empty_and_garbage_bodies() {
        let empty = parse_error_body(404, Some("ResourceNotFound"), b"");
        assert_eq!(empty.code, "ResourceNotFound");
        assert_eq!(empty.message, "Not Found");
        assert_eq!(
            parse_error_body(599, None, b"  \n").message,
            "HTTP status 599"
        );
        let html = parse_error_body(502, None, b"<html><body>Bad gateway</body></html>");
        assert_eq!(
            (html.code.as_str(), html.message.as_str()),
            ("", "<html><body>Bad gateway</body></html>")
        );
        let long = vec![b'x'; 5000];
        let garbage = parse_error_body(500, None, &long);
        assert_eq!(garbage.message.len(), MAX_BODY_PREFIX_CHARS + 3);
        let invalid = parse_error_body(500, None, b"\xff\xfe oops");
        assert_eq!(invalid.message, "\u{fffd}\u{fffd} oops");
        // JSON that is not an error document is garbage too.
        assert_eq!(parse_error_body(500, None, b"[1,2]").message, "[1,2]");
        // A recognised document without a message gets the status text.
        assert_eq!(
            parse_error_body(409, None, br#"{"odata.error":{"code":"X"}}"#).message,
            "Conflict"
        );
        let err = service_error(503, Some("ServerBusy"), b"");
        assert_eq!(err.kind(), ErrorKind::Throttled);
        assert_eq!(err.message(), "Service Unavailable");
        let tail_only =
            br#"{"odata.error":{"code":"InternalError","message":{"value":"\nRequestId:1"}}}"#;
        let err = service_error(500, None, tail_only);
        assert_eq!(err.message(), "Internal Server Error");
        assert_eq!(
            service_error(500, None, b"\n\nlater lines").message(),
            "later lines"
        );
    }

    #[test]
    fn batch_index_prefix() {
        assert_eq!(
            split_batch_index("1:The specified entity already exists."),
            (Some(1), "The specified entity already exists.")
        );
        assert_eq!(split_batch_index("12:x:y"), (Some(12), "x:y"));
        assert_eq!(split_batch_index("0:"), (Some(0), ""));
        for whole in [
            "",
            ":x",
            "1 :x",
            "a1:x",
            "The entity",
            "99999999999999999999999:x",
        ] {
            assert_eq!(split_batch_index(whole), (None, whole));
        }
    }

    #[test]
    fn short_cuts_on_char_boundaries() {
        assert_eq!(Short("héllo", 2).to_string(), "hé...");
        assert_eq!(format!("{:?}", Short("héllo", 9)), "\"héllo\"");
        assert_eq!(truncate("ééé".to_owned(), 2), "éé...");
    }
}
