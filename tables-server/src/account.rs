//! Storage accounts the server knows: a name and one or two keys each.

use std::fmt;

use tables_core::auth::{AccountKey, DEVELOPMENT_ACCOUNT, DEVELOPMENT_ACCOUNT_KEY};
use tables_core::{Error, ErrorKind, Result};

/// A storage account the server serves: its name and its keys (a request signed
/// with any of them is accepted, as Azure accepts both of an account's keys).
///
/// `Debug` shows the name and how many keys, never a key.
///
/// ```
/// use tables_server::Account;
///
/// let account = Account::new("acct1", "c2VjcmV0MQ==")?;
/// assert_eq!(account.name(), "acct1");
/// assert_eq!(format!("{account:?}"), r#"Account { name: "acct1", keys: 1 }"#);
/// # Ok::<(), tables_core::Error>(())
/// ```
#[derive(Clone)]
pub struct Account {
    name: String,
    keys: Vec<AccountKey>,
    /// The first key as given (base64), for the connection string the server prints.
    key_text: String,
}

impl Account {
    /// An account with one key (base64, as the portal shows keys).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] for a name that is not 3 to 24 lowercase letters
    /// and digits (the service's rule; `devstoreaccount1` passes), or a key that is
    /// not base64. The message never repeats the key.
    pub fn new(name: &str, base64_key: &str) -> Result<Account> {
        let valid = (3..=24).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        if !valid {
            return Err(Error::local(
                ErrorKind::InvalidInput,
                format!(
                    "{name:?} is not a storage account name: use 3 to 24 lowercase letters and digits"
                ),
            ));
        }
        Ok(Account {
            name: name.to_owned(),
            keys: vec![AccountKey::new(name, base64_key)?],
            key_text: base64_key.trim().to_owned(),
        })
    }

    /// The development account every emulator knows: `devstoreaccount1` with its
    /// well-known key.
    pub fn development() -> Account {
        // The constant key is valid base64 and the name a valid account name.
        Account::new(DEVELOPMENT_ACCOUNT, DEVELOPMENT_ACCOUNT_KEY)
            .unwrap_or_else(|_| unreachable!("the development account is valid"))
    }

    /// Adds a second key (both are accepted).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] if the key is not base64.
    pub fn with_secondary_key(mut self, base64_key: &str) -> Result<Account> {
        self.keys.push(AccountKey::new(&self.name, base64_key)?);
        Ok(self)
    }

    /// The account name.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn keys(&self) -> &[AccountKey] {
        &self.keys
    }

    /// The first key, base64, as given: for connection strings.
    pub(crate) fn key_text(&self) -> &str {
        &self.key_text
    }

    /// Reads accounts written as `name:key[:key2]`, several separated by `;`: the
    /// format of Azurite's `AZURITE_ACCOUNTS` variable, and of `--account`.
    ///
    /// ```
    /// use tables_server::Account;
    ///
    /// let accounts = Account::parse_list("acct1:c2VjcmV0MQ==:c2VjcmV0Mg==;acct2:c2VjcmV0Mw==")?;
    /// assert_eq!(accounts.iter().map(Account::name).collect::<Vec<_>>(), ["acct1", "acct2"]);
    /// # Ok::<(), tables_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] naming the entry that is not `name:key[:key2]`
    /// (without repeating any key).
    pub fn parse_list(text: &str) -> Result<Vec<Account>> {
        let mut accounts = Vec::new();
        for entry in text.split(';').map(str::trim).filter(|e| !e.is_empty()) {
            let mut parts = entry.split(':');
            let name = parts.next().unwrap_or_default();
            let (Some(key), second, None) = (parts.next(), parts.next(), parts.next()) else {
                return Err(Error::local(
                    ErrorKind::InvalidInput,
                    format!("the account entry for {name:?} is not `name:key` or `name:key1:key2`"),
                ));
            };
            let mut account = Account::new(name, key)?;
            if let Some(second) = second {
                account = account.with_secondary_key(second)?;
            }
            accounts.push(account);
        }
        Ok(accounts)
    }
}

impl fmt::Debug for Account {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Account")
            .field("name", &self.name)
            .field("keys", &self.keys.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_entries_are_refused_without_echoing_keys() {
        for bad in [
            "acct1",
            "acct1:not base64!",
            "Upper:c2VjcmV0",
            "a:c2VjcmV0",
            "acct1:c2Vj:c2Vj:c2Vj",
        ] {
            let err = Account::parse_list(bad).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{bad}");
            assert!(!err.to_string().contains("not base64!"), "{err}");
        }
        assert!(Account::parse_list("").unwrap().is_empty());
        assert_eq!(Account::development().name(), "devstoreaccount1");
    }
}
