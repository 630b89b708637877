//! Size accounting and entity validation, as the service counts them.
//!
//! Sizes follow the estimate of the table design guide (<https://learn.microsoft.com/azure/storage/tables/table-storage-design-guide>):
//! an entity is
//! `4 + 2·len16(PartitionKey + RowKey) + Σ (8 + 2·len16(name) + value size)` bytes,
//! where `len16` counts UTF-16 code units and a value is `2·len16 + 4` (string),
//! `bytes + 4` (binary), 8 (DateTime, Double, Int64), 16 (Guid), 4 (Int32) or 1
//! (Boolean).

use crate::entity::DynamicEntity;
use crate::error::{Error, ErrorKind, Result};
use crate::key::{validate_partition_key, validate_row_key};
use crate::value::Value;

pub use crate::key::MAX_KEY_BYTES;
pub use crate::utf16::utf16_units;
/// Largest string (as UTF-16) or binary property value, in bytes.
pub const MAX_PROPERTY_VALUE_BYTES: usize = 64 * 1024;
/// Most user properties on one entity (plus the 3 system properties: 255).
pub const MAX_USER_PROPERTIES: usize = 252;
/// Largest entity by the size estimate, in bytes (1 MiB).
pub const MAX_ENTITY_BYTES: usize = 1024 * 1024;
/// Longest property name, in characters.
pub const MAX_PROPERTY_NAME_CHARS: usize = 255;

/// Property names the service keeps for itself.
const SYSTEM_PROPERTIES: [&str; 3] = ["PartitionKey", "RowKey", "Timestamp"];

fn utf16_bytes(text: &str) -> usize {
    2 * utf16_units(text)
}

/// The service's size estimate of one property value, in bytes.
///
/// ```
/// use tables_core::{size::value_size, Value};
///
/// assert_eq!(value_size(&Value::from("héllo")), 2 * 5 + 4);
/// assert_eq!(value_size(&Value::from(1i64)), 8);
/// ```
pub fn value_size(value: &Value) -> usize {
    match value {
        Value::String(s) => utf16_bytes(s) + 4,
        Value::Binary(b) => b.len() + 4,
        Value::DateTime(_) | Value::Double(_) | Value::Int64(_) => 8,
        Value::Guid(_) => 16,
        Value::Int32(_) => 4,
        Value::Boolean(_) => 1,
    }
}

/// The service's size estimate of an entity, in bytes (see the module docs).
///
/// ```
/// use tables_core::{size::entity_size, DynamicEntity};
///
/// let e = DynamicEntity::new("p", "r").with("Age", 34);
/// assert_eq!(entity_size(&e), 4 + 2 * 2 + (8 + 2 * 3 + 4));
/// ```
pub fn entity_size(entity: &DynamicEntity) -> usize {
    4 + utf16_bytes(&entity.partition_key)
        + utf16_bytes(&entity.row_key)
        + entity
            .properties()
            .map(|(name, value)| 8 + utf16_bytes(name) + value_size(value))
            .sum::<usize>()
}

/// Checks a property name: non-empty, at most 255 characters, a C# identifier (a
/// letter or `_`, then letters, digits or `_`), and not a system name
/// (`PartitionKey`, `RowKey`, `Timestamp`, or anything starting with `odata.`).
///
/// # Errors
///
/// [`ErrorKind::InvalidProperty`] naming the property, with service code
/// `PropertyNameTooLong` when too long and `PropertyNameInvalid` otherwise.
pub fn validate_property_name(name: &str) -> Result<()> {
    let invalid = |why: String| {
        Err(Error::new(
            ErrorKind::InvalidProperty,
            format!("the property name {name:?} {why}"),
        )
        .with_property(name))
    };
    if name.is_empty() {
        return invalid("is empty; property names need at least one character".to_owned());
    }
    let length = name.chars().count();
    if length > MAX_PROPERTY_NAME_CHARS {
        return Err(Error::new(
            ErrorKind::InvalidProperty,
            format!(
                "the property name {:?}... is {length} characters long; the service allows at \
                 most {MAX_PROPERTY_NAME_CHARS}",
                name.chars().take(20).collect::<String>()
            ),
        )
        .with_service_code("PropertyNameTooLong")
        .with_property(name));
    }
    if SYSTEM_PROPERTIES.contains(&name) || name.starts_with("odata.") {
        return invalid(
            "is reserved for the service (PartitionKey, RowKey, Timestamp and odata.*); \
             rename the property"
                .to_owned(),
        );
    }
    let mut chars = name.chars().enumerate();
    if let Some((_, first)) = chars.next() {
        if !(first.is_alphabetic() || first == '_') {
            return invalid(format!(
                "starts with {first:?}; a property name must start with a letter or `_`"
            ));
        }
    }
    if let Some((position, c)) = chars.find(|(_, c)| !(c.is_alphanumeric() || *c == '_')) {
        return invalid(format!(
            "contains {c:?} at character {position}; property names may contain only \
             letters, digits and `_`"
        ));
    }
    Ok(())
}

/// Checks one property: its name ([`validate_property_name`]) and its value's size
/// (a string at most 64 KiB as UTF-16, i.e. 32K characters; binary at most 64 KiB).
///
/// # Errors
///
/// As [`validate_property_name`]; [`ErrorKind::PropertyValueTooLarge`] naming the
/// property for an oversized value.
pub fn validate_property(name: &str, value: &Value) -> Result<()> {
    validate_property_name(name)?;
    let bytes = match value {
        Value::String(s) => utf16_bytes(s),
        Value::Binary(b) => b.len(),
        _ => return Ok(()),
    };
    if bytes > MAX_PROPERTY_VALUE_BYTES {
        let advice = if matches!(value, Value::String(_)) {
            "strings count as UTF-16, so at most 32K characters fit"
        } else {
            "split the bytes over several properties or entities"
        };
        return Err(Error::new(
            ErrorKind::PropertyValueTooLarge,
            format!(
                "the value of {name:?} is {bytes} bytes; the service allows at most \
                 {MAX_PROPERTY_VALUE_BYTES} bytes per property ({advice})"
            ),
        )
        .with_property(name));
    }
    Ok(())
}

/// Checks an entity against the service's rules: its keys, every property
/// ([`validate_property`]), at most 252 properties, and at most 1 MiB by
/// [`entity_size`].
///
/// ```
/// use tables_core::{size::validate_entity, DynamicEntity, ErrorKind};
///
/// assert!(validate_entity(&DynamicEntity::new("p", "r").with("Age", 34)).is_ok());
/// let bad = DynamicEntity::new("p", "r").with("my-prop", 1);
/// let err = validate_entity(&bad).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::InvalidProperty);
/// assert_eq!(err.property(), Some("my-prop"));
/// assert_eq!(err.entity_key().map(|k| k.row_key.as_str()), Some("r"));
/// ```
///
/// # Errors
///
/// The first rule broken: [`ErrorKind::InvalidKey`], [`ErrorKind::TooManyProperties`],
/// [`ErrorKind::InvalidProperty`], [`ErrorKind::PropertyValueTooLarge`] or
/// [`ErrorKind::EntityTooLarge`]. Every error carries the entity key, and the
/// property at fault where there is one.
pub fn validate_entity(entity: &DynamicEntity) -> Result<()> {
    validate_entity_properties(entity)?;
    if entity.len() > MAX_USER_PROPERTIES {
        return Err(Error::new(
            ErrorKind::TooManyProperties,
            format!(
                "the entity has {} properties; the service allows at most \
                 {MAX_USER_PROPERTIES} besides PartitionKey, RowKey and Timestamp (split it over \
                 several entities, or mark its type #[entity(wide)])",
                entity.len()
            ),
        )
        .with_entity_key(entity.key()));
    }
    let size = entity_size(entity);
    if size > MAX_ENTITY_BYTES {
        return Err(Error::new(
            ErrorKind::EntityTooLarge,
            format!(
                "the entity is {size} bytes by the service's estimate; the limit is \
                 {MAX_ENTITY_BYTES} bytes (1 MiB): move large values elsewhere or split the entity"
            ),
        )
        .with_entity_key(entity.key()));
    }
    Ok(())
}

/// The checks of [`validate_entity`] that hold for each property alone: the keys,
/// and each property's name and value (not the entity's size or property count).
///
/// # Errors
///
/// As [`validate_entity`], but never [`ErrorKind::TooManyProperties`] or
/// [`ErrorKind::EntityTooLarge`].
pub fn validate_entity_properties(entity: &DynamicEntity) -> Result<()> {
    // The key is copied into an error only: a valid entity costs no allocation.
    validate_partition_key(&entity.partition_key)
        .and_then(|()| validate_row_key(&entity.row_key))
        .and_then(|()| {
            entity
                .properties()
                .try_for_each(|(name, value)| validate_property(name, value))
        })
        .map_err(|e| e.with_entity_key(entity.key()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datetime::DateTime;
    use crate::entity::EntityKey;
    use proptest::prelude::*;

    #[test]
    fn value_sizes_follow_the_guide() {
        assert_eq!(value_size(&Value::from("")), 4);
        assert_eq!(value_size(&Value::from("abc")), 10);
        assert_eq!(value_size(&Value::from("😀")), 8);
        assert_eq!(value_size(&Value::from(vec![0u8; 10])), 14);
        assert_eq!(value_size(&Value::from(DateTime::MIN)), 8);
        assert_eq!(value_size(&Value::from(uuid::Uuid::nil())), 16);
        assert_eq!(value_size(&Value::from(1.0)), 8);
        assert_eq!(value_size(&Value::from(1)), 4);
        assert_eq!(value_size(&Value::from(1i64)), 8);
        assert_eq!(value_size(&Value::from(true)), 1);
    }

    #[test]
    fn entity_size_follows_the_guide() {
        let e = DynamicEntity::new("pk", "😀")
            .with("A", "xy")
            .with("Flag", true);
        // 4 + 2·(2 + 2) + (8 + 2 + 8) + (8 + 8 + 1)
        assert_eq!(entity_size(&e), 4 + 8 + 18 + 17);
        assert_eq!(entity_size(&DynamicEntity::new("", "")), 4);
    }

    fn name_error(name: &str) -> Error {
        let err = validate_property_name(name).expect_err(name);
        assert_eq!(err.kind(), ErrorKind::InvalidProperty, "{name}");
        assert_eq!(err.property(), Some(name));
        err
    }

    #[test]
    fn property_names() {
        for good in [
            "a",
            "_",
            "Age",
            "_private2",
            "Größe",
            "x1_y2",
            &"n".repeat(255),
        ] {
            assert!(validate_property_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "1abc",
            "my-prop",
            "a b",
            "a.b",
            "PartitionKey",
            "RowKey",
            "Timestamp",
            "odata.etag",
            "odata.type",
            "x@odata.type",
        ] {
            assert_eq!(
                name_error(bad).service_code(),
                Some("PropertyNameInvalid"),
                "{bad}"
            );
        }
        assert_eq!(
            name_error(&"n".repeat(256)).service_code(),
            Some("PropertyNameTooLong")
        );
    }

    #[test]
    fn property_values_near_the_limit() {
        let ok = |v: Value| validate_property("P", &v).is_ok();
        let too_large = |v: Value| {
            let err = validate_property("P", &v).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::PropertyValueTooLarge);
            assert_eq!(err.property(), Some("P"));
        };
        assert!(ok(Value::from("a".repeat(32_000))));
        too_large(Value::from("a".repeat(33_000)));
        // Astral characters count two UTF-16 units each.
        assert!(ok(Value::from("😀".repeat(16_000))));
        too_large(Value::from("😀".repeat(16_500)));
        assert!(ok(Value::from(vec![0u8; 65_000])));
        too_large(Value::from(vec![0u8; 66_000]));
        assert!(ok(Value::from(i64::MAX)));
        assert_eq!(
            validate_property("bad-name", &Value::from(1))
                .unwrap_err()
                .kind(),
            ErrorKind::InvalidProperty
        );
    }

    fn with_properties(count: usize) -> DynamicEntity {
        let mut e = DynamicEntity::new("p", "r");
        for i in 0..count {
            e.insert(format!("P{i}"), i as i64);
        }
        e
    }

    #[test]
    fn property_count_limit() {
        assert!(validate_entity(&with_properties(252)).is_ok());
        let err = validate_entity(&with_properties(253)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TooManyProperties);
        assert_eq!(err.entity_key(), Some(&EntityKey::new("p", "r")));
    }

    #[test]
    fn entity_size_limit() {
        let mut e = DynamicEntity::new("p", "r");
        for i in 0..16 {
            e.insert(format!("P{i:02}"), vec![0u8; 65_000]);
        }
        // Fill to exactly 1 MiB with one more binary property named "Q".
        let remaining = MAX_ENTITY_BYTES - entity_size(&e) - (8 + 2 + 4);
        e.insert("Q", vec![0u8; remaining]);
        assert_eq!(entity_size(&e), MAX_ENTITY_BYTES);
        assert!(validate_entity(&e).is_ok());
        e.insert("Q", vec![0u8; remaining + 1]);
        let err = validate_entity(&e).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::EntityTooLarge);
        assert_eq!(err.entity_key(), Some(&EntityKey::new("p", "r")));
    }

    #[test]
    fn errors_carry_key_and_property() {
        let e = DynamicEntity::new("p", "r").with("Big", "x".repeat(40_000));
        let err = validate_entity(&e).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::PropertyValueTooLarge);
        assert_eq!(err.property(), Some("Big"));
        assert_eq!(err.entity_key(), Some(&EntityKey::new("p", "r")));

        let e = DynamicEntity::new("p#", "r").with("A", 1);
        let err = validate_entity(&e).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidKey);
        assert_eq!(err.property(), Some("PartitionKey"));
        assert_eq!(err.entity_key(), Some(&EntityKey::new("p#", "r")));

        let e = DynamicEntity::new("p", "r").with("Timestamp", DateTime::MIN);
        let err = validate_entity(&e).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidProperty);
        assert_eq!(err.property(), Some("Timestamp"));
    }

    proptest! {
        /// The byte count agrees with decoding every character, for text of every
        /// width (ASCII, two-, three- and four-byte characters) at every length.
        #[test]
        fn utf16_units_count_as_the_characters_encode(text in "(\\PC|[a-z]|😀|é){0,40}") {
            prop_assert_eq!(utf16_units(&text), text.encode_utf16().count());
        }

        #[test]
        fn entity_size_is_the_sum_of_its_parts(
            pk in "\\PC{0,10}",
            rk in "\\PC{0,10}",
            props in proptest::collection::vec(("[A-Za-z]{1,8}", "\\PC{0,10}"), 0..8),
        ) {
            let mut e = DynamicEntity::new(pk.clone(), rk.clone());
            for (name, value) in &props {
                e.insert(name.clone(), value.as_str());
            }
            let expected = 4 + 2 * (pk.encode_utf16().count() + rk.encode_utf16().count())
                + e.properties()
                    .map(|(n, v)| 8 + 2 * n.encode_utf16().count() + value_size(v))
                    .sum::<usize>();
            prop_assert_eq!(entity_size(&e), expected);
            // Adding a property grows the estimate by exactly its share.
            let before = entity_size(&e);
            e.insert("ZZZZZZZZZZ", 1i64);
            prop_assert_eq!(entity_size(&e), before + 8 + 20 + 8);
        }
    }
}
