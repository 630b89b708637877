//! The time format of shared access signatures (`st`, `se`): written by the
//! client's SAS builders, read back from a [`SasToken`](super::SasToken) to tell
//! when it expires, and by the server to check it.

use std::str::FromStr;

use crate::DateTime;

/// A SAS time: `YYYY-MM-DDTHH:MM:SSZ`, the fraction dropped.
pub fn format_sas_time(time: DateTime) -> String {
    let (year, month, day, hour, minute, second) = time.to_ymd_hms();
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z")
}

/// Reads a SAS time in one of the service's ISO 8601 forms: `YYYY-MM-DD`,
/// `YYYY-MM-DDThh:mm[Z]`, `YYYY-MM-DDThh:mm:ss[.fffffff][Z]`; all UTC.
pub fn parse_sas_time(text: &str) -> Option<DateTime> {
    if !text.is_ascii() {
        return None;
    }
    let bytes = text.as_bytes();
    match bytes.len() {
        10 => DateTime::from_str(&format!("{text}T00:00:00Z")).ok(),
        16 | 17 if bytes.get(13) == Some(&b':') && !text[14..].contains(':') => {
            let (minutes, zone) = text.split_at(16);
            if !(zone.is_empty() || zone == "Z") {
                return None;
            }
            DateTime::from_str(&format!("{minutes}:00Z")).ok()
        }
        _ if bytes.len() >= 19 => {
            // DateTime's own parser accepts offsets; the service wants UTC only.
            let zone = &bytes[19..];
            let utc = zone.is_empty()
                || zone.last() == Some(&b'Z')
                || (zone.first() == Some(&b'.') && zone[1..].iter().all(u8::is_ascii_digit));
            if !utc {
                return None;
            }
            DateTime::from_str(text).ok()
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sas_times() {
        let t = DateTime::from_ymd_hms(2030, 2, 3, 4, 5, 6).unwrap();
        assert_eq!(format_sas_time(t), "2030-02-03T04:05:06Z");
        assert_eq!(
            format_sas_time(t.with_subsec_ticks(9_999_999).unwrap()),
            "2030-02-03T04:05:06Z"
        );
        assert_eq!(parse_sas_time("2030-02-03T04:05:06Z"), Some(t));
        assert_eq!(parse_sas_time("2030-02-03T04:05:06"), Some(t));
        assert_eq!(
            parse_sas_time("2030-02-03T04:05:06.5Z"),
            t.with_subsec_ticks(5_000_000)
        );
        assert_eq!(
            parse_sas_time("2030-02-03T04:05Z"),
            DateTime::from_ymd_hms(2030, 2, 3, 4, 5, 0)
        );
        assert_eq!(
            parse_sas_time("2030-02-03T04:05"),
            DateTime::from_ymd_hms(2030, 2, 3, 4, 5, 0)
        );
        assert_eq!(
            parse_sas_time("2030-02-03"),
            DateTime::from_ymd_hms(2030, 2, 3, 0, 0, 0)
        );
        for bad in [
            "",
            "tomorrow",
            "2030-02-30",
            "2030-02-03T04:05:06+01:00",
            "2030-02-03T04:05+01",
            "2030-02-03T04:05:06.Z",
            "2030-02-03 04:05:06Z",
            "2030-02-03T04:05:06ZZ",
            "2030-02-03T04:0é",
            "2030-02-03T04:éé",
            "2030-02-03T04:05:0é",
        ] {
            assert_eq!(parse_sas_time(bad), None, "{bad:?}");
        }
    }
}
