//! Continuation (docs/protocol.md §6), both ways: a page that is not the last carries
//! the next position in `x-ms-continuation-<Name>` headers, and the next request
//! passes it back as `<Name>` query parameters. The remote engine reads the headers
//! and writes the parameters; a server writes the headers and reads the parameters.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use crate::query::ContinuationToken;

/// The next PartitionKey of an entity query.
pub const NEXT_PARTITION_KEY: &str = "NextPartitionKey";
/// The next RowKey of an entity query.
pub const NEXT_ROW_KEY: &str = "NextRowKey";
/// The next table name of a table listing.
pub const NEXT_TABLE_NAME: &str = "NextTableName";

/// The response header of a continuation value: `x-ms-continuation-<name>`.
pub fn header_name(name: &str) -> String {
    format!("x-ms-continuation-{name}")
}

/// The entity-query token in a response's headers (`header` looks one up by name,
/// case-insensitively); `None` on the last page, which carries neither value (an
/// empty value counts as absent).
///
/// An empty `NextPartitionKey` beside a `NextRowKey` is not the end: it is a
/// position in the partition whose key is empty. Azurite sends the keys' base64 as
/// its tokens, so there the empty key is an empty header, and stopping at it would
/// drop every row after it without a word.
pub fn entity_token_from_headers<'a>(
    header: impl Fn(&str) -> Option<&'a str>,
) -> Option<ContinuationToken> {
    let value = |name: &str| header(&header_name(name)).filter(|value| !value.is_empty());
    let row_key = value(NEXT_ROW_KEY).map(str::to_owned);
    match value(NEXT_PARTITION_KEY) {
        Some(partition_key) => Some(ContinuationToken::new(partition_key, row_key)),
        None => row_key.map(|row_key| ContinuationToken::new("", Some(row_key))),
    }
}

/// The headers that carry `token`: name and value, the row key's only when the
/// token has one.
pub fn entity_token_headers(token: &ContinuationToken) -> Vec<(String, String)> {
    let mut headers = vec![(
        header_name(NEXT_PARTITION_KEY),
        token.next_partition_key().to_owned(),
    )];
    if let Some(row_key) = token.next_row_key() {
        headers.push((header_name(NEXT_ROW_KEY), row_key.to_owned()));
    }
    headers
}

/// The table-listing position in a response's headers; `None` on the last page.
pub fn table_token_from_headers<'a>(header: impl Fn(&str) -> Option<&'a str>) -> Option<String> {
    header(&header_name(NEXT_TABLE_NAME))
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
}

/// The header that carries a table-listing position.
pub fn table_token_header(next_table_name: &str) -> (String, String) {
    (header_name(NEXT_TABLE_NAME), next_table_name.to_owned())
}

/// The header value a server sends for one key of a continuation position:
/// opaque, printable ASCII whatever the key holds, in a form like the service's,
/// `1!<length>!<base64url of the key>` (the length is that of the base64 text). A
/// client sends it back as it came; [`decode_position`] reads it.
///
/// ```
/// use tables_core::odata::continuation::{decode_position, encode_position};
///
/// assert_eq!(encode_position("Smith"), "1!7!U21pdGg");
/// assert_eq!(decode_position("1!7!U21pdGg").as_deref(), Some("Smith"));
/// assert_eq!(decode_position(&encode_position("")).as_deref(), Some(""));
/// assert_eq!(decode_position("1!8!U21pdGg"), None);
/// ```
pub fn encode_position(key: &str) -> String {
    let text = URL_SAFE_NO_PAD.encode(key.as_bytes());
    format!("1!{}!{text}", text.len())
}

/// Reads a value [`encode_position`] wrote; `None` for anything else.
pub fn decode_position(value: &str) -> Option<String> {
    let rest = value.strip_prefix("1!")?;
    let (length, text) = rest.split_once('!')?;
    if length.parse::<usize>().ok()? != text.len() {
        return None;
    }
    String::from_utf8(URL_SAFE_NO_PAD.decode(text.as_bytes()).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup<'h>(headers: &'h [(String, String)]) -> impl Fn(&str) -> Option<&'h str> + 'h {
        move |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        }
    }

    #[test]
    fn entity_tokens_round_trip_through_headers() {
        for token in [
            ContinuationToken::new("1!8!U21pdGg-", Some("1!4!YWI-".to_owned())),
            ContinuationToken::new("p", None),
        ] {
            let headers = entity_token_headers(&token);
            assert_eq!(entity_token_from_headers(lookup(&headers)), Some(token));
        }
        assert_eq!(entity_token_from_headers(lookup(&[])), None);
        let empty = vec![(header_name(NEXT_PARTITION_KEY), String::new())];
        assert_eq!(entity_token_from_headers(lookup(&empty)), None);
        let both_empty = vec![
            (header_name(NEXT_PARTITION_KEY), String::new()),
            (header_name(NEXT_ROW_KEY), String::new()),
        ];
        assert_eq!(entity_token_from_headers(lookup(&both_empty)), None);
        // Azurite's position in the partition with the empty key: not the end.
        let empty_partition = vec![
            (header_name(NEXT_PARTITION_KEY), String::new()),
            (header_name(NEXT_ROW_KEY), "MQ==".to_owned()),
        ];
        assert_eq!(
            entity_token_from_headers(lookup(&empty_partition)),
            Some(ContinuationToken::new("", Some("MQ==".to_owned())))
        );
        // ...and it goes back as an empty `NextPartitionKey` parameter.
        let token = ContinuationToken::new("", Some("MQ==".to_owned()));
        assert_eq!(
            crate::odata::entity_query_string(None, None, None, Some(&token)),
            "NextPartitionKey=&NextRowKey=MQ%3D%3D"
        );
    }

    #[test]
    fn table_tokens_round_trip_through_headers() {
        let headers = vec![table_token_header("logs2")];
        assert_eq!(headers[0].0, "x-ms-continuation-NextTableName");
        assert_eq!(
            table_token_from_headers(lookup(&headers)).as_deref(),
            Some("logs2")
        );
        assert_eq!(table_token_from_headers(lookup(&[])), None);
    }
}
