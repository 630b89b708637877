//! Query strings, and the percent-encoding of paths and query values.
//!
//! Everything outside the URI's unreserved characters (ALPHA / DIGIT / `-._~`) is
//! percent-encoded, so `%`, spaces, `&`, `=`, `+` and non-ASCII text in keys and query
//! values reach the service as written. The structural characters of an OData key
//! literal (`'(),=`) stay literal.

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use super::continuation::{NEXT_PARTITION_KEY, NEXT_ROW_KEY, NEXT_TABLE_NAME};
use crate::filter::{Column, Filter};
use crate::query::{ContinuationToken, ListTablesOptions};

/// Every byte but ALPHA / DIGIT / `-._~` is encoded (RFC 3986 unreserved).
pub(super) const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Table names: also keeps the `$` of system tables (`$MetricsHourPrimaryTransactionsTable`).
pub(super) const TABLE_NAME: &AsciiSet = &UNRESERVED.remove(b'$');

/// Percent-encodes a query-string value: every byte outside ALPHA / DIGIT / `-._~`.
///
/// ```
/// assert_eq!(tables_core::odata::encode_query_value("cDE= a&b"), "cDE%3D%20a%26b");
/// ```
pub fn encode_query_value(value: &str) -> String {
    utf8_percent_encode(value, UNRESERVED).to_string()
}

/// The query string (without the leading `?`) of an entity query: `$filter` (rendered
/// by [`Filter::to_odata`]), `$select` (the names joined with `,`), `$top`, then
/// `NextPartitionKey` and `NextRowKey`, in that order, each value percent-encoded.
/// Empty when none applies.
///
/// ```
/// use tables_core::{col, odata, ContinuationToken};
///
/// let filter = col("PartitionKey").eq("p1").and(col("n").ge(11));
/// let select = ["RowKey".to_owned(), "n".to_owned()];
/// assert_eq!(
///     odata::entity_query_string(Some(&filter), Some(&select), Some(4), None),
///     "$filter=PartitionKey%20eq%20%27p1%27%20and%20n%20ge%2011&$select=RowKey%2Cn&$top=4"
/// );
/// let next = ContinuationToken::new("cDE=", Some("cjE=".to_owned()));
/// assert_eq!(
///     odata::entity_query_string(None, None, None, Some(&next)),
///     "NextPartitionKey=cDE%3D&NextRowKey=cjE%3D"
/// );
/// ```
pub fn entity_query_string(
    filter: Option<&Filter>,
    select: Option<&[String]>,
    top: Option<u32>,
    continuation: Option<&ContinuationToken>,
) -> String {
    let mut out = String::new();
    if let Some(filter) = filter {
        push_param(&mut out, "$filter", &filter.to_odata());
    }
    if let Some(select) = select.filter(|s| !s.is_empty()) {
        push_param(&mut out, "$select", &select.join(","));
    }
    if let Some(top) = top {
        push_param(&mut out, "$top", &top.to_string());
    }
    if let Some(token) = continuation {
        push_param(&mut out, NEXT_PARTITION_KEY, token.next_partition_key());
        if let Some(row_key) = token.next_row_key() {
            push_param(&mut out, NEXT_ROW_KEY, row_key);
        }
    }
    out
}

/// The query string (without the leading `?`) of a table listing: a prefix becomes
/// `$filter=TableName ge '<prefix>' and TableName lt '<next>'` (the range of
/// [`crate::key::prefix_range`], without the upper bound when there is none), then
/// `$top` and `NextTableName`. Empty when none applies.
///
/// ```
/// use tables_core::{odata, ListTablesOptions};
///
/// let options = ListTablesOptions::default()
///     .with_prefix("log")
///     .with_page_size(10)
///     .with_continuation("logs2");
/// assert_eq!(
///     odata::table_query_string(&options),
///     "$filter=TableName%20ge%20%27log%27%20and%20TableName%20lt%20%27loh%27&$top=10&NextTableName=logs2"
/// );
/// ```
pub fn table_query_string(options: &ListTablesOptions) -> String {
    let mut out = String::new();
    if let Some(prefix) = options.prefix.as_deref().filter(|p| !p.is_empty()) {
        let filter = Column::new("TableName").starts_with(prefix);
        push_param(&mut out, "$filter", &filter.to_odata());
    }
    if let Some(top) = options.page_size {
        push_param(&mut out, "$top", &top.to_string());
    }
    if let Some(next) = &options.continuation {
        push_param(&mut out, NEXT_TABLE_NAME, next);
    }
    out
}

/// Appends `'<text>'` with quotes doubled and everything outside `keep` encoded.
pub(super) fn push_literal(out: &mut String, text: &str, keep: &'static AsciiSet) {
    out.push('\'');
    for (i, part) in text.split('\'').enumerate() {
        if i > 0 {
            out.push_str("''");
        }
        out.extend(utf8_percent_encode(part, keep));
    }
    out.push('\'');
}

/// Appends `name=<encoded value>`, after a `&` unless it is the first parameter.
fn push_param(out: &mut String, name: &str, value: &str) {
    if !out.is_empty() {
        out.push('&');
    }
    out.push_str(name);
    out.push('=');
    out.extend(utf8_percent_encode(value, UNRESERVED));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entity::EntityKey;
    use crate::filter::col;
    use crate::odata::{entity_path, table_resource_path};

    #[test]
    fn entity_paths_escape_keys() {
        let path = |pk: &str, rk: &str| entity_path("probe1", &EntityKey::new(pk, rk));
        assert_eq!(
            path("o'hara", "a b%c"),
            "probe1(PartitionKey='o''hara',RowKey='a%20b%25c')"
        );
        assert_eq!(path("", ""), "probe1(PartitionKey='',RowKey='')");
        assert_eq!(path("''", "'"), "probe1(PartitionKey='''''',RowKey='''')");
        assert_eq!(
            path("é 中", "a-b.c_d~e"),
            "probe1(PartitionKey='%C3%A9%20%E4%B8%AD',RowKey='a-b.c_d~e')"
        );
        assert_eq!(
            path("(),=&+:@", "\u{1}"),
            "probe1(PartitionKey='%28%29%2C%3D%26%2B%3A%40',RowKey='%01')"
        );
        assert_eq!(
            entity_path("$MetricsTable", &EntityKey::new("p", "r")),
            "$MetricsTable(PartitionKey='p',RowKey='r')"
        );
    }

    #[test]
    fn table_paths() {
        assert_eq!(table_resource_path("mytable"), "Tables('mytable')");
        assert_eq!(table_resource_path("$Logs"), "Tables('$Logs')");
        assert_eq!(table_resource_path("a'b c"), "Tables('a''b%20c')");
    }

    #[test]
    fn query_values_encode_everything_reserved() {
        assert_eq!(encode_query_value(""), "");
        assert_eq!(encode_query_value("1!8!U21pdGg-"), "1%218%21U21pdGg-");
        assert_eq!(encode_query_value("a+b/c?d#e"), "a%2Bb%2Fc%3Fd%23e");
        assert_eq!(encode_query_value("é"), "%C3%A9");
    }

    #[test]
    fn entity_query_strings() {
        assert_eq!(entity_query_string(None, None, None, None), "");
        assert_eq!(
            entity_query_string(None, None, Some(1000), None),
            "$top=1000"
        );
        let filter = col("LastName").eq("O'Brien & co");
        let select = ["A".to_owned()];
        let next = ContinuationToken::new("1!8!U21pdGg-", None);
        assert_eq!(
            entity_query_string(Some(&filter), Some(&select), Some(5), Some(&next)),
            "$filter=LastName%20eq%20%27O%27%27Brien%20%26%20co%27&$select=A&$top=5&NextPartitionKey=1%218%21U21pdGg-"
        );
        assert_eq!(entity_query_string(None, Some(&[]), None, None), "");
    }

    #[test]
    fn table_query_strings() {
        assert_eq!(table_query_string(&ListTablesOptions::default()), "");
        let only = |prefix: &str| ListTablesOptions {
            prefix: Some(prefix.to_owned()),
            ..ListTablesOptions::default()
        };
        assert_eq!(
            table_query_string(&only("email_a")),
            "$filter=TableName%20ge%20%27email_a%27%20and%20TableName%20lt%20%27email_b%27"
        );
        assert_eq!(table_query_string(&only("")), "");
        // No upper bound past the greatest character.
        assert_eq!(
            table_query_string(&only("\u{FFFF}")),
            "$filter=TableName%20ge%20%27%EF%BF%BF%27"
        );
        let next = ListTablesOptions {
            continuation: Some("my table".to_owned()),
            ..ListTablesOptions::default()
        };
        assert_eq!(table_query_string(&next), "NextTableName=my%20table");
    }
}
