//! Entity bodies: [`DynamicEntity`] to and from the service's JSON (OData v3,
//! minimal or full metadata), plus the two table-level bodies.
//!
//! Encoding writes straight into a byte buffer; decoding lives in [`decode`].

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use crate::entity::DynamicEntity;
use crate::error::Result;
use crate::value::{EdmType, Value};

mod decode;

/// The suffix of a type annotation key.
pub(super) const TYPE_SUFFIX: &str = "@odata.type";

/// Writes one entity as the JSON body of an insert or update.
///
/// `PartitionKey` and `RowKey` come first, then the properties in order. Types the
/// service cannot infer carry an annotation `"<Name>@odata.type":"Edm.X"` just before
/// the value: Int64 (its value as a decimal string), Double (always, so that an
/// integral double stays a double; finite values as the shortest JSON number that
/// reads back to the same bits, NaN and the infinities as `"NaN"`, `"Infinity"`,
/// `"-Infinity"`), DateTime (seven fractional digits and `Z`), Guid (hyphenated) and
/// Binary (standard base64 with padding). String, Int32 and Boolean are written
/// bare. The timestamp and ETag are never written: the service sets them.
///
/// ```
/// use tables_core::{odata, DynamicEntity};
///
/// let e = DynamicEntity::new("Sales", "223").with("Age", 34).with("Big", 1i64 << 40);
/// assert_eq!(
///     odata::entity_to_json(&e),
///     r#"{"PartitionKey":"Sales","RowKey":"223","Age":34,"Big@odata.type":"Edm.Int64","Big":"1099511627776"}"#
/// );
/// ```
pub fn encode_entity(entity: &DynamicEntity, out: &mut Vec<u8>) {
    encode_members(entity, out);
    out.push(b'}');
}

/// Writes one entity as it is stored: [`encode_entity`]'s JSON, then its
/// `Timestamp` and its `odata.etag` (the ETag only when it is not the one
/// [`ETag::from_timestamp`](crate::ETag::from_timestamp) derives, which
/// [`decode_entity`] derives again). [`decode_entity`] reads it back equal, system
/// properties included: the form in which `tables-server` journals rows.
///
/// ```
/// use tables_core::{odata, DateTime, DynamicEntity, ETag};
///
/// let mut e = DynamicEntity::new("p", "r").with("Big", 1i64 << 40);
/// e.timestamp = Some("2026-11-25T10:00:00.1234567Z".parse::<DateTime>()?);
/// e.etag = e.timestamp.map(ETag::from_timestamp);
/// let mut json = Vec::new();
/// odata::encode_stored_entity(&e, &mut json);
/// assert!(json.ends_with(br#","Timestamp":"2026-11-25T10:00:00.1234567Z"}"#));
/// assert_eq!(odata::decode_entity(&json)?, e);
/// # Ok::<(), tables_core::Error>(())
/// ```
pub fn encode_stored_entity(entity: &DynamicEntity, out: &mut Vec<u8>) {
    encode_members(entity, out);
    if let Some(timestamp) = entity.timestamp {
        out.extend_from_slice(b",\"Timestamp\":");
        push_value(out, &Value::DateTime(timestamp));
    }
    if let Some(etag) = &entity.etag {
        // Written only when the Timestamp doesn't imply it (compared without
        // building the implied one: this runs for every journaled row).
        if !entity.timestamp.is_some_and(|t| etag.is_from_timestamp(t)) {
            out.extend_from_slice(b",\"odata.etag\":");
            push_json_str(out, etag.as_str());
        }
    }
    out.push(b'}');
}

/// `{` and the keys and properties of [`encode_entity`], without the closing `}`.
fn encode_members(entity: &DynamicEntity, out: &mut Vec<u8>) {
    out.reserve(64 + entity.partition_key.len() + entity.row_key.len() + 32 * entity.len());
    out.extend_from_slice(b"{\"PartitionKey\":");
    push_json_str(out, &entity.partition_key);
    out.extend_from_slice(b",\"RowKey\":");
    push_json_str(out, &entity.row_key);
    for (name, value) in entity.properties() {
        out.push(b',');
        push_property(out, name, value, annotation_of(value));
    }
}

/// Writes `"<name>@odata.type":"Edm.X",` when `annotation` says so, then
/// `"<name>":<value>`.
pub(super) fn push_property(
    out: &mut Vec<u8>,
    name: &str,
    value: &Value,
    annotation: Option<EdmType>,
) {
    if let Some(edm) = annotation {
        push_json_key(out, name, TYPE_SUFFIX);
        out.push(b'"');
        out.extend_from_slice(edm.odata_name().as_bytes());
        out.extend_from_slice(b"\",");
    }
    push_json_key(out, name, "");
    push_value(out, value);
}

/// [`encode_entity`] into a new `String`.
pub fn entity_to_json(entity: &DynamicEntity) -> String {
    let mut out = Vec::new();
    encode_entity(entity, &mut out);
    // The encoder writes ASCII punctuation around the UTF-8 of `&str`s: always UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// `{"TableName":"<name>"}`, the body of Create Table.
pub fn create_table_body(name: &str) -> String {
    let mut out = Vec::with_capacity(name.len() + 16);
    out.extend_from_slice(b"{\"TableName\":");
    push_json_str(&mut out, name);
    out.push(b'}');
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The annotation a value is written with, if any.
fn annotation_of(value: &Value) -> Option<EdmType> {
    match value {
        Value::String(_) | Value::Int32(_) | Value::Boolean(_) => None,
        other => Some(other.edm_type()),
    }
}

/// Writes `"<name><suffix>":`.
pub(super) fn push_json_key(out: &mut Vec<u8>, name: &str, suffix: &str) {
    out.push(b'"');
    push_escaped(out, name);
    out.extend_from_slice(suffix.as_bytes());
    out.extend_from_slice(b"\":");
}

pub(super) fn push_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::String(s) => push_json_str(out, s),
        Value::Int32(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
        Value::Int64(n) => {
            out.push(b'"');
            out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes());
            out.push(b'"');
        }
        Value::Double(x) if x.is_nan() => out.extend_from_slice(b"\"NaN\""),
        Value::Double(x) if x.is_infinite() => out.extend_from_slice(if *x > 0.0 {
            b"\"Infinity\"".as_slice()
        } else {
            b"\"-Infinity\"".as_slice()
        }),
        // The shortest text that reads back to the same bits, always with a `.` or
        // an exponent (`3.0`, `0.1`, `1e300`, `5e-324`, `-0.0`): valid JSON. ryu, as
        // serde_json writes doubles (several times faster than `fmt`).
        Value::Double(x) => out.extend_from_slice(ryu::Buffer::new().format_finite(*x).as_bytes()),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::DateTime(t) => {
            out.push(b'"');
            t.push_iso(out);
            out.push(b'"');
        }
        Value::Guid(g) => {
            let mut buf = uuid::Uuid::encode_buffer();
            out.push(b'"');
            out.extend_from_slice(g.hyphenated().encode_lower(&mut buf).as_bytes());
            out.push(b'"');
        }
        Value::Binary(bytes) => {
            out.push(b'"');
            let start = out.len();
            let len = base64::encoded_len(bytes.len(), true).unwrap_or(0);
            out.resize(start + len, 0);
            match STANDARD.encode_slice(bytes, &mut out[start..]) {
                Ok(written) => out.truncate(start + written),
                // Only if the length computation overflowed: take the allocating path.
                Err(_) => {
                    out.truncate(start);
                    out.extend_from_slice(STANDARD.encode(bytes).as_bytes());
                }
            }
            out.push(b'"');
        }
    }
}

/// Writes a JSON string literal.
pub(super) fn push_json_str(out: &mut Vec<u8>, s: &str) {
    push_json_parts(out, &[s]);
}

/// Writes one JSON string literal of `parts` joined: a URL or a type name built
/// from pieces, without joining them into a `String` first.
pub(super) fn push_json_parts(out: &mut Vec<u8>, parts: &[&str]) {
    out.push(b'"');
    for part in parts {
        push_escaped(out, part);
    }
    out.push(b'"');
}

/// Writes the body of a JSON string: `"` and `\` escaped, control characters as
/// `\n`-style or `\u00XX` escapes, everything else (all of UTF-8) as is.
///
/// An encoder writes every string of every entity of a page through here (nine of
/// them for an entity of four properties), so the plain runs between escapes are
/// found eight bytes at a time ([`find_escape`]) and copied whole; most strings
/// (names, keys, values) are one run.
fn push_escaped(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.reserve(bytes.len());
    let mut start = 0;
    while let Some((i, b)) = find_escape(bytes, start) {
        out.extend_from_slice(&bytes[start..i]);
        let short: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            _ => b"",
        };
        if short.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        } else {
            out.extend_from_slice(short);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
}

/// The first byte at or after `from` that JSON must escape, and where it is. Whole
/// words of eight plain bytes are skipped with a few arithmetic steps each
/// ([`word_needs_escape`]); the word that holds one, and a tail shorter than a
/// word, are searched byte by byte.
fn find_escape(bytes: &[u8], from: usize) -> Option<(usize, u8)> {
    let mut at = from;
    let mut rest = bytes.get(from..)?;
    while let Some((word, tail)) = rest.split_first_chunk::<8>() {
        if word_needs_escape(u64::from_le_bytes(*word)) {
            break;
        }
        at += 8;
        rest = tail;
    }
    rest.iter()
        .position(|&b| NEEDS_ESCAPE[usize::from(b)])
        .map(|i| (at + i, rest[i]))
}

/// Whether any of the eight bytes of `word` is one JSON must escape: below `0x20`,
/// `"` or `\`. Exact (no false alarm), by the classic test "some byte is below n"
/// (`(w - n * 0x01..01) & !w & 0x80..80`, for n up to 128): with n = `0x20` on the
/// word, and with n = 1 ("some byte is zero") on the word xor-ed with `"` and with
/// `\` in every byte. UTF-8's bytes of `0x80` and up never count.
fn word_needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |w: u64, n: u8| w.wrapping_sub(ONES * u64::from(n)) & !w & HIGH;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    (below(word, 0x20) | below(quote, 1) | below(backslash, 1)) != 0
}

/// The bytes a JSON string can't hold as they are: control characters, `"`, `\`.
const NEEDS_ESCAPE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Reads one entity object, as a point read or an insert with `return-content`
/// returns it (minimal or full metadata).
///
/// Annotations may come before or after their value. `odata.*` keys are skipped,
/// except `odata.etag`, which becomes [`DynamicEntity::etag`]; `Timestamp` becomes
/// [`DynamicEntity::timestamp`] (and, with no `odata.etag`, the ETag is derived from
/// it with [`ETag::from_timestamp`](crate::ETag::from_timestamp)). A `null` value means the property is absent.
/// Unannotated values are inferred: string as String, an integral number as Int32
/// when it fits and Int64 when it fits that (Azurite stores big unannotated integers
/// so), any other number as Double, and a boolean as Boolean.
///
/// ```
/// use tables_core::{odata, Value};
///
/// let e = odata::decode_entity(
///     br#"{"PartitionKey":"p","RowKey":"r","L":"12","L@odata.type":"Edm.Int64","D":1.5}"#,
/// )?;
/// assert_eq!(e.get("L"), Some(&Value::Int64(12)));
/// assert_eq!(e.get("D"), Some(&Value::Double(1.5)));
/// # Ok::<(), tables_core::Error>(())
/// ```
///
/// # Errors
///
/// [`ErrorKind::Decode`](crate::ErrorKind::Decode) for malformed JSON, a missing or non-string `PartitionKey` or
/// `RowKey`, an object or array value, an unknown `Edm` type, an annotation whose
/// property is missing, a value whose JSON type does not fit its annotation, or a
/// property given twice. The error names the property; its message quotes at most a
/// short prefix of the input.
pub fn decode_entity(json: &[u8]) -> Result<DynamicEntity> {
    decode::entity(json)
}

/// Reads the entity body of a write request, the server's side of
/// [`encode_entity`]: as [`decode_entity`], except that `PartitionKey` and `RowKey`
/// may be missing (an update, merge or upsert names its entity in the URL), which
/// [`RequestEntity`] reports, and that `Timestamp` and `odata.*` members are ignored
/// (the service sets them).
///
/// ```
/// use tables_core::{odata, Value};
///
/// let body = odata::decode_request_entity(br#"{"Age":34,"Timestamp":"whenever"}"#)?;
/// assert!(!body.has_partition_key && !body.has_row_key);
/// assert_eq!(body.entity.get("Age"), Some(&Value::Int32(34)));
/// # Ok::<(), tables_core::Error>(())
/// ```
///
/// # Errors
///
/// As [`decode_entity`], but for the keys.
pub fn decode_request_entity(json: &[u8]) -> Result<RequestEntity> {
    decode::request_entity(json)
}

/// An entity read from a write request's body ([`decode_request_entity`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RequestEntity {
    /// The entity; a key missing from the body is empty here.
    pub entity: DynamicEntity,
    /// Whether the body gave a `PartitionKey`.
    pub has_partition_key: bool,
    /// Whether the body gave a `RowKey`.
    pub has_row_key: bool,
}

/// Reads a page of entities, `{"value":[<entity>...], ...}`, as a query returns it.
/// Other top-level keys (`odata.metadata`) are ignored.
///
/// # Errors
///
/// [`ErrorKind::Decode`](crate::ErrorKind::Decode) for malformed JSON, a missing `value` array, or any entity
/// [`decode_entity`] would reject (the message gives its position in the page).
pub fn decode_entity_page(json: &[u8]) -> Result<Vec<DynamicEntity>> {
    decode::page(json)
}

/// The entities of a query's page, `{"value":[<entity>...], ...}`, each as the
/// bytes of its JSON object, not decoded: what an export copies as it came. Each
/// reads back with [`decode_entity`].
///
/// ```
/// use tables_core::odata::entity_page_objects;
///
/// let page = br#"{"odata.metadata":"a \"value\" {[","n":[1,{"v":2}], "value" : [ {"PartitionKey":"p","RowKey":"1"},{"PartitionKey":"p","RowKey":"2","N":"}\"]"} ]}"#;
/// let objects = entity_page_objects(page)?;
/// assert_eq!(objects.len(), 2);
/// assert_eq!(objects[1], br#"{"PartitionKey":"p","RowKey":"2","N":"}\"]"}"#);
/// assert!(entity_page_objects(br#"{"value":[{"PartitionKey":"p""#).is_err());
/// assert!(entity_page_objects(br#"{"value":[1]}"#).is_err());
/// # Ok::<(), tables_core::Error>(())
/// ```
///
/// # Errors
///
/// [`ErrorKind::Decode`](crate::ErrorKind::Decode) for malformed JSON, a missing
/// `value` array, or an item that is not a JSON object.
pub fn entity_page_objects(json: &[u8]) -> Result<Vec<&[u8]>> {
    let bad = |why: &str| {
        crate::Error::new(
            crate::ErrorKind::Decode,
            format!("a page of entities is not the JSON the service sends: {why}"),
        )
    };
    // The top-level object's members, strings skipped as wholes, until the key
    // "value"; then each item of its array, cut at the brace that closes it. A scan,
    // not a parse: the bytes are copied as they are, and `decode_entity` reads them.
    let mut at = skip_space(json, 0);
    if json.get(at) != Some(&b'{') {
        return Err(bad("not an object"));
    }
    at += 1;
    loop {
        at = skip_space(json, at);
        match json.get(at) {
            Some(b'"') => {}
            _ => return Err(bad("no \"value\" array")),
        }
        let key_end = string_end(json, at).ok_or_else(|| bad("an unterminated string"))?;
        let key = &json[at + 1..key_end - 1];
        at = skip_space(json, key_end);
        if json.get(at) != Some(&b':') {
            return Err(bad("a member without a value"));
        }
        at = skip_space(json, at + 1);
        if key == b"value" {
            break;
        }
        at = value_end(json, at).ok_or_else(|| bad("a malformed member"))?;
        at = skip_space(json, at);
        if json.get(at) == Some(&b',') {
            at += 1;
        }
    }
    if json.get(at) != Some(&b'[') {
        return Err(bad("\"value\" is not an array"));
    }
    at += 1;
    let mut objects = Vec::new();
    loop {
        at = skip_space(json, at);
        match json.get(at) {
            Some(b']') => return Ok(objects),
            Some(b'{') => {
                let end = value_end(json, at).ok_or_else(|| bad("an unterminated entity"))?;
                objects.push(&json[at..end]);
                at = skip_space(json, end);
                match json.get(at) {
                    Some(b',') => at += 1,
                    Some(b']') => return Ok(objects),
                    _ => return Err(bad("entities not separated by commas")),
                }
            }
            _ => {
                return Err(bad(&format!(
                    "item {} of \"value\" is not an object",
                    objects.len()
                )))
            }
        }
    }
}

fn skip_space(json: &[u8], mut at: usize) -> usize {
    while json.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The end (exclusive) of the string starting at `at` (its opening quote).
fn string_end(json: &[u8], at: usize) -> Option<usize> {
    // Jumps from one quote or backslash to the next (memchr looks at many bytes at
    // once): a backslash escapes the byte after it, a quote ends the string.
    let mut i = at + 1;
    loop {
        i += memchr::memchr2(b'"', b'\\', json.get(i..)?)?;
        if json[i] == b'"' {
            return Some(i + 1);
        }
        i += 2;
    }
}

/// The end (exclusive) of the value starting at `at`: a string, an object or array
/// (to its matching close, strings skipped), or a scalar (to the next delimiter).
fn value_end(json: &[u8], at: usize) -> Option<usize> {
    let (open, close) = match *json.get(at)? {
        b'"' => return string_end(json, at),
        b'{' => (b'{', b'}'),
        b'[' => (b'[', b']'),
        _ => {
            let rest = &json[at..];
            return Some(
                at + rest
                    .iter()
                    .position(|b| matches!(b, b',' | b'}' | b']'))
                    .unwrap_or(rest.len()),
            );
        }
    };
    // Only the value's own kind of bracket is counted: in well-formed JSON the other
    // kind nests inside it in pairs, so it can't close it. One pass over the quotes
    // (memchr finds each many bytes at a time: the quote is the page's most frequent
    // byte of note); brackets are looked for only in the short stretches between
    // strings.
    let mut depth = 0usize;
    let mut quotes = memchr::memchr_iter(b'"', &json[at..]).map(|q| q + at);
    let mut outside = at;
    loop {
        let opening = quotes.next();
        for (i, &b) in json[outside..opening.unwrap_or(json.len())]
            .iter()
            .enumerate()
        {
            if b == open {
                depth += 1;
            } else if b == close {
                depth -= 1;
                if depth == 0 {
                    return Some(outside + i + 1);
                }
            }
        }
        let opening = opening?;
        // The string's closing quote: the first not escaped, that is not after an
        // odd run of backslashes inside the string.
        loop {
            let quote = quotes.next()?;
            let backslashes = json[opening + 1..quote]
                .iter()
                .rev()
                .take_while(|&&b| b == b'\\')
                .count();
            if backslashes % 2 == 0 {
                outside = quote + 1;
                break;
            }
        }
    }
}

/// Reads a page of a table listing, `{"value":[{"TableName":"t"},...]}`, into the
/// names. Other keys are ignored.
///
/// # Errors
///
/// [`ErrorKind::Decode`](crate::ErrorKind::Decode) for malformed JSON, a missing `value` array, or a row without
/// a string `TableName`.
pub fn decode_table_names(json: &[u8]) -> Result<Vec<String>> {
    decode::table_names(json)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datetime::DateTime;
    use crate::entity::ETag;
    use crate::error::ErrorKind;

    #[test]
    fn strings_are_escaped_as_json_needs_and_read_back() {
        let mut text: String = (0u8..0x20).map(char::from).collect();
        text.push_str("\"\\/ plain é😀\u{7f}");
        let mut out = Vec::new();
        push_escaped(&mut out, &text);
        assert!(
            out.iter().all(|&b| b >= 0x20),
            "a control character went out raw: {out:?}"
        );
        let quoted = [&b"\""[..], &out, b"\""].concat();
        let back: String = serde_json::from_slice(&quoted).expect("valid JSON");
        assert_eq!(back, text);
        let mut plain = Vec::new();
        push_escaped(&mut plain, "PartitionKey");
        assert_eq!(plain, b"PartitionKey");
    }

    proptest::proptest! {
        /// The word-at-a-time search must find exactly the bytes the table names, at
        /// any offset in a word: the same text as serde_json's own escaping.
        #[test]
        fn escaping_matches_serde_json(
            text in proptest::string::string_regex("(.|[\\x00-\\x1f\"\\\\\\x7f])*").unwrap(),
        ) {
            let mut out = Vec::new();
            push_json_str(&mut out, &text);
            proptest::prop_assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(&text).unwrap()
            );
        }
    }

    #[test]
    fn every_byte_is_found_at_every_place_in_a_word() {
        for b in 0u8..0x80 {
            for at in 0..19 {
                let mut text = "a".repeat(19);
                text.replace_range(at..=at, char::from(b).encode_utf8(&mut [0; 4]));
                let mut out = Vec::new();
                push_json_str(&mut out, &text);
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    serde_json::to_string(&text).unwrap(),
                    "byte {b:#04x} at {at}"
                );
            }
        }
    }

    const SAMPLE: &str = r#"{"odata.etag":"W/\"x\"","PartitionKey":"pk1","RowKey":"rk1","I":42}"#;

    fn entity(json: &str) -> DynamicEntity {
        decode_entity(json.as_bytes()).unwrap()
    }

    fn decode_err(json: &str) -> crate::Error {
        let err = decode_entity(json.as_bytes()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode, "{err}");
        err
    }

    #[test]
    fn encoding_annotates_what_cannot_be_inferred() {
        let g = uuid::Uuid::parse_str("c9da6455-213d-42c9-9a79-3e9149a57833").unwrap();
        let mut e = DynamicEntity::new("p\"1", "r\\\n\u{1}é")
            .with("S", "a\"b")
            .with("I", -7)
            .with("L", i64::MIN)
            .with("D", 3.0)
            .with("B", false)
            .with("T", DateTime::MIN)
            .with("G", g)
            .with("Bin", vec![1u8, 2, 3, 4]);
        e.timestamp = Some(DateTime::MAX);
        e.etag = Some(ETag::new("W/\"x\""));
        assert_eq!(
            entity_to_json(&e),
            concat!(
                r#"{"PartitionKey":"p\"1","RowKey":"r\\\n\u0001é","S":"a\"b","I":-7,"#,
                r#""L@odata.type":"Edm.Int64","L":"-9223372036854775808","#,
                r#""D@odata.type":"Edm.Double","D":3.0,"B":false,"#,
                r#""T@odata.type":"Edm.DateTime","T":"1601-01-01T00:00:00.0000000Z","#,
                r#""G@odata.type":"Edm.Guid","G":"c9da6455-213d-42c9-9a79-3e9149a57833","#,
                r#""Bin@odata.type":"Edm.Binary","Bin":"AQIDBA=="}"#
            )
        );
        let back = entity(&entity_to_json(&e));
        e.timestamp = None;
        e.etag = None;
        assert_eq!(back, e);
    }

    #[test]
    fn doubles_round_trip_bit_for_bit() {
        for x in [
            0.1,
            1e300,
            5e-324,
            -0.0,
            0.0,
            3.0,
            -2.5e-8,
            1e16,
            f64::MAX,
            f64::MIN_POSITIVE,
            3.389_447_167_012_569e178,
            0.372_370_370_370_370_35,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let json = entity_to_json(&DynamicEntity::new("p", "r").with("D", x));
            let back = entity(&json).get("D").and_then(Value::as_f64);
            assert_eq!(
                back.map(f64::to_bits),
                Some(x.to_bits()),
                "{json}: read back as {back:?}; exact doubles need serde_json's \
                 `float_roundtrip` feature (tables-core/Cargo.toml)"
            );
        }
        let specials = entity_to_json(
            &DynamicEntity::new("p", "r")
                .with("A", f64::NAN)
                .with("B", f64::NEG_INFINITY),
        );
        assert!(specials.ends_with(r#""A":"NaN","B@odata.type":"Edm.Double","B":"-Infinity"}"#));
    }

    #[test]
    fn error_messages_quote_little_of_the_input() {
        let long = "x".repeat(10_000);
        for json in [
            format!(r#"{{"PartitionKey":"p","RowKey":"r","{long}":{{}}}}"#),
            format!(
                r#"{{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Guid","A":"{long}"}}"#
            ),
            format!(r#"{{"PartitionKey":"p","RowKey":"r","A@odata.type":"{long}","A":1}}"#),
            format!(r#""{long}""#),
        ] {
            let err = decode_err(&json);
            assert!(err.message().len() < 200, "{}", err.message());
        }
    }

    #[test]
    fn bodies_that_are_not_utf8_are_refused_with_where() {
        // In a value kept, and in one the decoder reads past (`odata.metadata`).
        for json in [
            &b"{\"PartitionKey\":\"p\",\"RowKey\":\"r\",\"A\":\"\xff\"}"[..],
            b"{\"odata.metadata\":\"\xc3(\",\"PartitionKey\":\"p\",\"RowKey\":\"r\"}",
        ] {
            let offset = json.iter().position(|&b| b >= 0x80).unwrap();
            let expected = format!("not UTF-8 (an invalid byte at offset {offset})");
            for err in [
                decode_entity(json).unwrap_err(),
                decode_request_entity(json).unwrap_err(),
            ] {
                assert_eq!(err.kind(), ErrorKind::Decode);
                assert!(err.message().contains(&expected), "{err}");
            }
            let page = [&b"{\"value\":["[..], json, b"]}"].concat();
            let err = decode_entity_page(&page).unwrap_err();
            assert!(err.message().contains("not UTF-8"), "{err}");
        }
    }

    #[test]
    fn pages_and_table_lists() {
        let page = format!(
            r#"{{"odata.metadata":"m","value":[{SAMPLE},{{"PartitionKey":"a","RowKey":"b","S":"x"}}]}}"#
        );
        let items = decode_entity_page(page.as_bytes()).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0], entity(SAMPLE));
        assert_eq!(items[1].get("S"), Some(&Value::String("x".into())));
        assert!(decode_entity_page(br#"{"value":[]}"#).unwrap().is_empty());
        for bad in [
            &br#"{"odata.metadata":"m"}"#[..],
            br#"{"value":{}}"#,
            br#"{"value":[],"value":[]}"#,
            b"[]",
        ] {
            assert_eq!(
                decode_entity_page(bad).unwrap_err().kind(),
                ErrorKind::Decode
            );
        }
        let err = decode_entity_page(
            br#"{"value":[{"PartitionKey":"a","RowKey":"b"},{"PartitionKey":"a"}]}"#,
        )
        .unwrap_err();
        assert_eq!(err.property(), Some("RowKey"));
        assert!(err.message().starts_with("entity 1 of the page"), "{err}");

        let names = decode_table_names(br#"{"odata.metadata":"m","value":[{"TableName":"a"},{"odata.id":"x","TableName":"B2"}]}"#);
        assert_eq!(names.unwrap(), ["a", "B2"]);
        for bad in [
            &br#"{"value":[{"Name":"a"}]}"#[..],
            br#"{"value":[{"TableName":1}]}"#,
            b"{}",
            b"",
        ] {
            assert_eq!(
                decode_table_names(bad).unwrap_err().kind(),
                ErrorKind::Decode
            );
        }
        assert_eq!(create_table_body("my\"t"), r#"{"TableName":"my\"t"}"#);
    }

    proptest::proptest! {
        /// The scan cuts each entity exactly where a JSON parser does, whatever the
        /// strings hold: quotes, backslashes (one ending a string), braces and
        /// brackets, line breaks as space between tokens, and arrays and objects in
        /// the page's other members.
        #[test]
        fn page_objects_are_cut_where_a_parser_cuts_them(
            texts in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::sample::select(vec!["a", "\"", "\\", "{", "}", "[", "]", ",", ":", " ", "\n", "é"]),
                    0..12,
                ),
                1..6,
            ),
            space in proptest::sample::select(vec!["", " ", "\n", "\r\n\t"]),
        ) {
            let texts: Vec<String> = texts.into_iter().map(|t| t.concat()).collect();
            let entities: Vec<serde_json::Value> = texts
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    serde_json::json!({
                        "PartitionKey": t, "RowKey": i.to_string(),
                        "Nested": {"list": [t, {"deeper": [t]}]}, "N": 1.5
                    })
                })
                .collect();
            let items: Vec<String> = entities.iter().map(|e| {
                if space.is_empty() {
                    serde_json::to_string(e).unwrap()
                } else {
                    serde_json::to_string_pretty(e).unwrap()
                }
            }).collect();
            let page = format!(
                "{space}{{{space}\"odata.metadata\":{space}{}{space},\"x\":[{{\"value\":[1]}},\"]}}\"],{space}\"value\"{space}:{space}[{space}{}{space}]{space}}}",
                serde_json::to_string(&texts).unwrap(),
                items.join(&format!("{space},{space}")),
            );
            let objects = entity_page_objects(page.as_bytes()).unwrap();
            proptest::prop_assert_eq!(objects.len(), entities.len());
            for (object, entity) in objects.iter().zip(&entities) {
                let read: serde_json::Value = serde_json::from_slice(object).unwrap();
                proptest::prop_assert_eq!(&read, entity);
            }
        }
    }
}
