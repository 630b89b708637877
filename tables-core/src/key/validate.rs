//! The service's rules for table names, PartitionKeys and RowKeys.

use crate::entity::EntityKey;
use crate::error::{Error, ErrorKind, Result};

/// Largest PartitionKey or RowKey, in bytes of UTF-16 (512 code units).
pub const MAX_KEY_BYTES: usize = 1024;
/// Most UTF-16 code units in a PartitionKey or RowKey (1 KiB as UTF-16).
pub const MAX_KEY_UTF16_UNITS: usize = MAX_KEY_BYTES / 2;

const TABLE_NAME_RULE: &str = "a table name must be 3 to 63 characters long, start with an ASCII \
    letter and contain only ASCII letters and digits (^[A-Za-z][A-Za-z0-9]{2,62}$), and must not \
    be the reserved name `tables`";

const KEY_CHAR_RULE: &str = "keys must not contain `/`, `\\`, `#`, `?` or the control characters \
    U+0000-U+001F and U+007F-U+009F";

/// Checks a table name against the service's rules: `^[A-Za-z][A-Za-z0-9]{2,62}$`,
/// and not the reserved name `tables` in any case.
///
/// ```
/// use tables_core::{key::validate_table_name, ErrorKind};
///
/// assert!(validate_table_name("Customers2024").is_ok());
/// let err = validate_table_name("my-table").unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::InvalidTableName);
/// assert_eq!(err.service_code(), Some("InvalidResourceName"));
/// assert_eq!(validate_table_name("ab").unwrap_err().service_code(), Some("OutOfRangeInput"));
/// ```
///
/// # Errors
///
/// [`ErrorKind::InvalidTableName`], with service code `OutOfRangeInput` when the
/// length is outside 3–63 characters and `InvalidResourceName` for a bad character,
/// a leading digit, or the reserved name.
pub fn validate_table_name(name: &str) -> Result<()> {
    let length = name.chars().count();
    if !(3..=63).contains(&length) {
        return Err(Error::new(
            ErrorKind::InvalidTableName,
            format!("the table name {name:?} is {length} characters long; {TABLE_NAME_RULE}"),
        )
        .with_service_code("OutOfRangeInput"));
    }
    let invalid = |why: String| {
        Err(Error::new(
            ErrorKind::InvalidTableName,
            format!("the table name {name:?} {why}; {TABLE_NAME_RULE}"),
        )
        .with_service_code("InvalidResourceName"))
    };
    if let Some((position, c)) = name
        .chars()
        .enumerate()
        .find(|(_, c)| !c.is_ascii_alphanumeric())
    {
        return invalid(format!(
            "contains the character {c:?} at position {position}"
        ));
    }
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        return invalid("starts with a digit".to_owned());
    }
    if name.eq_ignore_ascii_case("tables") {
        return invalid("is reserved".to_owned());
    }
    Ok(())
}

/// Checks a PartitionKey: at most 1 KiB as UTF-16 (512 code units), none of `/ \ # ?`
/// and no control characters U+0000–U+001F or U+007F–U+009F. The empty key is legal.
///
/// # Errors
///
/// [`ErrorKind::InvalidKey`] with property `PartitionKey`: service code
/// `KeyValueTooLarge` when too long, `InvalidInput` for a forbidden character (the
/// message names the character and its position).
pub fn validate_partition_key(key: &str) -> Result<()> {
    check_key("PartitionKey", key)
}

/// Checks a RowKey by the same rules as [`validate_partition_key`].
///
/// ```
/// use tables_core::{key::validate_row_key, ErrorKind};
///
/// assert!(validate_row_key("").is_ok());
/// let err = validate_row_key("a/b").unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::InvalidKey);
/// assert_eq!(err.property(), Some("RowKey"));
/// ```
///
/// # Errors
///
/// [`ErrorKind::InvalidKey`] with property `RowKey`: service code `KeyValueTooLarge`
/// when too long, `InvalidInput` for a forbidden character.
pub fn validate_row_key(key: &str) -> Result<()> {
    check_key("RowKey", key)
}

/// Checks both parts of an entity key ([`validate_partition_key`],
/// [`validate_row_key`]).
///
/// # Errors
///
/// As the two checks; the error also carries the entity key.
pub fn validate_entity_key(key: &EntityKey) -> Result<()> {
    validate_partition_key(&key.partition_key)
        .and_then(|()| validate_row_key(&key.row_key))
        .map_err(|e| e.with_entity_key(key.clone()))
}

/// Whether the service forbids `c` in a PartitionKey or RowKey.
pub fn is_forbidden_key_char(c: char) -> bool {
    matches!(c, '/' | '\\' | '#' | '?' | '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
}

/// The first character keys can't hold in `text`, with its position in characters.
pub(crate) fn first_forbidden_char(text: &str) -> Option<(usize, char)> {
    text.chars()
        .enumerate()
        .find(|(_, c)| is_forbidden_key_char(*c))
}

/// The ASCII characters keys can't hold, as bits of a mask: `/ \ # ?`, U+0000–U+001F
/// and U+007F ([`is_forbidden_key_char`] in one shift for an ASCII byte).
const FORBIDDEN_ASCII: u128 =
    0xFFFF_FFFF | 1 << b'/' | 1 << b'\\' | 1 << b'#' | 1 << b'?' | 1 << 0x7F;

fn check_key(which: &str, key: &str) -> Result<()> {
    // The common case first, in one pass over the bytes: a short ASCII key (one
    // UTF-16 unit per byte) without a forbidden character. Anything else takes the
    // checks below, which also say what is wrong.
    let allowed_ascii = |b: u8| b < 0x80 && (FORBIDDEN_ASCII >> b) & 1 == 0;
    if key.len() <= MAX_KEY_UTF16_UNITS && key.bytes().all(allowed_ascii) {
        return Ok(());
    }
    if let Some((position, c)) = first_forbidden_char(key) {
        return Err(Error::new(
            ErrorKind::InvalidKey,
            format!(
                "the {which} contains the forbidden character {c:?} (U+{:04X}) at character \
                 {position}; {KEY_CHAR_RULE}",
                u32::from(c)
            ),
        )
        .with_property(which));
    }
    let units = crate::utf16::utf16_units(key);
    if units > MAX_KEY_UTF16_UNITS {
        return Err(Error::new(
            ErrorKind::InvalidKey,
            format!(
                "the {which} is {} bytes as UTF-16 ({units} code units); the service allows at \
                 most {MAX_KEY_BYTES} bytes ({MAX_KEY_UTF16_UNITS} UTF-16 code units)",
                units * 2
            ),
        )
        .with_service_code("KeyValueTooLarge")
        .with_property(which));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn table_code(name: &str) -> Option<String> {
        let err = validate_table_name(name).expect_err(name);
        assert_eq!(err.kind(), ErrorKind::InvalidTableName, "{name}");
        err.service_code().map(str::to_owned)
    }

    #[test]
    fn table_names() {
        for good in [
            "abc",
            "Abc123",
            "a23",
            &format!("a{}", "b".repeat(62)),
            "Tables1",
        ] {
            assert!(validate_table_name(good).is_ok(), "{good}");
        }
        for short_or_long in ["", "a", "ab", &"a".repeat(64)] {
            assert_eq!(
                table_code(short_or_long).as_deref(),
                Some("OutOfRangeInput"),
                "{short_or_long}"
            );
        }
        for bad in [
            "1abc", "ab-c", "ab_c", "abc ", "tables", "TABLES", "Tables", "abé", "$abc",
        ] {
            assert_eq!(
                table_code(bad).as_deref(),
                Some("InvalidResourceName"),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_ascii_mask_is_the_key_character_rule() {
        for byte in 0..0x80u8 {
            let c = char::from(byte);
            let in_mask = (FORBIDDEN_ASCII >> byte) & 1 == 1;
            assert_eq!(in_mask, is_forbidden_key_char(c), "{c:?}");
            let key = format!("a{c}b");
            assert_eq!(validate_row_key(&key).is_err(), in_mask, "{key:?}");
        }
    }

    #[test]
    fn key_length_is_counted_in_utf16_units() {
        assert!(validate_partition_key(&"a".repeat(512)).is_ok());
        let err = validate_partition_key(&"a".repeat(513)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidKey);
        assert_eq!(err.service_code(), Some("KeyValueTooLarge"));
        assert_eq!(err.property(), Some("PartitionKey"));
        // 256 astral characters are 512 UTF-16 units (1,024 bytes of UTF-8).
        assert!(validate_row_key(&"😀".repeat(256)).is_ok());
        let err = validate_row_key(&format!("{}a", "😀".repeat(256))).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidKey);
        assert_eq!(err.property(), Some("RowKey"));
        // 512 two-byte UTF-8 characters are still 512 units.
        assert!(validate_row_key(&"é".repeat(512)).is_ok());
    }

    #[test]
    fn forbidden_characters_are_rejected() {
        for c in [
            '/', '\\', '#', '?', '\0', '\t', '\u{1f}', '\u{7f}', '\u{85}', '\u{9f}',
        ] {
            let key = format!("ab{c}cd");
            let err = validate_row_key(&key).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidKey, "{c:?}");
            assert_eq!(err.service_code(), Some("InvalidInput"), "{c:?}");
            assert_eq!(err.property(), Some("RowKey"));
        }
        for c in [' ', '~', '\u{a0}', '\u{20}', '|', '_', '\'', '%', 'é'] {
            assert!(validate_partition_key(&format!("x{c}y")).is_ok(), "{c:?}");
        }
        assert!(validate_partition_key("").is_ok());
    }

    #[test]
    fn entity_key_errors_carry_the_key() {
        let key = EntityKey::new("ok", "bad#");
        let err = validate_entity_key(&key).unwrap_err();
        assert_eq!(err.entity_key(), Some(&key));
        assert_eq!(err.property(), Some("RowKey"));
        let key = EntityKey::new("bad?", "ok");
        assert_eq!(
            validate_entity_key(&key).unwrap_err().property(),
            Some("PartitionKey")
        );
        assert!(validate_entity_key(&EntityKey::new("", "")).is_ok());
    }

    proptest! {
        #[test]
        fn table_names_match_the_rule(name in "[ -~]{0,70}") {
            let bytes = name.as_bytes();
            let expected = (3..=63).contains(&bytes.len())
                && bytes[0].is_ascii_alphabetic()
                && bytes.iter().all(u8::is_ascii_alphanumeric)
                && !name.eq_ignore_ascii_case("tables");
            prop_assert_eq!(validate_table_name(&name).is_ok(), expected);
        }

        #[test]
        fn keys_match_the_rule(key in "\\PC{0,20}|[\\x00-\\xa0/#?]{0,20}") {
            let expected = !key.chars().any(|c| {
                matches!(c, '/' | '\\' | '#' | '?') || (c as u32) < 0x20 || (0x7f..=0x9f).contains(&(c as u32))
            });
            prop_assert_eq!(validate_partition_key(&key).is_ok(), expected);
        }
    }
}
