//! Making table service SAS tokens: [`TableSasBuilder`].
//!
//! A service SAS grants access to one table, with a set of permissions, for a time
//! window, optionally limited to a key range, an IP range or HTTPS. It is signed with
//! the account key, so whoever holds the key can hand out narrower access (the design
//! guide's "per-user partition" pattern) without sharing the key.

use std::cmp::Ordering;
use std::net::IpAddr;
use std::str::FromStr;

use tables_core::key::{
    cmp_ordinal, validate_partition_key, validate_row_key, validate_table_name,
};
use tables_core::{AuthHint, DateTime, Error, ErrorKind, Result};

use tables_core::auth::{format_sas_time, TableSasFields};

use super::credential::{AccountKey, SasToken};

/// The default signed version (`sv`).
const DEFAULT_VERSION: &str = "2019-02-02";
/// The first version whose string-to-sign has the layout this builder writes.
const OLDEST_VERSION: &str = "2015-04-05";

fn invalid(message: impl Into<String>) -> Error {
    Error::local(ErrorKind::InvalidInput, message)
}

/// What a table SAS allows: `r` query and get, `a` insert (and the insert half of an
/// upsert), `u` update and merge, `d` delete.
///
/// ```
/// use tables_client::remote::TableSasPermissions;
///
/// assert_eq!(TableSasPermissions::all().as_str()?, "raud");
/// assert_eq!(TableSasPermissions::read_only().as_str()?, "r");
/// let upsert = TableSasPermissions { add: true, update: true, ..Default::default() };
/// assert_eq!(upsert.as_str()?, "au");
/// assert!(TableSasPermissions::default().as_str().is_err());
/// # Ok::<(), tables_client::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct TableSasPermissions {
    /// `r`: query entities and get one entity.
    pub read: bool,
    /// `a`: insert entities (upserts need `a` and `u`).
    pub add: bool,
    /// `u`: replace and merge entities.
    pub update: bool,
    /// `d`: delete entities.
    pub delete: bool,
}

impl TableSasPermissions {
    /// Every permission: `raud`.
    pub const fn all() -> TableSasPermissions {
        TableSasPermissions {
            read: true,
            add: true,
            update: true,
            delete: true,
        }
    }

    /// Reading only: `r`.
    pub const fn read_only() -> TableSasPermissions {
        TableSasPermissions {
            read: true,
            add: false,
            update: false,
            delete: false,
        }
    }

    /// Whether no permission is set.
    pub const fn is_empty(&self) -> bool {
        !(self.read || self.add || self.update || self.delete)
    }

    /// The `sp` value: the granted letters in `raud` order.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] if no permission is set (the token would grant
    /// nothing).
    pub fn as_str(&self) -> Result<&'static str> {
        const LETTERS: [&str; 16] = [
            "", "d", "u", "ud", "a", "ad", "au", "aud", "r", "rd", "ru", "rud", "ra", "rad", "rau",
            "raud",
        ];
        let index = usize::from(self.read) << 3
            | usize::from(self.add) << 2
            | usize::from(self.update) << 1
            | usize::from(self.delete);
        match LETTERS.get(index) {
            Some(letters) if !letters.is_empty() => Ok(letters),
            _ => Err(invalid(
                "the SAS permissions are empty; set at least one of read, add, update, delete",
            )),
        }
    }
}

/// Which protocols a SAS allows (`spr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SasProtocol {
    /// HTTPS only (`https`).
    HttpsOnly,
    /// HTTPS and plain HTTP (`https,http`).
    HttpsAndHttp,
}

impl SasProtocol {
    /// The `spr` value.
    pub const fn as_str(self) -> &'static str {
        match self {
            SasProtocol::HttpsOnly => "https",
            SasProtocol::HttpsAndHttp => "https,http",
        }
    }
}

/// Builds and signs a service SAS for one table.
///
/// Times are sent to the second (fractions are dropped). The signed version
/// defaults to `2019-02-02`.
///
/// A read-only token for one customer's partition, valid until 2030:
///
/// ```
/// use tables_client::remote::{
///     AccountKey, Credential, RemoteEngine, SasProtocol, TableSasBuilder, TableSasPermissions,
/// };
/// use tables_client::DateTime;
///
/// let key = AccountKey::new(
///     "devstoreaccount1",
///     "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
/// )?;
/// let expiry = DateTime::from_ymd_hms(2030, 1, 1, 0, 0, 0).expect("a valid date");
/// let token = TableSasBuilder::new("orders", TableSasPermissions::read_only(), expiry)
///     .start_key("customer-42", None)
///     .end_key("customer-42", None)
///     .protocol(SasProtocol::HttpsAndHttp)
///     .sign(&key)?;
/// assert_eq!(token.permissions(), Some("r"));
/// assert_eq!(token.start_key(), Some(("customer-42".to_owned(), None)));
/// assert!(token.expose_query().contains("se=2030-01-01T00%3A00%3A00Z"));
///
/// // Whoever holds the token can read that partition, and nothing else.
/// let engine = RemoteEngine::builder("http://127.0.0.1:10002/devstoreaccount1")
///     .credential(Credential::Sas(token))
///     .build()?;
/// # let _ = engine;
/// # Ok::<(), tables_client::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct TableSasBuilder {
    table: String,
    permissions: TableSasPermissions,
    expiry: DateTime,
    start: Option<DateTime>,
    start_key: Option<(String, Option<String>)>,
    end_key: Option<(String, Option<String>)>,
    ip_range: Option<String>,
    protocol: Option<SasProtocol>,
    policy_id: Option<String>,
    version: String,
}

impl TableSasBuilder {
    /// A token for `table` granting `permissions` until `expiry`. Nothing is checked
    /// until [`TableSasBuilder::sign`].
    pub fn new(
        table: impl Into<String>,
        permissions: TableSasPermissions,
        expiry: DateTime,
    ) -> TableSasBuilder {
        TableSasBuilder {
            table: table.into(),
            permissions,
            expiry,
            start: None,
            start_key: None,
            end_key: None,
            ip_range: None,
            protocol: None,
            policy_id: None,
            version: DEFAULT_VERSION.to_owned(),
        }
    }

    /// When the token becomes valid (`st`; default: as soon as it is made). Set it a
    /// few minutes in the past to allow for clock skew.
    #[must_use]
    pub fn start(mut self, start: DateTime) -> TableSasBuilder {
        self.start = Some(start);
        self
    }

    /// The first key the token grants (inclusive): a PartitionKey (`spk`) and
    /// optionally a RowKey within it (`srk`; without it, the partition's first row).
    #[must_use]
    pub fn start_key(mut self, partition_key: &str, row_key: Option<&str>) -> TableSasBuilder {
        self.start_key = Some((partition_key.to_owned(), row_key.map(str::to_owned)));
        self
    }

    /// The last key the token grants (inclusive): a PartitionKey (`epk`) and
    /// optionally a RowKey within it (`erk`; without it, the partition's last row).
    #[must_use]
    pub fn end_key(mut self, partition_key: &str, row_key: Option<&str>) -> TableSasBuilder {
        self.end_key = Some((partition_key.to_owned(), row_key.map(str::to_owned)));
        self
    }

    /// The client addresses allowed (`sip`): one address (`168.1.5.65`) or a range
    /// (`168.1.5.60-168.1.5.70`).
    #[must_use]
    pub fn ip_range(mut self, range: &str) -> TableSasBuilder {
        self.ip_range = Some(range.to_owned());
        self
    }

    /// The protocols allowed (`spr`; default: not restricted by the token).
    #[must_use]
    pub fn protocol(mut self, protocol: SasProtocol) -> TableSasBuilder {
        self.protocol = Some(protocol);
        self
    }

    /// A stored access policy of the table (`si`, set with Set Table ACL). Revoking
    /// the policy revokes the token. With a policy, the permissions may be empty (the
    /// policy gives them); the policy must not set an expiry, as the token always
    /// carries one.
    #[must_use]
    pub fn policy_id(mut self, id: &str) -> TableSasBuilder {
        self.policy_id = Some(id.to_owned());
        self
    }

    /// The signed version (`sv`, default `2019-02-02`).
    #[must_use]
    pub fn version(mut self, version: &str) -> TableSasBuilder {
        self.version = version.to_owned();
        self
    }

    /// Signs the token with the account key.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] if the table name is invalid, no permission is set
    /// (and no policy), the expiry is not after the start, a key bound is not a valid
    /// key or the start key lies after the end key, the IP range or policy id is
    /// malformed, or the version is not `YYYY-MM-DD` from 2015-04-05 on. An expiry
    /// already past (by this machine's clock) is refused the same way, with
    /// [`AuthHint::SasExpired`](crate::AuthHint::SasExpired): the token would be
    /// refused on its first use.
    ///
    /// ```
    /// use tables_client::remote::{AccountKey, TableSasBuilder, TableSasPermissions};
    /// use tables_client::{AuthHint, DateTime, ErrorKind, Origin};
    ///
    /// let key = AccountKey::new("devstoreaccount1", "c2VjcmV0LWtleQ==")?;
    /// let yesterday = DateTime::from_unix_nanos(
    ///     DateTime::now().to_unix_nanos() - 86_400 * 1_000_000_000,
    /// ).expect("in range");
    /// let err = TableSasBuilder::new("orders", TableSasPermissions::read_only(), yesterday)
    ///     .sign(&key)
    ///     .unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::InvalidInput);
    /// assert_eq!(err.auth_hint(), Some(AuthHint::SasExpired));
    /// assert_eq!(err.origin(), Origin::Local);
    /// # Ok::<(), tables_client::Error>(())
    /// ```
    pub fn sign(&self, key: &AccountKey) -> Result<SasToken> {
        self.sign_at(key, DateTime::now())
    }

    /// [`TableSasBuilder::sign`] with `now` as the current time.
    fn sign_at(&self, key: &AccountKey, now: DateTime) -> Result<SasToken> {
        validate_table_name(&self.table).map_err(|e| invalid(e.message().to_owned()))?;
        let permissions = match (self.permissions.as_str(), &self.policy_id) {
            (Ok(letters), _) => letters,
            (Err(_), Some(_)) => "",
            (Err(e), None) => return Err(e),
        };
        let (expiry, start) = signed_window(self.expiry, self.start, now)?;
        self.check_keys()?;
        let ip_range = self.ip_range.as_deref().map(check_ip_range).transpose()?;
        if let Some(id) = &self.policy_id {
            if id.is_empty() || id.chars().count() > 64 {
                return Err(invalid(
                    "the stored access policy id must be 1 to 64 characters long",
                ));
            }
        }
        check_version(&self.version)?;

        let (spk, srk) = split_bound(&self.start_key);
        let (epk, erk) = split_bound(&self.end_key);
        let protocol = self.protocol.map(SasProtocol::as_str);
        let string_to_sign = TableSasFields {
            permissions,
            start: start.as_deref().unwrap_or(""),
            expiry: &expiry,
            table: &self.table,
            policy_id: self.policy_id.as_deref().unwrap_or(""),
            ip_range: ip_range.unwrap_or(""),
            protocol: protocol.unwrap_or(""),
            version: &self.version,
            start_partition_key: spk.unwrap_or(""),
            start_row_key: srk.unwrap_or(""),
            end_partition_key: epk.unwrap_or(""),
            end_row_key: erk.unwrap_or(""),
        }
        .string_to_sign(key.account());
        let signature = key.sign(&string_to_sign);

        let fields = [
            ("sv", Some(self.version.as_str())),
            ("tn", Some(self.table.as_str())),
            ("sp", (!permissions.is_empty()).then_some(permissions)),
            ("st", start.as_deref()),
            ("se", Some(expiry.as_str())),
            ("sip", ip_range),
            ("spr", protocol),
            ("si", self.policy_id.as_deref()),
            ("spk", spk),
            ("srk", srk),
            ("epk", epk),
            ("erk", erk),
            ("sig", Some(signature.as_str())),
        ];
        let params = fields
            .into_iter()
            .filter_map(|(name, value)| value.map(|v| (name.to_owned(), v.to_owned())))
            .collect();
        SasToken::from_params(params)
    }

    fn check_keys(&self) -> Result<()> {
        for (partition_key, row_key) in [&self.start_key, &self.end_key].into_iter().flatten() {
            validate_partition_key(partition_key).map_err(|e| invalid(e.message().to_owned()))?;
            if let Some(row_key) = row_key {
                validate_row_key(row_key).map_err(|e| invalid(e.message().to_owned()))?;
            }
        }
        if let (Some((spk, srk)), Some((epk, erk))) = (&self.start_key, &self.end_key) {
            let order = match cmp_ordinal(spk, epk) {
                Ordering::Equal => match (srk, erk) {
                    (Some(srk), Some(erk)) => cmp_ordinal(srk, erk),
                    // A missing RowKey spans the whole partition.
                    _ => Ordering::Equal,
                },
                other => other,
            };
            if order == Ordering::Greater {
                return Err(invalid(
                    "the SAS start key lies after its end key: the token would grant no key",
                ));
            }
        }
        Ok(())
    }
}

/// The `se` and `st` texts of a SAS valid from `start` (if given) to `expiry`.
///
/// # Errors
///
/// [`ErrorKind::InvalidInput`] when the expiry is not after the start, or not after
/// `now` (with [`AuthHint::SasExpired`]: the token would be refused on first use).
pub(crate) fn signed_window(
    expiry: DateTime,
    start: Option<DateTime>,
    now: DateTime,
) -> Result<(String, Option<String>)> {
    let expiry = format_sas_time(expiry);
    let start = start.map(format_sas_time);
    if let Some(start) = &start {
        // Same fixed-width format: text order is time order.
        if expiry <= *start {
            return Err(invalid(format!(
                "the SAS expiry {expiry} is not after its start {start}: the token would \
                     never be valid; set the expiry after the start"
            )));
        }
    }
    let now_text = format_sas_time(now);
    if expiry <= now_text {
        return Err(invalid(format!(
            "the SAS expiry {expiry} is not in the future (it is now {now_text} by this \
                 machine's clock): the token would be refused on its first use; set an expiry \
                 after now"
        ))
        .with_auth_hint(AuthHint::SasExpired));
    }
    Ok((expiry, start))
}

fn split_bound(bound: &Option<(String, Option<String>)>) -> (Option<&str>, Option<&str>) {
    match bound {
        Some((pk, rk)) => (Some(pk.as_str()), rk.as_deref()),
        None => (None, None),
    }
}

/// Checks `a.b.c.d` or `a.b.c.d-e.f.g.h` (first address not after the second).
fn check_ip_range(range: &str) -> Result<&str> {
    let bad = || {
        invalid(format!(
            "the SAS IP range {range:?} is not an address or `first-last` range of addresses"
        ))
    };
    let (first, last) = range.split_once('-').unwrap_or((range, range));
    let first = IpAddr::from_str(first).map_err(|_| bad())?;
    let last = IpAddr::from_str(last).map_err(|_| bad())?;
    if first.is_ipv4() != last.is_ipv4() || first > last {
        return Err(bad());
    }
    Ok(range)
}

fn check_version(version: &str) -> Result<()> {
    let bytes = version.as_bytes();
    let well_formed = bytes.len() == 10
        && bytes.iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            _ => b.is_ascii_digit(),
        });
    if !well_formed {
        return Err(invalid(format!(
            "the SAS version {version:?} is not of the form YYYY-MM-DD (such as {DEFAULT_VERSION})"
        )));
    }
    if version < OLDEST_VERSION {
        return Err(invalid(format!(
            "the SAS version {version} predates {OLDEST_VERSION}, whose string-to-sign this \
             builder writes; use {DEFAULT_VERSION} or later"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::connection::DEV_ACCOUNT_KEY;
    use super::*;

    fn dev_key() -> AccountKey {
        AccountKey::new("devstoreaccount1", DEV_ACCOUNT_KEY).unwrap()
    }

    fn at(year: i32, month: u32, day: u32) -> DateTime {
        DateTime::from_ymd_hms(year, month, day, 0, 0, 0).unwrap()
    }

    #[test]
    fn protocol_md_test_vector() {
        let token = TableSasBuilder::new("mytable", TableSasPermissions::all(), at(2030, 1, 1))
            .sign(&dev_key())
            .unwrap();
        assert_eq!(
            token.expose_query(),
            "sv=2019-02-02&tn=mytable&sp=raud&se=2030-01-01T00%3A00%3A00Z\
             &sig=VH1kJ2dMcGJPJnFMefVZ3HMd1fedSci%2F031kWIgJz0w%3D"
        );
    }

    #[test]
    fn table_name_is_lowercased_only_in_the_signed_resource() {
        let lower = TableSasBuilder::new("mytable", TableSasPermissions::all(), at(2030, 1, 1))
            .sign(&dev_key())
            .unwrap();
        let mixed = TableSasBuilder::new("MyTable", TableSasPermissions::all(), at(2030, 1, 1))
            .sign(&dev_key())
            .unwrap();
        assert_eq!(mixed.table_name(), Some("MyTable"));
        let sig = |t: &SasToken| t.expose_query().rsplit_once("sig=").unwrap().1.to_owned();
        assert_eq!(sig(&lower), sig(&mixed));
    }

    #[test]
    fn every_field_is_signed_and_round_trips() {
        let expiry = at(2030, 1, 1).with_subsec_ticks(1_234_567).unwrap();
        let token = TableSasBuilder::new("orders", TableSasPermissions::read_only(), expiry)
            .start(at(2024, 6, 1))
            .start_key("a b&c=d+é", Some("r_1"))
            .end_key("a b&c=d+é", None)
            .ip_range("10.0.0.1-10.0.0.9")
            .protocol(SasProtocol::HttpsOnly)
            .policy_id("readers")
            .sign(&dev_key())
            .unwrap();
        let query = token.expose_query();
        assert!(query.contains("spk=a%20b%26c%3Dd%2B%C3%A9"), "{query}");
        assert!(query.contains("se=2030-01-01T00%3A00%3A00Z"), "{query}");
        assert!(query.contains("spr=https&"), "{query}");
        let parsed = SasToken::parse(query).unwrap();
        assert_eq!(parsed.expose_query(), query);
        assert_eq!(
            parsed.start_key(),
            Some(("a b&c=d+é".to_owned(), Some("r_1".to_owned())))
        );
        assert_eq!(parsed.end_key(), Some(("a b&c=d+é".to_owned(), None)));
        assert_eq!(parsed.expiry(), Some(at(2030, 1, 1)));
        assert_eq!(parsed.start(), Some(at(2024, 6, 1)));
        assert_eq!(parsed.permissions(), Some("r"));

        // The signature covers each optional field: changing one changes it.
        let base = TableSasBuilder::new("orders", TableSasPermissions::read_only(), expiry);
        let variants = [
            base.clone(),
            base.clone().start(at(2024, 6, 1)),
            base.clone().start_key("p", None),
            base.clone().start_key("p", Some("r")),
            base.clone().end_key("p", None),
            base.clone().end_key("p", Some("r")),
            base.clone().ip_range("10.0.0.1"),
            base.clone().protocol(SasProtocol::HttpsAndHttp),
            base.clone().policy_id("p"),
            base.clone().version("2020-12-06"),
        ];
        let mut signatures: Vec<String> = variants
            .iter()
            .map(|b| {
                let q = b.sign(&dev_key()).unwrap();
                q.expose_query().rsplit_once("sig=").unwrap().1.to_owned()
            })
            .collect();
        signatures.sort();
        signatures.dedup();
        assert_eq!(signatures.len(), variants.len());
    }

    #[test]
    fn permissions_letters_in_raud_order() {
        for bits in 1u8..16 {
            let p = TableSasPermissions {
                read: bits & 8 != 0,
                add: bits & 4 != 0,
                update: bits & 2 != 0,
                delete: bits & 1 != 0,
            };
            let letters = p.as_str().unwrap();
            let expected: String = [
                (p.read, 'r'),
                (p.add, 'a'),
                (p.update, 'u'),
                (p.delete, 'd'),
            ]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, c)| *c)
            .collect();
            assert_eq!(letters, expected);
        }
        assert!(TableSasPermissions::default().is_empty());
        assert_eq!(
            TableSasPermissions::default().as_str().unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
    }

    #[test]
    fn invalid_builders_are_refused() {
        let ok = || TableSasBuilder::new("orders", TableSasPermissions::all(), at(2030, 1, 1));
        let cases = [
            TableSasBuilder::new("bad name", TableSasPermissions::all(), at(2030, 1, 1)),
            TableSasBuilder::new("orders", TableSasPermissions::default(), at(2030, 1, 1)),
            ok().start(at(2030, 1, 1)),
            ok().start(at(2031, 1, 1)),
            ok().start_key("b", None).end_key("a", None),
            ok().start_key("a", Some("z")).end_key("a", Some("y")),
            ok().start_key("a/b", None),
            ok().end_key("a", Some("x#y")),
            ok().ip_range("not-an-ip"),
            ok().ip_range("10.0.0.9-10.0.0.1"),
            ok().ip_range("10.0.0.1-::1"),
            ok().policy_id(""),
            ok().policy_id(&"p".repeat(65)),
            ok().version("2019-2-2"),
            ok().version("2012-02-12"),
        ];
        for (i, builder) in cases.iter().enumerate() {
            let err = builder.sign(&dev_key()).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "case {i}: {err}");
        }
        // Within one partition, missing RowKeys span it; a policy may give the
        // permissions.
        ok().start_key("a", Some("z"))
            .end_key("a", None)
            .sign(&dev_key())
            .unwrap();
        let with_policy =
            TableSasBuilder::new("orders", TableSasPermissions::default(), at(2030, 1, 1))
                .policy_id("readers")
                .sign(&dev_key())
                .unwrap();
        assert_eq!(with_policy.permissions(), None);
    }

    #[test]
    fn an_expiry_already_past_is_refused_before_anything_is_sent() {
        let now = DateTime::from_ymd_hms(2026, 6, 1, 12, 0, 0).unwrap();
        let builder = |expiry| TableSasBuilder::new("orders", TableSasPermissions::all(), expiry);
        let one_second = DateTime::TICKS_PER_SECOND;
        for expiry in [
            now.checked_add_ticks(-3600 * one_second).unwrap(),
            now,
            // Fractions are dropped: this is `now` on the wire.
            now.checked_add_ticks(one_second / 2).unwrap(),
        ] {
            let err = builder(expiry).sign_at(&dev_key(), now).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
            assert_eq!(err.auth_hint(), Some(AuthHint::SasExpired), "{err}");
            assert_eq!(err.origin(), tables_core::Origin::Local);
            assert_eq!(err.status(), None, "no answer of the service's");
        }
        let soon = now.checked_add_ticks(one_second).unwrap();
        assert!(builder(soon).sign_at(&dev_key(), now).is_ok());
        // A start after the expiry: refused too, without the hint (it is not expiry).
        let err = builder(soon)
            .start(now.checked_add_ticks(2 * one_second).unwrap())
            .sign_at(&dev_key(), now)
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert_eq!(err.auth_hint(), None);
    }
}
