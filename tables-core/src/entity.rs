//! `DynamicEntity`, the property bag every engine stores, and its key and ETag.

use std::fmt;
use std::sync::Arc;

use crate::datetime::DateTime;
use crate::value::Value;

/// The primary key of an entity: PartitionKey and RowKey.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntityKey {
    /// The PartitionKey.
    pub partition_key: String,
    /// The RowKey.
    pub row_key: String,
}

impl EntityKey {
    /// A key from its two parts. Validation happens where the key is used
    /// ([`crate::key::validate_entity_key`]).
    pub fn new(partition_key: impl Into<String>, row_key: impl Into<String>) -> EntityKey {
        EntityKey {
            partition_key: partition_key.into(),
            row_key: row_key.into(),
        }
    }
}

impl fmt::Display for EntityKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "(PartitionKey={:?}, RowKey={:?})",
            self.partition_key, self.row_key
        )
    }
}

/// An entity's version tag, as the service returns it (e.g.
/// `W/"datetime'2026-11-21T22%3A27%3A39.1328500Z'"`). Opaque: compare, don't parse.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ETag(Arc<str>);

impl ETag {
    /// Wraps an ETag string as received.
    pub fn new(value: impl Into<String>) -> ETag {
        ETag(Arc::from(value.into()))
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
        const PREFIX: &str = "W/\"datetime'";
        const SUFFIX: &str = "'\"";
        let mut text = String::with_capacity(PREFIX.len() + 32 + SUFFIX.len());
        text.push_str(PREFIX);
        // Writing into a String cannot fail.
        let _ = timestamp.write_iso(&mut text, "%3A");
        text.push_str(SUFFIX);
        ETag(Arc::from(text))
    }
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
/// ```
/// use tables_core::{DynamicEntity, Value};
///
/// let mut e = DynamicEntity::new("Sales", "empid_000223");
/// e.insert("Age", 34);
/// e.insert("LastName", "Jones");
/// assert_eq!(e.get("Age"), Some(&Value::Int32(34)));
/// assert_eq!(e.len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DynamicEntity {
    /// The PartitionKey.
    pub partition_key: String,
    /// The RowKey.
    pub row_key: String,
    /// The server's last-modified time; `None` before the entity was stored.
    pub timestamp: Option<DateTime>,
    /// The server's version tag; `None` before the entity was stored.
    pub etag: Option<ETag>,
    // Names are shared (`Arc<str>`): cloning an entity, which every read of a stored
    // entity does, then copies no name.
    properties: Vec<(Arc<str>, Value)>,
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
        match self.properties.iter_mut().find(|(n, _)| **n == *name) {
            Some((_, slot)) => Some(std::mem::replace(slot, value)),
            None => {
                self.properties.push((Arc::from(name), value));
                None
            }
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
            .iter()
            .find(|(n, _)| &**n == name)
            .map(|(_, v)| v)
    }

    /// Removes a property, returning its value.
    pub fn remove(&mut self, name: &str) -> Option<Value> {
        let index = self.properties.iter().position(|(n, _)| &**n == name)?;
        Some(self.properties.remove(index).1)
    }

    /// Whether the entity has a property of that name.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The user properties in order.
    pub fn properties(&self) -> impl ExactSizeIterator<Item = (&str, &Value)> + '_ {
        self.properties.iter().map(|(n, v)| (&**n, v))
    }

    /// Number of user properties.
    pub fn len(&self) -> usize {
        self.properties.len()
    }

    /// Whether the entity has no user properties.
    pub fn is_empty(&self) -> bool {
        self.properties.is_empty()
    }

    /// Reserves room for `additional` more properties.
    pub fn reserve(&mut self, additional: usize) {
        self.properties.reserve(additional);
    }

    /// Appends a property without looking for one of the same name: the caller
    /// guarantees names are distinct (generated code).
    pub(crate) fn push_unchecked(&mut self, name: Arc<str>, value: Value) {
        self.properties.push((name, value));
    }

    /// Moves the properties out, leaving the keys, timestamp and ETag.
    pub(crate) fn take_properties(&mut self) -> Vec<(Arc<str>, Value)> {
        std::mem::take(&mut self.properties)
    }

    /// Keeps only the properties for which `keep` returns true.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &Value) -> bool) {
        self.properties.retain(|(n, v)| keep(n, v));
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
