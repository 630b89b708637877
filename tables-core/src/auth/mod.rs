//! Authentication with the account key, one implementation for both sides: the
//! client signs requests with it, the server (`tables-server`) checks them.
//!
//! - [`AccountKey`]: the account name and its HMAC-SHA256 key (never shown).
//! - [`shared_key_authorization`]: the `Authorization` header of a Table service
//!   request (SharedKey or SharedKeyLite) over its [`request_canonical_resource`]
//!   (the path exactly as sent, and `comp`).
//! - [`Authorization::parse`]: that header read back, on the server's side.
//! - [`SasToken`], [`TableSasFields`], [`AccountSasFields`]: shared access
//!   signatures and what their signatures cover; [`SasKeyRange`]: the key range a
//!   table SAS grants; [`format_sas_time`], [`parse_sas_time`]: their times.

mod jwt;
mod key;
mod key_range;
mod sas;
mod sas_time;
mod shared_key;

pub use jwt::Jwt;
pub use key::AccountKey;
pub use key_range::SasKeyRange;
pub use sas::{AccountSasFields, SasToken, TableSasFields, QUERY_VALUE, SAS_PARAMETERS};
pub use sas_time::{format_sas_time, parse_sas_time};
pub use shared_key::{
    canonical_resource, query_pairs, request_canonical_resource, shared_key_authorization,
};

/// The development storage account (Azurite, the storage emulator and
/// `tables-server`): `UseDevelopmentStorage=true` signs in as it.
pub const DEVELOPMENT_ACCOUNT: &str = "devstoreaccount1";

/// The development storage account's well-known key: public (the emulator's
/// documentation prints it), so it is no secret; use it to reach an emulator on any
/// port, e.g. `AccountName=devstoreaccount1;AccountKey=<this>;TableEndpoint=
/// http://127.0.0.1:10902/devstoreaccount1`.
pub const DEVELOPMENT_ACCOUNT_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// The scheme of an account-key `Authorization` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedKeyScheme {
    /// `SharedKey`: signs the method, `Content-MD5`, `Content-Type`, the date and
    /// the resource.
    SharedKey,
    /// `SharedKeyLite`: signs the date and the resource.
    SharedKeyLite,
}

/// An `Authorization: SharedKey{,Lite} {account}:{signature}` header, read.
///
/// ```
/// use tables_core::auth::{Authorization, SharedKeyScheme};
///
/// let header = Authorization::parse("SharedKeyLite acct:c2ln").unwrap();
/// assert_eq!(header.scheme, SharedKeyScheme::SharedKeyLite);
/// assert_eq!((header.account, header.signature), ("acct", "c2ln"));
/// assert!(Authorization::parse("Bearer eyJ0").is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Authorization<'a> {
    /// The scheme.
    pub scheme: SharedKeyScheme,
    /// The account the request claims to come from.
    pub account: &'a str,
    /// The base64 signature.
    pub signature: &'a str,
}

impl<'a> Authorization<'a> {
    /// Reads the header's value; `None` if it is not an account-key scheme or is
    /// malformed (no `account:signature`, an empty part).
    pub fn parse(value: &'a str) -> Option<Authorization<'a>> {
        let (scheme, rest) = value.trim().split_once(' ')?;
        let scheme = match scheme {
            "SharedKey" => SharedKeyScheme::SharedKey,
            "SharedKeyLite" => SharedKeyScheme::SharedKeyLite,
            _ => return None,
        };
        let (account, signature) = rest.trim().rsplit_once(':')?;
        if account.is_empty() || signature.is_empty() {
            return None;
        }
        Some(Authorization {
            scheme,
            account,
            signature,
        })
    }

    /// Whether the signature is `key`'s over a request with these parts (as
    /// [`shared_key_authorization`] takes them).
    pub fn verify(
        &self,
        key: &AccountKey,
        method: &str,
        content_md5: &str,
        content_type: &str,
        date: &str,
        canonical_resource: &str,
    ) -> bool {
        let expected = shared_key_authorization(
            key,
            self.scheme == SharedKeyScheme::SharedKeyLite,
            method,
            content_md5,
            content_type,
            date,
            canonical_resource,
        );
        let signature = expected.rsplit(':').next().unwrap_or_default();
        constant_time_eq(signature.as_bytes(), self.signature.as_bytes())
    }
}

/// Compares two byte strings in time that depends on their lengths only.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_accepts_its_own_signature_only() {
        let key = AccountKey::new(DEVELOPMENT_ACCOUNT, DEVELOPMENT_ACCOUNT_KEY).unwrap();
        let date = "Mon, 01 Jan 2024 00:00:00 GMT";
        let resource = canonical_resource(DEVELOPMENT_ACCOUNT, "/devstoreaccount1/Tables", None);
        for lite in [false, true] {
            let header = shared_key_authorization(&key, lite, "GET", "", "", date, &resource);
            let parsed = Authorization::parse(&header).unwrap();
            assert!(parsed.verify(&key, "GET", "", "", date, &resource));
            assert!(!parsed.verify(
                &key,
                "GET",
                "",
                "",
                "Tue, 02 Jan 2024 00:00:00 GMT",
                &resource
            ));
            let other = AccountKey::new(DEVELOPMENT_ACCOUNT, "c2VjcmV0").unwrap();
            assert!(!parsed.verify(&other, "GET", "", "", date, &resource));
        }
        assert!(Authorization::parse("SharedKey :abc").is_none());
        assert!(Authorization::parse("SharedKey acct:").is_none());
        assert!(Authorization::parse("SharedKey acct").is_none());
    }
}
