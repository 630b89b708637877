//! Key validation and key encodings.
//!
//! - Validation: [`validate_table_name`], [`validate_partition_key`],
//!   [`validate_row_key`], [`validate_entity_key`] apply the service's rules before
//!   anything is sent or stored.
//! - Key forms whose string order is the order of what they encode, one module
//!   each under [`form`] (width, writer, reader, range), with public encoders and
//!   decoders: [`pad_unsigned`] / [`parse_padded`], [`encode_signed`] /
//!   [`decode_signed`], [`ticks_key`] / [`decode_ticks_key`], and the log-tail
//!   pattern's [`reverse_ticks_key`] / [`decode_reverse_ticks_key`].
//! - Composite keys: [`CompositeKey`] and [`split_composite`].
//! - Order: [`cmp_ordinal`] (the service's UTF-16 order), [`KeyRange`] and
//!   [`prefix_range`].

mod composite;
pub mod form;
mod order;
mod range;
mod validate;

pub use composite::{
    split_composite, split_composite_with, CompositeKey, COMPOSITE_ESCAPE, COMPOSITE_SEPARATOR,
};
pub use form::date::{DATE_KEY_WIDTH, MAX_DATE_YEAR, MIN_DATE_YEAR};
pub use form::iso::{decode_iso_key, iso_key_width, MAX_ISO_DIGITS};
pub use form::padded::{pad_unsigned, parse_padded, MAX_PADDED_WIDTH};
pub use form::signed::{decode_signed, encode_signed, SIGNED_KEY_WIDTH};
pub use form::ticks::{
    decode_reverse_ticks_key, decode_ticks_key, reverse_ticks_key, ticks_key, TICKS_KEY_WIDTH,
};
pub use form::uuid::UUID_KEY_WIDTH;
pub use order::cmp_ordinal;
pub use range::{prefix_range, KeyRange};
pub use validate::{
    is_forbidden_key_char, validate_entity_key, validate_partition_key, validate_row_key,
    validate_table_name, MAX_KEY_BYTES, MAX_KEY_UTF16_UNITS,
};
