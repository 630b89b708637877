//! The Authorization headers the remote engine signs: the Table service's
//! ([`table_authorization`], SharedKey and SharedKeyLite, over
//! `tables_core::auth::request_canonical_resource`, the rule the server checks
//! with) and the Blob service's SharedKey.

use reqwest::header::HeaderMap;
use reqwest::Url;

use tables_core::auth::{
    canonical_resource, request_canonical_resource, shared_key_authorization, AccountKey,
};

/// The `Authorization` header the remote engine sends on a Table service request
/// signed with the account key (SharedKeyLite when `lite`): over the method, the
/// `Content-Type` sent (empty if none), the `x-ms-date` value and the canonicalized
/// resource of `url` exactly as it goes on the wire (its path, and its `comp`
/// parameter) in `account` (the endpoint's, also for its secondary location), as
/// `tables_core::auth::request_canonical_resource` makes it. The engine sends no
/// `Content-MD5`.
///
/// ```
/// use tables_client::remote::{table_authorization, AccountKey, DEVELOPMENT_ACCOUNT_KEY};
///
/// let key = AccountKey::new("devstoreaccount1", DEVELOPMENT_ACCOUNT_KEY)?;
/// let url = reqwest::Url::parse("http://127.0.0.1:10002/devstoreaccount1/Tables")?;
/// let date = "Mon, 01 Jan 2024 00:00:00 GMT";
/// let header = table_authorization(&key, false, "GET", "devstoreaccount1", &url, "", date);
/// // docs/protocol.md §3.2, signature 1.
/// assert_eq!(header, "SharedKey devstoreaccount1:xTTIoWBK7u+nSgfft7uKiDmecLL9GEiBUE4qVj03gko=");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn table_authorization(
    key: &AccountKey,
    lite: bool,
    method: &str,
    account: &str,
    url: &Url,
    content_type: &str,
    date: &str,
) -> String {
    let resource = request_canonical_resource(account, url.path(), url.query().unwrap_or_default());
    shared_key_authorization(key, lite, method, "", content_type, date, &resource)
}

/// The standard headers a Blob service SharedKey signature covers, in order, after
/// the verb; `Content-Length` is the body's (empty when 0) and `Date` is empty (the
/// request carries `x-ms-date`, which is signed among the `x-ms-` headers).
const BLOB_SIGNED_HEADERS: [&str; 11] = [
    "content-encoding",
    "content-language",
    "",
    "content-md5",
    "content-type",
    "",
    "if-modified-since",
    "if-match",
    "if-none-match",
    "if-unmodified-since",
    "range",
];

/// The `Authorization` header value of a Blob service request: SharedKey over the
/// verb, the standard headers, every `x-ms-` header (lowercase, sorted) and the
/// resource with every query parameter:
///
/// ```text
/// VERB \n Content-Encoding \n Content-Language \n Content-Length \n Content-MD5 \n
/// Content-Type \n Date \n If-Modified-Since \n If-Match \n If-None-Match \n
/// If-Unmodified-Since \n Range \n CanonicalizedHeaders CanonicalizedResource
/// ```
///
/// An account key given as SharedKeyLite signs blob requests this way too: the same
/// key, the stronger scheme, and the one every emulator checks.
///
/// See <https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key>.
pub(crate) fn blob_shared_key_authorization(
    key: &AccountKey,
    method: &str,
    headers: &HeaderMap,
    content_length: usize,
    account: &str,
    url: &Url,
) -> String {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    };
    let mut string_to_sign = String::with_capacity(256);
    string_to_sign.push_str(method);
    string_to_sign.push('\n');
    for (index, name) in BLOB_SIGNED_HEADERS.iter().enumerate() {
        if index == 2 {
            if content_length > 0 {
                string_to_sign.push_str(&content_length.to_string());
            }
        } else if !name.is_empty() {
            string_to_sign.push_str(header(name));
        }
        string_to_sign.push('\n');
    }
    let mut ms_headers: Vec<(&str, &str)> = headers
        .iter()
        .filter(|(name, _)| name.as_str().starts_with("x-ms-"))
        .map(|(name, value)| (name.as_str(), value.to_str().unwrap_or("").trim()))
        .collect();
    ms_headers.sort_unstable_by(|a, b| a.0.cmp(b.0));
    for (name, value) in ms_headers {
        string_to_sign.push_str(name);
        string_to_sign.push(':');
        string_to_sign.push_str(value);
        string_to_sign.push('\n');
    }
    string_to_sign.push_str(&canonical_resource(account, url.path(), None));
    let mut params: Vec<(String, String)> = url
        .query_pairs()
        .map(|(name, value)| (name.to_lowercase(), value.into_owned()))
        .collect();
    params.sort();
    let mut previous: Option<String> = None;
    for (name, value) in params {
        if previous.as_deref() == Some(name.as_str()) {
            string_to_sign.push(',');
        } else {
            string_to_sign.push('\n');
            string_to_sign.push_str(&name);
            string_to_sign.push(':');
        }
        string_to_sign.push_str(&value);
        previous = Some(name);
    }
    let mut authorization = String::with_capacity(account.len() + 56);
    authorization.push_str("SharedKey ");
    authorization.push_str(key.account());
    authorization.push(':');
    key.sign_into(&string_to_sign, &mut authorization);
    authorization
}

#[cfg(test)]
mod tests {
    use super::super::connection::DEV_ACCOUNT_KEY;
    use super::*;

    const DATE: &str = "Mon, 01 Jan 2024 00:00:00 GMT";

    fn dev_key() -> AccountKey {
        AccountKey::new("devstoreaccount1", DEV_ACCOUNT_KEY).unwrap()
    }

    #[test]
    fn every_signed_blob_field_matters() {
        use reqwest::header::HeaderValue;
        let key = dev_key();
        let url = |text: &str| Url::parse(text).unwrap();
        let base_url = "http://127.0.0.1:10000/devstoreaccount1/c/b?comp=block&blockid=AA";
        let mut headers = HeaderMap::new();
        headers.insert("x-ms-date", HeaderValue::from_static(DATE));
        headers.insert("x-ms-version", HeaderValue::from_static("2021-12-02"));
        let sign = |method: &str, headers: &HeaderMap, length: usize, at: &str| {
            blob_shared_key_authorization(
                &key,
                method,
                headers,
                length,
                "devstoreaccount1",
                &url(at),
            )
        };
        let reference = sign("PUT", &headers, 3, base_url);
        assert!(
            reference.starts_with("SharedKey devstoreaccount1:"),
            "{reference}"
        );
        assert_eq!(
            reference,
            sign("PUT", &headers, 3, base_url),
            "deterministic"
        );
        assert_ne!(reference, sign("GET", &headers, 3, base_url));
        assert_ne!(reference, sign("PUT", &headers, 4, base_url));
        assert_ne!(
            reference,
            sign("PUT", &headers, 3, &base_url.replace("AA", "AB"))
        );
        assert_ne!(
            reference,
            sign("PUT", &headers, 3, &base_url.replace("/c/b", "/c/d"))
        );
        for (name, value) in [
            ("if-match", "\"0x1\""),
            ("if-none-match", "*"),
            ("content-type", "application/xml"),
            ("x-ms-range", "bytes=0-1"),
            ("x-ms-blob-type", "BlockBlob"),
            ("range", "bytes=0-1"),
        ] {
            let mut changed = headers.clone();
            changed.insert(name, HeaderValue::from_static(value));
            assert_ne!(reference, sign("PUT", &changed, 3, base_url), "{name}");
        }
        // A header outside the signed set does not change the signature.
        let mut unsigned = headers.clone();
        unsigned.insert("user-agent", HeaderValue::from_static("x"));
        assert_eq!(reference, sign("PUT", &unsigned, 3, base_url));
        // An empty body signs as no length at all.
        assert_eq!(
            sign("PUT", &headers, 0, base_url),
            sign("PUT", &headers, 0, base_url)
        );
    }
}
