//! Client-side encryption of `#[entity(encrypted)]` fields: the design guide's
//! "Encrypt table data", as envelope encryption.
//!
//! - Each encrypted property of each write gets a fresh 256-bit data key; its value
//!   is encrypted with AES-256-GCM (RustCrypto's `aes-gcm`), authenticated together
//!   with the table name, the row's PartitionKey and RowKey and the property name,
//!   so a ciphertext moved to another row, column or table fails to decrypt.
//! - The data key is wrapped by a key-encryption key the application supplies
//!   ([`KeyEncryptionKey`]: a [`LocalKey`], a [`KeyRing`] of current and older keys,
//!   or an implementation over a key vault), and stored, with the wrapping key's id,
//!   beside the ciphertext. Rotating the key-encryption key re-wraps data keys
//!   ([`EncryptingEngine::rewrap_table`]) without re-encrypting any value.
//! - [`TableServiceClient::with_encryption`](crate::TableServiceClient::with_encryption)
//!   puts an [`EncryptingEngine`] over the client's engine: every write path
//!   (writes, transactions, bulk, index copies) passes through it. Without it, an
//!   encrypted field never leaves the process: every engine refuses the sealed
//!   plaintext the derive writes ([`tables_core::sealed`]).
//!
//! A property's stored form (`Edm.Binary`):
//!
//! ```text
//! "\0tblenc1" | key id length (1 byte) | key id | wrapped key length (2 bytes, BE)
//!             | wrapped data key | nonce (12 bytes) | ciphertext and GCM tag
//! ```
//!
//! The authenticated data is `tables-enc-v1\0{table, lowercase}\0{PartitionKey}\0{RowKey}\0{property}`.
//! Keys never appear in `Debug` output or messages.
//!
//! Rows of the legacy client-side encryption (the .NET storage library's
//! `TableEncryptionPolicy`, and azure-cosmosdb-table for Python: the
//! `_ClientEncryptionMetadata1` and `_ClientEncryptionMetadata2` properties) are
//! read too, their content keys unwrapped by
//! [`KeyEncryptionKey::unwrap_legacy_key`]: an existing table's encrypted strings
//! read into `#[entity(encrypted)]` fields, and a row written back is stored in this
//! format. A merge leaves the legacy metadata and the values it did not rewrite;
//! they still read. [`EncryptingEngine::rewrap_table`] moves a whole table to this
//! format.

use std::fmt;
use std::sync::Arc;

use aes_gcm::aead::rand_core::RngCore;
use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use async_trait::async_trait;
use tables_core::sealed::{is_envelope, plain_bytes, seal, unseal, ENVELOPE_MAGIC};
use tables_core::{
    ContinuationToken, DynamicEntity, Engine, EntityKey, Error, ErrorKind, IfMatch, QuerySpec,
    Result, Value, WriteOp,
};

use crate::layer::{row_layer_engine, Applied};
use zeroize::Zeroizing;

mod legacy;

/// The length of a data key and of a [`LocalKey`]: 256 bits.
pub const KEY_BYTES: usize = 32;
/// The authenticated-data prefix of this format.
const AAD_PREFIX: &[u8] = b"tables-enc-v1\0";
const NONCE_BYTES: usize = 12;

fn encryption_error(message: impl Into<String>) -> Error {
    Error::local(ErrorKind::Encryption, message)
}

/// The key that wraps data keys: supplied by the application.
///
/// Implement it over a key vault (wrap and unwrap are async, so a remote call fits)
/// or use a [`LocalKey`] / [`KeyRing`]. `wrap_key` uses the current key, whose id
/// [`KeyEncryptionKey::key_id`] names; `unwrap_key` must accept every key id whose
/// data is still stored (older keys, after a rotation).
///
/// ```
/// use tables_client::encryption::{KeyEncryptionKey, LocalKey};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let kek = LocalKey::new("k1", [7u8; 32])?;
/// let wrapped = kek.wrap_key(&[1u8; 32]).await?;
/// assert_eq!(&kek.unwrap_key("k1", &wrapped).await?[..], &[1u8; 32]);
/// assert!(!format!("{kek:?}").contains('7'));
/// # Ok::<(), tables_client::Error>(())
/// # }).unwrap();
/// ```
#[async_trait]
pub trait KeyEncryptionKey: Send + Sync + fmt::Debug {
    /// The id of the key new data keys are wrapped with (1 to 255 bytes), stored
    /// with every value.
    fn key_id(&self) -> &str;

    /// Wraps a data key with the current key.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Encryption`] (or the key vault's error).
    async fn wrap_key(&self, data_key: &[u8]) -> Result<Vec<u8>>;

    /// Unwraps a data key wrapped by the key `key_id`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Encryption`] for an unknown key id, or a wrapped key that does
    /// not open with that key (a wrong key, altered bytes).
    async fn unwrap_key(&self, key_id: &str, wrapped: &[u8]) -> Result<Zeroizing<Vec<u8>>>;

    /// Unwraps the content key of a row the legacy client-side encryption wrote
    /// (the .NET storage library's `TableEncryptionPolicy`, azure-cosmosdb-table for
    /// Python), wrapped by the key `key_id` with `algorithm` as the row names it
    /// (`A256KW` for Key Vault's symmetric keys, `RSA-OAEP` for its RSA keys, or the
    /// name a custom key gave). Only rows of that format call it.
    ///
    /// [`LocalKey`] unwraps `A256KW` (RFC 3394 AES key wrap) under its own id; a
    /// [`KeyRing`] asks the key with that id. Implement it over a key vault to read
    /// rows whose keys are there.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Encryption`]. By default always: the key doesn't read that
    /// format.
    async fn unwrap_legacy_key(
        &self,
        key_id: &str,
        algorithm: &str,
        wrapped: &[u8],
    ) -> Result<Zeroizing<Vec<u8>>> {
        let _ = wrapped;
        Err(encryption_error(format!(
            "a row of the legacy client-side encryption has its content key wrapped by key \
             {key_id:?} with {algorithm}, and key {:?} doesn't unwrap that format: implement \
             KeyEncryptionKey::unwrap_legacy_key (or, for A256KW, add a LocalKey with that id \
             to a KeyRing)",
            self.key_id()
        )))
    }
}

/// A 256-bit key-encryption key held in memory, wrapping data keys with
/// AES-256-GCM (the key id as authenticated data).
#[derive(Clone)]
pub struct LocalKey {
    id: String,
    key: Zeroizing<[u8; KEY_BYTES]>,
}

impl fmt::Debug for LocalKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalKey")
            .field("id", &self.id)
            .field("key", &"<redacted>")
            .finish()
    }
}

impl LocalKey {
    /// The key `bytes` under the id `id`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Encryption`] for an id that is empty or over 255 bytes.
    pub fn new(id: impl Into<String>, bytes: [u8; KEY_BYTES]) -> Result<LocalKey> {
        let id = id.into();
        if id.is_empty() || id.len() > 255 {
            return Err(encryption_error(format!(
                "a key id is 1 to 255 bytes; {:?} is {}",
                id,
                id.len()
            )));
        }
        Ok(LocalKey {
            id,
            key: Zeroizing::new(bytes),
        })
    }

    /// A new random key under the id `id` (from the operating system's generator).
    ///
    /// # Errors
    ///
    /// As [`LocalKey::new`].
    pub fn generate(id: impl Into<String>) -> Result<LocalKey> {
        let mut bytes = Zeroizing::new([0u8; KEY_BYTES]);
        OsRng.fill_bytes(&mut bytes[..]);
        LocalKey::new(id, *bytes)
    }

    /// Refuses a `what` (a data key, a legacy content key) wrapped by another key.
    fn check_id(&self, key_id: &str, what: &str) -> Result<()> {
        if key_id == self.id {
            return Ok(());
        }
        Err(encryption_error(format!(
            "the {what} was wrapped by key {key_id:?}, and this client holds key {:?}: give \
             it that key too (KeyRing)",
            self.id
        )))
    }

    fn cipher(&self) -> Aes256Gcm {
        Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(&self.key[..]))
    }
}

#[async_trait]
impl KeyEncryptionKey for LocalKey {
    fn key_id(&self) -> &str {
        &self.id
    }

    async fn wrap_key(&self, data_key: &[u8]) -> Result<Vec<u8>> {
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let sealed = self
            .cipher()
            .encrypt(
                &nonce,
                Payload {
                    msg: data_key,
                    aad: self.id.as_bytes(),
                },
            )
            .map_err(|_| encryption_error("wrapping a data key failed"))?;
        let mut out = Vec::with_capacity(NONCE_BYTES + sealed.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    async fn unwrap_key(&self, key_id: &str, wrapped: &[u8]) -> Result<Zeroizing<Vec<u8>>> {
        self.check_id(key_id, "data key")?;
        if wrapped.len() < NONCE_BYTES {
            return Err(encryption_error("a wrapped data key is too short"));
        }
        let (nonce, sealed) = wrapped.split_at(NONCE_BYTES);
        self.cipher()
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: sealed,
                    aad: key_id.as_bytes(),
                },
            )
            .map(Zeroizing::new)
            .map_err(|_| {
                encryption_error(format!(
                    "the data key does not unwrap with key {key_id:?}: a different key under \
                     the same id, or altered bytes"
                ))
            })
    }

    async fn unwrap_legacy_key(
        &self,
        key_id: &str,
        algorithm: &str,
        wrapped: &[u8],
    ) -> Result<Zeroizing<Vec<u8>>> {
        self.check_id(key_id, "legacy content key")?;
        if algorithm != "A256KW" {
            return Err(encryption_error(format!(
                "the legacy content key was wrapped with {algorithm}; a LocalKey unwraps \
                 A256KW only: implement KeyEncryptionKey::unwrap_legacy_key over the key \
                 {key_id:?} where it is kept"
            )));
        }
        legacy::unwrap_a256kw(&self.key, wrapped).ok_or_else(|| {
            encryption_error(format!(
                "the legacy content key does not unwrap with key {key_id:?} (A256KW): a \
                 different key under the same id, or altered bytes"
            ))
        })
    }
}

/// The current key-encryption key and older ones: new data keys are wrapped with
/// the current key; stored ones are unwrapped with whichever key wrapped them. The
/// way to rotate keys: add the new key as current, keep the old ones until
/// [`EncryptingEngine::rewrap_table`] has re-wrapped every row.
#[derive(Debug, Clone)]
pub struct KeyRing {
    current: Arc<dyn KeyEncryptionKey>,
    older: Vec<Arc<dyn KeyEncryptionKey>>,
}

impl KeyRing {
    /// A ring whose current key is `current`.
    pub fn new(current: impl KeyEncryptionKey + 'static) -> KeyRing {
        KeyRing {
            current: Arc::new(current),
            older: Vec::new(),
        }
    }

    /// Adds an older key, still accepted for unwrapping.
    #[must_use]
    pub fn with_older(mut self, key: impl KeyEncryptionKey + 'static) -> KeyRing {
        self.older.push(Arc::new(key));
        self
    }

    /// The key of the ring with the id `key_id`.
    fn holding(&self, key_id: &str) -> Result<&Arc<dyn KeyEncryptionKey>> {
        std::iter::once(&self.current)
            .chain(&self.older)
            .find(|k| k.key_id() == key_id)
            .ok_or_else(|| {
                encryption_error(format!(
                    "no key of the ring has the id {key_id:?} that wrapped this data key"
                ))
            })
    }
}

#[async_trait]
impl KeyEncryptionKey for KeyRing {
    fn key_id(&self) -> &str {
        self.current.key_id()
    }

    async fn wrap_key(&self, data_key: &[u8]) -> Result<Vec<u8>> {
        self.current.wrap_key(data_key).await
    }

    async fn unwrap_key(&self, key_id: &str, wrapped: &[u8]) -> Result<Zeroizing<Vec<u8>>> {
        self.holding(key_id)?.unwrap_key(key_id, wrapped).await
    }

    async fn unwrap_legacy_key(
        &self,
        key_id: &str,
        algorithm: &str,
        wrapped: &[u8],
    ) -> Result<Zeroizing<Vec<u8>>> {
        self.holding(key_id)?
            .unwrap_legacy_key(key_id, algorithm, wrapped)
            .await
    }
}

/// One encrypted value, parsed.
struct Envelope<'a> {
    key_id: &'a str,
    wrapped: &'a [u8],
    nonce: &'a [u8],
    ciphertext: &'a [u8],
}

impl<'a> Envelope<'a> {
    fn parse(bytes: &'a [u8]) -> Result<Envelope<'a>> {
        let bad = || encryption_error("an encrypted value is damaged (truncated or malformed)");
        let rest = bytes.strip_prefix(&ENVELOPE_MAGIC[..]).ok_or_else(bad)?;
        let (&id_len, rest) = rest.split_first().ok_or_else(bad)?;
        let (key_id, rest) = split(rest, usize::from(id_len)).ok_or_else(bad)?;
        let key_id = std::str::from_utf8(key_id).map_err(|_| bad())?;
        let (len, rest) = split(rest, 2).ok_or_else(bad)?;
        let wrapped_len = usize::from(u16::from_be_bytes([len[0], len[1]]));
        let (wrapped, rest) = split(rest, wrapped_len).ok_or_else(bad)?;
        let (nonce, ciphertext) = split(rest, NONCE_BYTES).ok_or_else(bad)?;
        Ok(Envelope {
            key_id,
            wrapped,
            nonce,
            ciphertext,
        })
    }

    fn write(key_id: &str, wrapped: &[u8], nonce: &[u8], ciphertext: &[u8]) -> Result<Vec<u8>> {
        let id_len = u8::try_from(key_id.len())
            .map_err(|_| encryption_error("a key id is at most 255 bytes"))?;
        let wrapped_len = u16::try_from(wrapped.len())
            .map_err(|_| encryption_error("a wrapped data key is at most 65,535 bytes"))?;
        let mut out = Vec::with_capacity(
            ENVELOPE_MAGIC.len()
                + 3
                + key_id.len()
                + wrapped.len()
                + nonce.len()
                + ciphertext.len(),
        );
        out.extend_from_slice(ENVELOPE_MAGIC);
        out.push(id_len);
        out.extend_from_slice(key_id.as_bytes());
        out.extend_from_slice(&wrapped_len.to_be_bytes());
        out.extend_from_slice(wrapped);
        out.extend_from_slice(nonce);
        out.extend_from_slice(ciphertext);
        Ok(out)
    }
}

fn split(bytes: &[u8], at: usize) -> Option<(&[u8], &[u8])> {
    (bytes.len() >= at).then(|| bytes.split_at(at))
}

/// The authenticated data of a property: table, keys and property name.
fn associated_data(table: &str, key: &EntityKey, property: &str) -> Vec<u8> {
    let mut aad = Vec::with_capacity(
        AAD_PREFIX.len()
            + table.len()
            + key.partition_key.len()
            + key.row_key.len()
            + property.len()
            + 3,
    );
    aad.extend_from_slice(AAD_PREFIX);
    aad.extend_from_slice(table.to_ascii_lowercase().as_bytes());
    for part in [key.partition_key.as_str(), key.row_key.as_str(), property] {
        aad.push(0);
        aad.extend_from_slice(part.as_bytes());
    }
    aad
}

/// An [`Engine`] that encrypts the sealed values of every write (the
/// `#[entity(encrypted)]` fields) before the engine below sees them, and decrypts
/// every encrypted value it reads. See the module docs for the format.
#[derive(Debug, Clone)]
pub struct EncryptingEngine {
    inner: Arc<dyn Engine>,
    kek: Arc<dyn KeyEncryptionKey>,
}

impl EncryptingEngine {
    /// `inner` with encryption under `kek`.
    pub fn new(inner: Arc<dyn Engine>, kek: Arc<dyn KeyEncryptionKey>) -> EncryptingEngine {
        EncryptingEngine { inner, kek }
    }

    /// The engine below.
    pub fn inner(&self) -> &Arc<dyn Engine> {
        &self.inner
    }

    async fn encrypt_value(
        &self,
        table: &str,
        key: &EntityKey,
        property: &str,
        plain: &Value,
    ) -> Result<Value> {
        let mut data_key = Zeroizing::new([0u8; KEY_BYTES]);
        OsRng.fill_bytes(&mut data_key[..]);
        let wrapped = self.kek.wrap_key(&data_key[..]).await?;
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let aad = associated_data(table, key, property);
        let message = Zeroizing::new(plain_bytes(plain));
        let ciphertext = Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(&data_key[..]))
            .encrypt(
                &nonce,
                Payload {
                    msg: &message,
                    aad: &aad,
                },
            )
            .map_err(|_| encryption_error("encrypting a value failed"))?;
        Ok(Value::Binary(Envelope::write(
            self.kek.key_id(),
            &wrapped,
            &nonce,
            &ciphertext,
        )?))
    }

    async fn decrypt_value(
        &self,
        table: &str,
        key: &EntityKey,
        property: &str,
        bytes: &[u8],
    ) -> Result<Value> {
        let envelope = Envelope::parse(bytes)?;
        let data_key = self
            .kek
            .unwrap_key(envelope.key_id, envelope.wrapped)
            .await?;
        if data_key.len() != KEY_BYTES || envelope.nonce.len() != NONCE_BYTES {
            return Err(encryption_error("an encrypted value is damaged"));
        }
        let aad = associated_data(table, key, property);
        let plain = Zeroizing::new(
            Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(&data_key))
                .decrypt(
                    Nonce::from_slice(envelope.nonce),
                    Payload {
                        msg: envelope.ciphertext,
                        aad: &aad,
                    },
                )
                .map_err(|_| {
                    encryption_error(format!(
                        "property `{property}` of {key} does not decrypt: it was altered, or \
                         moved from another row, column or table"
                    ))
                })?,
        );
        Ok(seal(&tables_core::sealed::value_from_plain_bytes(&plain)?))
    }

    /// `entity` with every sealed value encrypted.
    async fn encrypt_entity(
        &self,
        table: &str,
        mut entity: DynamicEntity,
    ) -> Result<DynamicEntity> {
        let key = entity.key();
        let sealed: Vec<(String, Value)> = entity
            .properties()
            .filter_map(|(name, value)| unseal(value).map(|plain| (name.to_owned(), plain)))
            .map(|(name, plain)| plain.map(|p| (name, p)))
            .collect::<Result<_>>()?;
        for (name, plain) in sealed {
            let encrypted = self.encrypt_value(table, &key, &name, &plain).await?;
            entity.insert(name, encrypted);
        }
        Ok(entity)
    }

    /// `entity` with every encrypted value decrypted (back to the sealed form the
    /// derive reads).
    async fn decrypt_entity(
        &self,
        table: &str,
        mut entity: DynamicEntity,
    ) -> Result<DynamicEntity> {
        let key = entity.key();
        if legacy::is_legacy(&entity) {
            legacy::decrypt_row(self.kek.as_ref(), &mut entity)
                .await
                .map_err(|e| e.with_entity_key(key.clone()))?;
        }
        let encrypted: Vec<(String, Vec<u8>)> = entity
            .properties()
            .filter(|(_, value)| is_envelope(value))
            .filter_map(|(name, value)| match value {
                Value::Binary(bytes) => Some((name.to_owned(), bytes.clone())),
                _ => None,
            })
            .collect();
        for (name, bytes) in encrypted {
            let plain = self
                .decrypt_value(table, &key, &name, &bytes)
                .await
                .map_err(|e| e.with_property(name.clone()).with_entity_key(key.clone()))?;
            entity.insert(name, plain);
        }
        Ok(entity)
    }

    async fn encrypt_op(&self, table: &str, op: &WriteOp) -> Result<WriteOp> {
        let encrypt = |entity: &DynamicEntity| self.encrypt_entity(table, entity.clone());
        Ok(match op {
            WriteOp::Insert(entity) => WriteOp::Insert(encrypt(entity).await?),
            WriteOp::UpsertReplace(entity) => WriteOp::UpsertReplace(encrypt(entity).await?),
            WriteOp::UpsertMerge(entity) => WriteOp::UpsertMerge(encrypt(entity).await?),
            WriteOp::Replace { entity, if_match } => WriteOp::Replace {
                entity: encrypt(entity).await?,
                if_match: if_match.clone(),
            },
            WriteOp::Merge { entity, if_match } => WriteOp::Merge {
                entity: encrypt(entity).await?,
                if_match: if_match.clone(),
            },
            WriteOp::Delete { .. } => op.clone(),
        })
    }

    /// Re-wraps the data key of every value in `table` not wrapped by the current
    /// key-encryption key, without re-encrypting the values: each row is merged under
    /// the ETag read (a row changed meanwhile is left for the next run). A row of
    /// the legacy client-side encryption (see the module docs) moves to this format:
    /// its values are decrypted and encrypted again under the current key, and the
    /// row is replaced whole, without the legacy metadata, under the ETag read.
    /// Returns how many rows were re-wrapped or moved.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Encryption`] when a data key does not unwrap (the old key is not
    /// in the [`KeyRing`]) or a legacy value does not decrypt; the engine's errors.
    /// Rows written before the error stay written; run it again after the fix.
    pub async fn rewrap_table(&self, table: &str) -> Result<usize> {
        let spec = QuerySpec::default();
        let mut token: Option<ContinuationToken> = None;
        let mut rewrapped = 0;
        loop {
            let page = self.inner.query(table, &spec, token.as_ref()).await?;
            for row in page.items {
                let if_match = row.etag.clone().map_or(IfMatch::Any, IfMatch::Etag);
                let op = if legacy::is_legacy(&row) {
                    WriteOp::Replace {
                        entity: self.moved_from_legacy(table, row).await?,
                        if_match,
                    }
                } else if let Some(merge) = self.rewrapped(&row).await? {
                    WriteOp::Merge {
                        entity: merge,
                        if_match,
                    }
                } else {
                    continue;
                };
                match self.inner.write(table, &op).await {
                    Ok(_) => rewrapped += 1,
                    Err(e) if e.kind() == ErrorKind::PreconditionFailed => {}
                    Err(e) => return Err(e),
                }
            }
            match page.continuation {
                Some(next) => token = Some(next),
                None => return Ok(rewrapped),
            }
        }
    }

    /// A legacy row in this format, whole: its legacy values decrypted and
    /// encrypted again under the current key, its own envelopes (written by later
    /// merges) re-wrapped by it, its legacy metadata gone.
    async fn moved_from_legacy(
        &self,
        table: &str,
        mut row: DynamicEntity,
    ) -> Result<DynamicEntity> {
        let key = row.key();
        legacy::decrypt_row(self.kek.as_ref(), &mut row)
            .await
            .map_err(|e| e.with_entity_key(key))?;
        let mut row = self.encrypt_entity(table, row).await?;
        if let Some(rewrapped) = self.rewrapped(&row).await? {
            for (name, value) in rewrapped.properties() {
                row.insert(name.to_owned(), value.clone());
            }
        }
        Ok(row)
    }

    /// The properties of `row` whose data keys another key wrapped, re-wrapped by
    /// the current one; `None` when there are none.
    async fn rewrapped(&self, row: &DynamicEntity) -> Result<Option<DynamicEntity>> {
        let mut merge = DynamicEntity::new(row.partition_key.clone(), row.row_key.clone());
        for (name, value) in row.properties() {
            let Value::Binary(bytes) = value else {
                continue;
            };
            if !bytes.starts_with(ENVELOPE_MAGIC) {
                continue;
            }
            let envelope = Envelope::parse(bytes)?;
            if envelope.key_id == self.kek.key_id() {
                continue;
            }
            let data_key = self
                .kek
                .unwrap_key(envelope.key_id, envelope.wrapped)
                .await?;
            let wrapped = self.kek.wrap_key(&data_key).await?;
            let bytes = Envelope::write(
                self.kek.key_id(),
                &wrapped,
                envelope.nonce,
                envelope.ciphertext,
            )?;
            merge.insert(name, Value::Binary(bytes));
        }
        Ok((!merge.is_empty()).then_some(merge))
    }
}

row_layer_engine!(EncryptingEngine, ());

impl EncryptingEngine {
    async fn read_row(&self, table: &str, row: DynamicEntity) -> Result<DynamicEntity> {
        self.decrypt_entity(table, row).await
    }

    async fn prepare_write(&self, table: &str, op: &WriteOp) -> Result<(WriteOp, ())> {
        Ok((self.encrypt_op(table, op).await?, ()))
    }

    async fn settle(&self, _applied: Applied, _pending: Vec<()>) {}

    /// No row is the layer's own.
    fn hides(&self, _row: &DynamicEntity) -> bool {
        false
    }

    /// A projection also reads the legacy format's two metadata properties: without
    /// them its values can't be decrypted (a row without them returns them absent).
    fn widen_select(&self, select: &[String]) -> Option<Vec<String>> {
        let missing: Vec<&str> = [legacy::METADATA, legacy::ENCRYPTED_NAMES]
            .into_iter()
            .filter(|name| !select.iter().any(|s| s == name))
            .collect();
        if missing.is_empty() {
            return None;
        }
        let mut widened = select.to_vec();
        widened.extend(missing.into_iter().map(str::to_owned));
        Some(widened)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keys_wrap_unwrap_and_stay_out_of_debug() {
        let k1 = LocalKey::new("k1", [0x5a; 32]).unwrap();
        let wrapped = k1.wrap_key(&[9u8; 32]).await.unwrap();
        assert_ne!(
            wrapped,
            k1.wrap_key(&[9u8; 32]).await.unwrap(),
            "a fresh nonce"
        );
        assert_eq!(
            &k1.unwrap_key("k1", &wrapped).await.unwrap()[..],
            &[9u8; 32]
        );
        for (id, bytes) in [("k2", wrapped.clone()), ("k1", wrapped[..20].to_vec())] {
            let err = k1.unwrap_key(id, &bytes).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Encryption, "{err}");
        }
        let impostor = LocalKey::new("k1", [0x5b; 32]).unwrap();
        assert!(impostor.unwrap_key("k1", &wrapped).await.is_err());
        let shown = format!("{k1:?} {:?}", KeyRing::new(k1.clone()));
        assert!(!shown.contains("90") && !shown.contains("5a"), "{shown}");
        assert!(LocalKey::new("", [0; 32]).is_err());
        assert!(LocalKey::new("x".repeat(256), [0; 32]).is_err());

        let ring = KeyRing::new(LocalKey::new("k2", [1; 32]).unwrap()).with_older(k1);
        assert_eq!(ring.key_id(), "k2");
        assert_eq!(
            &ring.unwrap_key("k1", &wrapped).await.unwrap()[..],
            &[9u8; 32]
        );
        let err = ring.unwrap_key("k3", &wrapped).await.unwrap_err();
        assert!(err.message().contains("k3"), "{err}");
    }

    #[test]
    fn envelopes_parse_what_they_write_and_refuse_damage() {
        let bytes = Envelope::write("kid", &[1, 2, 3], &[7; 12], &[8, 9]).unwrap();
        let parsed = Envelope::parse(&bytes).unwrap();
        assert_eq!(
            (
                parsed.key_id,
                parsed.wrapped,
                parsed.nonce,
                parsed.ciphertext
            ),
            ("kid", &[1u8, 2, 3][..], &[7u8; 12][..], &[8u8, 9][..])
        );
        for cut in [0, 8, 9, 12, 14, bytes.len() - 3] {
            let err = Envelope::parse(&bytes[..cut]).err().unwrap();
            assert_eq!(err.kind(), ErrorKind::Encryption, "cut at {cut}");
        }
    }

    #[test]
    fn associated_data_binds_table_keys_and_property() {
        let key = EntityKey::new("p", "r");
        let base = associated_data("People", &key, "ssn");
        assert_eq!(
            base,
            associated_data("PEOPLE", &key, "ssn"),
            "table names ignore case"
        );
        assert_ne!(base, associated_data("Others", &key, "ssn"));
        assert_ne!(
            base,
            associated_data("People", &EntityKey::new("p", "s"), "ssn")
        );
        assert_ne!(
            base,
            associated_data("People", &EntityKey::new("q", "r"), "ssn")
        );
        assert_ne!(base, associated_data("People", &key, "salary"));
        // The separators keep the parts apart.
        assert_ne!(
            associated_data("t", &EntityKey::new("ab", "c"), "x"),
            associated_data("t", &EntityKey::new("a", "bc"), "x")
        );
    }
}
