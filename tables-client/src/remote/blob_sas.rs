//! Making Blob service SAS tokens for one container: [`ContainerSasBuilder`].
//!
//! A container SAS lets whoever holds it read or write the blobs of one container
//! (the blob companion of a table SAS) without the account key. Signed with the
//! layout of version 2018-11-09
//! (<https://learn.microsoft.com/rest/api/storageservices/create-service-sas>).

use tables_core::blob::validate_container_name;
use tables_core::{DateTime, Error, ErrorKind, Result};

use super::credential::{AccountKey, SasToken};
use super::sas::{signed_window, SasProtocol};

/// The signed version (`sv`) whose string-to-sign this builder writes.
const VERSION: &str = "2018-11-09";

/// What a container SAS allows, each on the container's blobs.
///
/// ```
/// use tables_client::remote::ContainerSasPermissions;
///
/// assert_eq!(ContainerSasPermissions::all().as_str()?, "racwdl");
/// assert_eq!(ContainerSasPermissions::read_only().as_str()?, "rl");
/// # Ok::<(), tables_client::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ContainerSasPermissions {
    /// `r`: read blobs and their properties.
    pub read: bool,
    /// `a`: add blocks (append).
    pub add: bool,
    /// `c`: create new blobs.
    pub create: bool,
    /// `w`: write blobs (create or replace, blocks included).
    pub write: bool,
    /// `d`: delete blobs.
    pub delete: bool,
    /// `l`: list the container's blobs.
    pub list: bool,
}

impl ContainerSasPermissions {
    /// Every permission: `racwdl`.
    pub const fn all() -> ContainerSasPermissions {
        ContainerSasPermissions {
            read: true,
            add: true,
            create: true,
            write: true,
            delete: true,
            list: true,
        }
    }

    /// Reading and listing: `rl`.
    pub const fn read_only() -> ContainerSasPermissions {
        ContainerSasPermissions {
            read: true,
            add: false,
            create: false,
            write: false,
            delete: false,
            list: true,
        }
    }

    /// The `sp` value: the granted letters in `racwdl` order.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] if no permission is set.
    pub fn as_str(&self) -> Result<String> {
        let letters: String = [
            (self.read, 'r'),
            (self.add, 'a'),
            (self.create, 'c'),
            (self.write, 'w'),
            (self.delete, 'd'),
            (self.list, 'l'),
        ]
        .iter()
        .filter(|(granted, _)| *granted)
        .map(|(_, letter)| *letter)
        .collect();
        if letters.is_empty() {
            return Err(Error::local(
                ErrorKind::InvalidInput,
                "the SAS permissions are empty; set at least one of read, add, create, write, \
                 delete, list",
            ));
        }
        Ok(letters)
    }
}

/// Builds and signs a service SAS for one blob container.
///
/// ```
/// use tables_client::remote::{
///     AccountKey, ContainerSasBuilder, ContainerSasPermissions, Credential, RemoteBlobStore,
///     DEVELOPMENT_ACCOUNT_KEY,
/// };
/// use tables_client::DateTime;
///
/// let key = AccountKey::new("devstoreaccount1", DEVELOPMENT_ACCOUNT_KEY)?;
/// let expiry = DateTime::from_ymd_hms(2030, 1, 1, 0, 0, 0).expect("a valid date");
/// let token = ContainerSasBuilder::new("photos", ContainerSasPermissions::read_only(), expiry)
///     .sign(&key)?;
/// assert_eq!(token.permissions(), Some("rl"));
/// let store = RemoteBlobStore::builder("http://127.0.0.1:10000/devstoreaccount1")
///     .credential(Credential::Sas(token))
///     .build()?;
/// # let _ = store;
/// # Ok::<(), tables_client::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ContainerSasBuilder {
    container: String,
    permissions: ContainerSasPermissions,
    expiry: DateTime,
    start: Option<DateTime>,
    protocol: Option<SasProtocol>,
}

impl ContainerSasBuilder {
    /// A token for `container` granting `permissions` until `expiry`. Nothing is
    /// checked until [`ContainerSasBuilder::sign`].
    pub fn new(
        container: impl Into<String>,
        permissions: ContainerSasPermissions,
        expiry: DateTime,
    ) -> ContainerSasBuilder {
        ContainerSasBuilder {
            container: container.into(),
            permissions,
            expiry,
            start: None,
            protocol: None,
        }
    }

    /// When the token becomes valid (`st`; default: as soon as it is made).
    #[must_use]
    pub fn start(mut self, start: DateTime) -> ContainerSasBuilder {
        self.start = Some(start);
        self
    }

    /// The protocols allowed (`spr`; default: not restricted by the token).
    #[must_use]
    pub fn protocol(mut self, protocol: SasProtocol) -> ContainerSasBuilder {
        self.protocol = Some(protocol);
        self
    }

    /// Signs the token with the account key.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] for an invalid container name, no permission, or an
    /// expiry not after the start or already past (then with
    /// [`AuthHint::SasExpired`](crate::AuthHint::SasExpired)).
    pub fn sign(&self, key: &AccountKey) -> Result<SasToken> {
        self.sign_at(key, DateTime::now())
    }

    fn sign_at(&self, key: &AccountKey, now: DateTime) -> Result<SasToken> {
        validate_container_name(&self.container)
            .map_err(|e| Error::local(ErrorKind::InvalidInput, e.message().to_owned()))?;
        let permissions = self.permissions.as_str()?;
        let (expiry, start) = signed_window(self.expiry, self.start, now)?;
        let protocol = self.protocol.map(SasProtocol::as_str);
        let resource = format!("/blob/{}/{}", key.account(), self.container);
        // permissions, start, expiry, resource, identifier, IP, protocol, version,
        // signed resource, snapshot time, then the five response-header overrides.
        let string_to_sign = [
            permissions.as_str(),
            start.as_deref().unwrap_or(""),
            &expiry,
            &resource,
            "",
            "",
            protocol.unwrap_or(""),
            VERSION,
            "c",
            "",
            "",
            "",
            "",
            "",
            "",
        ]
        .join("\n");
        let signature = key.sign(&string_to_sign);
        let fields = [
            ("sv", Some(VERSION)),
            ("sr", Some("c")),
            ("sp", Some(permissions.as_str())),
            ("st", start.as_deref()),
            ("se", Some(expiry.as_str())),
            ("spr", protocol),
            ("sig", Some(signature.as_str())),
        ];
        let params = fields
            .into_iter()
            .filter_map(|(name, value)| value.map(|v| (name.to_owned(), v.to_owned())))
            .collect();
        SasToken::from_params(params)
    }
}

#[cfg(test)]
mod tests {
    use super::super::connection::DEV_ACCOUNT_KEY;
    use super::*;

    #[test]
    fn tokens_carry_the_container_resource_and_permissions() {
        let key = AccountKey::new("devstoreaccount1", DEV_ACCOUNT_KEY).unwrap();
        let expiry = DateTime::from_ymd_hms(2030, 1, 1, 0, 0, 0).unwrap();
        let now = DateTime::from_ymd_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let token = ContainerSasBuilder::new("photos", ContainerSasPermissions::all(), expiry)
            .sign_at(&key, now)
            .unwrap();
        let query = token.expose_query();
        assert!(
            query.starts_with("sv=2018-11-09&sr=c&sp=racwdl&se=2030-01-01T00%3A00%3A00Z&sig="),
            "{query}"
        );
        let other = ContainerSasBuilder::new("videos", ContainerSasPermissions::all(), expiry)
            .sign_at(&key, now)
            .unwrap();
        assert_ne!(token.signature_forms(), other.signature_forms());
        for bad in [
            ContainerSasBuilder::new("Photos", ContainerSasPermissions::all(), expiry),
            ContainerSasBuilder::new("photos", ContainerSasPermissions::default(), expiry),
            ContainerSasBuilder::new("photos", ContainerSasPermissions::all(), now),
        ] {
            let err = bad.sign_at(&key, now).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
        }
    }
}
