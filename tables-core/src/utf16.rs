//! Counting text as the service measures it: UTF-16 code units. A module of its own,
//! below both the key checks and the size accounting that use it.

/// How many UTF-16 code units `text` is, the unit the service measures keys and
/// strings in: one per character, two for a character outside the Basic
/// Multilingual Plane.
///
/// Counted from the UTF-8 bytes, eight at a time: a byte that doesn't continue a
/// character (`10xxxxxx`) starts one, and one from `0xF0` starts a four-byte
/// character, two units. Every size check of every write runs it, over whole
/// property values: decoding each character (`encode_utf16().count()`) was most of
/// a wide entity's validation in a build without optimizations.
///
/// ```
/// use tables_core::size::utf16_units;
///
/// assert_eq!(utf16_units("héllo"), 5);
/// assert_eq!(utf16_units("a😀"), 3);
/// assert_eq!(utf16_units(""), 0);
/// ```
pub fn utf16_units(text: &str) -> usize {
    const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
    let bytes = text.as_bytes();
    let whole = bytes.len() / 8 * 8;
    let (mut continuing, mut four_byte) = (0usize, 0usize);
    let mut word = [0u8; 8];
    for chunk in bytes[..whole].chunks_exact(8) {
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        // Bit 7 of each byte after shifting left by k is that byte's bit 7 - k.
        continuing += (w & !(w << 1) & HIGH_BITS).count_ones() as usize;
        four_byte += (w & (w << 1) & (w << 2) & (w << 3) & HIGH_BITS).count_ones() as usize;
    }
    for &b in &bytes[whole..] {
        continuing += usize::from(b & 0xC0 == 0x80);
        four_byte += usize::from(b >= 0xF0);
    }
    bytes.len() - continuing + four_byte
}
