//! The account key: an HMAC-SHA256 key that signs requests and SAS tokens, and
//! checks their signatures on the server's side.

use std::fmt;

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::error::{Error, ErrorKind, Result};

const REDACTED: &str = "<redacted>";

/// Base64 as account keys are written: the standard alphabet, padding optional.
const KEY_BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

fn invalid(message: impl Into<String>) -> Error {
    Error::local(ErrorKind::InvalidInput, message)
}

/// A storage account name and its key, ready to sign requests.
///
/// The raw key is not kept: only the HMAC-SHA256 state keyed with it, which signing
/// clones. `Debug` shows the account and `key: "<redacted>"`.
#[derive(Clone)]
pub struct AccountKey {
    account: String,
    mac: Hmac<Sha256>,
}

impl AccountKey {
    /// The key `base64_key` (as the portal shows it, or the emulator's well-known key)
    /// of the storage account `account`.
    ///
    /// ```
    /// use tables_core::{auth::AccountKey, ErrorKind};
    ///
    /// let key = AccountKey::new("myaccount", "c2VjcmV0LWtleQ==")?;
    /// assert_eq!(key.account(), "myaccount");
    /// assert_eq!(format!("{key:?}"), r#"AccountKey { account: "myaccount", key: "<redacted>" }"#);
    /// let err = AccountKey::new("myaccount", "not base64!").unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::InvalidInput);
    /// assert!(!err.to_string().contains("not base64!"));
    /// # Ok::<(), tables_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] if `account` is empty or holds whitespace or
    /// control characters, or if the key is empty or not standard base64. The
    /// message never repeats the key.
    pub fn new(account: &str, base64_key: &str) -> Result<AccountKey> {
        if account.is_empty() {
            return Err(invalid("the account name is empty"));
        }
        if account.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(invalid(format!(
                "the account name {account:?} holds whitespace or control characters"
            )));
        }
        let bytes = KEY_BASE64
            .decode(base64_key.trim().as_bytes())
            .map_err(|_| {
                invalid(format!(
                    "the key of account {account:?} is not base64; copy the key exactly \
                     as the portal (or `az storage account keys list`) shows it"
                ))
            })?;
        if bytes.is_empty() {
            return Err(invalid(format!("the key of account {account:?} is empty")));
        }
        let mac = <Hmac<Sha256> as Mac>::new_from_slice(&bytes).map_err(|_| {
            invalid(format!(
                "the key of account {account:?} cannot key HMAC-SHA256"
            ))
        })?;
        Ok(AccountKey {
            account: account.to_owned(),
            mac,
        })
    }

    /// The account name.
    pub fn account(&self) -> &str {
        &self.account
    }

    /// `base64(HMAC-SHA256(key, string_to_sign))`.
    pub fn sign(&self, string_to_sign: &str) -> String {
        let mut out = String::with_capacity(44);
        self.sign_into(string_to_sign, &mut out);
        out
    }

    /// Whether `signature` is this key's over `string_to_sign`, compared in time that
    /// does not depend on where they differ.
    pub fn signed(&self, string_to_sign: &str, signature: &str) -> bool {
        super::constant_time_eq(self.sign(string_to_sign).as_bytes(), signature.as_bytes())
    }

    /// [`AccountKey::sign`], appended to `out`.
    pub fn sign_into(&self, string_to_sign: &str, out: &mut String) {
        let mut mac = self.mac.clone();
        mac.update(string_to_sign.as_bytes());
        base64::engine::general_purpose::STANDARD.encode_string(mac.finalize().into_bytes(), out);
    }
}

impl fmt::Debug for AccountKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccountKey")
            .field("account", &self.account)
            .field("key", &REDACTED)
            .finish()
    }
}
