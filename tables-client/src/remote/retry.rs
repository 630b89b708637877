//! When and how long to wait before retrying: the [`RetryPolicy`], the server's
//! `Retry-After` hints, and which statuses are transient.

use std::time::{Duration, SystemTime};
use tables_core::odata::header;

use reqwest::header::HeaderMap;

/// How the remote engine retries transient failures: timeouts, broken connections
/// and the statuses 408, 429, 500, 502, 503 and 504.
///
/// The wait before each retry grows exponentially from `initial_backoff` (doubling
/// per retry) up to `max_backoff`, with jitter: the actual wait is drawn uniformly
/// between half the computed delay and all of it, so that clients failing together
/// do not retry together. When the service says how long to wait
/// (`x-ms-retry-after-ms` or `Retry-After`), that hint is used instead. An
/// operation stops retrying after `max_retries` retries, or when the next wait
/// would take it past `max_elapsed` since its first attempt; it then fails with the
/// last attempt's error.
///
/// ```
/// use std::time::Duration;
/// use tables_client::remote::RetryPolicy;
///
/// // More patient than the default, with the default backoff.
/// let policy = RetryPolicy::default()
///     .with_max_retries(8)
///     .with_max_elapsed(Duration::from_secs(300));
/// assert_eq!(policy.initial_backoff, Duration::from_millis(500));
/// assert_eq!(RetryPolicy::none().max_retries, 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Most retries after the first attempt; `0` never retries.
    pub max_retries: u32,
    /// The computed delay before the first retry; it doubles for each further retry.
    pub initial_backoff: Duration,
    /// The largest computed delay between two attempts (before jitter). A server's
    /// hint is not bound by it.
    pub max_backoff: Duration,
    /// The time budget of one operation, every attempt and wait included: no retry
    /// is started whose wait would end after it.
    pub max_elapsed: Duration,
}

impl Default for RetryPolicy {
    /// 4 retries, backoff from 500 ms up to 30 s, within 120 s in all.
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_retries: 4,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            max_elapsed: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// Sets [`max_retries`](RetryPolicy::max_retries).
    pub fn with_max_retries(mut self, retries: u32) -> RetryPolicy {
        self.max_retries = retries;
        self
    }

    /// Sets [`initial_backoff`](RetryPolicy::initial_backoff).
    pub fn with_initial_backoff(mut self, backoff: Duration) -> RetryPolicy {
        self.initial_backoff = backoff;
        self
    }

    /// Sets [`max_backoff`](RetryPolicy::max_backoff).
    pub fn with_max_backoff(mut self, backoff: Duration) -> RetryPolicy {
        self.max_backoff = backoff;
        self
    }

    /// Sets [`max_elapsed`](RetryPolicy::max_elapsed).
    pub fn with_max_elapsed(mut self, budget: Duration) -> RetryPolicy {
        self.max_elapsed = budget;
        self
    }

    /// A policy that never retries: every failure is returned at once.
    pub fn none() -> RetryPolicy {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// The delay before retry number `retry` (0-based): the server's `hint` when
    /// given, as is (the caller checks it against the time budget); otherwise
    /// `initial_backoff * 2^retry`, capped at `max_backoff`, with jitter (uniform in
    /// `[d/2, d]`).
    pub(crate) fn delay(&self, retry: u32, hint: Option<Duration>) -> Duration {
        if let Some(hint) = hint {
            return hint;
        }
        jitter(self.backoff(retry))
    }

    /// The computed delay before retry number `retry`, before jitter.
    fn backoff(&self, retry: u32) -> Duration {
        2u32.checked_pow(retry)
            .and_then(|factor| self.initial_backoff.checked_mul(factor))
            .map_or(self.max_backoff, |d| d.min(self.max_backoff))
    }
}

/// A duration drawn uniformly from `[d/2, d]` (at nanosecond resolution).
fn jitter(d: Duration) -> Duration {
    let nanos = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    Duration::from_nanos(fastrand::u64(nanos / 2..=nanos))
}

/// The server's hint of how long to wait before retrying: `x-ms-retry-after-ms`
/// (whole milliseconds), else `Retry-After` (whole seconds, or an HTTP date taken
/// relative to `now`). `None` when neither header holds a usable value: absent,
/// negative, fractional, unparsable, or a date that is not after `now` (clock skew
/// makes such a date meaningless; the policy's own backoff is used instead).
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = text(header::X_MS_RETRY_AFTER_MS).and_then(parse_whole) {
        return Some(Duration::from_millis(ms));
    }
    let value = text(header::RETRY_AFTER)?;
    if let Some(seconds) = parse_whole(value) {
        return Some(Duration::from_secs(seconds));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    date.duration_since(now).ok().filter(|d| !d.is_zero())
}

/// A non-negative whole number written in ASCII digits only (no sign, no fraction).
fn parse_whole(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Whether a status is worth retrying: 408, 429, 500, 502, 503, 504.
pub(crate) fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 429 | 500 | 502 | 503 | 504)
}

/// Whether an attempt that got this (retryable) status may have been applied by the
/// service: 500, 502 and 504 may come after the work was done; 408, 429 and 503
/// mean the request was turned away before it.
pub(crate) fn status_may_have_applied(status: u16) -> bool {
    matches!(status, 500 | 502 | 504)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_retries: 10,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            max_elapsed: Duration::from_secs(60),
        }
    }

    fn headers(pairs: &[(&'static str, &[u8])]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_bytes(value).unwrap());
        }
        map
    }

    #[test]
    fn default_and_none() {
        let default = RetryPolicy::default();
        assert_eq!(default.max_retries, 4);
        assert_eq!(default.initial_backoff, Duration::from_millis(500));
        assert_eq!(default.max_backoff, Duration::from_secs(30));
        assert_eq!(default.max_elapsed, Duration::from_secs(120));
        let none = RetryPolicy::none();
        assert_eq!(none.max_retries, 0);
        assert_eq!(none.max_elapsed, default.max_elapsed);
    }

    #[test]
    fn backoff_doubles_then_caps() {
        let p = policy();
        let expected = [100, 200, 400, 800, 1_600, 2_000, 2_000];
        for (retry, ms) in expected.into_iter().enumerate() {
            let retry = u32::try_from(retry).unwrap();
            assert_eq!(p.backoff(retry), Duration::from_millis(ms), "retry {retry}");
        }
        // No overflow, however large the retry number or the durations.
        assert_eq!(p.backoff(31), p.max_backoff);
        assert_eq!(p.backoff(32), p.max_backoff);
        assert_eq!(p.backoff(u32::MAX), p.max_backoff);
        let huge = RetryPolicy {
            initial_backoff: Duration::MAX,
            max_backoff: Duration::MAX,
            ..p
        };
        assert_eq!(huge.backoff(3), Duration::MAX);
        assert!(huge.delay(3, None) >= Duration::from_nanos(u64::MAX / 2));
        // An initial backoff above the cap is capped from the start.
        let inverted = RetryPolicy {
            initial_backoff: Duration::from_secs(10),
            ..p
        };
        assert_eq!(inverted.backoff(0), p.max_backoff);
    }

    #[test]
    fn jitter_stays_within_half_to_full_and_spreads() {
        let p = policy();
        for retry in [0, 1, 4, 5, 9] {
            let full = p.backoff(retry);
            let half = full / 2;
            let draws: Vec<Duration> = (0..2_000).map(|_| p.delay(retry, None)).collect();
            assert!(
                draws.iter().all(|d| *d >= half && *d <= full),
                "retry {retry}: a draw left [{half:?}, {full:?}]"
            );
            // Spread over the whole range: some draws in the lowest and in the
            // highest tenth (each has chance 1 - 0.8^2000 of failing to happen, ~0).
            let low = half + (full - half) / 10;
            let high = full - (full - half) / 10;
            assert!(draws.iter().any(|d| *d < low), "retry {retry}: none low");
            assert!(draws.iter().any(|d| *d > high), "retry {retry}: none high");
        }
        assert_eq!(
            RetryPolicy {
                initial_backoff: Duration::ZERO,
                ..p
            }
            .delay(3, None),
            Duration::ZERO
        );
    }

    #[test]
    fn hint_is_honoured_as_is() {
        let p = policy();
        for hint in [
            Duration::ZERO,
            Duration::from_millis(7),
            Duration::from_secs(1),
            // Beyond max_backoff: the budget check is the caller's.
            Duration::from_secs(45),
        ] {
            for retry in [0, 3, 20] {
                assert_eq!(p.delay(retry, Some(hint)), hint);
            }
        }
    }

    #[test]
    fn retry_after_reads_milliseconds_first() {
        let now = SystemTime::now();
        let both = headers(&[("x-ms-retry-after-ms", b"250"), ("retry-after", b"3")]);
        assert_eq!(retry_after(&both, now), Some(Duration::from_millis(250)));
        let ms = headers(&[("x-ms-retry-after-ms", b" 0 ")]);
        assert_eq!(retry_after(&ms, now), Some(Duration::ZERO));
        // A garbage millisecond hint falls back to Retry-After.
        let bad_ms = headers(&[("x-ms-retry-after-ms", b"soon"), ("retry-after", b"2")]);
        assert_eq!(retry_after(&bad_ms, now), Some(Duration::from_secs(2)));
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let seconds = headers(&[("Retry-After", b"120")]);
        assert_eq!(retry_after(&seconds, now), Some(Duration::from_secs(120)));
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        let date = headers(&[("retry-after", later.as_bytes())]);
        assert_eq!(retry_after(&date, now), Some(Duration::from_secs(30)));
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(30));
        let past = headers(&[("retry-after", earlier.as_bytes())]);
        assert_eq!(retry_after(&past, now), None);
        let same = headers(&[("retry-after", httpdate::fmt_http_date(now).as_bytes())]);
        assert_eq!(retry_after(&same, now), None);
    }

    #[test]
    fn retry_after_ignores_garbage() {
        let now = SystemTime::now();
        let garbage: [&[u8]; 12] = [
            b"",
            b"-5",
            b"+5",
            b"1.5",
            b"1e3",
            b"soon",
            b"99999999999999999999999",
            b"Mon, 32 Foo 2024 25:61:61 GMT",
            b"5 seconds",
            b"0x10",
            b"\xff\xfe",
            b"\t",
        ];
        for value in garbage {
            for name in ["retry-after", "x-ms-retry-after-ms"] {
                let map = headers(&[(name, value)]);
                assert_eq!(retry_after(&map, now), None, "{name}: {value:?}");
            }
        }
    }

    #[test]
    fn statuses() {
        for status in [408, 429, 500, 502, 503, 504] {
            assert!(is_retryable_status(status), "{status}");
        }
        for status in [200, 201, 204, 400, 401, 403, 404, 409, 412, 413, 501, 505] {
            assert!(!is_retryable_status(status), "{status}");
        }
        for status in [500, 502, 504] {
            assert!(status_may_have_applied(status), "{status}");
        }
        for status in [408, 429, 503] {
            assert!(!status_may_have_applied(status), "{status}");
        }
    }
}
