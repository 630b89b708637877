//! The model: what a derive input means, after attribute parsing and before code
//! generation. `attr/` builds it (collecting every error), `validate.rs` checks it
//! with one function per rule, `expand/` generates code from it and nothing else.

use proc_macro2::Span;

/// `#[derive(Entity)]` on a struct with named fields.
pub(crate) struct EntityModel {
    /// The struct's name.
    pub(crate) ident: syn::Ident,
    /// The struct's visibility: generated inherent items use it.
    pub(crate) vis: syn::Visibility,
    /// Root path of the runtime: `::tables_client` unless `#[entity(crate = "..")]`.
    pub(crate) krate: syn::Path,
    /// The discriminator written as `EntityType` (defaults to the struct's name).
    pub(crate) kind: String,
    /// Where the kind came from (the `kind = ".."` literal, or the struct name).
    pub(crate) kind_span: Span,
    /// The discriminator version written as `EntityVersion` (default 1, at least 1).
    pub(crate) version: u32,
    /// How rows of the type are marked (`#[entity(tag(..))]`, `#[entity(untagged)]`).
    pub(crate) tag: TagModel,
    /// Older versions of this entity that rows may still hold: each type implements
    /// `Entity` with the same kind and a lower version, and `Into<Self>`.
    pub(crate) upgrade_from: Vec<syn::Path>,
    /// The PartitionKey template.
    pub(crate) partition_key: Template,
    /// The RowKey template.
    pub(crate) row_key: Template,
    /// Secondary indexes (`index(..)`) and index entities (`index_entity(..)`), in
    /// declaration order.
    pub(crate) indexes: Vec<Index>,
    /// Every named field, in declaration order (skipped ones too).
    pub(crate) fields: Vec<Field>,
    /// `#[entity(allow_hot_partition)]`: a PartitionKey may start with a time.
    pub(crate) allow_hot_partition: bool,
    /// `#[entity(wide)]`: an entity may span several rows.
    pub(crate) wide: bool,
}

/// Most properties one row holds besides the three system ones.
pub(crate) const MAX_PROPERTIES: usize = 252;

impl EntityModel {
    /// The properties a row of the type stores: one per stored field (one per point
    /// of a series) and the tag's.
    pub(crate) fn property_count(&self) -> usize {
        let tag = match &self.tag {
            TagModel::Kind => 2,
            TagModel::Property { .. } => 1,
            TagModel::RowKeyPrefix(_) | TagModel::Untagged => 0,
        };
        let fields: usize = self
            .fields
            .iter()
            .filter(|f| {
                !matches!(f.codec, Codec::Skip | Codec::Others) && f.primary_key_use.is_none()
            })
            .map(|f| f.properties().len())
            .sum();
        fields + tag
    }

    /// Whether entities of the type are laid out over several rows when they need
    /// to: marked `wide`, or with a series too long for one row.
    pub(crate) fn is_wide(&self) -> bool {
        self.wide
            || (self
                .fields
                .iter()
                .any(|f| matches!(f.codec, Codec::Series(_)))
                && self.property_count() > MAX_PROPERTIES)
    }
}

/// How an entity type's rows are marked.
pub(crate) enum TagModel {
    /// `EntityType` and `EntityVersion` (the default).
    Kind,
    /// `tag(property = "Type", value = ..)`.
    Property {
        name: String,
        value: TagValueModel,
        span: Span,
    },
    /// `tag(row_key_prefix)`: the RowKey template's literal start.
    RowKeyPrefix(String),
    /// `untagged`.
    Untagged,
}

/// A `tag(value = ..)`.
pub(crate) enum TagValueModel {
    Text(String),
    Int(i32),
}

/// One field of an entity struct.
pub(crate) struct Field {
    /// The field's name.
    pub(crate) ident: syn::Ident,
    /// The field's type as written.
    pub(crate) ty: syn::Type,
    /// What the type looks like, syntactically.
    pub(crate) shape: TypeShape,
    /// The stored property name (after `rename` / `rename_all`).
    pub(crate) property: String,
    /// Span of the `rename = ".."` literal if any, else the field's ident.
    pub(crate) property_span: Span,
    /// How the value is stored.
    pub(crate) codec: Codec,
    /// What an absent property decodes to; `None` means absent is an error
    /// (except for `Option<T>` fields, which decode absent as `None`).
    pub(crate) default: Option<DefaultValue>,
    /// Name of the typed filter column constant (SCREAMING_SNAKE of the field name
    /// unless `#[entity(column = "..")]`).
    pub(crate) column: String,
    /// Where the field is used in the primary key templates: `Some` when the field is
    /// parsed back from the PartitionKey or RowKey (and then not stored as a
    /// property). Filled by `attr/` after the templates are parsed.
    pub(crate) primary_key_use: Option<KeyUse>,
    /// `#[entity(encrypted)]`: the stored value leaves the codec sealed, for the
    /// client's encryption layer; no key form, no typed filter.
    pub(crate) encrypted: bool,
    /// `#[entity(blob)]`: the stored value leaves the codec held for the client's
    /// blob layer, which keeps it in a blob; no key form, no typed column.
    pub(crate) blob: bool,
    /// `#[entity(spill)]`: like `blob`, but inline while the value fits one
    /// property.
    pub(crate) spill: bool,
    /// `#[entity(blob, lazy)]`: a `LazyBlob<T>` field; reads leave the blob
    /// unfetched, a handle to it.
    pub(crate) lazy: bool,
}

/// Which key a field of the primary key lives in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum KeyUse {
    PartitionKey,
    RowKey,
}

/// How a field is stored.
pub(crate) enum Codec {
    /// Through the `Property` trait of its type.
    Plain,
    /// `#[entity(json)]`: serde_json into a String property.
    Json,
    /// `#[entity(with = path)]`: `path::to_value(&T) -> Result<Option<Value>>` and
    /// `path::from_value(Option<Value>) -> Result<T>`.
    With(syn::Path),
    /// `#[entity(skip)]`: not stored; decoded as `Default::default()`.
    Skip,
    /// `#[entity(other_properties)]`: every property no other field names (a map).
    Others,
    /// `#[entity(series)]` on a `[T; N]` field: one property per point, each through
    /// `T`'s `Property` (`hourly_00` .. `hourly_23`).
    Series(Series),
}

/// A data series: the element type and the stored name of each point.
pub(crate) struct Series {
    /// `T` of `[T; N]`.
    pub(crate) element: syn::Type,
    /// The stored property of each point, in order.
    pub(crate) points: Vec<String>,
}

impl Series {
    /// The series of `len` points of `element` stored under `property`: each point
    /// is `{property}_{i}`, `i` zero-padded to the width of the last index (at least
    /// 2 digits), so the names sort in point order.
    pub(crate) fn new(element: syn::Type, property: &str, len: usize) -> Series {
        let width = len.saturating_sub(1).to_string().len().max(2);
        let points = (0..len)
            .map(|i| format!("{property}_{i:0width$}"))
            .collect();
        Series { element, points }
    }
}

impl Field {
    /// The properties the field is stored as: its own, or one per point of a series.
    pub(crate) fn properties(&self) -> Vec<&str> {
        match &self.codec {
            Codec::Series(series) => series.points.iter().map(String::as_str).collect(),
            _ => vec![self.property.as_str()],
        }
    }
}

/// `#[entity(default)]` or `#[entity(default = path)]`.
pub(crate) enum DefaultValue {
    /// `Default::default()`.
    Trait,
    /// A function `fn() -> T`.
    Path(syn::Path),
}

/// A syntactic reading of a field type; used for compile-time checks that need to
/// know "is this an integer" before the type checker runs. The trait bounds of the
/// generated code are the final word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TypeShape {
    String,
    /// `Box<str>`, `Arc<str>`, `Cow<'_, str>`: text like `String` (builders take
    /// `&str`), converted from the `String` a key is read into.
    Str,
    /// `char`: `{c}` (the character) or `{c:0N}` (its code point) in keys.
    Char,
    Bool,
    /// `u8 u16 u32 u64 i8 i16 i32 i64` (name kept for messages).
    Int(String),
    /// `f32 f64`.
    Float,
    /// `Vec<u8>`, `bytes::Bytes`.
    Bytes,
    /// A path ending in `Uuid`: fixed width 36 in keys.
    Uuid,
    /// A path ending in `DateTime` or `OffsetDateTime`: needs `:ticks` or `:rticks`
    /// in keys.
    DateTime,
    /// `NaiveDate` or `time::Date`: `{d}` in keys, 10 characters `yyyy-MM-dd`.
    Date,
    /// A path ending in `Duration`: no key form.
    Duration,
    /// A path ending in `Decimal`: no key form.
    Decimal,
    /// A type with no faithful storage (`i128`, `u128`, `NaiveDateTime`,
    /// `PrimitiveDateTime`); the name is the type's last path segment.
    Unstorable(String),
    /// `Option<T>`.
    Option(Box<TypeShape>),
    /// Anything else (user enums with `#[derive(Property)]`, newtypes, ...).
    Other,
}

/// A parsed key template: `"empid_{employee_id:06}"`.
pub(crate) struct Template {
    /// The template text as written.
    pub(crate) source: String,
    /// Span of the string literal (errors inside a template point at it).
    pub(crate) span: Span,
    /// Literal text and placeholders in order; adjacent literals are merged and
    /// `{{` / `}}` are unescaped.
    pub(crate) segments: Vec<Segment>,
}

/// One piece of a template.
pub(crate) enum Segment {
    /// Literal key text.
    Literal(String),
    /// `{field}` or `{field:form}`.
    Field(Placeholder),
}

/// A `{field:form}` placeholder.
pub(crate) struct Placeholder {
    /// Index into `EntityModel::fields`.
    pub(crate) field: usize,
    /// How the value is written into the key.
    pub(crate) form: KeyForm,
}

/// How a placeholder's value is written into a key.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum KeyForm {
    /// `{field}` on a text-like type (String, unit enums, newtypes of String):
    /// variable width, written verbatim (trait `KeyText`).
    Text,
    /// `{field}` on a `Uuid`: 36 characters, lowercase hyphenated (trait `KeyText`).
    Uuid,
    /// `{field:0N}`: unsigned decimal zero-padded to N digits, 1 <= N <= 20
    /// (trait `KeyInt`).
    Padded(usize),
    /// `{field:signed}`: order-preserving 20-digit form of a signed integer
    /// (trait `KeyInt`).
    Signed,
    /// `{field:ticks}`: 19-digit ticks since 0001-01-01 (trait `KeyTime`).
    Ticks,
    /// `{field:rticks}`: 19-digit reverse ticks, newest first (trait `KeyTime`).
    ReverseTicks,
    /// `{field:iso(N)}`: ISO 8601 UTC text with N fractional digits, oldest first
    /// (trait `KeyTime`).
    Iso(u8),
    /// `{field}` on a calendar date: `yyyy-MM-dd` (trait `KeyDate`).
    Date,
    /// `{field:shard(N)}` on text: the field's stable hash bucket, 0 to N-1,
    /// zero-padded to the digits of N-1 (the hashed shard key). Lossy: the field is
    /// read back from its other placeholder in the key.
    Shard(usize),
}

impl KeyForm {
    /// The width in bytes of the written form, `None` when variable. The derive
    /// can't depend on `tables-core`; a test ties these to its key forms.
    pub(crate) fn fixed_width(self) -> Option<usize> {
        match self {
            KeyForm::Text => None,
            KeyForm::Uuid => Some(36),
            KeyForm::Padded(n) => Some(n),
            KeyForm::Signed => Some(20),
            KeyForm::Ticks | KeyForm::ReverseTicks => Some(19),
            KeyForm::Iso(0) => Some(20),
            KeyForm::Iso(digits) => Some(21 + usize::from(digits)),
            KeyForm::Date => Some(10),
            KeyForm::Shard(buckets) => Some(shard_width(buckets)),
        }
    }
}

/// The digits of a shard bucket number among `buckets` (at least 1).
pub(crate) fn shard_width(buckets: usize) -> usize {
    buckets.saturating_sub(1).max(1).to_string().len()
}

/// `index(..)` or `index_entity(..)`.
pub(crate) struct Index {
    /// The index name (a snake_case identifier); generated helpers are named after it.
    pub(crate) name: String,
    /// Span of the name literal.
    pub(crate) name_span: Span,
    /// Copy (`index`) or list-of-ids (`index_entity`).
    pub(crate) kind: IndexKind,
    /// `table = ".."`: another table; `None` is the primary's table.
    pub(crate) table: Option<String>,
    /// The PartitionKey template; when not given, a copy of the primary's.
    pub(crate) partition_key: Template,
    /// Whether `partition_key` was given explicitly.
    pub(crate) partition_key_given: bool,
    /// The RowKey template.
    pub(crate) row_key: Template,
    /// `include(a, b)`: the fields a partial copy carries (indexes into `fields`);
    /// `None` is a full copy. Always `None` for index entities.
    pub(crate) include: Option<Vec<usize>>,
    /// `unique`: at most one entity per value (copies only).
    pub(crate) unique: bool,
    /// Whether every row of this index lands in the primary's partition of the
    /// primary's table: no `table`, and the PartitionKey template is absent or equal
    /// (same segments) to the primary's. Computed by `attr/`.
    pub(crate) same_partition: bool,
}

/// What an index stores.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum IndexKind {
    /// A copy of the entity (or of its `include` fields) under other keys.
    Copy,
    /// An index entity: one row per indexed value, listing the ids of the entities
    /// that have it (maintained by the client).
    List,
}

/// `#[derive(EntityUnion)]` on an enum of entity types.
pub(crate) struct UnionModel {
    pub(crate) ident: syn::Ident,
    pub(crate) krate: syn::Path,
    /// `Variant(Type)` variants, in order.
    pub(crate) variants: Vec<UnionVariant>,
    /// The `#[entity(other)] Variant(DynamicEntity)` catch-all, if any.
    pub(crate) other: Option<syn::Ident>,
}

/// One `Variant(Type)` of an entity union.
pub(crate) struct UnionVariant {
    pub(crate) ident: syn::Ident,
    pub(crate) ty: syn::Type,
}

/// `#[derive(Property)]`: a unit enum stored as a string, or a newtype stored as
/// its inner type.
pub(crate) struct PropertyModel {
    pub(crate) ident: syn::Ident,
    pub(crate) krate: syn::Path,
    pub(crate) body: PropertyBody,
}

/// The two shapes `#[derive(Property)]` accepts.
pub(crate) enum PropertyBody {
    /// A unit enum: each variant with its stored text (after `rename` /
    /// `rename_all`).
    UnitEnum(Vec<(syn::Ident, String)>),
    /// A unit enum with `#[entity(int)]`: each variant stored as its discriminant,
    /// an Int32 (as .NET stores enums).
    IntEnum(Vec<(syn::Ident, i32)>),
    /// `struct Email(String)`: stored as the inner type; implements the key traits
    /// the inner type's shape allows.
    Newtype {
        ty: Box<syn::Type>,
        shape: TypeShape,
    },
}

#[cfg(test)]
mod tests {
    use super::KeyForm;
    use tables_core::key;

    #[test]
    fn key_widths_are_the_key_forms_of_core() {
        assert_eq!(KeyForm::Text.fixed_width(), None);
        assert_eq!(KeyForm::Uuid.fixed_width(), Some(key::UUID_KEY_WIDTH));
        assert_eq!(KeyForm::Padded(7).fixed_width(), Some(7));
        assert_eq!(KeyForm::Signed.fixed_width(), Some(key::SIGNED_KEY_WIDTH));
        assert_eq!(KeyForm::Ticks.fixed_width(), Some(key::TICKS_KEY_WIDTH));
        assert_eq!(
            KeyForm::ReverseTicks.fixed_width(),
            Some(key::TICKS_KEY_WIDTH)
        );
        assert_eq!(KeyForm::Date.fixed_width(), Some(key::DATE_KEY_WIDTH));
        for digits in 0..=key::MAX_ISO_DIGITS {
            assert_eq!(
                KeyForm::Iso(digits).fixed_width(),
                Some(key::iso_key_width(digits))
            );
        }
        assert_eq!(crate::attr::template::MAX_ISO_DIGITS, key::MAX_ISO_DIGITS);
        assert_eq!(crate::attr::template::MAX_WIDTH, key::MAX_PADDED_WIDTH);
    }
}
