//! Key validation and key encodings.
//!
//! - Validation: [`validate_table_name`], [`validate_partition_key`],
//!   [`validate_row_key`], [`validate_entity_key`] apply the service's rules before
//!   anything is sent or stored.
//! - Encodings whose string order is the order of what they encode, each with a
//!   decoder: [`pad_unsigned`] / [`parse_padded`], [`encode_signed`] /
//!   [`decode_signed`], [`ticks_key`] / [`decode_ticks_key`], and the log-tail
//!   pattern's [`reverse_ticks_key`] / [`decode_reverse_ticks_key`].
//! - Composite keys: [`CompositeKey`] and [`split_composite`].
//! - Order: [`cmp_ordinal`] (the service's UTF-16 order) and [`prefix_range`].

mod composite;
mod encode;
mod order;
mod validate;

pub use composite::{
    split_composite, split_composite_with, CompositeKey, COMPOSITE_ESCAPE, COMPOSITE_SEPARATOR,
};
pub use encode::{
    decode_reverse_ticks_key, decode_signed, decode_ticks_key, encode_signed, pad_unsigned,
    parse_padded, reverse_ticks_key, ticks_key, SIGNED_KEY_WIDTH, TICKS_KEY_WIDTH,
};
pub(crate) use encode::{
    signed_offset, write_reverse_ticks_key, write_signed_key, write_ticks_key,
};
pub use order::{cmp_ordinal, prefix_range};
pub use validate::{
    is_forbidden_key_char, validate_entity_key, validate_partition_key, validate_row_key,
    validate_table_name, MAX_KEY_BYTES, MAX_KEY_UTF16_UNITS,
};
