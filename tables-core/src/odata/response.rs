//! The service's side of the protocol: response bodies as the Table service writes
//! them, for a server that plays it (`tables-server`). The client reads these with
//! [`decode_entity`](super::decode_entity), [`decode_entity_page`](super::decode_entity_page),
//! [`parse_error_body`](super::parse_error_body) and
//! [`parse_batch_response`](super::batch::parse_batch_response); the tests of this
//! module check that every body written here reads back.
//!
//! What each metadata level carries (docs/protocol.md §4):
//!
//! | | nometadata | minimalmetadata | fullmetadata |
//! |---|---|---|---|
//! | `odata.metadata` | | yes | yes |
//! | `odata.etag` | | yes | yes |
//! | `odata.type`, `odata.id`, `odata.editLink` | | | yes |
//! | `<Prop>@odata.type` for Int64, DateTime, Guid, Binary, non-finite Double | | yes | yes |
//! | `Timestamp@odata.type` | | | yes |

use std::fmt::Write as _;

use super::entity::{
    push_json_key, push_json_parts, push_json_str, push_property, push_value, TYPE_SUFFIX,
};
use super::path::entity_path;
use crate::entity::DynamicEntity;
use crate::value::{EdmType, Value};

/// How much OData metadata a JSON answer carries: the `odata=` parameter of the
/// request's `Accept` header (or its `$format` query parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metadata {
    /// `odata=nometadata`: the properties only.
    None,
    /// `odata=minimalmetadata` (and plain `application/json`): the metadata URL,
    /// ETags and the annotations of types a reader can't infer.
    Minimal,
    /// `odata=fullmetadata`: also the entity's type, id and edit link.
    Full,
}

impl Metadata {
    /// Every level.
    pub const ALL: [Metadata; 3] = [Metadata::None, Metadata::Minimal, Metadata::Full];

    /// The media type that asks for this level, as a request's `Accept` gives it
    /// (this crate's client, and the JS and Python SDKs, send Minimal's as it is).
    pub const fn media_type(self) -> &'static str {
        match self {
            Metadata::None => "application/json;odata=nometadata",
            Metadata::Minimal => "application/json;odata=minimalmetadata",
            Metadata::Full => "application/json;odata=fullmetadata",
        }
    }

    /// The `Content-Type` of an answer at this level.
    pub const fn content_type(self) -> &'static str {
        match self {
            Metadata::None => "application/json;odata=nometadata;streaming=true;charset=utf-8",
            Metadata::Minimal => {
                "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"
            }
            Metadata::Full => "application/json;odata=fullmetadata;streaming=true;charset=utf-8",
        }
    }

    /// The level a media type asks for: `application/json` with an optional
    /// `odata=` parameter (other parameters, such as `charset`, are ignored), or
    /// the bare `odata` value `$format` may give (`nometadata`, `minimalmetadata`,
    /// `fullmetadata`, `json`). `None` for anything else (Atom, XML, an unknown
    /// `odata` value).
    ///
    /// ```
    /// use tables_core::odata::response::Metadata;
    ///
    /// assert_eq!(Metadata::from_media_type("application/json"), Some(Metadata::Minimal));
    /// assert_eq!(
    ///     Metadata::from_media_type("application/json; odata=fullmetadata; charset=utf-8"),
    ///     Some(Metadata::Full)
    /// );
    /// assert_eq!(Metadata::from_media_type("application/atom+xml"), None);
    /// ```
    pub fn from_media_type(media_type: &str) -> Option<Metadata> {
        let mut parts = media_type.split(';').map(str::trim);
        let essence = parts.next().unwrap_or_default();
        // Compared without regard to case, and without lowercasing copies: every
        // request is asked this.
        let by_name = |name: &str| {
            Metadata::ALL.into_iter().find(|level| {
                level
                    .media_type()
                    .strip_prefix("application/json;odata=")
                    .is_some_and(|value| name.eq_ignore_ascii_case(value))
            })
        };
        if !essence.eq_ignore_ascii_case("application/json") {
            return if essence.eq_ignore_ascii_case("json") {
                Some(Metadata::Minimal)
            } else {
                by_name(essence)
            };
        }
        let mut level = Metadata::Minimal;
        for parameter in parts {
            if let Some((name, value)) = parameter.split_once('=') {
                if name.trim().eq_ignore_ascii_case("odata") {
                    level = by_name(value.trim().trim_matches('"'))?;
                }
            }
        }
        Some(level)
    }
}

/// Where an entity answer is about: the URLs of its metadata.
#[derive(Debug, Clone, Copy)]
pub struct Resource<'a> {
    /// The account's base URL as the client addressed it, without a trailing `/`
    /// (`http://127.0.0.1:10002/devstoreaccount1`).
    pub base_url: &'a str,
    /// The account name (`odata.type` is `{account}.{table}`).
    pub account: &'a str,
    /// The table, as the request named it.
    pub table: &'a str,
}

impl Resource<'_> {
    /// The URL of one of the table's entities, as an insert answers it in its
    /// `Location` and `DataServiceId` headers (and a batch in each insert's part).
    ///
    /// ```
    /// use tables_core::odata::response::Resource;
    /// use tables_core::EntityKey;
    ///
    /// let here = Resource { base_url: "http://127.0.0.1:10002/acct", account: "acct", table: "t" };
    /// assert_eq!(
    ///     here.entity_url(&EntityKey::new("%p", "o'r")),
    ///     "http://127.0.0.1:10002/acct/t(PartitionKey='%25p',RowKey='o''r')"
    /// );
    /// ```
    pub fn entity_url(&self, key: &crate::EntityKey) -> String {
        format!("{}/{}", self.base_url, entity_path(self.table, key))
    }
}

/// Writes one entity as a point read, or an insert with `return-content`, answers
/// it.
///
/// ```
/// use tables_core::odata::response::{encode_entity, Metadata, Resource};
/// use tables_core::{odata, DynamicEntity};
///
/// let here = Resource { base_url: "http://127.0.0.1:10002/acct", account: "acct", table: "t" };
/// let mut body = Vec::new();
/// encode_entity(&DynamicEntity::new("p", "r").with("Big", 1i64 << 40), Metadata::Minimal, &here, &mut body);
/// let json = String::from_utf8(body.clone()).unwrap();
/// assert!(json.starts_with(r#"{"odata.metadata":"http://127.0.0.1:10002/acct/$metadata#t/@Element","#));
/// assert_eq!(odata::decode_entity(&body)?.get("Big"), Some(&(1i64 << 40).into()));
/// # Ok::<(), tables_core::Error>(())
/// ```
pub fn encode_entity(
    entity: &DynamicEntity,
    metadata: Metadata,
    here: &Resource<'_>,
    out: &mut Vec<u8>,
) {
    encode_selected_entity(entity, None, metadata, here, out);
}

/// [`encode_entity`] for a read with `$select`: only the selected properties (the
/// keys and `Timestamp` too only if selected; the ETag always), and a selected
/// property the entity lacks as `null`, as the service answers.
pub fn encode_selected_entity(
    entity: &DynamicEntity,
    select: Option<&[String]>,
    metadata: Metadata,
    here: &Resource<'_>,
    out: &mut Vec<u8>,
) {
    open_document(
        out,
        metadata,
        &[here.base_url, "/$metadata#", here.table, "/@Element"],
    );
    entity_members(entity, select, metadata, here, out);
    out.push(b'}');
}

/// Writes a page of a query's entities: `{"odata.metadata":..,"value":[..]}`, each
/// projected on `select` as [`encode_selected_entity`] does.
pub fn encode_entity_page<'e>(
    entities: impl IntoIterator<Item = &'e DynamicEntity>,
    select: Option<&[String]>,
    metadata: Metadata,
    here: &Resource<'_>,
    out: &mut Vec<u8>,
) {
    open_document(out, metadata, &[here.base_url, "/$metadata#", here.table]);
    values_and_close(out, entities, |out, entity| {
        entity_members(entity, select, metadata, here, out);
    });
}

/// Opens a JSON answer: `{`, then `"odata.metadata":"<url>",` (the URL in parts)
/// unless the request asked for no metadata.
fn open_document(out: &mut Vec<u8>, metadata: Metadata, url: &[&str]) {
    out.push(b'{');
    if metadata != Metadata::None {
        out.extend_from_slice(b"\"odata.metadata\":");
        push_json_parts(out, url);
        out.push(b',');
    }
}

/// Writes `"value":[{..},..]}`: each item's members between braces, then closes the
/// answer [`open_document`] opened.
fn values_and_close<T>(
    out: &mut Vec<u8>,
    items: impl IntoIterator<Item = T>,
    mut members: impl FnMut(&mut Vec<u8>, T),
) {
    out.extend_from_slice(b"\"value\":[");
    for (index, item) in items.into_iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        out.push(b'{');
        members(out, item);
        out.push(b'}');
    }
    out.extend_from_slice(b"]}");
}

/// The members of one entity object, without braces.
fn entity_members(
    entity: &DynamicEntity,
    select: Option<&[String]>,
    metadata: Metadata,
    here: &Resource<'_>,
    out: &mut Vec<u8>,
) {
    let selected = |name: &str| select.is_none_or(|select| select.iter().any(|s| s == name));
    if metadata == Metadata::Full {
        let link = entity_path(here.table, &entity.key());
        out.extend_from_slice(b"\"odata.type\":");
        push_json_parts(out, &[here.account, ".", here.table]);
        out.extend_from_slice(b",\"odata.id\":");
        push_json_parts(out, &[here.base_url, "/", &link]);
        out.extend_from_slice(b",");
        etag_member(entity, out);
        out.extend_from_slice(b"\"odata.editLink\":");
        push_json_str(out, &link);
        out.push(b',');
    } else if metadata == Metadata::Minimal {
        etag_member(entity, out);
    }
    // Every member is written with a comma after it; the last one is dropped.
    let start = out.len();
    if selected("PartitionKey") {
        out.extend_from_slice(b"\"PartitionKey\":");
        push_json_str(out, &entity.partition_key);
        out.push(b',');
    }
    if selected("RowKey") {
        out.extend_from_slice(b"\"RowKey\":");
        push_json_str(out, &entity.row_key);
        out.push(b',');
    }
    if let Some(timestamp) = entity.timestamp.filter(|_| selected("Timestamp")) {
        if metadata == Metadata::Full {
            push_json_key(out, "Timestamp", TYPE_SUFFIX);
            out.extend_from_slice(b"\"Edm.DateTime\",");
        }
        push_json_key(out, "Timestamp", "");
        push_value(out, &Value::DateTime(timestamp));
        out.push(b',');
    }
    let property = |out: &mut Vec<u8>, name: &str, value: Option<&Value>| {
        let Some(value) = value else {
            push_json_key(out, name, "");
            out.extend_from_slice(b"null,");
            return;
        };
        push_member(out, name, value, metadata != Metadata::None);
    };
    match select {
        // The members with their annotations are the same for every level that has
        // annotations: written once per stored version of a row, then copied.
        None if metadata != Metadata::None => {
            out.extend_from_slice(entity.answer_json(annotated_members));
        }
        None => {
            for (name, value) in entity.properties() {
                property(out, name, Some(value));
            }
        }
        Some(select) => {
            for name in select {
                if !matches!(name.as_str(), "PartitionKey" | "RowKey" | "Timestamp") {
                    property(out, name, entity.get(name));
                }
            }
        }
    }
    // The comma after the last member (a property's, or the metadata's when the
    // projection selected nothing the entity has).
    if out.len() >= start && out.last() == Some(&b',') {
        out.pop();
    }
}

/// Each property as an answer with annotations writes it (minimal and full
/// metadata), followed by a comma.
fn annotated_members(list: &[crate::properties::Property], out: &mut Vec<u8>) {
    for (name, value) in list {
        push_member(out, name, value, true);
    }
}

/// One property member and a comma; `annotated`: with its type annotation where
/// a reader can't infer the type.
fn push_member(out: &mut Vec<u8>, name: &str, value: &Value, annotated: bool) {
    push_property(out, name, value, annotation_of(value).filter(|_| annotated));
    out.push(b',');
}

fn etag_member(entity: &DynamicEntity, out: &mut Vec<u8>) {
    if let Some(etag) = &entity.etag {
        out.extend_from_slice(b"\"odata.etag\":");
        push_json_str(out, etag.as_str());
        out.push(b',');
    }
}

/// The annotation the service writes on an answer: only where a reader can't infer
/// the type from the JSON (a finite Double is always written with a `.` or an
/// exponent, so it reads back as a Double).
fn annotation_of(value: &Value) -> Option<EdmType> {
    match value {
        Value::Int64(_) | Value::DateTime(_) | Value::Guid(_) | Value::Binary(_) => {
            Some(value.edm_type())
        }
        Value::Double(x) if !x.is_finite() => Some(EdmType::Double),
        _ => None,
    }
}

/// Writes a table list answer (`single`: the one table a Create Table with
/// `return-content` answers with).
///
/// ```
/// use tables_core::odata::{self, response::{encode_tables, Metadata}};
///
/// let mut body = Vec::new();
/// encode_tables(&["Orders", "Staff"], false, Metadata::Minimal, "http://h/acct", "acct", &mut body);
/// assert_eq!(odata::decode_table_names(&body)?, ["Orders", "Staff"]);
/// # Ok::<(), tables_core::Error>(())
/// ```
pub fn encode_tables<S: AsRef<str>>(
    names: &[S],
    single: bool,
    metadata: Metadata,
    base_url: &str,
    account: &str,
    out: &mut Vec<u8>,
) {
    let members = |out: &mut Vec<u8>, name: &str| {
        if metadata == Metadata::Full {
            let link = super::path::table_resource_path(name);
            out.extend_from_slice(b"\"odata.type\":");
            push_json_parts(out, &[account, ".Tables"]);
            out.extend_from_slice(b",\"odata.id\":");
            push_json_parts(out, &[base_url, "/", &link]);
            out.extend_from_slice(b",\"odata.editLink\":");
            push_json_str(out, &link);
            out.push(b',');
        }
        out.extend_from_slice(b"\"TableName\":");
        push_json_str(out, name);
    };
    let suffix = if single { "/@Element" } else { "" };
    open_document(out, metadata, &[base_url, "/$metadata#Tables", suffix]);
    if single {
        members(out, names.first().map_or("", AsRef::as_ref));
        out.push(b'}');
    } else {
        values_and_close(out, names, |out, name| members(out, name.as_ref()));
    }
}

/// Writes the JSON error body: `{"odata.error":{"code":..,"message":{"lang":"en-US","value":..}}}`.
///
/// ```
/// use tables_core::odata::{parse_error_body, response::encode_error};
///
/// let mut body = Vec::new();
/// encode_error("EntityAlreadyExists", "1:The specified entity already exists.", &mut body);
/// let read = parse_error_body(409, None, &body);
/// assert_eq!(read.code, "EntityAlreadyExists");
/// assert_eq!(read.message, "1:The specified entity already exists.");
/// ```
pub fn encode_error(code: &str, message: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"odata.error\":{\"code\":");
    push_json_str(out, code);
    out.extend_from_slice(b",\"message\":{\"lang\":\"en-US\",\"value\":");
    push_json_str(out, message);
    out.extend_from_slice(b"}}}");
}

/// Writes the XML error body the service answers where JSON was not asked for (or
/// can't be, as for the XML-only APIs): `<Error><Code>..</Code><Message>..</Message></Error>`.
pub fn encode_error_xml(code: &str, message: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b"<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>");
    push_xml_text(out, code);
    out.extend_from_slice(b"</Code><Message>");
    push_xml_text(out, message);
    out.extend_from_slice(b"</Message></Error>");
}

/// Writes XML character data, escaped.
pub fn push_xml_text(out: &mut Vec<u8>, text: &str) {
    for c in text.chars() {
        match c {
            '<' => out.extend_from_slice(b"&lt;"),
            '>' => out.extend_from_slice(b"&gt;"),
            '&' => out.extend_from_slice(b"&amp;"),
            '"' => out.extend_from_slice(b"&quot;"),
            '\'' => out.extend_from_slice(b"&apos;"),
            // Characters XML 1.0 can't hold at all: dropped.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
            c => {
                let mut buf = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
}

/// One operation's answer inside a `$batch` answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchPart {
    /// The HTTP status.
    pub status: u16,
    /// Headers, in order (`Content-ID`, `ETag`, `Content-Type`, ...).
    pub headers: Vec<(String, String)>,
    /// The body (empty for none).
    pub body: Vec<u8>,
}

/// A `$batch` answer: its `Content-Type` and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchResponse {
    /// `multipart/mixed; boundary=batchresponse_<id>`.
    pub content_type: String,
    /// The multipart body (CRLF line endings).
    pub body: Vec<u8>,
}

/// Writes a `$batch` answer: the parts in a changeset (`changesetresponse_<id>`)
/// inside the batch (`batchresponse_<id>`), or, without `changeset_id` (a batch
/// holding a single query), directly under the batch boundary.
pub fn encode_batch_response(
    batch_id: &str,
    changeset_id: Option<&str>,
    parts: &[BatchPart],
) -> BatchResponse {
    let mut body = Vec::with_capacity(128 + parts.len() * 320);
    let line = |body: &mut Vec<u8>, text: &str| {
        body.extend_from_slice(text.as_bytes());
        body.extend_from_slice(b"\r\n");
    };
    let part_boundary = match changeset_id {
        Some(changeset) => {
            line(&mut body, &format!("--batchresponse_{batch_id}"));
            line(
                &mut body,
                &format!("Content-Type: multipart/mixed; boundary=changesetresponse_{changeset}"),
            );
            line(&mut body, "");
            format!("changesetresponse_{changeset}")
        }
        None => format!("batchresponse_{batch_id}"),
    };
    for part in parts {
        line(&mut body, &format!("--{part_boundary}"));
        line(&mut body, "Content-Type: application/http");
        line(&mut body, "Content-Transfer-Encoding: binary");
        line(&mut body, "");
        let mut status = String::with_capacity(40);
        let _ = write!(
            status,
            "HTTP/1.1 {} {}",
            part.status,
            super::error::status_text(part.status)
        );
        line(&mut body, &status);
        for (name, value) in &part.headers {
            line(&mut body, &format!("{name}: {value}"));
        }
        line(&mut body, "");
        body.extend_from_slice(&part.body);
        // The CRLF before a boundary belongs to the boundary (RFC 2046).
        body.extend_from_slice(b"\r\n");
    }
    line(&mut body, &format!("--{part_boundary}--"));
    if changeset_id.is_some() {
        line(&mut body, &format!("--batchresponse_{batch_id}--"));
    }
    BatchResponse {
        content_type: format!("multipart/mixed; boundary=batchresponse_{batch_id}"),
        body,
    }
}

#[cfg(test)]
mod tests;
