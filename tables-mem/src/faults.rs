//! Fault injection: make chosen calls fail or slow down, for reliability tests of
//! the layers above the engine (retries, index upkeep, reconciliation).

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tables_core::{Error, ErrorKind, Origin, Result};

/// The kinds of engine call a [`Fault`] can target, one per [`tables_core::Engine`]
/// method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallKind {
    /// [`Engine::create_table`](tables_core::Engine::create_table).
    CreateTable,
    /// [`Engine::delete_table`](tables_core::Engine::delete_table).
    DeleteTable,
    /// [`Engine::list_tables`](tables_core::Engine::list_tables).
    ListTables,
    /// [`Engine::get_entity`](tables_core::Engine::get_entity).
    GetEntity,
    /// [`Engine::query`](tables_core::Engine::query) (one call per page).
    Query,
    /// [`Engine::write`](tables_core::Engine::write): a single write of any mode.
    Write,
    /// [`Engine::submit_batch`](tables_core::Engine::submit_batch).
    Batch,
    /// [`BlobStore::create_container`](tables_core::BlobStore::create_container).
    CreateContainer,
    /// [`BlobStore::delete_container`](tables_core::BlobStore::delete_container).
    DeleteContainer,
    /// [`BlobStore::put_blob`](tables_core::BlobStore::put_blob).
    PutBlob,
    /// [`BlobStore::get_blob`](tables_core::BlobStore::get_blob),
    /// [`get_blob_range`](tables_core::BlobStore::get_blob_range) and
    /// [`blob_properties`](tables_core::BlobStore::blob_properties).
    GetBlob,
    /// [`BlobStore::delete_blob`](tables_core::BlobStore::delete_blob).
    DeleteBlob,
    /// [`BlobStore::list_blobs`](tables_core::BlobStore::list_blobs) (one call per page).
    ListBlobs,
}

impl CallKind {
    /// Every kind, in declaration order.
    pub const ALL: [CallKind; 13] = [
        CallKind::CreateTable,
        CallKind::DeleteTable,
        CallKind::ListTables,
        CallKind::GetEntity,
        CallKind::Query,
        CallKind::Write,
        CallKind::Batch,
        CallKind::CreateContainer,
        CallKind::DeleteContainer,
        CallKind::PutBlob,
        CallKind::GetBlob,
        CallKind::DeleteBlob,
        CallKind::ListBlobs,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    /// Fail before the call does anything.
    Fail(ErrorKind),
    /// Perform the call, then report an error (a lost response).
    FailAfter(ErrorKind),
    /// Fail before the call does anything, with an error saying it may have
    /// applied (a request lost on its way: the sender can't tell).
    FailInDoubt(ErrorKind),
    /// Sleep, then perform the call.
    Delay(Duration),
}

/// A rule for [`Faults::inject`]: what to do (fail, fail after applying, delay), to
/// which calls ([`Fault::on`]) and when ([`Fault::nth`], [`Fault::times`]).
///
/// By default a fault fires on every call of every kind. Counting starts when the
/// fault is injected and counts only the calls the fault targets.
///
/// | Rule | Fires on |
/// |---|---|
/// | `Fault::fail(k)` | every call |
/// | `.on(CallKind::Write)` | every single write |
/// | `.on(CallKind::Write).on(CallKind::Batch)` | every write or batch |
/// | `.nth(3)` | the third targeted call only |
/// | `.times(2)` | the first two targeted calls |
/// | `.nth(3).times(2)` | the third and fourth targeted calls |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    action: Action,
    kinds: Vec<CallKind>,
    nth: Option<u64>,
    times: Option<u64>,
}

impl Fault {
    /// Fails the targeted calls with an error of `kind` before they do anything.
    /// The error carries the kind's service status and code
    /// ([`ErrorKind::service_default`]), like a real service answer.
    pub fn fail(kind: ErrorKind) -> Fault {
        Fault::with_action(Action::Fail(kind))
    }

    /// Performs the targeted calls, then reports an error of `kind`: the change is
    /// made but the caller is told it failed, as when a response is lost. The error
    /// says so ([`Error::may_have_applied`]), as the remote engine's errors do after
    /// a lost answer, so the layers above can tell it from a refused write. If the
    /// call fails on its own, its own error is returned.
    pub fn fail_after_applying(kind: ErrorKind) -> Fault {
        Fault::with_action(Action::FailAfter(kind))
    }

    /// Fails the targeted calls before they do anything, with an error of `kind`
    /// that says the call [may have applied](Error::may_have_applied): a request lost
    /// on its way (a timeout before it reached the service), whose sender can't tell
    /// it from a lost answer. The layers above must find out, not assume.
    pub fn fail_in_doubt(kind: ErrorKind) -> Fault {
        Fault::with_action(Action::FailInDoubt(kind))
    }

    /// Delays the targeted calls by `duration` (with `tokio::time::sleep`, so the
    /// calls must run inside a Tokio runtime with the time driver enabled), then
    /// performs them normally. No lock is held while waiting.
    pub fn delay(duration: Duration) -> Fault {
        Fault::with_action(Action::Delay(duration))
    }

    fn with_action(action: Action) -> Fault {
        Fault {
            action,
            kinds: Vec::new(),
            nth: None,
            times: None,
        }
    }

    /// Targets calls of `kind`. Call it several times to target several kinds;
    /// without it, every kind is targeted.
    #[must_use]
    pub fn on(mut self, kind: CallKind) -> Fault {
        if !self.kinds.contains(&kind) {
            self.kinds.push(kind);
        }
        self
    }

    /// Fires on the `n`-th targeted call after injection (1-based) and, unless
    /// [`Fault::times`] says otherwise, only on that one. `nth(0)` is treated as
    /// `nth(1)`.
    #[must_use]
    pub fn nth(mut self, n: u64) -> Fault {
        self.nth = Some(n.max(1));
        self
    }

    /// Fires on `count` consecutive targeted calls (starting at the [`Fault::nth`]
    /// call, or the first). `times(0)` never fires.
    #[must_use]
    pub fn times(mut self, count: u64) -> Fault {
        self.times = Some(count);
        self
    }

    fn targets(&self, kind: CallKind) -> bool {
        self.kinds.is_empty() || self.kinds.contains(&kind)
    }

    /// Whether the `seen`-th targeted call fires the fault, and whether any later one can.
    fn window(&self, seen: u64) -> (bool, bool) {
        let first = self.nth.unwrap_or(1);
        let count = self.times.or(self.nth.map(|_| 1));
        match count {
            None => (seen >= first, true),
            Some(count) => {
                let end = first.saturating_add(count);
                (seen >= first && seen < end, seen.saturating_add(1) < end)
            }
        }
    }
}

struct Armed {
    fault: Fault,
    seen: u64,
}

/// The fault-injection controls and call counters of one engine (shared by its
/// clones). Reach them with [`crate::MemEngine::faults`], or, for any other engine
/// (a remote one included), with [`crate::FaultInjector::faults`].
///
/// ```
/// use tables_core::{DynamicEntity, Engine, ErrorKind, WriteOp};
/// use tables_mem::{CallKind, Fault, MemEngine};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> tables_core::Result<()> {
/// let engine = MemEngine::new();
/// engine.create_table("Orders").await?;
/// // The second single write fails with 503 ServerBusy; nothing is written.
/// engine
///     .faults()
///     .inject(Fault::fail(ErrorKind::Throttled).on(CallKind::Write).nth(2));
/// let insert = |rk: &str| WriteOp::Insert(DynamicEntity::new("p", rk));
/// engine.write("Orders", &insert("1")).await?;
/// let err = engine.write("Orders", &insert("2")).await.unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::Throttled);
/// assert_eq!(err.service_code(), Some("ServerBusy"));
/// engine.write("Orders", &insert("2")).await?; // the retry succeeds
/// assert_eq!(engine.faults().calls_of(CallKind::Write), 3);
/// assert_eq!(engine.faults().fired(), 1);
/// # Ok(())
/// # }
/// ```
pub struct Faults {
    calls: [AtomicU64; CallKind::ALL.len()],
    fired: AtomicU64,
    armed: AtomicUsize,
    rules: Mutex<Vec<Armed>>,
}

impl Default for Faults {
    fn default() -> Faults {
        Faults {
            calls: std::array::from_fn(|_| AtomicU64::new(0)),
            fired: AtomicU64::new(0),
            armed: AtomicUsize::new(0),
            rules: Mutex::new(Vec::new()),
        }
    }
}

impl fmt::Debug for Faults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Faults")
            .field("calls", &self.calls())
            .field("fired", &self.fired())
            .field("pending", &self.pending())
            .finish()
    }
}

/// What a call must do after performing its work: possibly report an injected error.
#[derive(Debug)]
#[must_use]
pub(crate) struct Ticket {
    after: Option<Error>,
}

impl Ticket {
    /// The call's result, or the injected "after" error if the call succeeded.
    pub(crate) fn finish<T>(self, result: Result<T>) -> Result<T> {
        match (result, self.after) {
            (Ok(_), Some(err)) => Err(err),
            (result, _) => result,
        }
    }
}

impl Faults {
    /// Adds a fault. Faults fire independently; when several fire on one call, their
    /// delays add up and the first failure (in injection order) wins.
    pub fn inject(&self, fault: Fault) {
        let mut rules = self.rules.lock().unwrap_or_else(PoisonError::into_inner);
        rules.push(Armed { fault, seen: 0 });
        self.armed.store(rules.len(), Ordering::Release);
    }

    /// Removes every pending fault. Counters are kept.
    pub fn clear(&self) {
        let mut rules = self.rules.lock().unwrap_or_else(PoisonError::into_inner);
        rules.clear();
        self.armed.store(0, Ordering::Release);
    }

    /// Faults that may still fire.
    pub fn pending(&self) -> usize {
        self.armed.load(Ordering::Acquire)
    }

    /// Engine calls made so far, of every kind (including calls that failed).
    pub fn calls(&self) -> u64 {
        self.calls.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// Engine calls of `kind` made so far.
    pub fn calls_of(&self, kind: CallKind) -> u64 {
        self.calls[kind.index()].load(Ordering::Relaxed)
    }

    /// How many times an injected fault fired.
    pub fn fired(&self) -> u64 {
        self.fired.load(Ordering::Relaxed)
    }

    /// Counts a call of `kind` and applies the faults that fire on it: waits out
    /// delays (holding no lock), then fails or returns the ticket to finish with.
    pub(crate) async fn enter(&self, kind: CallKind) -> Result<Ticket> {
        let call = self.calls[kind.index()].fetch_add(1, Ordering::Relaxed) + 1;
        if self.armed.load(Ordering::Acquire) == 0 {
            return Ok(Ticket { after: None });
        }
        let mut delay = Duration::ZERO;
        let mut fail = None;
        let mut after = None;
        {
            let mut rules = self.rules.lock().unwrap_or_else(PoisonError::into_inner);
            rules.retain_mut(|armed| {
                if !armed.fault.targets(kind) {
                    return true;
                }
                armed.seen += 1;
                let (fires, more) = armed.fault.window(armed.seen);
                if fires {
                    self.fired.fetch_add(1, Ordering::Relaxed);
                    let injected = |error: ErrorKind| {
                        let err = Error::new(
                            error,
                            format!("injected fault on {kind:?} call {call} (targeted call {}); remove it with faults().clear()", armed.seen),
                        );
                        // As a real failure would come: the connection's for
                        // transport kinds, the service's answer for the rest.
                        if err.origin() == Origin::Local {
                            err.with_origin(Origin::Service)
                        } else {
                            err
                        }
                    };
                    match armed.fault.action {
                        Action::Delay(d) => delay = delay.saturating_add(d),
                        Action::Fail(k) => {
                            fail.get_or_insert_with(|| injected(k));
                        }
                        Action::FailInDoubt(k) => {
                            fail.get_or_insert_with(|| injected(k).with_may_have_applied());
                        }
                        Action::FailAfter(k) => {
                            after.get_or_insert_with(|| injected(k).with_may_have_applied());
                        }
                    }
                }
                more
            });
            self.armed.store(rules.len(), Ordering::Release);
        }
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        match fail {
            Some(err) => Err(err),
            None => Ok(Ticket { after }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fires(fault: &Fault, upto: u64) -> Vec<u64> {
        (1..=upto).filter(|&n| fault.window(n).0).collect()
    }

    #[test]
    fn windows() {
        let f = Fault::fail(ErrorKind::Server);
        assert_eq!(fires(&f, 4), [1, 2, 3, 4]);
        assert_eq!(fires(&f.clone().nth(3), 6), [3]);
        assert_eq!(fires(&f.clone().times(2), 6), [1, 2]);
        assert_eq!(fires(&f.clone().times(2).nth(3), 6), [3, 4]);
        assert_eq!(fires(&f.clone().times(0), 6), Vec::<u64>::new());
        assert!(
            !f.clone().nth(3).window(3).1,
            "exhausted after the nth call"
        );
        assert!(f.clone().nth(3).window(2).1);
    }

    #[test]
    fn targets_kinds() {
        let f = Fault::fail(ErrorKind::Server)
            .on(CallKind::Write)
            .on(CallKind::Batch);
        assert!(f.targets(CallKind::Write));
        assert!(f.targets(CallKind::Batch));
        assert!(!f.targets(CallKind::Query));
        assert!(Fault::delay(Duration::ZERO).targets(CallKind::Query));
    }
}
