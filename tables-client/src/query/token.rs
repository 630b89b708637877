//! [`PageToken`]: where the next page of a typed query starts, bound to that query.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer, Visitor};
use serde::{Serialize, Serializer};
use tables_core::{ContinuationToken, Error, ErrorKind, Result};

/// Where the next page of a [`Query`](crate::Query) starts: the service's
/// continuation, how many items the query has yielded so far (so `take(n)` holds
/// across resumptions), and a fingerprint of the query it belongs to. The last page
/// hands out an *end* token ([`PageToken::is_end`]): resumed, it gives an empty
/// last page, never the first page again, so a loop that saves its tokens never
/// counts a row twice.
///
/// The string form ([`fmt::Display`] / [`FromStr`], and serde as that string) is
/// URL-safe (letters, digits, `-`, `_` and `.`) and stable, so a token can be handed
/// to a browser, stored, and resumed later by another client over the same table:
///
/// ```text
/// pt1.<query fingerprint, 16 hex digits>.<items yielded so far>.<continuation token>
/// pt1.<query fingerprint, 16 hex digits>.<items yielded in all>.end
/// ```
///
/// The fingerprint covers the table, the whole filter (partition, RowKey range,
/// filters and the kind filter), the `$select` list, the page size and `take`;
/// [`Query::page`](crate::Query::page) refuses a token of any other query with
/// [`ErrorKind::InvalidContinuationToken`] before anything is sent, the kind a
/// malformed token gets too. It is a guard against
/// mistakes (a token passed to the wrong query), not a signature: the continuation
/// inside is the service's own and tells nothing the caller may not see.
///
/// ```
/// use tables_client::PageToken;
///
/// let text = "pt1.00000000000000ff.50.ct1.U2FsZXM.ZW1waWRfMDAwMjIz";
/// let token: PageToken = text.parse()?;
/// assert_eq!(token.to_string(), text);
/// assert_eq!(token.items_before(), 50);
/// assert!("pt1.xyz".parse::<PageToken>().is_err());
/// # Ok::<(), tables_client::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PageToken {
    query: u64,
    taken: u64,
    /// `None` at the end of the query.
    continuation: Option<ContinuationToken>,
}

const PREFIX: &str = "pt1";
/// The continuation part of an end token.
const END: &str = "end";

impl PageToken {
    pub(crate) fn new(query: u64, taken: u64, continuation: ContinuationToken) -> PageToken {
        PageToken {
            query,
            taken,
            continuation: Some(continuation),
        }
    }

    /// The token the last page of a query hands out.
    pub(crate) fn end(query: u64, taken: u64) -> PageToken {
        PageToken {
            query,
            taken,
            continuation: None,
        }
    }

    /// Whether the query has no more pages: the token of its last page.
    pub fn is_end(&self) -> bool {
        self.continuation.is_none()
    }

    /// How many items the query yielded before the page this token starts (for an
    /// end token, in all).
    pub fn items_before(&self) -> u64 {
        self.taken
    }

    /// The service's continuation inside the token; `None` for an end token.
    pub fn continuation(&self) -> Option<&ContinuationToken> {
        self.continuation.as_ref()
    }

    /// Checks that the token belongs to the query with fingerprint `query`.
    pub(crate) fn check(&self, query: u64) -> Result<()> {
        if self.query == query {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::InvalidContinuationToken,
            format!(
                "the page token belongs to another query (fingerprint {:016x}, this query is {query:016x}); \
                 resume with the same table, partition, row range, filters, projection, page size and take \
                 that produced the token",
                self.query
            ),
        ))
    }
}

impl fmt::Display for PageToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}.{:016x}.{}.", self.query, self.taken)?;
        match &self.continuation {
            Some(continuation) => write!(f, "{continuation}"),
            None => f.write_str(END),
        }
    }
}

impl FromStr for PageToken {
    type Err = Error;

    fn from_str(s: &str) -> Result<PageToken> {
        let bad = |why: &str| {
            Error::new(
                ErrorKind::InvalidContinuationToken,
                format!(
                    "malformed page token {:?}: {why}; pass a token exactly as a previous page \
                     returned it, or start again from the first page",
                    short(s)
                ),
            )
        };
        let mut parts = s.splitn(4, '.');
        if parts.next() != Some(PREFIX) {
            return Err(bad("unknown prefix"));
        }
        let query = parts
            .next()
            .filter(|hex| hex.len() == 16)
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
            .ok_or_else(|| bad("the query fingerprint is not 16 hex digits"))?;
        let taken = parts
            .next()
            .filter(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|digits| digits.parse::<u64>().ok())
            .ok_or_else(|| bad("the item count is not a number"))?;
        let continuation = parts
            .next()
            .ok_or_else(|| bad("the continuation is missing"))?;
        if continuation == END {
            return Ok(PageToken::end(query, taken));
        }
        let continuation = continuation
            .parse::<ContinuationToken>()
            .map_err(|_| bad("the continuation is malformed"))?;
        Ok(PageToken::new(query, taken, continuation))
    }
}

impl Serialize for PageToken {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for PageToken {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct TokenVisitor;

        impl Visitor<'_> for TokenVisitor {
            type Value = PageToken;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a page token string")
            }

            fn visit_str<E: de::Error>(self, text: &str) -> std::result::Result<PageToken, E> {
                text.parse().map_err(E::custom)
            }
        }

        deserializer.deserialize_str(TokenVisitor)
    }
}

/// At most the first 80 characters of a token, for messages.
fn short(text: &str) -> &str {
    text.char_indices()
        .nth(80)
        .map_or(text, |(end, _)| &text[..end])
}

/// A query's fingerprint: 64-bit FNV-1a over its parts, each followed by a byte that
/// never occurs in UTF-8 text (so `("ab", "c")` and `("a", "bc")` differ). Stable
/// across processes and Rust versions, unlike `std`'s hasher.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fingerprint(u64);

impl Fingerprint {
    pub(crate) fn new() -> Fingerprint {
        Fingerprint(0xcbf2_9ce4_8422_2325)
    }

    /// Adds one part.
    pub(crate) fn part(mut self, text: &str) -> Fingerprint {
        for byte in text.bytes().chain([0xff]) {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self
    }

    pub(crate) fn finish(self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_text_and_serde() {
        for continuation in [
            ContinuationToken::new("Sales", Some("empid_000223".into())),
            ContinuationToken::new("p.1", None),
            ContinuationToken::new("", Some(String::new())),
        ] {
            let token = PageToken::new(0xdead_beef, 1_234, continuation);
            let text = token.to_string();
            assert!(text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)));
            assert_eq!(text.parse::<PageToken>().unwrap(), token);
            let json = serde_json::to_string(&token).unwrap();
            assert_eq!(json, format!("\"{text}\""));
            assert_eq!(serde_json::from_str::<PageToken>(&json).unwrap(), token);
        }
        let end = PageToken::end(0xdead_beef, 7);
        assert_eq!(end.to_string(), "pt1.00000000deadbeef.7.end");
        assert_eq!(end.to_string().parse::<PageToken>().unwrap(), end);
        assert!(end.is_end());
    }

    #[test]
    fn malformed_tokens_are_invalid_continuation_tokens() {
        for text in [
            "",
            "pt1",
            "pt2.00000000000000ff.0.ct1.AA",
            "pt1.ff.0.ct1.AA",
            "pt1.00000000000000fg.0.ct1.AA",
            "pt1.00000000000000ff.-1.ct1.AA",
            "pt1.00000000000000ff.1",
            "pt1.00000000000000ff.1.ct2.AA",
        ] {
            let err = text.parse::<PageToken>().unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidContinuationToken, "{text}");
        }
        assert!(serde_json::from_str::<PageToken>("\"pt1\"").is_err());
    }

    #[test]
    fn check_refuses_other_queries() {
        let token = PageToken::new(7, 0, ContinuationToken::new("a", None));
        assert!(token.check(7).is_ok());
        assert_eq!(
            token.check(8).unwrap_err().kind(),
            ErrorKind::InvalidContinuationToken
        );
    }

    #[test]
    fn fingerprint_separates_parts() {
        let a = Fingerprint::new().part("ab").part("c").finish();
        let b = Fingerprint::new().part("a").part("bc").finish();
        assert_ne!(a, b);
        assert_eq!(a, Fingerprint::new().part("ab").part("c").finish());
    }
}
