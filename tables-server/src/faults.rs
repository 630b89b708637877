//! Faults on demand: rules that make chosen requests fail the way a real service
//! (or the network to it) fails, so a client's retries and its "may have applied"
//! answers can be tested. Off unless rules are given (`--fault`, or
//! [`Server::fault`](crate::Server::fault)) or the control endpoint is enabled
//! (`--fault-control`: `GET|POST|DELETE /_faults`).
//!
//! A rule is one line of text: an effect, then selectors, comma-separated.
//!
//! | Effect | What the request gets |
//! |---|---|
//! | `status=500` | `500 InternalError`, nothing applied |
//! | `status=503` | `503 ServerBusy`, nothing applied |
//! | `status=429` | `429 TooManyRequests`, nothing applied |
//! | `retry-after-ms=N` | with a status: `Retry-After` and `x-ms-retry-after-ms` headers |
//! | `latency=N` | waits N ms, then is served |
//! | `drop=before` | the connection closes without an answer; nothing applied |
//! | `drop=after` | the request is applied, then the connection closes without an answer |
//!
//! | Selector | Matches |
//! |---|---|
//! | `method=POST` | that method (after `X-HTTP-Method` tunnelling) |
//! | `table=orders` | requests on that table (case-insensitive): named in their path, or, for a `$batch`, in its operations |
//! | `path=text` | paths (as sent) containing the text |
//! | `after=N` | lets the first N matching requests through |
//! | `times=N` | fires N times, then lets everything through (default: every time) |
//!
//! Every injected fault is logged (`warn`) and kept in a log the control endpoint
//! shows.
//!
//! ```
//! use tables_server::FaultRule;
//!
//! let rule: FaultRule = "status=503,retry-after-ms=200,method=POST,table=orders,times=2".parse()?;
//! assert_eq!(rule.to_string(), "status=503,retry-after-ms=200,method=POST,table=orders,times=2");
//! assert!("status=200".parse::<FaultRule>().is_err());
//! # Ok::<(), String>(())
//! ```

use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crate::request::Request;

/// How many injected faults the log keeps (the oldest go first).
const LOG_LINES: usize = 1000;

/// What a firing rule does to the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultEffect {
    /// Answers this status (500, 503 or 429) without applying anything, with
    /// retry-after headers if given.
    Status {
        /// 500, 503 or 429.
        status: u16,
        /// `Retry-After` (rounded up to seconds) and `x-ms-retry-after-ms`.
        retry_after: Option<Duration>,
    },
    /// Waits, then serves the request.
    Latency(Duration),
    /// Closes the connection without applying or answering.
    DropBefore,
    /// Applies the request, then closes the connection without answering.
    DropAfter,
}

/// One fault rule: an effect and which requests it hits. Parsed from and shown as
/// the text the `--fault` flag takes (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultRule {
    effect: FaultEffect,
    method: Option<String>,
    table: Option<String>,
    path: Option<String>,
    after: u64,
    times: Option<u64>,
}

impl FaultRule {
    /// A rule with this effect that hits every request (narrow it with the
    /// selectors).
    pub fn new(effect: FaultEffect) -> FaultRule {
        FaultRule {
            effect,
            method: None,
            table: None,
            path: None,
            after: 0,
            times: None,
        }
    }

    /// Only requests with this method.
    #[must_use]
    pub fn method(mut self, method: &str) -> FaultRule {
        self.method = Some(method.to_ascii_uppercase());
        self
    }

    /// Only requests naming this table in their path.
    #[must_use]
    pub fn table(mut self, table: &str) -> FaultRule {
        self.table = Some(table.to_owned());
        self
    }

    /// Only paths containing this text.
    #[must_use]
    pub fn path(mut self, text: &str) -> FaultRule {
        self.path = Some(text.to_owned());
        self
    }

    /// Lets the first `n` matching requests through.
    #[must_use]
    pub fn after(mut self, n: u64) -> FaultRule {
        self.after = n;
        self
    }

    /// Fires `n` times only.
    #[must_use]
    pub fn times(mut self, n: u64) -> FaultRule {
        self.times = Some(n);
        self
    }

    /// The effect.
    pub fn effect(&self) -> FaultEffect {
        self.effect
    }

    fn matches(&self, request: &Request, table: Option<&str>) -> bool {
        self.method
            .as_deref()
            .is_none_or(|m| m.eq_ignore_ascii_case(request.method.as_str()))
            && self
                .table
                .as_deref()
                .is_none_or(|want| table.is_some_and(|table| table.eq_ignore_ascii_case(want)))
            && self
                .path
                .as_deref()
                .is_none_or(|text| request.raw_path().contains(text))
    }
}

impl FromStr for FaultRule {
    type Err = String;

    fn from_str(text: &str) -> Result<FaultRule, String> {
        let mut effect = None;
        let mut retry_after = None;
        let mut rule = FaultRule::new(FaultEffect::DropBefore);
        let number = |name: &str, value: &str| {
            value
                .trim()
                .parse::<u64>()
                .map_err(|_| format!("fault rule {text:?}: {name}={value:?} is not a whole number"))
        };
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = part
                .split_once('=')
                .ok_or_else(|| format!("fault rule {text:?}: {part:?} is not name=value"))?;
            let set = |effect: &mut Option<FaultEffect>, new: FaultEffect| {
                if effect.replace(new).is_some() {
                    Err(format!(
                        "fault rule {text:?} has two effects; give one of status, latency, drop"
                    ))
                } else {
                    Ok(())
                }
            };
            match name.trim() {
                "status" => {
                    let status = number(name, value)?;
                    let status = match status {
                        500 | 503 | 429 => status as u16,
                        _ => {
                            return Err(format!(
                                "fault rule {text:?}: status={status} is not 500, 503 or 429"
                            ))
                        }
                    };
                    set(
                        &mut effect,
                        FaultEffect::Status {
                            status,
                            retry_after: None,
                        },
                    )?;
                }
                "retry-after-ms" => {
                    retry_after = Some(Duration::from_millis(number(name, value)?));
                }
                "latency" => set(
                    &mut effect,
                    FaultEffect::Latency(Duration::from_millis(number(name, value)?)),
                )?,
                "drop" => set(
                    &mut effect,
                    match value.trim() {
                        "before" => FaultEffect::DropBefore,
                        "after" => FaultEffect::DropAfter,
                        other => {
                            return Err(format!(
                                "fault rule {text:?}: drop={other:?} is not before or after"
                            ))
                        }
                    },
                )?,
                "method" => rule = rule.method(value.trim()),
                "table" => rule = rule.table(value.trim()),
                "path" => rule = rule.path(value.trim()),
                "after" => rule = rule.after(number(name, value)?),
                "times" => rule = rule.times(number(name, value)?),
                other => {
                    return Err(format!(
                        "fault rule {text:?}: unknown setting {other:?}; the settings are \
                         status, retry-after-ms, latency, drop, method, table, path, after, times"
                    ))
                }
            }
        }
        rule.effect = match (effect, retry_after) {
            (None, _) => {
                return Err(format!(
                    "fault rule {text:?} has no effect; give status=500|503|429, latency=<ms> \
                     or drop=before|after"
                ))
            }
            (Some(FaultEffect::Status { status, .. }), retry_after) => FaultEffect::Status {
                status,
                retry_after,
            },
            (Some(_), Some(_)) => {
                return Err(format!(
                    "fault rule {text:?}: retry-after-ms goes with a status only"
                ))
            }
            (Some(effect), None) => effect,
        };
        Ok(rule)
    }
}

impl fmt::Display for FaultRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.effect {
            FaultEffect::Status {
                status,
                retry_after,
            } => {
                write!(f, "status={status}")?;
                if let Some(after) = retry_after {
                    write!(f, ",retry-after-ms={}", after.as_millis())?;
                }
            }
            FaultEffect::Latency(wait) => write!(f, "latency={}", wait.as_millis())?,
            FaultEffect::DropBefore => f.write_str("drop=before")?,
            FaultEffect::DropAfter => f.write_str("drop=after")?,
        }
        if let Some(method) = &self.method {
            write!(f, ",method={method}")?;
        }
        if let Some(table) = &self.table {
            write!(f, ",table={table}")?;
        }
        if let Some(path) = &self.path {
            write!(f, ",path={path}")?;
        }
        if self.after > 0 {
            write!(f, ",after={}", self.after)?;
        }
        if let Some(times) = self.times {
            write!(f, ",times={times}")?;
        }
        Ok(())
    }
}

/// A rule with its counts.
#[derive(Debug)]
struct Armed {
    rule: FaultRule,
    matched: u64,
    fired: u64,
}

/// The server's fault rules and the log of what they did. Cheap to share: the
/// handle [`RunningServer::faults`](crate::RunningServer::faults) returns is this.
#[derive(Debug, Default)]
pub struct Faults {
    /// Whether any rule is set: read on every request without taking the lock.
    armed: AtomicBool,
    rules: Mutex<Vec<Armed>>,
    log: Mutex<VecDeque<String>>,
}

impl Faults {
    fn rules(&self) -> MutexGuard<'_, Vec<Armed>> {
        self.rules.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn log_lines(&self) -> MutexGuard<'_, VecDeque<String>> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds a rule (after those already there: the first rule that fires wins).
    pub fn add(&self, rule: FaultRule) {
        tracing::info!("fault rule added: {rule}");
        let mut rules = self.rules();
        rules.push(Armed {
            rule,
            matched: 0,
            fired: 0,
        });
        self.armed.store(true, Ordering::Release);
    }

    /// Removes every rule (the log stays).
    pub fn clear(&self) {
        let mut rules = self.rules();
        rules.clear();
        self.armed.store(false, Ordering::Release);
    }

    /// The rules, each with how many requests it matched and how often it fired.
    pub fn rules_with_counts(&self) -> Vec<(FaultRule, u64, u64)> {
        self.rules()
            .iter()
            .map(|armed| (armed.rule.clone(), armed.matched, armed.fired))
            .collect()
    }

    /// The injected faults, oldest first: `<rule> -> <METHOD> <path>`.
    pub fn log(&self) -> Vec<String> {
        self.log_lines().iter().cloned().collect()
    }

    /// The effect to inject into this request, if a rule fires; logs it. The table
    /// the request is on (`table`) is only worked out when a rule selects by table.
    pub(crate) fn fire(
        &self,
        request: &Request,
        table: impl FnOnce() -> Option<String>,
    ) -> Option<FaultEffect> {
        if !self.armed.load(Ordering::Acquire) {
            return None;
        }
        let mut rules = self.rules();
        let table = if rules.iter().any(|armed| armed.rule.table.is_some()) {
            table()
        } else {
            None
        };
        let armed = rules.iter_mut().find_map(|armed| {
            if !armed.rule.matches(request, table.as_deref()) {
                return None;
            }
            armed.matched += 1;
            let spent = armed.rule.times.is_some_and(|times| armed.fired >= times);
            if armed.matched <= armed.rule.after || spent {
                return None;
            }
            armed.fired += 1;
            Some(armed)
        })?;
        let line = format!(
            "{} -> {} {} (firing {} of {})",
            armed.rule,
            request.method,
            request.raw_path(),
            armed.fired,
            armed
                .rule
                .times
                .map_or_else(|| "unlimited".to_owned(), |t| t.to_string())
        );
        let effect = armed.rule.effect;
        drop(rules);
        tracing::warn!("injected fault: {line}");
        let mut log = self.log_lines();
        if log.len() == LOG_LINES {
            log.pop_front();
        }
        log.push_back(line);
        Some(effect)
    }

    /// The control endpoint's text: one rule per line with its counts, then the log.
    pub(crate) fn describe(&self) -> String {
        let mut text = String::new();
        for (rule, matched, fired) in self.rules_with_counts() {
            text.push_str(&format!("{rule} matched={matched} fired={fired}\n"));
        }
        text.push_str("--\n");
        for line in self.log() {
            text.push_str(&line);
            text.push('\n');
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_read_and_show_the_same() {
        for text in [
            "status=500",
            "status=429,retry-after-ms=1500,method=PUT",
            "latency=250,table=Orders,after=3",
            "drop=before,path=$batch,times=1",
            "drop=after,method=POST,table=t,after=1,times=2",
        ] {
            let rule: FaultRule = text.parse().unwrap();
            assert_eq!(rule.to_string(), text);
        }
        for bad in [
            "",
            "method=GET",
            "status=404",
            "status=500,drop=after",
            "latency=soon",
            "drop=sideways",
            "latency=5,retry-after-ms=5",
            "colour=red,status=500",
            "status",
        ] {
            let err = bad.parse::<FaultRule>().unwrap_err();
            assert!(err.contains("fault rule"), "{bad}: {err}");
        }
    }

    /// Rule texts: mostly rules (an effect and selectors, values with the spaces,
    /// `=` and punctuation a client may send), sometimes with a setting of garbage
    /// put anywhere.
    fn rule_texts() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let effect = "status=(500|503|429)(,retry-after-ms=[0-9]{1,5})?|latency=[0-9]{1,5}|\
                      drop=(before|after)";
        let selector = "(method|table|path)=[ -+--~]{0,6}|(after|times)=[0-9]{1,3}";
        (
            effect,
            proptest::collection::vec(selector, 0..4),
            proptest::option::weighted(0.3, "[ -~]{0,12}"),
            any::<proptest::sample::Index>(),
        )
            .prop_map(|(effect, selectors, garbage, at)| {
                let mut settings = vec![effect];
                settings.extend(selectors);
                if let Some(garbage) = garbage {
                    settings.insert(at.index(settings.len() + 1), garbage);
                }
                settings.join(",")
            })
    }

    proptest::proptest! {
        /// `--fault` and `POST /_faults` read whatever text they are given: a rule,
        /// or a refusal naming the rule (never a panic), and a rule shown reads
        /// back as the same rule.
        #[test]
        fn any_text_is_a_rule_or_refused_and_rules_read_back(text in rule_texts()) {
            match text.parse::<FaultRule>() {
                Ok(rule) => proptest::prop_assert_eq!(rule.to_string().parse(), Ok(rule)),
                Err(err) => proptest::prop_assert!(err.contains("fault rule"), "{}: {}", text, err),
            }
        }
    }
}
