//! Query options, continuation tokens and pages.

use std::fmt;
use std::str::FromStr;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use crate::error::{Error, ErrorKind, Result};
use crate::filter::Filter;

/// The most entities the service returns in one page, and the largest `$top`.
pub const MAX_PAGE_SIZE: u32 = 1_000;

/// What to query: `$filter`, `$select` and `$top`.
///
/// `top` is the service's `$top`: it bounds the size of *each page*, not the total.
///
/// ```
/// use tables_core::{col, QuerySpec};
///
/// let spec = QuerySpec::new()
///     .filter(col("PartitionKey").eq("Sales").and(col("Age").gt(30)))
///     .select(["FirstName", "Age"])
///     .top(50);
/// assert!(spec.validate().is_ok());
/// assert!(QuerySpec::new().top(1_001).validate().is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QuerySpec {
    /// `$filter`; `None` returns every entity.
    pub filter: Option<Filter>,
    /// `$select`; `None` returns every property. PartitionKey, RowKey and Timestamp
    /// are always returned.
    pub select: Option<Vec<String>>,
    /// `$top`: at most this many entities per page (1 to 1,000).
    pub top: Option<u32>,
}

impl QuerySpec {
    /// A query for every entity of a table.
    pub fn new() -> QuerySpec {
        QuerySpec::default()
    }

    /// Sets `$filter`.
    #[must_use]
    pub fn filter(mut self, filter: impl Into<Filter>) -> QuerySpec {
        let filter = filter.into();
        self.filter = Some(filter);
        self
    }

    /// Sets `$filter` to text sent exactly as written, **unchecked**
    /// ([`Filter::unchecked_raw`]): for the rare filter [`Filter::parse`] does not
    /// read. Prefer [`QuerySpec::filter`] with typed columns, which are checked
    /// before anything is sent.
    ///
    /// ```
    /// use tables_core::QuerySpec;
    ///
    /// let spec = QuerySpec::new().filter_unchecked("Age gt 30 AND Age lt 40");
    /// assert_eq!(spec.filter.unwrap().to_odata(), "Age gt 30 AND Age lt 40");
    /// ```
    #[must_use]
    pub fn filter_unchecked(self, text: impl Into<String>) -> QuerySpec {
        self.filter(Filter::unchecked_raw(text))
    }

    /// Sets `$select`.
    #[must_use]
    pub fn select<I, S>(mut self, properties: I) -> QuerySpec
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.select = Some(properties.into_iter().map(Into::into).collect());
        self
    }

    /// Sets `$top`, the page size.
    #[must_use]
    pub fn top(mut self, top: u32) -> QuerySpec {
        self.top = Some(top);
        self
    }

    /// Checks the options against the service's rules.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidQuery`] if `top` is 0 or above [`MAX_PAGE_SIZE`], or
    /// `select` is empty or names a property twice; [`ErrorKind::InvalidFilter`] if the
    /// filter breaks the service's filter rules (see [`Filter::validate`]).
    pub fn validate(&self) -> Result<()> {
        if let Some(top) = self.top {
            check_page_size(
                top,
                "$top",
                "; $top is a page size, use take(n) on the client to bound the total",
            )?;
        }
        if let Some(select) = &self.select {
            validate_select(select)?;
        }
        if let Some(filter) = &self.filter {
            filter.validate()?;
        }
        Ok(())
    }
}

/// Checks a page size against the service's 1 to [`MAX_PAGE_SIZE`] range.
fn check_page_size(size: u32, what: &str, hint: &str) -> Result<()> {
    if size == 0 || size > MAX_PAGE_SIZE {
        return Err(Error::new(
            ErrorKind::InvalidQuery,
            format!("{what} must be between 1 and {MAX_PAGE_SIZE}, got {size}{hint}"),
        ));
    }
    Ok(())
}

/// Checks a `$select` list: at least one property, none empty, none named twice.
///
/// [`QuerySpec::validate`] applies it to queries; engines apply it to the projection
/// of a point read.
///
/// # Errors
///
/// [`ErrorKind::InvalidQuery`], naming the repeated property where there is one.
pub fn validate_select(select: &[String]) -> Result<()> {
    if select.is_empty() {
        return Err(Error::new(
            ErrorKind::InvalidQuery,
            "$select is empty; name at least one property or leave select unset",
        ));
    }
    for (i, name) in select.iter().enumerate() {
        if name.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidQuery,
                "$select names an empty property",
            ));
        }
        if select[..i].contains(name) {
            return Err(Error::new(
                ErrorKind::InvalidQuery,
                format!("$select names property {name:?} twice"),
            )
            .with_property(name.clone()));
        }
    }
    Ok(())
}

/// Where the next page of an entity query starts: the service's
/// `NextPartitionKey`/`NextRowKey` pair.
///
/// The values are opaque: the in-memory engine stores the next key, the service
/// stores its own encoding. The string form ([`fmt::Display`] / [`FromStr`]) is
/// stable and URL-safe, so a token can be stored and resumed in another process.
///
/// ```
/// use tables_core::ContinuationToken;
///
/// let token = ContinuationToken::new("1!8!U21pdGg-", Some("1!12!am9uZXM-".to_owned()));
/// let text = token.to_string();
/// assert_eq!(text.parse::<ContinuationToken>().unwrap(), token);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ContinuationToken {
    next_partition_key: String,
    next_row_key: Option<String>,
}

const TOKEN_PREFIX: &str = "ct1";

impl ContinuationToken {
    /// A token from the service's two continuation values.
    pub fn new(
        next_partition_key: impl Into<String>,
        next_row_key: Option<String>,
    ) -> ContinuationToken {
        ContinuationToken {
            next_partition_key: next_partition_key.into(),
            next_row_key,
        }
    }

    /// `x-ms-continuation-NextPartitionKey`.
    pub fn next_partition_key(&self) -> &str {
        &self.next_partition_key
    }

    /// `x-ms-continuation-NextRowKey`, when the service sent one.
    pub fn next_row_key(&self) -> Option<&str> {
        self.next_row_key.as_deref()
    }
}

impl fmt::Display for ContinuationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{TOKEN_PREFIX}.{}",
            URL_SAFE_NO_PAD.encode(self.next_partition_key.as_bytes())
        )?;
        if let Some(rk) = &self.next_row_key {
            write!(f, ".{}", URL_SAFE_NO_PAD.encode(rk.as_bytes()))?;
        }
        Ok(())
    }
}

impl FromStr for ContinuationToken {
    type Err = Error;

    fn from_str(s: &str) -> Result<ContinuationToken> {
        let bad = |why: &str| {
            Error::new(
                ErrorKind::InvalidContinuationToken,
                format!(
                    "malformed continuation token {:?}: {why}; pass a token exactly as a previous \
                     page returned it, or start again from the first page",
                    Short(s)
                ),
            )
        };
        let mut parts = s.split('.');
        if parts.next() != Some(TOKEN_PREFIX) {
            return Err(bad("unknown prefix"));
        }
        let decode = |part: &str| -> Result<String> {
            let bytes = URL_SAFE_NO_PAD
                .decode(part)
                .map_err(|_| bad("not base64url"))?;
            String::from_utf8(bytes).map_err(|_| bad("not UTF-8"))
        };
        let pk = decode(parts.next().ok_or_else(|| bad("missing partition key"))?)?;
        let rk = parts.next().map(decode).transpose()?;
        if parts.next().is_some() {
            return Err(bad("too many parts"));
        }
        Ok(ContinuationToken::new(pk, rk))
    }
}

/// At most the first 64 characters of a token, for messages.
struct Short<'a>(&'a str);

impl fmt::Debug for Short<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.char_indices().nth(64) {
            Some((end, _)) => write!(f, "{:?}...", &self.0[..end]),
            None => write!(f, "{:?}", self.0),
        }
    }
}

/// One page of results and where the next one starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    /// The items of this page, in service order. May be empty even when more pages
    /// follow: keep going while [`Page::continuation`] is `Some`.
    pub items: Vec<T>,
    /// The token for the next page; `None` on the last page.
    pub continuation: Option<ContinuationToken>,
}

/// Options for listing tables. More fields may come: start from
/// [`ListTablesOptions::default`] and use the `with_` methods.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListTablesOptions {
    /// Only tables whose name starts with this prefix (compared as the service does:
    /// a `ge`/`lt` range on `TableName`).
    pub prefix: Option<String>,
    /// At most this many names per page (1 to 1,000).
    pub page_size: Option<u32>,
    /// Resume from `NextTableName` of a previous page.
    pub continuation: Option<String>,
}

impl ListTablesOptions {
    /// Sets [`prefix`](ListTablesOptions::prefix).
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> ListTablesOptions {
        self.prefix = Some(prefix.into());
        self
    }

    /// Sets [`page_size`](ListTablesOptions::page_size).
    pub fn with_page_size(mut self, names: u32) -> ListTablesOptions {
        self.page_size = Some(names);
        self
    }

    /// Sets [`continuation`](ListTablesOptions::continuation).
    pub fn with_continuation(mut self, next_table_name: impl Into<String>) -> ListTablesOptions {
        self.continuation = Some(next_table_name.into());
        self
    }

    /// Checks the options against the service's rules.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidQuery`] if `page_size` is 0 or above [`MAX_PAGE_SIZE`].
    pub fn validate(&self) -> Result<()> {
        match self.page_size {
            Some(size) => check_page_size(size, "the table page size", ""),
            None => Ok(()),
        }
    }
}

/// One page of table names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TablePage {
    /// Table names as created (case preserved).
    pub names: Vec<String>,
    /// `NextTableName` for the next page; `None` on the last page.
    pub continuation: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_round_trips_with_and_without_row_key() {
        for token in [
            ContinuationToken::new("", None),
            ContinuationToken::new("p.1", Some(String::new())),
            ContinuationToken::new("ünï/cödé", Some("a.b.c".into())),
        ] {
            assert_eq!(
                token.to_string().parse::<ContinuationToken>().unwrap(),
                token
            );
        }
    }

    #[test]
    fn malformed_tokens_are_invalid_continuation_tokens() {
        // Unknown prefix, truncated, not base64url, not UTF-8, too many parts.
        for text in ["", "x.AA", "ct1", "ct1.!!", "ct1._w", "ct1.AA.AA.AA"] {
            let err = text.parse::<ContinuationToken>().unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidContinuationToken, "{text}");
            assert_eq!(err.origin(), crate::Origin::Local, "{text}");
        }
        // A long token is not copied whole into the message.
        let long = format!("ct1.{}", "A".repeat(10_000));
        let err = format!("{long}!").parse::<ContinuationToken>().unwrap_err();
        assert!(err.message().len() < 400, "{}", err.message().len());
    }

    #[test]
    fn table_page_size_and_select_are_checked() {
        let options = |page_size| ListTablesOptions {
            page_size,
            ..ListTablesOptions::default()
        };
        assert!(options(None).validate().is_ok());
        assert!(options(Some(1_000)).validate().is_ok());
        for bad in [0, 1_001] {
            let err = options(Some(bad)).validate().unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidQuery, "{bad}");
        }
        assert!(validate_select(&["A".into(), "B".into()]).is_ok());
        let twice = validate_select(&["A".into(), "A".into()]).unwrap_err();
        assert_eq!(twice.kind(), ErrorKind::InvalidQuery);
        assert_eq!(twice.property(), Some("A"));
        assert_eq!(
            validate_select(&[]).unwrap_err().kind(),
            ErrorKind::InvalidQuery
        );
    }

    #[test]
    fn top_bounds() {
        assert!(QuerySpec::new().top(1).validate().is_ok());
        assert!(QuerySpec::new().top(1000).validate().is_ok());
        assert_eq!(
            QuerySpec::new().top(0).validate().unwrap_err().kind(),
            ErrorKind::InvalidQuery
        );
        assert_eq!(
            QuerySpec::new().top(1001).validate().unwrap_err().kind(),
            ErrorKind::InvalidQuery
        );
        assert_eq!(
            QuerySpec::new()
                .select(["a", "a"])
                .validate()
                .unwrap_err()
                .kind(),
            ErrorKind::InvalidQuery
        );
    }
}
