//! The Table service's XML APIs, one implementation for both sides: table access
//! policies ([`acl`], `GET|PUT /<table>?comp=acl`) and service properties and stats
//! ([`properties`], `GET|PUT /?restype=service&comp=properties`,
//! `GET /?restype=service&comp=stats`). These bodies are XML, not OData JSON.

pub mod acl;
pub mod properties;

use crate::{Error, ErrorKind};

/// An XML body the service refuses (`400 InvalidXmlDocument`).
fn invalid_xml(what: &str, detail: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::InvalidInput,
        format!("the {what} XML is invalid: {detail}"),
    )
    .with_status(400)
    .with_service_code("InvalidXmlDocument")
}

/// The body as text, without a byte-order mark.
fn body_text<'a>(what: &str, body: &'a [u8]) -> Result<&'a str, Error> {
    let text = std::str::from_utf8(body).map_err(|_| invalid_xml(what, "it is not UTF-8"))?;
    Ok(text.trim_start_matches('\u{feff}'))
}

/// Writes `<name>text</name>`, the text escaped.
fn element(out: &mut Vec<u8>, name: &str, text: &str) {
    out.push(b'<');
    out.extend_from_slice(name.as_bytes());
    out.push(b'>');
    crate::odata::response::push_xml_text(out, text);
    out.extend_from_slice(b"</");
    out.extend_from_slice(name.as_bytes());
    out.push(b'>');
}

const XML_DECLARATION: &[u8] = b"<?xml version=\"1.0\" encoding=\"utf-8\"?>";
