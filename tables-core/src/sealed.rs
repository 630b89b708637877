//! Encrypted properties, the part every engine knows.
//!
//! A field marked `#[entity(encrypted)]` leaves the derive's codec *sealed*: its
//! stored value (a [`Value`]) is written into an `Edm.Binary` that starts with
//! [`SEALED_MAGIC`], the value's type and its bytes ([`seal`]). That is plaintext, and
//! no engine accepts it: every engine calls [`refuse_sealed`] on each write, before
//! anything is written or sent. Only the
//! client's encryption layer (`tables_client::encryption`) turns sealed values into
//! ciphertext envelopes ([`ENVELOPE_MAGIC`]) on the way down, and back on the way up.
//! So an encrypted field can't reach storage as plaintext by any path: a client
//! without a key fails closed.

use crate::datetime::DateTime;
use crate::entity::DynamicEntity;
use crate::error::{Error, ErrorKind, Result};
use crate::value::Value;

/// The start of a sealed (not yet encrypted) value.
pub const SEALED_MAGIC: &[u8; 16] = b"\0tables:sealed1\0";
/// The start of an encrypted value (the envelope the client's encryption layer
/// writes).
pub const ENVELOPE_MAGIC: &[u8; 8] = b"\0tblenc1";

/// The start of a value on its way to a blob (an `#[entity(blob)]` field, for the
/// client's blob layer, `tables_client::large`): like a sealed value, no engine
/// accepts it.
pub const HELD_MAGIC: &[u8; 16] = b"\0tables:inblob1\0";
/// The start of a blob reference: what a row stores for an `#[entity(blob)]` field
/// (written and read by the client's blob layer).
pub const BLOB_REF_MAGIC: &[u8; 8] = b"\0tblref1";

/// `value` held for the blob layer: an `Edm.Binary` of [`HELD_MAGIC`] and the
/// value's [`plain_bytes`] (which become the blob's content).
pub fn hold(value: &Value) -> Value {
    let mut out = Vec::with_capacity(HELD_MAGIC.len() + 16);
    out.extend_from_slice(HELD_MAGIC);
    out.extend_from_slice(&plain_bytes(value));
    Value::Binary(out)
}

/// The start of a value on its way to the blob layer that may stay inline while
/// it fits one property (an `#[entity(spill)]` field).
pub const SPILL_MAGIC: &[u8; 16] = b"\0tables:spill01\0";

/// `value` held for the blob layer, to stay inline while it fits one property.
pub fn hold_spill(value: &Value) -> Value {
    let mut out = Vec::with_capacity(SPILL_MAGIC.len() + 16);
    out.extend_from_slice(SPILL_MAGIC);
    out.extend_from_slice(&plain_bytes(value));
    Value::Binary(out)
}

/// The start of a value on its way to a blob that reads leave unfetched (an
/// `#[entity(blob, lazy)]` field).
pub const LAZY_MAGIC: &[u8; 16] = b"\0tables:lazy001\0";

/// `value` held for the blob layer, to a blob that reads leave unfetched.
pub fn hold_lazy(value: &Value) -> Value {
    let mut out = Vec::with_capacity(LAZY_MAGIC.len() + 16);
    out.extend_from_slice(LAZY_MAGIC);
    out.extend_from_slice(&plain_bytes(value));
    Value::Binary(out)
}

/// Whether `value` is held for a blob that reads leave unfetched.
pub fn is_held_lazy(value: &Value) -> bool {
    matches!(value, Value::Binary(bytes) if bytes.starts_with(LAZY_MAGIC))
}

/// Whether `value` is held for the blob layer (to a blob, or spilling).
pub fn is_held(value: &Value) -> bool {
    held_parts(value).is_some()
}

/// `(spills, plain bytes)` of a held value; `None` when `value` is not held.
pub fn held_parts(value: &Value) -> Option<(bool, &[u8])> {
    match value {
        Value::Binary(bytes) => {
            if let Some(plain) = bytes
                .strip_prefix(&HELD_MAGIC[..])
                .or_else(|| bytes.strip_prefix(&LAZY_MAGIC[..]))
            {
                Some((false, plain))
            } else {
                bytes
                    .strip_prefix(&SPILL_MAGIC[..])
                    .map(|plain| (true, plain))
            }
        }
        _ => None,
    }
}

/// The value a held value holds; `None` when `value` is not held.
///
/// # Errors
///
/// [`ErrorKind::Encryption`] for a held value that is damaged.
pub fn unhold(value: &Value) -> Option<Result<Value>> {
    held_parts(value).map(|(_, plain)| value_from_plain_bytes(plain))
}

/// Whether `value` is a blob reference.
pub fn is_blob_ref(value: &Value) -> bool {
    matches!(value, Value::Binary(bytes) if bytes.starts_with(BLOB_REF_MAGIC))
}

/// The type tags of a sealed value, one per `Edm` type.
const STRING: u8 = 1;
const INT32: u8 = 2;
const INT64: u8 = 3;
const DOUBLE: u8 = 4;
const BOOLEAN: u8 = 5;
const DATE_TIME: u8 = 6;
const GUID: u8 = 7;
const BINARY: u8 = 8;

/// `value` sealed: an `Edm.Binary` of [`SEALED_MAGIC`], a type tag and the value's
/// bytes (text as UTF-8, numbers little-endian, a date-time as ticks).
pub fn seal(value: &Value) -> Value {
    let mut out = Vec::with_capacity(SEALED_MAGIC.len() + 1 + 16);
    out.extend_from_slice(SEALED_MAGIC);
    out.extend_from_slice(&plain_bytes(value));
    Value::Binary(out)
}

/// A value as the bytes encryption covers: its type tag, then its bytes.
pub fn plain_bytes(value: &Value) -> Vec<u8> {
    let (tag, bytes): (u8, Vec<u8>) = match value {
        Value::String(text) => (STRING, text.as_bytes().to_vec()),
        Value::Int32(n) => (INT32, n.to_le_bytes().to_vec()),
        Value::Int64(n) => (INT64, n.to_le_bytes().to_vec()),
        Value::Double(x) => (DOUBLE, x.to_bits().to_le_bytes().to_vec()),
        Value::Boolean(b) => (BOOLEAN, vec![u8::from(*b)]),
        Value::DateTime(t) => (DATE_TIME, t.ticks().to_le_bytes().to_vec()),
        Value::Guid(id) => (GUID, id.as_bytes().to_vec()),
        Value::Binary(bytes) => (BINARY, bytes.clone()),
    };
    let mut out = Vec::with_capacity(1 + bytes.len());
    out.push(tag);
    out.extend_from_slice(&bytes);
    out
}

/// The value [`plain_bytes`] wrote.
///
/// # Errors
///
/// [`ErrorKind::Encryption`] for bytes no value was sealed as.
pub fn value_from_plain_bytes(bytes: &[u8]) -> Result<Value> {
    let bad = || {
        Error::new(
            ErrorKind::Encryption,
            "a decrypted value is not one the SDK sealed (an unknown type or a wrong length)",
        )
    };
    let (&tag, rest) = bytes.split_first().ok_or_else(bad)?;
    let fixed = |n: usize| -> Result<&[u8]> { (rest.len() == n).then_some(rest).ok_or_else(bad) };
    Ok(match tag {
        STRING => Value::String(String::from_utf8(rest.to_vec()).map_err(|_| bad())?),
        INT32 => Value::Int32(i32::from_le_bytes(fixed(4)?.try_into().map_err(|_| bad())?)),
        INT64 => Value::Int64(i64::from_le_bytes(fixed(8)?.try_into().map_err(|_| bad())?)),
        DOUBLE => Value::Double(f64::from_bits(u64::from_le_bytes(
            fixed(8)?.try_into().map_err(|_| bad())?,
        ))),
        BOOLEAN => Value::Boolean(fixed(1)?[0] != 0),
        DATE_TIME => Value::DateTime(
            DateTime::from_ticks(i64::from_le_bytes(fixed(8)?.try_into().map_err(|_| bad())?))
                .ok_or_else(bad)?,
        ),
        GUID => Value::Guid(uuid::Uuid::from_slice(fixed(16)?).map_err(|_| bad())?),
        BINARY => Value::Binary(rest.to_vec()),
        _ => return Err(bad()),
    })
}

/// Whether `value` is sealed plaintext.
pub fn is_sealed(value: &Value) -> bool {
    matches!(value, Value::Binary(bytes) if bytes.starts_with(SEALED_MAGIC))
}

/// Whether `value` is an encryption envelope.
pub fn is_envelope(value: &Value) -> bool {
    matches!(value, Value::Binary(bytes) if bytes.starts_with(ENVELOPE_MAGIC))
}

/// The value a sealed value holds; `None` when `value` is not sealed.
///
/// # Errors
///
/// [`ErrorKind::Encryption`] for a sealed value that is damaged.
pub fn unseal(value: &Value) -> Option<Result<Value>> {
    match value {
        Value::Binary(bytes) if bytes.starts_with(SEALED_MAGIC) => {
            Some(value_from_plain_bytes(&bytes[SEALED_MAGIC.len()..]))
        }
        _ => None,
    }
}

/// Refuses the entities of writes (`op.entity()` of each op) that hold a sealed
/// value (an encrypted field on its way to storage unencrypted) or a held value (a
/// blob field without a blob store). Every engine calls it on every write.
///
/// # Errors
///
/// [`ErrorKind::Encryption`] naming the property and the entity.
pub fn refuse_sealed<'a>(entities: impl IntoIterator<Item = &'a DynamicEntity>) -> Result<()> {
    for entity in entities {
        if let Some((name, _)) = entity.properties().find(|(_, value)| is_sealed(value)) {
            return Err(sealed_reached_storage(name).with_entity_key(entity.key()));
        }
        if let Some((name, _)) = entity.properties().find(|(_, value)| is_held(value)) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "property `{name}` holds a value for a blob (a `#[entity(blob)]` or `spill` field, \
                     or an index entity's member list over 1 MiB), and it reached the engine \
                     without a blob store: give the service client one \
                     (TableServiceClient::with_blob_store); nothing was written"
                ),
            )
            .with_property(name)
            .with_entity_key(entity.key()));
        }
    }
    Ok(())
}

/// The error for a sealed value on its way to storage.
fn sealed_reached_storage(property: &str) -> Error {
    Error::new(
        ErrorKind::Encryption,
        format!(
            "property `{property}` is an encrypted field, and it reached the engine unencrypted: \
             this client has no key-encryption key. Give it one with \
             TableServiceClient::with_encryption; nothing was written"
        ),
    )
    .with_property(property)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_seals_and_unseals() {
        for value in [
            Value::from("ssn 123-45-6789"),
            Value::from(""),
            Value::Int32(-7),
            Value::Int64(i64::MIN),
            Value::Double(-0.0),
            Value::Boolean(true),
            Value::DateTime(DateTime::MAX),
            Value::Guid(uuid::Uuid::from_u128(42)),
            Value::Binary(vec![0, 1, 2]),
        ] {
            let sealed = seal(&value);
            assert!(is_sealed(&sealed) && !is_envelope(&sealed));
            let back = unseal(&sealed).unwrap().unwrap();
            match (&back, &value) {
                (Value::Double(a), Value::Double(b)) => assert_eq!(a.to_bits(), b.to_bits()),
                _ => assert_eq!(back, value),
            }
        }
        assert!(unseal(&Value::from("plain")).is_none());
        for bad in [vec![], vec![9], vec![INT32, 1, 2], vec![STRING, 0xff]] {
            let err = value_from_plain_bytes(&bad).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Encryption);
        }
    }
}
