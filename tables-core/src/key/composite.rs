//! Composite keys: several parts joined by a separator, escaped so that any part,
//! even one containing the separator, splits back exactly.

use std::fmt;

use crate::error::{Error, ErrorKind, Result};

use super::validate::is_forbidden_key_char;

/// The separator [`CompositeKey::new`] and [`split_composite`] use, as in the design
/// guide's `empid_000123_2012`.
pub const COMPOSITE_SEPARATOR: char = '_';

/// The escape character: inside a part, the separator is written `~_` (escape, then
/// separator) and the escape itself `~~`.
pub const COMPOSITE_ESCAPE: char = '~';

/// Builds a key from parts, e.g. `("empid", "000123", "2012")` → `empid_000123_2012`.
///
/// Each part is escaped (separator → `~` + separator, `~` → `~~`), so
/// [`split_composite`] returns exactly the parts pushed, whatever they contain.
///
/// # Ordering
///
/// - **Prefixes.** [`CompositeKey::prefix`] is the encoded parts followed by the
///   separator. A key starts with it exactly when its leading parts equal those parts
///   (and it has more), because an escaped separator inside a part never reads as a
///   separator. So the keys sharing leading parts are contiguous in the service's
///   order, and [`prefix_range`](crate::key::prefix_range)`(&builder.prefix())` selects
///   precisely them; `("ab")` does not catch `("abc", ..)`.
/// - **Whole keys.** Keys sort like their lists of parts (part by part) when each part
///   at a given position has a fixed width (padded numbers, ticks, GUIDs), whatever
///   the separator, or when the separator sorts below every character that appears in
///   the parts and no part contains the escape; choose such a separator with
///   [`CompositeKey::with_separator`] (for example `'!'` or `'-'` below ASCII digits and
///   letters) when parts of varying length must sort part by part. The default `_`
///   sorts above digits and capitals but below lower-case letters.
///
/// ```
/// use tables_core::key::{split_composite, CompositeKey};
///
/// let key = CompositeKey::new().part("empid").part("000123").part("2012");
/// assert_eq!(key.as_str(), "empid_000123_2012");
/// assert_eq!(key.prefix(), "empid_000123_2012_");
///
/// let tricky = CompositeKey::new().part("a_b").part("c~");
/// assert_eq!(tricky.as_str(), "a~_b_c~~");
/// assert_eq!(split_composite(tricky.as_str())?, ["a_b", "c~"]);
/// # Ok::<(), tables_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CompositeKey {
    separator: char,
    encoded: String,
    parts: usize,
}

impl Default for CompositeKey {
    fn default() -> CompositeKey {
        CompositeKey::new()
    }
}

impl CompositeKey {
    /// An empty key with the default separator [`COMPOSITE_SEPARATOR`].
    pub fn new() -> CompositeKey {
        CompositeKey {
            separator: COMPOSITE_SEPARATOR,
            encoded: String::new(),
            parts: 0,
        }
    }

    /// An empty key with another separator.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidKey`] if `separator` is the escape character `~` or a
    /// character the service forbids in keys (`/ \ # ?`, control characters).
    pub fn with_separator(separator: char) -> Result<CompositeKey> {
        check_separator(separator)?;
        Ok(CompositeKey {
            separator,
            ..CompositeKey::new()
        })
    }

    /// Appends a part.
    pub fn push(&mut self, part: &str) -> &mut CompositeKey {
        if self.parts > 0 {
            self.encoded.push(self.separator);
        }
        for c in part.chars() {
            if c == self.separator || c == COMPOSITE_ESCAPE {
                self.encoded.push(COMPOSITE_ESCAPE);
            }
            self.encoded.push(c);
        }
        self.parts += 1;
        self
    }

    /// Builder form of [`CompositeKey::push`].
    #[must_use]
    pub fn part(mut self, part: impl AsRef<str>) -> CompositeKey {
        self.push(part.as_ref());
        self
    }

    /// The separator.
    pub fn separator(&self) -> char {
        self.separator
    }

    /// Number of parts pushed.
    pub fn len(&self) -> usize {
        self.parts
    }

    /// Whether no part was pushed.
    pub fn is_empty(&self) -> bool {
        self.parts == 0
    }

    /// The key.
    pub fn as_str(&self) -> &str {
        &self.encoded
    }

    /// The key, consuming the builder.
    pub fn into_string(self) -> String {
        self.encoded
    }

    /// The prefix shared by exactly the keys whose leading parts are the parts pushed
    /// so far (and that have at least one more part): the key plus the separator, or
    /// `""` when no part was pushed. Pass it to
    /// [`prefix_range`](crate::key::prefix_range) for a range query.
    pub fn prefix(&self) -> String {
        if self.parts == 0 {
            return String::new();
        }
        let mut prefix = self.encoded.clone();
        prefix.push(self.separator);
        prefix
    }
}

impl fmt::Display for CompositeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.encoded)
    }
}

impl From<CompositeKey> for String {
    fn from(key: CompositeKey) -> String {
        key.encoded
    }
}

fn check_separator(separator: char) -> Result<()> {
    if separator == COMPOSITE_ESCAPE || is_forbidden_key_char(separator) {
        return Err(Error::new(
            ErrorKind::InvalidKey,
            format!(
                "{separator:?} cannot separate key parts: it is the escape character `~` or a \
                 character the service forbids in keys; pick another, such as `_`, `-` or `|`"
            ),
        ));
    }
    Ok(())
}

/// Splits a key built by [`CompositeKey::new`] back into its parts.
///
/// The empty key is one empty part.
///
/// # Errors
///
/// [`ErrorKind::InvalidKey`] if the key has an escape character that is not followed
/// by the separator or another escape (so no [`CompositeKey`] built it).
pub fn split_composite(key: &str) -> Result<Vec<String>> {
    split_composite_with(key, COMPOSITE_SEPARATOR)
}

/// Splits a key built by [`CompositeKey::with_separator`] back into its parts.
///
/// # Errors
///
/// [`ErrorKind::InvalidKey`] if `separator` is not a valid separator, or the key has
/// an escape character that is not followed by the separator or another escape.
pub fn split_composite_with(key: &str, separator: char) -> Result<Vec<String>> {
    check_separator(separator)?;
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut chars = key.char_indices();
    while let Some((position, c)) = chars.next() {
        if c == COMPOSITE_ESCAPE {
            match chars.next() {
                Some((_, escaped)) if escaped == separator || escaped == COMPOSITE_ESCAPE => {
                    current.push(escaped);
                }
                _ => {
                    return Err(Error::new(
                        ErrorKind::InvalidKey,
                        format!(
                            "{key:?} is not a composite key: the escape `~` at byte {position} \
                             must be followed by {separator:?} or `~`"
                        ),
                    ))
                }
            }
        } else if c == separator {
            parts.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    parts.push(current);
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn build(separator: char, parts: &[String]) -> CompositeKey {
        let mut key = CompositeKey::with_separator(separator).unwrap();
        for p in parts {
            key.push(p);
        }
        key
    }

    #[test]
    fn escapes_and_splits() {
        let key = CompositeKey::new().part("").part("_").part("~").part("~_");
        assert_eq!(key.as_str(), "_~__~~_~~~_");
        assert_eq!(key.len(), 4);
        assert_eq!(split_composite(key.as_str()).unwrap(), ["", "_", "~", "~_"]);
        assert_eq!(split_composite("").unwrap(), [""]);
        assert_eq!(split_composite("a__b").unwrap(), ["a", "", "b"]);
        let piped = CompositeKey::with_separator('|')
            .unwrap()
            .part("a|b")
            .part("c_d");
        assert_eq!(piped.as_str(), "a~|b|c_d");
        assert_eq!(
            split_composite_with(piped.as_str(), '|').unwrap(),
            ["a|b", "c_d"]
        );
    }

    #[test]
    fn malformed_keys_and_separators_are_invalid_keys() {
        for bad in ["a~", "a~b", "~x_y"] {
            assert_eq!(
                split_composite(bad).unwrap_err().kind(),
                ErrorKind::InvalidKey,
                "{bad}"
            );
        }
        for sep in ['~', '/', '#', '\u{1}', '\u{85}'] {
            assert_eq!(
                CompositeKey::with_separator(sep).unwrap_err().kind(),
                ErrorKind::InvalidKey
            );
            assert_eq!(
                split_composite_with("a", sep).unwrap_err().kind(),
                ErrorKind::InvalidKey
            );
        }
    }

    #[test]
    fn prefix_excludes_longer_first_parts() {
        let base = CompositeKey::new().part("ab");
        assert_eq!(base.prefix(), "ab_");
        assert!(!CompositeKey::new()
            .part("abc")
            .part("x")
            .as_str()
            .starts_with(&base.prefix()));
        assert!(!CompositeKey::new()
            .part("ab_c")
            .as_str()
            .starts_with(&base.prefix()));
        assert!(CompositeKey::new()
            .part("ab")
            .part("")
            .as_str()
            .starts_with(&base.prefix()));
        assert_eq!(CompositeKey::new().prefix(), "");
    }

    fn parts(chars: &'static str) -> impl Strategy<Value = Vec<String>> {
        proptest::collection::vec(chars, 1..5)
    }

    proptest! {
        #[test]
        fn round_trip(parts in parts("[ab_~|]{0,4}|\\PC{0,6}"), sep in prop::sample::select(vec!['_', '|', '-', 'a', '!'])) {
            let key = build(sep, &parts);
            prop_assert_eq!(key.len(), parts.len());
            prop_assert_eq!(split_composite_with(key.as_str(), sep).unwrap(), parts);
        }

        #[test]
        fn prefix_selects_exactly_matching_leading_parts(
            a in parts("[ab_~]{0,3}"),
            b in parts("[ab_~]{0,3}"),
            k in 0usize..5,
        ) {
            let k = k.min(a.len());
            let prefix = build('_', &a[..k]).prefix();
            let expected = b.len() > k && b[..k] == a[..k];
            prop_assert_eq!(build('_', &b).as_str().starts_with(&prefix), expected);
        }

        #[test]
        fn low_separator_keeps_part_order(a in parts("[0-9A-Za-z]{0,4}"), b in parts("[0-9A-Za-z]{0,4}")) {
            let (ka, kb) = (build('!', &a), build('!', &b));
            prop_assert_eq!(ka.as_str().cmp(kb.as_str()), a.cmp(&b));
        }

        #[test]
        fn fixed_width_parts_keep_order_with_the_default_separator(
            a in proptest::collection::vec(any::<u16>(), 1..4),
            b in proptest::collection::vec(any::<u16>(), 1..4),
        ) {
            let pad = |v: &Vec<u16>| v.iter().map(|n| format!("{n:05}")).collect::<Vec<_>>();
            let (ka, kb) = (build('_', &pad(&a)), build('_', &pad(&b)));
            prop_assert_eq!(ka.as_str().cmp(kb.as_str()), a.cmp(&b));
        }
    }
}
