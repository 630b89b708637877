//! Shared access signatures, one implementation for both sides: [`SasToken`] (the
//! parameters of a service or account SAS, parsed and re-encoded canonically), the
//! string-to-sign of a table SAS ([`table_sas_string_to_sign`]) and of an account SAS
//! ([`account_sas_string_to_sign`]). The client signs tokens with them and the server
//! (`tables-server`) checks them.

use std::fmt;

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use super::sas_time::parse_sas_time;
use crate::{DateTime, Error, ErrorKind, Result};

const REDACTED: &str = "<redacted>";

/// The query parameters a table or account SAS is made of: what a server takes out
/// of a request's query to read its token.
pub const SAS_PARAMETERS: [&str; 16] = [
    "sv", "ss", "srt", "sp", "st", "se", "sip", "spr", "ses", "tn", "si", "spk", "srk", "epk",
    "erk", "sig",
];

/// What a SAS query value may leave unencoded: ALPHA / DIGIT / `-._~`.
pub const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

fn invalid(message: impl Into<String>) -> Error {
    Error::local(ErrorKind::InvalidInput, message)
}

/// A shared access signature: the query parameters of a service or account SAS.
///
/// Parsed from the text the portal, `az` or `TableSasBuilder` (in `tables-client`)
/// gives; the parameters are kept decoded, and [`SasToken::expose_query`] re-encodes
/// them canonically (every byte outside `A-Z a-z 0-9 - . _ ~` percent-encoded), so a
/// pasted token with a raw `+` or `/` in its signature still reaches the service
/// intact. `Debug` shows every parameter but `sig`.
///
/// ```
/// use tables_core::auth::SasToken;
///
/// let token = SasToken::parse(
///     "?sv=2019-02-02&tn=orders&sp=r&se=2030-01-01T00%3A00%3A00Z\
///      &spk=customer%2042&epk=customer%2042&sig=c2lnbmF0dXJl%2B%2F%3D",
/// )?;
/// assert_eq!(token.table_name(), Some("orders"));
/// assert_eq!(token.permissions(), Some("r"));
/// assert_eq!(token.start_key(), Some(("customer 42".to_owned(), None)));
/// assert_eq!(token.expiry().map(|t| t.to_string()).as_deref(), Some("2030-01-01T00:00:00.0000000Z"));
/// assert!(!format!("{token:?}").contains("c2lnbmF0dXJl"));
/// # Ok::<(), tables_core::Error>(())
/// ```
#[derive(Clone)]
pub struct SasToken {
    /// The canonical encoded query string, without `?`.
    query: String,
    /// The decoded parameters, in the token's order.
    params: Vec<(String, String)>,
}

impl SasToken {
    /// Parses a SAS query string, with or without the leading `?`.
    ///
    /// Parameter names are case-sensitive (`sv`, `sig`, ...); values are
    /// percent-decoded. Empty `&&` segments are ignored.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] if the text is a whole URL rather than its query,
    /// a segment has no `=` or an empty name, a parameter appears twice, a value is
    /// not UTF-8 once decoded, `sig` is missing or empty, or `srk`/`erk` appear
    /// without `spk`/`epk`. Messages name parameters, never the signature.
    pub fn parse(query: &str) -> Result<SasToken> {
        let text = query.trim();
        let text = text.strip_prefix('?').unwrap_or(text);
        let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
        if lower.starts_with("https://") || lower.starts_with("http://") {
            return Err(invalid(
                "the SAS token is a whole URL; pass only its query string (the part after `?`)",
            ));
        }
        let mut params: Vec<(String, String)> = Vec::new();
        for (index, segment) in text.split('&').enumerate() {
            if segment.is_empty() {
                continue;
            }
            let Some((raw_name, raw_value)) = segment.split_once('=') else {
                return Err(invalid(format!(
                    "segment {} of the SAS token is not name=value",
                    index + 1
                )));
            };
            let name = percent_decode_str(raw_name)
                .decode_utf8()
                .map_err(|_| {
                    invalid(format!(
                        "the name of segment {} of the SAS token is not UTF-8",
                        index + 1
                    ))
                })?
                .into_owned();
            if name.is_empty() {
                return Err(invalid(format!(
                    "segment {} of the SAS token has an empty name",
                    index + 1
                )));
            }
            let value = percent_decode_str(raw_value)
                .decode_utf8()
                .map_err(|_| {
                    invalid(format!(
                        "the SAS parameter {name:?} is not UTF-8 once percent-decoded"
                    ))
                })?
                .into_owned();
            if params.iter().any(|(n, _)| *n == name) {
                return Err(invalid(format!(
                    "the SAS parameter {name:?} appears more than once"
                )));
            }
            params.push((name, value));
        }
        SasToken::from_params(params)
    }

    /// A token from decoded parameters (in order); checks them as [`SasToken::parse`]
    /// does.
    pub fn from_params(params: Vec<(String, String)>) -> Result<SasToken> {
        let has = |name: &str| params.iter().any(|(n, _)| n == name);
        match params.iter().find(|(n, _)| n == "sig") {
            None => {
                return Err(invalid(
                    "the SAS token has no `sig` parameter; pass the whole query string \
                     the portal or `az` gave (sv=..&..&sig=..)",
                ))
            }
            Some((_, sig)) if sig.is_empty() => {
                return Err(invalid("the SAS token's `sig` parameter is empty"))
            }
            Some(_) => {}
        }
        if has("srk") && !has("spk") {
            return Err(invalid(
                "the SAS token has `srk` without `spk`: a start RowKey needs its PartitionKey",
            ));
        }
        if has("erk") && !has("epk") {
            return Err(invalid(
                "the SAS token has `erk` without `epk`: an end RowKey needs its PartitionKey",
            ));
        }
        let mut query = String::new();
        for (name, value) in &params {
            if !query.is_empty() {
                query.push('&');
            }
            query.extend(utf8_percent_encode(name, QUERY_VALUE));
            query.push('=');
            query.extend(utf8_percent_encode(value, QUERY_VALUE));
        }
        Ok(SasToken { query, params })
    }

    /// The token as a query string (no leading `?`), every value percent-encoded:
    /// what is appended to request URLs. It holds the signature, so treat it as a
    /// secret: never log it.
    pub fn expose_query(&self) -> &str {
        &self.query
    }

    /// The signature as decoded and as encoded in the query: what to scrub from an
    /// answer that echoes it.
    pub fn signature_forms(&self) -> [String; 2] {
        let sig = self.param("sig").unwrap_or_default();
        [
            sig.to_owned(),
            utf8_percent_encode(sig, QUERY_VALUE).to_string(),
        ]
    }

    /// A parameter by name (case-sensitive), decoded.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The signed version (`sv`).
    pub fn version(&self) -> Option<&str> {
        self.param("sv")
    }

    /// The permissions (`sp`), such as `raud` for a table SAS.
    pub fn permissions(&self) -> Option<&str> {
        self.param("sp")
    }

    /// The table a service SAS is for (`tn`), as written in the token.
    pub fn table_name(&self) -> Option<&str> {
        self.param("tn")
    }

    /// When the token expires (`se`); `None` if absent (a stored access policy may
    /// give it) or not in one of the service's ISO 8601 forms (`YYYY-MM-DD`,
    /// `YYYY-MM-DDThh:mmZ`, `YYYY-MM-DDThh:mm:ssZ`, `YYYY-MM-DDThh:mm:ss.fffffffZ`).
    pub fn expiry(&self) -> Option<DateTime> {
        self.param("se").and_then(parse_sas_time)
    }

    /// When the token becomes valid (`st`), read as [`SasToken::expiry`] is.
    pub fn start(&self) -> Option<DateTime> {
        self.param("st").and_then(parse_sas_time)
    }

    /// The first key the token grants (inclusive): `spk` and, if given, `srk`.
    pub fn start_key(&self) -> Option<(String, Option<String>)> {
        self.key_bound("spk", "srk")
    }

    /// The last key the token grants (inclusive): `epk` and, if given, `erk`.
    pub fn end_key(&self) -> Option<(String, Option<String>)> {
        self.key_bound("epk", "erk")
    }

    fn key_bound(&self, pk: &str, rk: &str) -> Option<(String, Option<String>)> {
        let partition_key = self.param(pk)?;
        Some((partition_key.to_owned(), self.param(rk).map(str::to_owned)))
    }
}

impl fmt::Debug for SasToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("SasToken");
        for (name, value) in &self.params {
            if name == "sig" {
                s.field(name, &REDACTED);
            } else {
                s.field(name, value);
            }
        }
        s.finish()
    }
}

/// The signed fields of a table (service) SAS, decoded; absent fields are empty.
///
/// Its [`TableSasFields::string_to_sign`] is what the signature covers: twelve lines,
/// `sp st se /table/{account}/{table, lowercased} si sip spr sv spk srk epk erk`,
/// joined by newlines (see the service's "Create a service SAS" reference).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableSasFields<'a> {
    /// `sp`: the permissions (`raud` subset); empty when a stored policy gives them.
    pub permissions: &'a str,
    /// `st`: when the token becomes valid.
    pub start: &'a str,
    /// `se`: when the token expires.
    pub expiry: &'a str,
    /// `tn`: the table, as written (lowercased for signing).
    pub table: &'a str,
    /// `si`: the stored access policy's id.
    pub policy_id: &'a str,
    /// `sip`: the allowed address or range.
    pub ip_range: &'a str,
    /// `spr`: `https` or `https,http`.
    pub protocol: &'a str,
    /// `sv`: the signed version.
    pub version: &'a str,
    /// `spk`, `srk`: the first key granted.
    pub start_partition_key: &'a str,
    /// `srk`.
    pub start_row_key: &'a str,
    /// `epk`, `erk`: the last key granted.
    pub end_partition_key: &'a str,
    /// `erk`.
    pub end_row_key: &'a str,
}

impl<'a> TableSasFields<'a> {
    /// The fields of a parsed token (a missing parameter reads as empty).
    pub fn of(token: &'a SasToken) -> TableSasFields<'a> {
        let get = |name: &str| token.param(name).unwrap_or("");
        TableSasFields {
            permissions: get("sp"),
            start: get("st"),
            expiry: get("se"),
            table: get("tn"),
            policy_id: get("si"),
            ip_range: get("sip"),
            protocol: get("spr"),
            version: get("sv"),
            start_partition_key: get("spk"),
            start_row_key: get("srk"),
            end_partition_key: get("epk"),
            end_row_key: get("erk"),
        }
    }

    /// The string the signature covers, for `account`.
    ///
    /// ```
    /// use tables_core::auth::TableSasFields;
    ///
    /// let fields = TableSasFields {
    ///     permissions: "raud",
    ///     expiry: "2030-01-01T00:00:00Z",
    ///     table: "MyTable",
    ///     version: "2019-02-02",
    ///     ..Default::default()
    /// };
    /// assert_eq!(
    ///     fields.string_to_sign("acct"),
    ///     "raud\n\n2030-01-01T00:00:00Z\n/table/acct/mytable\n\n\n\n2019-02-02\n\n\n\n"
    /// );
    /// ```
    pub fn string_to_sign(&self, account: &str) -> String {
        let resource = format!("/table/{account}/{}", self.table.to_ascii_lowercase());
        [
            self.permissions,
            self.start,
            self.expiry,
            &resource,
            self.policy_id,
            self.ip_range,
            self.protocol,
            self.version,
            self.start_partition_key,
            self.start_row_key,
            self.end_partition_key,
            self.end_row_key,
        ]
        .join("\n")
    }
}

/// The first signed version whose account SAS signs the encryption scope (`ses`).
const ACCOUNT_SAS_SCOPE_VERSION: &str = "2020-12-06";

/// The signed fields of an account SAS, decoded; absent fields are empty.
///
/// Its [`AccountSasFields::string_to_sign`] is `account sp ss srt st se sip spr sv`
/// (and `ses` from version 2020-12-06), each line ending in a newline (see the
/// service's "Create an account SAS" reference).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AccountSasFields<'a> {
    /// `sp`: the permissions (`rwdlacu..`).
    pub permissions: &'a str,
    /// `ss`: the services (`t` for tables).
    pub services: &'a str,
    /// `srt`: the resource types (`s` service, `c` container (table), `o` object
    /// (entity)).
    pub resource_types: &'a str,
    /// `st`.
    pub start: &'a str,
    /// `se`.
    pub expiry: &'a str,
    /// `sip`.
    pub ip_range: &'a str,
    /// `spr`.
    pub protocol: &'a str,
    /// `sv`.
    pub version: &'a str,
    /// `ses`: the encryption scope.
    pub encryption_scope: &'a str,
}

impl<'a> AccountSasFields<'a> {
    /// The fields of a parsed token (a missing parameter reads as empty).
    pub fn of(token: &'a SasToken) -> AccountSasFields<'a> {
        let get = |name: &str| token.param(name).unwrap_or("");
        AccountSasFields {
            permissions: get("sp"),
            services: get("ss"),
            resource_types: get("srt"),
            start: get("st"),
            expiry: get("se"),
            ip_range: get("sip"),
            protocol: get("spr"),
            version: get("sv"),
            encryption_scope: get("ses"),
        }
    }

    /// The string the signature covers, for `account`.
    ///
    /// ```
    /// use tables_core::auth::AccountSasFields;
    ///
    /// let fields = AccountSasFields {
    ///     permissions: "rwdlacu",
    ///     services: "t",
    ///     resource_types: "sco",
    ///     expiry: "2030-01-01T00:00:00Z",
    ///     version: "2020-12-06",
    ///     ..Default::default()
    /// };
    /// assert_eq!(
    ///     fields.string_to_sign("acct"),
    ///     "acct\nrwdlacu\nt\nsco\n\n2030-01-01T00:00:00Z\n\n\n2020-12-06\n\n"
    /// );
    /// ```
    pub fn string_to_sign(&self, account: &str) -> String {
        let mut lines = vec![
            account,
            self.permissions,
            self.services,
            self.resource_types,
            self.start,
            self.expiry,
            self.ip_range,
            self.protocol,
            self.version,
        ];
        if self.version >= ACCOUNT_SAS_SCOPE_VERSION {
            lines.push(self.encryption_scope);
        }
        let mut text = lines.join("\n");
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sas_parse_decodes_and_reencodes() {
        let token = SasToken::parse(
            "?sv=2019-02-02&&tn=MyTable&sp=raud&st=2024-01-01&se=2030-01-01T00:00:00Z\
             &spk=a%20b&srk=r%2B1&epk=z&sig=ab+/c%3D",
        )
        .unwrap();
        assert_eq!(token.version(), Some("2019-02-02"));
        assert_eq!(token.table_name(), Some("MyTable"));
        assert_eq!(token.permissions(), Some("raud"));
        assert_eq!(
            token.start_key(),
            Some(("a b".to_owned(), Some("r+1".to_owned())))
        );
        assert_eq!(token.end_key(), Some(("z".to_owned(), None)));
        assert_eq!(token.start(), DateTime::from_ymd_hms(2024, 1, 1, 0, 0, 0));
        assert_eq!(token.expiry(), DateTime::from_ymd_hms(2030, 1, 1, 0, 0, 0));
        assert_eq!(
            token.expose_query(),
            "sv=2019-02-02&tn=MyTable&sp=raud&st=2024-01-01&se=2030-01-01T00%3A00%3A00Z\
             &spk=a%20b&srk=r%2B1&epk=z&sig=ab%2B%2Fc%3D"
        );
        // Parsing the canonical form again changes nothing.
        let again = SasToken::parse(token.expose_query()).unwrap();
        assert_eq!(again.expose_query(), token.expose_query());
    }

    #[test]
    fn sas_accessors_are_none_when_absent_or_unreadable() {
        let token = SasToken::parse("sig=x&se=tomorrow").unwrap();
        assert_eq!(token.permissions(), None);
        assert_eq!(token.table_name(), None);
        assert_eq!(token.version(), None);
        assert_eq!(token.expiry(), None);
        assert_eq!(token.start(), None);
        assert_eq!(token.start_key(), None);
        assert_eq!(token.end_key(), None);
    }

    #[test]
    fn sas_debug_hides_only_the_signature() {
        let token = SasToken::parse("sv=2019-02-02&tn=t1&sp=r&sig=SECRETSIG%2B%3D").unwrap();
        for shown in [format!("{token:?}"), format!("{token:#?}")] {
            assert!(!shown.contains("SECRETSIG"), "{shown}");
            assert!(shown.contains("<redacted>"), "{shown}");
            assert!(
                shown.contains("2019-02-02") && shown.contains("t1"),
                "{shown}"
            );
        }
    }

    #[test]
    fn sas_parse_rejects_malformed_tokens_without_echoing_sig() {
        let cases = [
            "sv=2019-02-02&sp=r",
            "sv=2019-02-02&sig=",
            "sig=SECRETSIG&sig=SECRETSIG",
            "sig=SECRETSIG&novalue",
            "sig=SECRETSIG&=x",
            "sig=SECRETSIG&srk=r",
            "sig=SECRETSIG&erk=r",
            "sig=SECRETSIG&tn=%FF",
            "https://acct.table.core.windows.net/t?sig=SECRETSIG",
            "",
            "?",
        ];
        for case in cases {
            let err = SasToken::parse(case).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{case}");
            let shown = format!("{err} {err:?}");
            assert!(!shown.contains("SECRETSIG"), "{shown}");
        }
    }

    #[test]
    fn signatures_match_the_reference_vectors() {
        let key =
            crate::auth::AccountKey::new("devstoreaccount1", crate::auth::DEVELOPMENT_ACCOUNT_KEY)
                .unwrap();
        let table = TableSasFields {
            permissions: "raud",
            expiry: "2030-01-01T00:00:00Z",
            table: "mytable",
            version: "2019-02-02",
            ..Default::default()
        };
        assert_eq!(
            key.sign(&table.string_to_sign("devstoreaccount1")),
            "VH1kJ2dMcGJPJnFMefVZ3HMd1fedSci/031kWIgJz0w="
        );
        let account = AccountSasFields {
            permissions: "rwdlacu",
            services: "t",
            resource_types: "sco",
            expiry: "2030-01-01T00:00:00Z",
            version: "2020-12-06",
            ..Default::default()
        };
        assert_eq!(
            key.sign(&account.string_to_sign("devstoreaccount1")),
            "mkX9joa5HxyiuCxzA090YZ5rIl1lVWCHUPrO7Y8D2xU="
        );
        // Before 2020-12-06 there is no scope line.
        let older = AccountSasFields {
            version: "2019-02-02",
            ..account
        };
        assert!(!older.string_to_sign("a").ends_with("\n\n"));
        // Parsed back from a token, the fields are the same.
        let token =
            SasToken::parse("sv=2019-02-02&tn=mytable&sp=raud&se=2030-01-01T00%3A00%3A00Z&sig=x")
                .unwrap();
        assert_eq!(TableSasFields::of(&token), table);
    }
}
