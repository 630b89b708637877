//! Reading rows that the legacy client-side encryption wrote: the .NET storage
//! library's `TableEncryptionPolicy` (WindowsAzure.Storage 4.x to 9.x), and the Python
//! SDK that followed its format (azure-cosmosdb-table). Read only: a row this client
//! writes back gets this crate's own format.
//!
//! That format encrypts string properties with AES-256-CBC (PKCS #7 padding) under a
//! content key made for the row. Two properties describe it:
//!
//! - `_ClientEncryptionMetadata1`, a JSON string: the content key wrapped by a
//!   key-encryption key (`WrappedContentKey`: `KeyId`, `EncryptedKey` in base64,
//!   `Algorithm`), the agent (`Protocol` `1.0`, `EncryptionAlgorithm`
//!   `AES_CBC_256`), the row's IV (`ContentEncryptionIV`, base64) and the library
//!   that wrote it (`KeyWrappingMetadata`);
//! - `_ClientEncryptionMetadata2`, binary: the JSON list of the encrypted property
//!   names, itself encrypted.
//!
//! Each encrypted value (and the list) has its own IV: the first 16 bytes of
//! SHA-256 over the row's IV followed by the UTF-8 of RowKey, PartitionKey and the
//! property name. The Java library's first version ordered PartitionKey first and
//! wrote the list in another form; its rows are refused with an error that says so.

use aes::Aes256;
use base64::Engine as _;
use cbc::cipher::block_padding::Pkcs7;
use cbc::cipher::{BlockDecryptMut, KeyIvInit};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use tables_core::sealed::{is_envelope, is_sealed, seal};
use tables_core::{DynamicEntity, Result, Value};
use zeroize::Zeroizing;

use super::{encryption_error, KeyEncryptionKey, KEY_BYTES};

/// The legacy format's description of a row's encryption (a JSON string).
pub(crate) const METADATA: &str = "_ClientEncryptionMetadata1";
/// The legacy format's encrypted list of encrypted property names (binary).
pub(crate) const ENCRYPTED_NAMES: &str = "_ClientEncryptionMetadata2";

const IV_BYTES: usize = 16;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Metadata {
    wrapped_content_key: WrappedKey,
    encryption_agent: Agent,
    #[serde(rename = "ContentEncryptionIV")]
    content_encryption_iv: String,
    key_wrapping_metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct WrappedKey {
    key_id: String,
    encrypted_key: String,
    algorithm: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Agent {
    protocol: String,
    encryption_algorithm: String,
}

/// Whether `row` carries the legacy format's metadata.
pub(crate) fn is_legacy(row: &DynamicEntity) -> bool {
    row.get(METADATA).is_some()
}

/// Decrypts, in place, the values of `row` the legacy format encrypted (each
/// becomes the sealed string the derive reads), and removes its two metadata
/// properties. A listed property that is absent (a projection left it out) or
/// already holds this crate's own format (a later merge rewrote it) is left as it
/// is. The content key is unwrapped by `kek`'s
/// [`KeyEncryptionKey::unwrap_legacy_key`] only when some listed value is there.
///
/// # Errors
///
/// [`tables_core::ErrorKind::Encryption`], naming what is wrong: metadata that is
/// missing (a projection that left out `_ClientEncryptionMetadata2`) or damaged, a
/// protocol or algorithm this reader doesn't know, the Java library's first
/// version, a key that doesn't unwrap, or a value that doesn't decrypt.
pub(crate) async fn decrypt_row(kek: &dyn KeyEncryptionKey, row: &mut DynamicEntity) -> Result<()> {
    let Some(metadata) = row.remove(METADATA) else {
        return Ok(());
    };
    let names = row.remove(ENCRYPTED_NAMES);
    // Nothing to decrypt when no value could be one of them (none is binary in
    // the legacy form): a projection of plain columns needs no key.
    let candidates = row.properties().any(|(_, value)| {
        matches!(value, Value::Binary(_)) && !is_envelope(value) && !is_sealed(value)
    });
    if !candidates {
        return Ok(());
    }
    let Value::String(metadata) = metadata else {
        return Err(encryption_error(format!(
            "{METADATA} is not a string: the row was not written by the legacy client-side \
             encryption, or was altered"
        )));
    };
    let Some(Value::Binary(names)) = names else {
        return Err(encryption_error(format!(
            "the row has {METADATA} but no binary {ENCRYPTED_NAMES}: select both with the \
             encrypted properties (or no projection) to read rows of the legacy format"
        )));
    };
    let metadata: Metadata = serde_json::from_str(&metadata).map_err(|e| {
        encryption_error(format!("{METADATA} is not the legacy format's JSON: {e}"))
    })?;
    check_agent(&metadata)?;
    let row_iv = base64::engine::general_purpose::STANDARD
        .decode(&metadata.content_encryption_iv)
        .ok()
        .filter(|iv| iv.len() == IV_BYTES)
        .ok_or_else(|| {
            encryption_error(format!("{METADATA} has no 16-byte ContentEncryptionIV"))
        })?;
    let wrapped = base64::engine::general_purpose::STANDARD
        .decode(&metadata.wrapped_content_key.encrypted_key)
        .map_err(|_| {
            encryption_error(format!("{METADATA} has an EncryptedKey that is not base64"))
        })?;
    let key = &metadata.wrapped_content_key;
    let content_key = kek
        .unwrap_legacy_key(&key.key_id, &key.algorithm, &wrapped)
        .await?;
    if content_key.len() != KEY_BYTES {
        return Err(encryption_error(format!(
            "the legacy content key unwrapped by key {:?} is {} bytes, not 32",
            key.key_id,
            content_key.len()
        )));
    }
    let (partition_key, row_key) = (row.partition_key.clone(), row.row_key.clone());
    let iv_of = |property: &str| property_iv(&row_iv, &partition_key, &row_key, property);
    let list = decrypt(&content_key, &iv_of(ENCRYPTED_NAMES), &names).ok_or_else(|| {
        encryption_error(format!(
            "{ENCRYPTED_NAMES} does not decrypt with the row's key"
        ))
    })?;
    let list: Vec<String> = serde_json::from_slice(&list).map_err(|_| {
        encryption_error(format!(
            "{ENCRYPTED_NAMES} does not hold a JSON list of property names"
        ))
    })?;
    for name in list {
        let Some(value) = row.get(&name) else {
            continue;
        };
        if is_envelope(value) {
            continue;
        }
        let Value::Binary(ciphertext) = value else {
            return Err(encryption_error(format!(
                "property `{name}` is listed as encrypted by the legacy format but is not binary"
            ))
            .with_property(name));
        };
        let text = decrypt(&content_key, &iv_of(&name), ciphertext)
            .and_then(|plain| String::from_utf8(plain.to_vec()).ok())
            .ok_or_else(|| {
                encryption_error(format!(
                    "property `{name}` does not decrypt as the legacy format's text: it was \
                     altered, or moved from another row or column"
                ))
                .with_property(name.clone())
            })?;
        row.insert(name, seal(&Value::String(text)));
    }
    Ok(())
}

fn check_agent(metadata: &Metadata) -> Result<()> {
    let agent = &metadata.encryption_agent;
    if agent.protocol != "1.0" || agent.encryption_algorithm != "AES_CBC_256" {
        return Err(encryption_error(format!(
            "the row's legacy encryption is protocol {:?} with {:?}; this reader knows \
             protocol \"1.0\" with \"AES_CBC_256\"",
            agent.protocol, agent.encryption_algorithm
        )));
    }
    let library = metadata
        .key_wrapping_metadata
        .as_ref()
        .and_then(|m| m.get("EncryptionLibrary"))
        .and_then(serde_json::Value::as_str);
    match library {
        None => Err(encryption_error(format!(
            "{METADATA} names no EncryptionLibrary: the row was written by the first version \
             of the Java library, whose layout this reader does not read"
        ))),
        Some(library) if library.contains("Java") => Err(encryption_error(format!(
            "the row was written by {library:?}, whose layout (key order, name list) this \
             reader does not read"
        ))),
        Some(_) => Ok(()),
    }
}

/// The IV of one property: SHA-256 of the row's IV, then RowKey, PartitionKey and
/// the property name as UTF-8; the first 16 bytes.
fn property_iv(
    row_iv: &[u8],
    partition_key: &str,
    row_key: &str,
    property: &str,
) -> [u8; IV_BYTES] {
    let digest = Sha256::new()
        .chain_update(row_iv)
        .chain_update(row_key.as_bytes())
        .chain_update(partition_key.as_bytes())
        .chain_update(property.as_bytes())
        .finalize();
    let mut iv = [0u8; IV_BYTES];
    iv.copy_from_slice(&digest[..IV_BYTES]);
    iv
}

/// AES-256-CBC with PKCS #7 padding; `None` when the padding is wrong (a wrong
/// key or IV, or altered bytes).
fn decrypt(key: &[u8], iv: &[u8; IV_BYTES], ciphertext: &[u8]) -> Option<Zeroizing<Vec<u8>>> {
    let decryptor = cbc::Decryptor::<Aes256>::new_from_slices(key, iv).ok()?;
    decryptor
        .decrypt_padded_vec_mut::<Pkcs7>(ciphertext)
        .ok()
        .map(Zeroizing::new)
}

/// Unwraps a legacy content key wrapped by RFC 3394 AES key wrap under a 256-bit
/// key (`A256KW`, the algorithm of Azure Key Vault's symmetric keys in the .NET
/// library).
pub(crate) fn unwrap_a256kw(key: &[u8; KEY_BYTES], wrapped: &[u8]) -> Option<Zeroizing<Vec<u8>>> {
    aes_kw::KekAes256::from(*key)
        .unwrap_vec(wrapped)
        .ok()
        .map(Zeroizing::new)
}
