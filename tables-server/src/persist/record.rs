//! The records of the data directory's files, and their frames.
//!
//! A file is a sequence of frames: the payload's length (`u32`, little-endian),
//! its CRC-32 (`u32`, little-endian), then the payload. A payload is a tag byte and
//! fields: strings as a `u32` length and UTF-8 bytes, counts and numbers as
//! little-endian integers. Rows are the entity JSON of
//! [`tables_core::odata::encode_stored_entity`] (every Edm type exact, with the
//! Timestamp and ETag); table ACLs and service properties are their REST XML
//! bodies. Each format has one encoder and one decoder, in `tables-core`.
//!
//! | Tag | Record | Fields |
//! |---|---|---|
//! | `C` | table created | name |
//! | `D` | table deleted | name |
//! | `R` | rows changed (one write, or one whole batch) | table, count, then per row `P` + entity JSON or `X` + PartitionKey + RowKey |
//! | `A` | a table's stored access policies | table (lowercased), ACL XML |
//! | `S` | service properties | properties XML |
//! | `H` | snapshot header | the first journal segment after the snapshot (`u64`) |
//! | `E` | snapshot end | records in the snapshot (`u64`) |

use std::fmt;
use std::io::{self, Read};

use tables_core::odata::{decode_entity, encode_stored_entity};
use tables_core::service::acl::{decode_table_acl, encode_table_acl, SignedIdentifier};
use tables_core::service::properties::{
    decode_stored_service_properties, encode_service_properties, ServiceProperties,
};
use tables_core::{DynamicEntity, EntityKey};
use tables_mem::{Change, RowChange};

/// The bytes before a payload: its length and its CRC-32.
pub(crate) const FRAME_HEADER: usize = 8;

/// The largest payload a frame may carry (a batch of 100 entities of 1 MiB each is
/// under 100 MiB as JSON; anything larger is a damaged length).
const MAX_PAYLOAD: usize = 256 << 20;

/// A record read back.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Record {
    TableCreated(String),
    TableDeleted(String),
    Rows {
        table: String,
        rows: Vec<Row>,
    },
    Acl {
        table: String,
        identifiers: Vec<SignedIdentifier>,
    },
    Properties(ServiceProperties),
    SnapshotHeader {
        next_segment: u64,
    },
    SnapshotEnd {
        records: u64,
    },
}

/// A row of [`Record::Rows`], owned.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Row {
    Stored(DynamicEntity),
    Removed(EntityKey),
}

impl Row {
    pub(crate) fn as_change(&self) -> RowChange<'_> {
        match self {
            Row::Stored(entity) => RowChange::Stored(entity),
            Row::Removed(key) => RowChange::Removed(key),
        }
    }
}

/// Appends one frame to `out`, its payload written by `payload`.
fn frame(out: &mut Vec<u8>, payload: impl FnOnce(&mut Vec<u8>)) {
    let start = out.len();
    out.extend_from_slice(&[0; FRAME_HEADER]);
    payload(out);
    let body = &out[start + FRAME_HEADER..];
    // A payload over 4 GiB can't be framed; no record comes near (entities are at
    // most 1 MiB, batches 100 of them).
    let len = u32::try_from(body.len()).unwrap_or(u32::MAX);
    let crc = crc32fast::hash(body);
    out[start..start + 4].copy_from_slice(&len.to_le_bytes());
    out[start + 4..start + FRAME_HEADER].copy_from_slice(&crc.to_le_bytes());
}

fn push_str(out: &mut Vec<u8>, text: &str) {
    push_bytes(out, text.as_bytes());
}

fn push_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&u32::try_from(bytes.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// A length-prefixed field whose bytes `write` appends.
fn push_with(out: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    write(out);
    let len = u32::try_from(out.len() - at - 4).unwrap_or(u32::MAX);
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

/// Appends the frame of an engine change.
pub(crate) fn encode_change(change: &Change<'_>, out: &mut Vec<u8>) {
    frame(out, |out| match change {
        Change::TableCreated(name) => {
            out.push(b'C');
            push_str(out, name);
        }
        Change::TableDeleted(name) => {
            out.push(b'D');
            push_str(out, name);
        }
        Change::Rows { table, rows } => {
            out.push(b'R');
            push_str(out, table);
            out.extend_from_slice(&u32::try_from(rows.len()).unwrap_or(u32::MAX).to_le_bytes());
            for row in *rows {
                match row {
                    RowChange::Stored(entity) => {
                        out.push(b'P');
                        push_with(out, |out| encode_stored_entity(entity, out));
                    }
                    RowChange::Removed(key) => {
                        out.push(b'X');
                        push_str(out, &key.partition_key);
                        push_str(out, &key.row_key);
                    }
                }
            }
        }
        // `Change` may grow; a change this server does not know is not journaled
        // and would be lost, so the build must learn it first.
        _ => unreachable!("a change kind the journal does not know: {change:?}"),
    });
}

/// Appends the frame of a table's stored access policies (none: removed).
pub(crate) fn encode_acl(table: &str, identifiers: &[SignedIdentifier], out: &mut Vec<u8>) {
    frame(out, |out| {
        out.push(b'A');
        push_str(out, table);
        push_with(out, |out| encode_table_acl(identifiers, out));
    });
}

/// Appends the frame of the service properties.
pub(crate) fn encode_properties(properties: &ServiceProperties, out: &mut Vec<u8>) {
    frame(out, |out| {
        out.push(b'S');
        push_with(out, |out| encode_service_properties(properties, out));
    });
}

/// Appends a snapshot's header or end.
pub(crate) fn encode_marker(record: &Record, out: &mut Vec<u8>) {
    frame(out, |out| match record {
        Record::SnapshotHeader { next_segment } => {
            out.push(b'H');
            out.extend_from_slice(&next_segment.to_le_bytes());
        }
        Record::SnapshotEnd { records } => {
            out.push(b'E');
            out.extend_from_slice(&records.to_le_bytes());
        }
        other => unreachable!("not a snapshot marker: {other:?}"),
    });
}

/// Why a file's frames stop being readable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Damage {
    /// The file ends inside a frame: an append cut short.
    Torn,
    /// A frame's checksum does not match its bytes.
    Checksum,
    /// The checksum matches but the payload is not a record (a bug, or a file this
    /// server did not write).
    Unreadable(String),
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Damage::Torn => f.write_str("the file ends inside a record"),
            Damage::Checksum => f.write_str("a record's checksum does not match its bytes"),
            Damage::Unreadable(why) => write!(f, "a record can't be read: {why}"),
        }
    }
}

/// Reads the frames of a file of `size` bytes from its start, streaming (one
/// frame's payload in memory at a time, in a buffer reused for the next), handing
/// each record and the offset just past it to `visit`. Stops at the end (`Ok`) or
/// at the first damaged frame (`Err` with its offset and what is wrong).
///
/// # Errors
///
/// The outer error: `reader` failed (other than by ending early, which is a torn
/// frame).
pub(crate) fn read_frames(
    mut reader: impl Read,
    size: u64,
    mut visit: impl FnMut(Record, usize) -> Result<(), String>,
) -> io::Result<Result<(), (usize, Damage)>> {
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    let mut payload = Vec::new();
    let mut at = 0;
    while at < size {
        let mut header = [0; FRAME_HEADER];
        if !read_whole(&mut reader, &mut header)? {
            return Ok(Err((at, Damage::Torn)));
        }
        let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        if len > MAX_PAYLOAD {
            return Ok(Err((at, Damage::Checksum)));
        }
        let end = at + FRAME_HEADER + len;
        if end > size {
            return Ok(Err((at, Damage::Torn)));
        }
        payload.clear();
        payload.resize(len, 0);
        if !read_whole(&mut reader, &mut payload)? {
            return Ok(Err((at, Damage::Torn)));
        }
        if crc32fast::hash(&payload) != crc {
            return Ok(Err((at, Damage::Checksum)));
        }
        let record = match decode(&payload) {
            Ok(record) => record,
            Err(why) => return Ok(Err((at, Damage::Unreadable(why)))),
        };
        if let Err(why) = visit(record, end) {
            return Ok(Err((at, Damage::Unreadable(why))));
        }
        at = end;
    }
    Ok(Ok(()))
}

/// The record of the intact frame at `at` in `bytes` and where the frame ends: one
/// whose length fits, whose payload reads as a record and whose checksum matches.
/// (The payload is read before the checksum is computed: garbage fails to read
/// within a few bytes, so looking for a frame at every offset of a damaged region
/// stays cheap.)
pub(crate) fn frame_at(bytes: &[u8], at: usize) -> Option<(Record, usize)> {
    let header = bytes.get(at..at.checked_add(FRAME_HEADER)?)?;
    let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
    let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
    if len == 0 || len > MAX_PAYLOAD {
        return None;
    }
    let start = at + FRAME_HEADER;
    let payload = bytes.get(start..start.checked_add(len)?)?;
    if !b"CDRASHE".contains(&payload[0]) {
        return None;
    }
    let record = decode(payload).ok()?;
    (crc32fast::hash(payload) == crc).then_some((record, start + len))
}

/// Where the first intact frame at or after `from` starts, if any.
pub(crate) fn next_intact(bytes: &[u8], from: usize) -> Option<usize> {
    (from..bytes.len()).find(|&at| frame_at(bytes, at).is_some())
}

/// The record a damaged frame at `at` seems to hold, read without its checksum
/// (so perhaps wrongly): for a report of what was lost.
pub(crate) fn guess_at(bytes: &[u8], at: usize) -> Option<Record> {
    let header = bytes.get(at..at.checked_add(FRAME_HEADER)?)?;
    let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
    let start = at + FRAME_HEADER;
    decode(bytes.get(start..start.checked_add(len)?)?).ok()
}

/// Fills `buf` from `reader`: `false` if it ends first.
fn read_whole(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<bool> {
    match reader.read_exact(buf) {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
        Err(err) => Err(err),
    }
}

/// Reads fields off a payload.
struct Fields<'a> {
    bytes: &'a [u8],
}

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.bytes.len() < n {
            return Err("the record ends early".to_owned());
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn byte(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, String> {
        let b = self.take(8)?;
        let mut word = [0; 8];
        word.copy_from_slice(b);
        Ok(u64::from_le_bytes(word))
    }

    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let len = self.u32()? as usize;
        self.take(len)
    }

    fn string(&mut self) -> Result<String, String> {
        let bytes = self.bytes()?;
        String::from_utf8(bytes.to_vec()).map_err(|_| "a name is not UTF-8".to_owned())
    }
}

fn decode(payload: &[u8]) -> Result<Record, String> {
    let mut fields = Fields { bytes: payload };
    let record = match fields.byte()? {
        b'C' => Record::TableCreated(fields.string()?),
        b'D' => Record::TableDeleted(fields.string()?),
        b'R' => {
            let table = fields.string()?;
            let count = fields.u32()? as usize;
            let mut rows = Vec::with_capacity(count.min(1_000));
            for _ in 0..count {
                rows.push(match fields.byte()? {
                    b'P' => Row::Stored(
                        decode_entity(fields.bytes()?).map_err(|e| e.message().to_owned())?,
                    ),
                    b'X' => {
                        let partition_key = fields.string()?;
                        Row::Removed(EntityKey::new(partition_key, fields.string()?))
                    }
                    other => return Err(format!("unknown row tag {other:#04x}")),
                });
            }
            Record::Rows { table, rows }
        }
        b'A' => {
            let table = fields.string()?;
            let identifiers = decode_table_acl(fields.bytes()?).map_err(|e| e.to_string())?;
            Record::Acl { table, identifiers }
        }
        b'S' => {
            let mut properties = ServiceProperties::default();
            // Stored perhaps by a server that took CORS values it now refuses: such a
            // rule is left out (an answer could not carry it), and said so.
            let (update, dropped) =
                decode_stored_service_properties(fields.bytes()?).map_err(|e| e.to_string())?;
            for rule in dropped {
                tracing::warn!(
                    "the stored service properties hold {rule}, which no answer could carry: \
                     it is left out; set the CORS rules again with Set Table Service Properties"
                );
            }
            properties.apply(update);
            Record::Properties(properties)
        }
        b'H' => Record::SnapshotHeader {
            next_segment: fields.u64()?,
        },
        b'E' => Record::SnapshotEnd {
            records: fields.u64()?,
        },
        other => return Err(format!("unknown record tag {other:#04x}")),
    };
    if !fields.bytes.is_empty() {
        return Err(format!(
            "{} bytes follow the record inside its frame",
            fields.bytes.len()
        ));
    }
    Ok(record)
}

#[cfg(test)]
mod tests {
    use tables_core::service::acl::AccessPolicy;
    use tables_core::{DateTime, ETag, Value};

    use super::*;

    fn stored(pk: &str, rk: &str) -> DynamicEntity {
        let mut entity = DynamicEntity::new(pk, rk)
            .with("Name", "Ünïcode \u{1F600}")
            .with("Big", i64::MIN)
            .with("Ratio", -0.0_f64)
            .with("Blob", vec![0_u8, 255, 7]);
        entity.timestamp = Some(DateTime::MAX);
        entity.etag = entity.timestamp.map(ETag::from_timestamp);
        entity
    }

    fn all(bytes: &[u8]) -> Vec<Record> {
        let mut records = Vec::new();
        frames(bytes, |record, _| {
            records.push(record);
            Ok(())
        })
        .unwrap();
        records
    }

    /// The frames of a whole file held in memory.
    fn frames(
        bytes: &[u8],
        visit: impl FnMut(Record, usize) -> Result<(), String>,
    ) -> Result<(), (usize, Damage)> {
        read_frames(bytes, bytes.len() as u64, visit).expect("a slice reads without error")
    }

    #[test]
    fn every_record_reads_back_as_written() {
        let entity = stored("p", "r");
        let gone = EntityKey::new("p", "x");
        let rows = [RowChange::Stored(&entity), RowChange::Removed(&gone)];
        let identifiers = vec![SignedIdentifier {
            id: "policy-1".to_owned(),
            policy: AccessPolicy {
                start: None,
                expiry: Some(DateTime::MAX),
                permission: Some("rau".to_owned()),
            },
        }];
        let mut properties = ServiceProperties::default();
        properties.hour_metrics.enabled = true;
        properties.hour_metrics.include_apis = Some(true);

        let mut out = Vec::new();
        encode_marker(&Record::SnapshotHeader { next_segment: 7 }, &mut out);
        encode_change(&Change::TableCreated("Orders"), &mut out);
        encode_change(
            &Change::Rows {
                table: "Orders",
                rows: &rows,
            },
            &mut out,
        );
        encode_acl("orders", &identifiers, &mut out);
        encode_properties(&properties, &mut out);
        encode_change(&Change::TableDeleted("Orders"), &mut out);
        encode_marker(&Record::SnapshotEnd { records: 5 }, &mut out);

        assert_eq!(
            all(&out),
            [
                Record::SnapshotHeader { next_segment: 7 },
                Record::TableCreated("Orders".to_owned()),
                Record::Rows {
                    table: "Orders".to_owned(),
                    rows: vec![Row::Stored(entity.clone()), Row::Removed(gone)],
                },
                Record::Acl {
                    table: "orders".to_owned(),
                    identifiers,
                },
                Record::Properties(properties),
                Record::TableDeleted("Orders".to_owned()),
                Record::SnapshotEnd { records: 5 },
            ]
        );
        let Record::Rows { rows, .. } = &all(&out)[2] else {
            unreachable!()
        };
        let Row::Stored(back) = &rows[0] else {
            unreachable!()
        };
        // -0.0 keeps its sign; equality of f64 alone would not show it.
        assert!(matches!(back.get("Ratio"), Some(Value::Double(x)) if x.is_sign_negative()));
    }

    #[test]
    fn a_cut_or_changed_frame_is_reported_where_it_starts() {
        let mut out = Vec::new();
        encode_change(&Change::TableCreated("One"), &mut out);
        let second = out.len();
        encode_change(&Change::TableCreated("Two"), &mut out);

        for cut in second + 1..out.len() {
            let mut seen = 0;
            let result = frames(&out[..cut], |_, _| {
                seen += 1;
                Ok(())
            });
            assert_eq!(result, Err((second, Damage::Torn)), "cut at {cut}");
            assert_eq!(seen, 1);
        }
        for flip in second..out.len() {
            let mut damaged = out.clone();
            damaged[flip] ^= 0x40;
            let result = frames(&damaged, |_, _| Ok(()));
            assert!(
                matches!(result, Err((at, Damage::Checksum | Damage::Torn)) if at == second),
                "flip at {flip}: {result:?}"
            );
        }
    }

    /// A file that fails to read is an error of its own, never a torn frame (which
    /// would cut the journal there); one that ends before its size is torn.
    #[test]
    fn a_read_error_is_not_a_torn_frame() {
        struct Failing<'a>(&'a [u8]);
        impl Read for Failing<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0.is_empty() {
                    return Err(io::Error::other("the disk went away"));
                }
                let n = buf.len().min(self.0.len()).min(3);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut out = Vec::new();
        encode_change(&Change::TableCreated("One"), &mut out);
        let first = out.len();
        encode_change(&Change::TableCreated("Two"), &mut out);
        let mut seen = Vec::new();
        let err = read_frames(
            Failing(&out[..first + 5]),
            out.len() as u64,
            |record, end| {
                seen.push((record, end));
                Ok(())
            },
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "the disk went away");
        assert_eq!(seen, [(Record::TableCreated("One".to_owned()), first)]);
        let short = read_frames(&out[..first + 5], out.len() as u64, |_, _| Ok(())).unwrap();
        assert_eq!(short, Err((first, Damage::Torn)));
    }
}
