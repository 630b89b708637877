//! [`PeriodicTables`]: a table per period, the high volume delete pattern of
//! <https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns>.

use tables_core::key::validate_table_name;
use tables_core::{DateTime, Error, ErrorKind, Result, Row};

use crate::service::TableServiceClient;
use crate::table::Table;

/// The longest table name the service accepts.
const MAX_TABLE_NAME_CHARS: usize = 63;

const TICKS_PER_HOUR: i64 = 3600 * DateTime::TICKS_PER_SECOND;
const TICKS_PER_DAY: i64 = 24 * TICKS_PER_HOUR;

/// How long each table of a [`PeriodicTables`] covers (in UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Period {
    /// An hour: names end in `YYYYMMDDHH`.
    Hour,
    /// A day: names end in `YYYYMMDD`.
    Day,
    /// A calendar month: names end in `YYYYMM`.
    Month,
}

impl Period {
    /// The digits a table name of this period ends in.
    pub fn digits(self) -> usize {
        match self {
            Period::Hour => 10,
            Period::Day => 8,
            Period::Month => 6,
        }
    }

    /// The start of the period holding `at`.
    ///
    /// ```
    /// use tables_client::{DateTime, Period};
    ///
    /// let at = DateTime::from_ymd_hms(2024, 1, 5, 13, 30, 0).unwrap();
    /// assert_eq!(Period::Month.start(at), DateTime::from_ymd_hms(2024, 1, 1, 0, 0, 0).unwrap());
    /// ```
    pub fn start(self, at: DateTime) -> DateTime {
        let (year, month, day, hour, _, _) = at.to_ymd_hms();
        let start = match self {
            Period::Hour => DateTime::from_ymd_hms(year, month, day, hour, 0, 0),
            Period::Day => DateTime::from_ymd_hms(year, month, day, 0, 0, 0),
            Period::Month => DateTime::from_ymd_hms(year, month, 1, 0, 0, 0),
        };
        // The start of a period of an instant in range exists and is in range.
        start.unwrap_or(at)
    }

    /// The start of the period after the one holding `at` (the end of `at`'s
    /// period), or `None` past the year 9999.
    pub fn next(self, at: DateTime) -> Option<DateTime> {
        let start = self.start(at);
        match self {
            Period::Hour => start.checked_add_ticks(TICKS_PER_HOUR),
            Period::Day => start.checked_add_ticks(TICKS_PER_DAY),
            Period::Month => {
                let (year, month, ..) = start.to_ymd_hms();
                let (year, month) = if month == 12 {
                    (year + 1, 1)
                } else {
                    (year, month + 1)
                };
                DateTime::from_ymd_hms(year, month, 1, 0, 0, 0)
            }
        }
    }

    /// The digits naming the period holding `at`.
    fn suffix(self, at: DateTime) -> String {
        let (year, month, day, hour, _, _) = at.to_ymd_hms();
        match self {
            Period::Hour => format!("{year:04}{month:02}{day:02}{hour:02}"),
            Period::Day => format!("{year:04}{month:02}{day:02}"),
            Period::Month => format!("{year:04}{month:02}"),
        }
    }

    /// The start of the period `digits` name, if they name one in this period's form.
    fn parse(self, digits: &str) -> Option<DateTime> {
        if digits.len() != self.digits() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let part = |range: std::ops::Range<usize>| digits.get(range)?.parse::<u32>().ok();
        let year = i32::try_from(part(0..4)?).ok()?;
        let month = part(4..6)?;
        let (day, hour) = match self {
            Period::Hour => (part(6..8)?, part(8..10)?),
            Period::Day => (part(6..8)?, 0),
            Period::Month => (1, 0),
        };
        DateTime::from_ymd_hms(year, month, day, hour, 0, 0)
    }
}

/// A family of tables, one per [`Period`], named `<prefix><period digits>`.
///
/// Deleting millions of old entities one by one is slow and costly; deleting a whole
/// table is one call. So rows that expire together go into a table of their own: one
/// per hour, day or month, named by a prefix and the period's digits
/// (`SignIns20240105`). Writers pick the table of the row's time, a scheduled job
/// creates the next tables ahead of time and drops the ones past retention.
///
/// ```
/// use tables_client::{DateTime, Period, PeriodicTables, TableServiceClient};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let service = TableServiceClient::in_memory();
/// let sign_ins = PeriodicTables::new(&service, "SignIns", Period::Day)?;
/// let jan5 = DateTime::from_ymd_hms(2024, 1, 5, 13, 30, 0).unwrap();
/// assert_eq!(sign_ins.table_name(jan5), "SignIns20240105");
///
/// let created = sign_ins.create_ahead(jan5, 3).await?;
/// assert_eq!(created, ["SignIns20240105", "SignIns20240106", "SignIns20240107"]);
///
/// // Keep what is newer than Jan 6, 00:00: the Jan 5 table ends then, so it goes.
/// let jan6 = DateTime::from_ymd_hms(2024, 1, 6, 0, 0, 0).unwrap();
/// assert_eq!(sign_ins.drop_older_than(jan6).await?, ["SignIns20240105"]);
/// let left: Vec<String> = sign_ins.existing().await?.into_iter().map(|(name, _)| name).collect();
/// assert_eq!(left, ["SignIns20240106", "SignIns20240107"]);
/// # Ok::<(), tables_client::Error>(())
/// # }).unwrap();
/// ```
///
/// Names compare case-sensitively against the prefix; tables of the prefix whose
/// remaining characters don't name a period of this kind are not part of the family
/// and are never dropped.
#[derive(Debug, Clone)]
pub struct PeriodicTables {
    service: TableServiceClient,
    prefix: String,
    period: Period,
}

impl PeriodicTables {
    /// A family of tables named `prefix` + the period's digits, on `service`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidTableName`] unless `prefix` is ASCII letters and digits,
    /// starts and ends with a letter (so the period's digits can't be mistaken for
    /// part of it) and leaves room for the digits within the service's 63
    /// characters.
    pub fn new(
        service: &TableServiceClient,
        prefix: &str,
        period: Period,
    ) -> Result<PeriodicTables> {
        let bytes = prefix.as_bytes();
        let letters_and_digits = bytes.iter().all(u8::is_ascii_alphanumeric);
        let letter_ends = bytes.first().is_some_and(u8::is_ascii_alphabetic)
            && bytes.last().is_some_and(u8::is_ascii_alphabetic);
        let room = MAX_TABLE_NAME_CHARS - period.digits();
        if !letters_and_digits || !letter_ends || prefix.len() > room {
            return Err(Error::new(
                ErrorKind::InvalidTableName,
                format!(
                    "{prefix:?} can't prefix periodic table names: use 1 to {room} ASCII \
                     letters and digits, starting and ending with a letter"
                ),
            ));
        }
        let tables = PeriodicTables {
            service: service.clone(),
            prefix: prefix.to_owned(),
            period,
        };
        validate_table_name(&tables.table_name(DateTime::MIN))?;
        Ok(tables)
    }

    /// The prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The period.
    pub fn period(&self) -> Period {
        self.period
    }

    /// The name of the table for the period holding `at`: `SignIns2024010513`
    /// ([`Period::Hour`]), `SignIns20240105` ([`Period::Day`]), `SignIns202401`
    /// ([`Period::Month`]).
    pub fn table_name(&self, at: DateTime) -> String {
        format!("{}{}", self.prefix, self.period.suffix(at))
    }

    /// A typed handle on the table for the period holding `at` (it may not exist
    /// yet: see [`PeriodicTables::create_ahead`]).
    pub fn table<T: Row>(&self, at: DateTime) -> Table<T> {
        self.service.table(self.table_name(at))
    }

    /// Makes sure the tables of `periods` periods exist: the one holding `from` and
    /// the ones after it. Returns the names of the tables this call created, in
    /// period order (tables that already existed are left alone and not listed), so
    /// running it again is harmless. Periods past the year 9999 are skipped.
    ///
    /// # Errors
    ///
    /// The engine's errors; tables created before the error stay.
    pub async fn create_ahead(&self, from: DateTime, periods: u32) -> Result<Vec<String>> {
        let mut created = Vec::new();
        let mut at = Some(self.period.start(from));
        for _ in 0..periods {
            let Some(start) = at else { break };
            let name = self.table_name(start);
            if self.service.create_table_if_not_exists(&name).await? {
                created.push(name);
            }
            at = self.period.next(start);
        }
        Ok(created)
    }

    /// Deletes, whole, every table of the family whose period ends at or before
    /// `bound` (everything in it is older than `bound`). Returns the names deleted,
    /// in period order.
    ///
    /// # Errors
    ///
    /// The engine's errors; tables deleted before the error stay deleted.
    pub async fn drop_older_than(&self, bound: DateTime) -> Result<Vec<String>> {
        let mut dropped = Vec::new();
        for (name, start) in self.existing().await? {
            let ended = self.period.next(start).is_some_and(|end| end <= bound);
            if ended && self.service.delete_table_if_exists(&name).await? {
                dropped.push(name);
            }
        }
        Ok(dropped)
    }

    /// The family's existing tables with the start of their period, in period order.
    ///
    /// # Errors
    ///
    /// The engine's errors.
    pub async fn existing(&self) -> Result<Vec<(String, DateTime)>> {
        let names = self.service.list_tables_with_prefix(&self.prefix).await?;
        let mut tables: Vec<(String, DateTime)> = names
            .into_iter()
            .filter_map(|name| {
                let start = self
                    .period
                    .parse(name.strip_prefix(self.prefix.as_str())?)?;
                Some((name, start))
            })
            .collect();
        tables.sort_by_key(|(_, start)| *start);
        Ok(tables)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(y: i32, mo: u32, d: u32, h: u32) -> DateTime {
        DateTime::from_ymd_hms(y, mo, d, h, 17, 42).unwrap_or(DateTime::MIN)
    }

    #[test]
    fn suffixes_parse_back_to_period_starts() {
        for period in [Period::Hour, Period::Day, Period::Month] {
            for t in [at(2024, 1, 5, 13), at(2023, 12, 31, 23), at(1601, 1, 1, 0)] {
                let suffix = period.suffix(t);
                assert_eq!(suffix.len(), period.digits());
                assert_eq!(period.parse(&suffix), Some(period.start(t)));
            }
        }
        assert_eq!(Period::Day.parse("20240230"), None);
        assert_eq!(Period::Day.parse("2024010"), None);
        assert_eq!(Period::Month.parse("2024-1"), None);
    }

    #[test]
    fn next_rolls_over_months_and_years() {
        let dec = at(2023, 12, 31, 23);
        assert_eq!(
            Period::Month.next(dec),
            DateTime::from_ymd_hms(2024, 1, 1, 0, 0, 0)
        );
        assert_eq!(
            Period::Day.next(dec),
            DateTime::from_ymd_hms(2024, 1, 1, 0, 0, 0)
        );
        assert_eq!(
            Period::Hour.next(dec),
            DateTime::from_ymd_hms(2024, 1, 1, 0, 0, 0)
        );
        assert_eq!(Period::Month.next(DateTime::MAX), None);
    }
}
