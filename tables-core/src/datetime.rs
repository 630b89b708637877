//! `DateTime`: an instant in UTC with the service's 100 ns precision and range.

use std::fmt;

/// An instant in UTC, counted in 100 ns ticks since 0001-01-01T00:00:00Z (the .NET
/// tick epoch the design guide's log-tail pattern uses), restricted to the range the
/// service stores: 1601-01-01T00:00:00Z through 9999-12-31T23:59:59.9999999Z.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DateTime {
    ticks: i64,
}

impl DateTime {
    /// Ticks of 9999-12-31T23:59:59.9999999Z (the guide's `MaxTicks`).
    pub const MAX_TICKS: i64 = 3_155_378_975_999_999_999;
    /// Ticks of 1601-01-01T00:00:00Z, the earliest instant the service stores.
    pub const MIN_TICKS: i64 = 504_911_232_000_000_000;
    /// Ticks of the Unix epoch, 1970-01-01T00:00:00Z.
    pub const UNIX_EPOCH_TICKS: i64 = 621_355_968_000_000_000;

    /// The earliest instant: 1601-01-01T00:00:00Z.
    pub const MIN: DateTime = DateTime {
        ticks: Self::MIN_TICKS,
    };
    /// The latest instant: 9999-12-31T23:59:59.9999999Z.
    pub const MAX: DateTime = DateTime {
        ticks: Self::MAX_TICKS,
    };

    /// The instant `ticks` 100 ns intervals after 0001-01-01T00:00:00Z, or `None` if
    /// outside the service's range.
    pub const fn from_ticks(ticks: i64) -> Option<DateTime> {
        if ticks < Self::MIN_TICKS || ticks > Self::MAX_TICKS {
            None
        } else {
            Some(DateTime { ticks })
        }
    }

    /// 100 ns intervals since 0001-01-01T00:00:00Z.
    pub const fn ticks(self) -> i64 {
        self.ticks
    }
}

impl fmt::Debug for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DateTime({})", self.ticks)
    }
}
