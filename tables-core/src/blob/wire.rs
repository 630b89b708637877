//! The Blob service's wire forms that a client (and a server) of the blob seam
//! needs: resource paths, the listing's query and XML answer, block ids and the
//! block list, and the range headers. Each lives here once.
//!
//! References: List Blobs
//! (<https://learn.microsoft.com/rest/api/storageservices/list-blobs>), Put Block
//! (<https://learn.microsoft.com/rest/api/storageservices/put-block>), Put Block List
//! (<https://learn.microsoft.com/rest/api/storageservices/put-block-list>), and
//! specifying the range header
//! (<https://learn.microsoft.com/rest/api/storageservices/specifying-the-range-header-for-blob-service-operations>).

use std::fmt::Write as _;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde::Deserialize;

use super::{BlobPage, BlobProperties, ListBlobsOptions};
use crate::datetime::DateTime;
use crate::error::{Error, ErrorKind, Result};

/// The Blob service REST version this SDK speaks (`x-ms-version`).
pub const BLOB_API_VERSION: &str = "2021-12-02";

/// Characters left as they are in a path segment or query value: RFC 3986's
/// unreserved set. Everything else is percent-encoded.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The path of a container under the account URL (`photos`).
pub fn container_path(container: &str) -> String {
    utf8_percent_encode(container, COMPONENT).to_string()
}

/// The path of a blob under the account URL: `{container}/{name}`, each `/`-separated
/// part of the name percent-encoded (so `%`, `?`, `#` and spaces survive), the `/`s
/// kept as the service's virtual directories.
pub fn blob_path(container: &str, name: &str) -> String {
    let mut path = String::with_capacity(container.len() + name.len() + 8);
    path.push_str(&container_path(container));
    for segment in name.split('/') {
        path.push('/');
        path.extend(utf8_percent_encode(segment, COMPONENT));
    }
    path
}

/// The query of a List Blobs request for `options` (encoded, without `?`).
pub fn list_blobs_query(options: &ListBlobsOptions) -> String {
    let mut query = String::from("restype=container&comp=list");
    if let Some(prefix) = options.prefix.as_deref().filter(|p| !p.is_empty()) {
        let _ = write!(query, "&prefix={}", utf8_percent_encode(prefix, COMPONENT));
    }
    if let Some(marker) = options.marker.as_deref().filter(|m| !m.is_empty()) {
        let _ = write!(query, "&marker={}", utf8_percent_encode(marker, COMPONENT));
    }
    if let Some(max) = options.max_results {
        let _ = write!(query, "&maxresults={max}");
    }
    query
}

#[derive(Deserialize)]
struct EnumerationResults {
    #[serde(rename = "Blobs", default)]
    blobs: Blobs,
    #[serde(rename = "NextMarker", default)]
    next_marker: Option<String>,
}

#[derive(Deserialize, Default)]
struct Blobs {
    #[serde(rename = "Blob", default)]
    blob: Vec<ListedBlob>,
}

#[derive(Deserialize)]
struct ListedBlob {
    #[serde(rename = "Name")]
    name: String,
    #[serde(rename = "Properties")]
    properties: ListedProperties,
}

#[derive(Deserialize)]
struct ListedProperties {
    #[serde(rename = "Content-Length")]
    content_length: u64,
    #[serde(rename = "Etag")]
    etag: String,
    #[serde(rename = "Last-Modified", default)]
    last_modified: Option<String>,
}

/// The page a List Blobs answer holds.
///
/// # Errors
///
/// [`ErrorKind::Decode`] when the body is not a listing.
pub fn parse_blob_list(body: &[u8]) -> Result<BlobPage> {
    let text = std::str::from_utf8(body).map_err(|_| list_error("it is not UTF-8".to_owned()))?;
    let text = text.trim_start_matches('\u{feff}');
    let results: EnumerationResults =
        quick_xml::de::from_str(text).map_err(|e| list_error(e.to_string()))?;
    let blobs = results
        .blobs
        .blob
        .into_iter()
        .map(|listed| {
            let properties = BlobProperties::new(
                listed.name,
                listed.properties.content_length,
                quoted_etag(&listed.properties.etag),
            );
            match listed
                .properties
                .last_modified
                .as_deref()
                .and_then(parse_http_date)
            {
                Some(at) => properties.with_last_modified(at),
                None => properties,
            }
        })
        .collect();
    let next_marker = results.next_marker.filter(|m| !m.trim().is_empty());
    Ok(BlobPage::new(blobs, next_marker))
}

fn list_error(why: String) -> Error {
    Error::new(
        ErrorKind::Decode,
        format!("the blob service's listing could not be read: {why}"),
    )
}

/// An ETag in the form the `ETag` header gives it (quoted): listings give it bare.
pub fn quoted_etag(etag: &str) -> String {
    if etag.starts_with('"') || etag.starts_with("W/\"") {
        etag.to_owned()
    } else {
        format!("\"{etag}\"")
    }
}

/// An HTTP date (`Last-Modified`, RFC 1123), if it is one.
pub fn parse_http_date(text: &str) -> Option<DateTime> {
    let at = httpdate::parse_http_date(text).ok()?;
    let nanos = at.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
    DateTime::from_unix_nanos(i128::try_from(nanos).ok()?)
}

/// The id of block `index` of the upload `upload` (a random number per upload, so
/// two uploads to one name never mix blocks): base64 of a fixed-length text, as the
/// service requires every id of a blob to have the same length.
pub fn block_id(upload: u128, index: usize) -> String {
    STANDARD.encode(format!("{upload:032x}-{index:08}"))
}

/// The body of a Put Block List that commits `ids`, in order, from the uncommitted
/// blocks (or the committed ones, on a repeated request).
pub fn block_list_body(ids: &[String]) -> String {
    let mut body = String::with_capacity(64 + ids.len() * 72);
    body.push_str(r#"<?xml version="1.0" encoding="utf-8"?><BlockList>"#);
    for id in ids {
        // A base64 id holds no character XML must escape.
        let _ = write!(body, "<Latest>{id}</Latest>");
    }
    body.push_str("</BlockList>");
    body
}

/// The `x-ms-range` value for `len` bytes from `offset` (`len` > 0).
pub fn range_header(offset: u64, len: u64) -> String {
    let last = offset.saturating_add(len.max(1) - 1);
    format!("bytes={offset}-{last}")
}

/// `(first, last, size)` of a `Content-Range: bytes first-last/size` value.
pub fn parse_content_range(text: &str) -> Option<(u64, u64, u64)> {
    let rest = text.trim().strip_prefix("bytes ")?;
    let (span, size) = rest.split_once('/')?;
    let (first, last) = span.split_once('-')?;
    Some((first.parse().ok()?, last.parse().ok()?, size.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_encode_each_segment() {
        assert_eq!(blob_path("c", "a/b c/%?#é"), "c/a/b%20c/%25%3F%23%C3%A9");
        assert_eq!(container_path("photos-1"), "photos-1");
    }

    #[test]
    fn list_query_encodes_prefix_and_marker() {
        let options = ListBlobsOptions::default()
            .with_prefix("a b&")
            .with_marker(Some("m=1".to_owned()))
            .with_max_results(7);
        assert_eq!(
            list_blobs_query(&options),
            "restype=container&comp=list&prefix=a%20b%26&marker=m%3D1&maxresults=7"
        );
        assert_eq!(
            list_blobs_query(&ListBlobsOptions::default()),
            "restype=container&comp=list"
        );
    }

    #[test]
    fn a_listing_parses() {
        let body = br#"<?xml version="1.0" encoding="utf-8"?>
<EnumerationResults ServiceEndpoint="http://127.0.0.1:10000/devstoreaccount1" ContainerName="c">
  <Prefix>a</Prefix><MaxResults>2</MaxResults>
  <Blobs>
    <Blob><Name>a&amp;1</Name><Properties><Last-Modified>Mon, 01 Jan 2024 00:00:00 GMT</Last-Modified><Etag>0x8D</Etag><Content-Length>12</Content-Length><BlobType>BlockBlob</BlobType></Properties></Blob>
    <Blob><Name>a2</Name><Properties><Etag>"0x9E"</Etag><Content-Length>0</Content-Length></Properties></Blob>
  </Blobs>
  <NextMarker>next!</NextMarker>
</EnumerationResults>"#;
        let page = parse_blob_list(body).unwrap();
        assert_eq!(page.blobs.len(), 2);
        assert_eq!(page.blobs[0].name, "a&1");
        assert_eq!(page.blobs[0].size, 12);
        assert_eq!(page.blobs[0].etag, "\"0x8D\"");
        assert_eq!(
            page.blobs[0].last_modified,
            DateTime::from_ymd_hms(2024, 1, 1, 0, 0, 0)
        );
        assert_eq!(page.blobs[1].etag, "\"0x9E\"");
        assert_eq!(page.next_marker.as_deref(), Some("next!"));

        let last = br#"<EnumerationResults><Blobs /><NextMarker /></EnumerationResults>"#;
        let page = parse_blob_list(last).unwrap();
        assert!(page.blobs.is_empty());
        assert_eq!(page.next_marker, None);

        let err = parse_blob_list(b"<html>").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode);
    }

    #[test]
    fn block_ids_have_one_length_and_differ_per_upload() {
        let a = block_id(1, 0);
        assert_eq!(a.len(), block_id(u128::MAX, 99_999_999).len());
        assert_ne!(a, block_id(2, 0));
        assert_ne!(a, block_id(1, 1));
        assert_eq!(
            block_list_body(std::slice::from_ref(&a)),
            format!(
                r#"<?xml version="1.0" encoding="utf-8"?><BlockList><Latest>{a}</Latest></BlockList>"#
            )
        );
    }

    #[test]
    fn ranges_round_trip() {
        assert_eq!(range_header(10, 5), "bytes=10-14");
        assert_eq!(
            parse_content_range("bytes 10-14/70000"),
            Some((10, 14, 70_000))
        );
        assert_eq!(parse_content_range("bytes */70000"), None);
    }
}
