//! The engine's clock: timestamps that strictly increase, even within one tick.

use std::sync::atomic::{AtomicI64, Ordering};

use tables_core::DateTime;

/// Hands out write timestamps: `max(now, previous + 1 tick)`, so two writes never
/// share a timestamp (and hence an ETag), even in the same 100 ns.
#[derive(Debug, Default)]
pub(crate) struct Clock {
    last: AtomicI64,
}

impl Clock {
    /// The next timestamp, strictly after every one handed out before.
    pub(crate) fn next(&self) -> DateTime {
        let now = DateTime::now().ticks();
        let mut previous = self.last.load(Ordering::Relaxed);
        loop {
            let next = now.max(previous.saturating_add(1));
            match self.last.compare_exchange_weak(
                previous,
                next,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                // Past 9999-12-31 there is nothing later to give; stay at the maximum.
                Ok(_) => return DateTime::from_ticks(next).unwrap_or(DateTime::MAX),
                Err(actual) => previous = actual,
            }
        }
    }
}

impl Clock {
    /// Makes every later timestamp come after `timestamp` (a restored row's).
    pub(crate) fn advance_past(&self, timestamp: DateTime) {
        self.last.fetch_max(timestamp.ticks(), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_strictly_increase() {
        let clock = Clock::default();
        let mut last = clock.next();
        for _ in 0..10_000 {
            let next = clock.next();
            assert!(next > last, "{next:?} after {last:?}");
            last = next;
        }
    }

    #[test]
    fn timestamps_follow_the_wall_clock() {
        let clock = Clock::default();
        let before = DateTime::now();
        let stamp = clock.next();
        assert!(stamp >= before);
    }
}
