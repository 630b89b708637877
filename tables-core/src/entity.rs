//! `DynamicEntity`, the property bag every engine stores, and its ETag.

use std::fmt;
use std::sync::Arc;

use crate::datetime::DateTime;
pub use crate::entity_key::EntityKey;
use crate::properties::{Properties, Property, TakenProperties};
use crate::value::Value;

/// An entity's version tag, as the service returns it (e.g.
/// `W/"datetime'2026-11-21T22%3A27%3A39.1328500Z'"`). Compare ETags as opaque strings;
/// [`ETag::timestamp`] reads the write time out of an Azure Storage ETag where one is
/// needed (a `$batch` response carries ETags but no bodies).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ETag(Arc<str>);

impl ETag {
    /// Wraps an ETag string as received.
    pub fn new(value: impl AsRef<str>) -> ETag {
        ETag(Arc::from(value.as_ref()))
    }

    /// The ETag as sent in `If-Match`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The ETag the service gives an entity last written at `timestamp`:
    /// `W/"datetime'<ISO timestamp with `:` encoded as %3A>'"`.
    ///
    /// ```
    /// use tables_core::{DateTime, ETag};
    ///
    /// let t: DateTime = "2026-11-21T22:27:39.13285Z".parse()?;
    /// assert_eq!(
    ///     ETag::from_timestamp(t).as_str(),
    ///     r#"W/"datetime'2026-11-21T22%3A27%3A39.1328500Z'""#
    /// );
    /// # Ok::<(), tables_core::Error>(())
    /// ```
    pub fn from_timestamp(timestamp: DateTime) -> ETag {
        // Assembled on the stack, then copied once into the shared text: every
        // write of the mem engine makes one.
        let (text, len) = timestamp_etag(timestamp);
        // ASCII throughout (the prefix, digits, `-T.Z%3A` and the suffix), so the
        // check passes; the empty default is unreachable.
        ETag(Arc::from(
            std::str::from_utf8(&text[..len]).unwrap_or_default(),
        ))
    }

    /// Whether this is the ETag [`ETag::from_timestamp`] makes of `timestamp`,
    /// compared without making one.
    pub(crate) fn is_from_timestamp(&self, timestamp: DateTime) -> bool {
        let (text, len) = timestamp_etag(timestamp);
        self.0.as_bytes() == &text[..len]
    }

    /// The write time inside an Azure Storage ETag, `W/"datetime'<ISO timestamp>'"`,
    /// with `:` sent either literally or as `%3A`. `None` for any other form (Cosmos DB
    /// ETags, `*`, or a timestamp that does not parse).
    ///
    /// ```
    /// use tables_core::{DateTime, ETag};
    ///
    /// let etag = ETag::new(r#"W/"datetime'2026-11-21T22%3A27%3A39.1328500Z'""#);
    /// let t: DateTime = "2026-11-21T22:27:39.13285Z".parse()?;
    /// assert_eq!(etag.timestamp(), Some(t));
    /// assert_eq!(ETag::new(r#"W/"00000000-0000-0000-0000-000000000000""#).timestamp(), None);
    /// # Ok::<(), tables_core::Error>(())
    /// ```
    pub fn timestamp(&self) -> Option<DateTime> {
        let inner = self
            .0
            .strip_prefix("W/\"datetime'")
            .or_else(|| self.0.strip_prefix("w/\"datetime'"))?
            .strip_suffix("'\"")?;
        // Longest form: `YYYY-MM-DDTHH%3AMM%3ASS.fffffffZ`; anything longer is not ours.
        if inner.len() > 40 {
            return None;
        }
        // Decode the one escape the service writes (`%3A` for `:`) on the stack; any
        // other escape takes the general decoder.
        let mut buffer = [0u8; 40];
        let mut len = 0;
        let mut rest = inner.as_bytes();
        while let Some((&byte, tail)) = rest.split_first() {
            let (decoded, tail) = match (byte, tail) {
                (b'%', [b'3', b'A' | b'a', tail @ ..]) => (b':', tail),
                (b'%', _) => {
                    let text = percent_encoding::percent_decode_str(inner)
                        .decode_utf8()
                        .ok()?;
                    return text.parse().ok();
                }
                (byte, tail) => (byte, tail),
            };
            *buffer.get_mut(len)? = decoded;
            len += 1;
            rest = tail;
        }
        std::str::from_utf8(buffer.get(..len)?).ok()?.parse().ok()
    }
}

const TIMESTAMP_ETAG_PREFIX: &[u8] = b"W/\"datetime'";
const TIMESTAMP_ETAG_SUFFIX: &[u8] = b"'\"";
/// The longest [`ETag::from_timestamp`] text: the ISO text's buffer between the two.
const TIMESTAMP_ETAG_MAX: usize = TIMESTAMP_ETAG_PREFIX.len() + 34 + TIMESTAMP_ETAG_SUFFIX.len();

/// The text of [`ETag::from_timestamp`] on the stack, and its length.
fn timestamp_etag(timestamp: DateTime) -> ([u8; TIMESTAMP_ETAG_MAX], usize) {
    let (prefix, suffix) = (TIMESTAMP_ETAG_PREFIX, TIMESTAMP_ETAG_SUFFIX);
    let (iso, len) = timestamp.iso_bytes(b"%3A");
    let mut text = [0u8; TIMESTAMP_ETAG_MAX];
    let end = prefix.len() + len + suffix.len();
    text[..prefix.len()].copy_from_slice(prefix);
    text[prefix.len()..prefix.len() + len].copy_from_slice(&iso[..len]);
    text[prefix.len() + len..end].copy_from_slice(suffix);
    (text, end)
}

impl fmt::Display for ETag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An entity as a property bag: keys, the server's timestamp and ETag, and the user
/// properties in insertion order.
///
/// Property names are unique: [`DynamicEntity::insert`] replaces a property of the
/// same name in place. The system properties (`PartitionKey`, `RowKey`, `Timestamp`)
/// are fields, never entries of the bag.
///
/// Cloning is cheap: a clone shares the property list with the original (behind
/// an [`Arc`]) and copies only the two keys; the first change to either side's
/// properties copies the list for that side (copy-on-write). Engines hand out
/// stored entities this way, so a read copies no property name or value.
///
/// Equality ignores property order: two entities are equal when their keys,
/// timestamps and ETags are equal and they hold the same set of `(name, value)`
/// pairs. The service does not keep the order in which properties were written, so
/// an entity read back equals the one written. Values compare as [`Value`] does
/// (a `NaN` double equals nothing, not even itself).
///
/// ```
/// use tables_core::{DynamicEntity, Value};
///
/// let mut e = DynamicEntity::new("Sales", "empid_000223");
/// e.insert("Age", 34);
/// e.insert("LastName", "Jones");
/// assert_eq!(e.get("Age"), Some(&Value::Int32(34)));
/// assert_eq!(e.len(), 2);
/// ```
#[derive(Debug, Clone, Default)]
pub struct DynamicEntity {
    /// The PartitionKey.
    pub partition_key: String,
    /// The RowKey.
    pub row_key: String,
    /// The server's last-modified time; `None` before the entity was stored.
    pub timestamp: Option<DateTime>,
    /// The server's version tag; `None` before the entity was stored.
    pub etag: Option<ETag>,
    // Shared, copy-on-write (see `crate::properties`): cloning an entity, which every
    // read of a stored entity does, copies neither names nor values. Names are
    // `Arc<str>` so a copied list, and every row generated code builds, shares them.
    properties: Properties,
}

impl DynamicEntity {
    /// An entity with the given keys and no properties.
    pub fn new(partition_key: impl Into<String>, row_key: impl Into<String>) -> DynamicEntity {
        DynamicEntity {
            partition_key: partition_key.into(),
            row_key: row_key.into(),
            ..DynamicEntity::default()
        }
    }

    /// The entity's key (cloned).
    pub fn key(&self) -> EntityKey {
        EntityKey::new(self.partition_key.clone(), self.row_key.clone())
    }

    /// Sets a property, replacing any property of the same name in place. Returns the
    /// previous value.
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<Value>) -> Option<Value> {
        let name: String = name.into();
        let value = value.into();
        let properties = self.properties.make_mut();
        match properties.iter_mut().find(|(n, _)| **n == *name) {
            Some((_, slot)) => Some(std::mem::replace(slot, value)),
            None => {
                properties.push((Arc::from(name), value));
                None
            }
        }
    }

    /// A copy of this entity under `key`: its timestamp, ETag and properties (shared,
    /// as by `clone`) with the keys copied from `key`, not from this entity. For a
    /// reader that holds the key already, such as an engine answering a point read.
    pub fn clone_with_key(&self, key: &EntityKey) -> DynamicEntity {
        DynamicEntity {
            partition_key: key.partition_key.clone(),
            row_key: key.row_key.clone(),
            timestamp: self.timestamp,
            etag: self.etag.clone(),
            properties: self.properties.clone(),
        }
    }

    /// Builder form of [`DynamicEntity::insert`].
    #[must_use]
    pub fn with(mut self, name: impl Into<String>, value: impl Into<Value>) -> DynamicEntity {
        self.insert(name, value);
        self
    }

    /// The value of a property.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.properties
            .as_slice()
            .iter()
            .find(|(n, _)| &**n == name)
            .map(|(_, v)| v)
    }

    /// Removes a property, returning its value.
    pub fn remove(&mut self, name: &str) -> Option<Value> {
        let index = self
            .properties
            .as_slice()
            .iter()
            .position(|(n, _)| &**n == name)?;
        Some(self.properties.make_mut().remove(index).1)
    }

    /// Whether the entity has a property of that name.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The user properties in order.
    pub fn properties(&self) -> impl ExactSizeIterator<Item = (&str, &Value)> + '_ {
        self.properties.as_slice().iter().map(|(n, v)| (&**n, v))
    }

    /// Number of user properties.
    pub fn len(&self) -> usize {
        self.properties.as_slice().len()
    }

    /// Whether the entity has no user properties.
    pub fn is_empty(&self) -> bool {
        self.properties.as_slice().is_empty()
    }

    /// Reserves room for `additional` more properties.
    pub fn reserve(&mut self, additional: usize) {
        self.properties.make_mut().reserve(additional);
    }

    /// Sets the whole list at once (a decoder that built it); the caller guarantees
    /// names are distinct.
    pub(crate) fn set_properties(&mut self, list: Vec<Property>) {
        self.properties = Properties::from_vec(list);
    }

    /// Appends a property without looking for one of the same name: the caller
    /// guarantees names are distinct (generated code).
    pub(crate) fn push_unchecked(&mut self, name: Arc<str>, value: Value) {
        self.properties.make_mut().push((name, value));
    }

    /// The properties with their shared names.
    pub(crate) fn named_properties(&self) -> &[Property] {
        self.properties.as_slice()
    }

    /// The properties as JSON members, as `encode` writes them the first time,
    /// kept with the (shared) list until it changes: see `crate::properties`.
    pub(crate) fn answer_json(&self, encode: fn(&[Property], &mut Vec<u8>)) -> &[u8] {
        self.properties.answer_json(encode)
    }

    /// Moves the properties out, leaving the keys, timestamp and ETag; a list
    /// shared with another entity is copied.
    pub(crate) fn take_properties(&mut self) -> Vec<Property> {
        std::mem::take(&mut self.properties).into_vec()
    }

    /// Moves the properties out for decoding, leaving the keys, timestamp and ETag;
    /// a list shared with another entity is not copied (see [`TakenProperties`]).
    pub(crate) fn take_properties_lazily(&mut self) -> TakenProperties {
        self.properties.take()
    }

    /// Keeps only the properties for which `keep` returns true.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &Value) -> bool) {
        self.properties.make_mut().retain(|(n, v)| keep(n, v));
    }
}

impl PartialEq for DynamicEntity {
    fn eq(&self, other: &DynamicEntity) -> bool {
        self.partition_key == other.partition_key
            && self.row_key == other.row_key
            && self.timestamp == other.timestamp
            && self.etag == other.etag
            && self.len() == other.len()
            // Names are unique on both sides and the counts match, so "every property
            // of `self` is in `other` with an equal value" is set equality.
            && self.named_properties().iter().enumerate().all(|(i, (name, value))| {
                // Same position first: the common case of identical order is linear.
                let same_slot = other
                    .named_properties()
                    .get(i)
                    .filter(|(n, _)| n == name)
                    .map(|(_, v)| v);
                match same_slot {
                    Some(v) => v == value,
                    None => other.get(name) == Some(value),
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etag_from_timestamp_has_the_service_form() {
        let t: DateTime = "2026-11-21T22:27:39.13285Z".parse().unwrap();
        let etag = ETag::from_timestamp(t);
        assert_eq!(
            etag.as_str(),
            "W/\"datetime'2026-11-21T22%3A27%3A39.1328500Z'\""
        );
        let later = t.checked_add_ticks(1).unwrap();
        assert_ne!(ETag::from_timestamp(later), etag);
        for (extreme, text) in [
            (
                DateTime::MIN,
                "W/\"datetime'1601-01-01T00%3A00%3A00.0000000Z'\"",
            ),
            (
                DateTime::MAX,
                "W/\"datetime'9999-12-31T23%3A59%3A59.9999999Z'\"",
            ),
        ] {
            let etag = ETag::from_timestamp(extreme);
            assert_eq!((etag.as_str(), etag.timestamp()), (text, Some(extreme)));
        }
    }

    #[test]
    fn an_etag_is_from_a_timestamp_only_in_exactly_that_text() {
        let t: DateTime = "2026-11-21T22:27:39.13285Z".parse().unwrap();
        assert!(ETag::from_timestamp(t).is_from_timestamp(t));
        // The same time with `:` unencoded is another ETag text, as is a later time.
        let literal = ETag::new("W/\"datetime'2026-11-21T22:27:39.1328500Z'\"");
        assert!(!literal.is_from_timestamp(t));
        assert!(!ETag::from_timestamp(t).is_from_timestamp(t.checked_add_ticks(1).unwrap()));
    }

    #[test]
    fn etag_timestamp_reads_azure_storage_etags_only() {
        let t: DateTime = "2026-11-21T22:27:39.13285Z".parse().unwrap();
        assert_eq!(ETag::from_timestamp(t).timestamp(), Some(t));
        let literal = ETag::new("W/\"datetime'2026-11-21T22:27:39.1328500Z'\"");
        assert_eq!(literal.timestamp(), Some(t));
        let lower = ETag::new("W/\"datetime'2026-11-21T22%3a27%3a39.1328500Z'\"");
        assert_eq!(lower.timestamp(), Some(t));
        // Other escapes take the general decoder.
        let offset = ETag::new("W/\"datetime'2026-11-21T22%3A27%3A39.1328500%5A'\"");
        assert_eq!(offset.timestamp(), Some(t));
        for other in [
            "*",
            "",
            "W/\"datetime'\"",
            "W/\"datetime'2026-11-21T22%3A27%3A39.1328500Z'",
            "W/\"datetime'not a time'\"",
            "W/\"datetime'2026-11-21T22%3A27%3A39.1328500Z%FF'\"",
            "\"0x8D9E3C1F2A6B7C4\"",
            "W/\"00000000-0000-0000-0000-000000000000\"",
        ] {
            assert_eq!(ETag::new(other).timestamp(), None, "{other}");
        }
    }

    #[test]
    fn equality_ignores_property_order_only() {
        let a = DynamicEntity::new("p", "r").with("x", 1).with("y", "two");
        let b = DynamicEntity::new("p", "r").with("y", "two").with("x", 1);
        assert_eq!(a, b);
        assert_ne!(a, b.clone().with("z", true));
        assert_ne!(
            a,
            DynamicEntity::new("p", "r").with("y", "two").with("x", 2)
        );
        assert_ne!(
            a,
            DynamicEntity::new("p", "r").with("y", "two").with("w", 1)
        );
        assert_ne!(
            a,
            DynamicEntity::new("p", "other")
                .with("x", 1)
                .with("y", "two")
        );
        let mut stamped = b.clone();
        stamped.timestamp = Some(DateTime::MIN);
        assert_ne!(a, stamped);
        let mut tagged = b;
        tagged.etag = Some(ETag::new("W/\"x\""));
        assert_ne!(a, tagged);
    }

    #[test]
    fn insert_replaces_in_place_and_keeps_order() {
        let mut e = DynamicEntity::new("p", "r");
        e.insert("a", 1);
        e.insert("b", 2);
        assert_eq!(e.insert("a", 3), Some(Value::Int32(1)));
        let names: Vec<_> = e.properties().map(|(n, _)| n).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(e.get("a"), Some(&Value::Int32(3)));
        assert_eq!(e.remove("a"), Some(Value::Int32(3)));
        assert!(!e.contains("a"));
    }
}
