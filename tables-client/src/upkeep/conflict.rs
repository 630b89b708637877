//! The conflict loop, written once: every read-plan-write of the client (a typed
//! write, an index entity update, an index row claim, an intent's own updates, a bulk
//! chunk) reads the rows it depends on, writes conditionally on the versions read,
//! and when a concurrent writer changed a row first, reads again and retries.
//!
//! [`ConflictLoop`] counts the rounds and the requests sent, bounds the retries by
//! [`crate::ClientOptions::max_conflict_retries`], lets other tasks run between
//! rounds, and builds the error after too many lost races. It retries only races
//! that certainly did not apply ([`lost_race`]); a write that may have applied is
//! never planned again (it could then apply twice).

use tables_core::{Engine, Error, ErrorKind, Result, WriteOp};

/// Whether `err` means a conditional write lost a race and certainly wrote nothing:
/// a changed ETag (412), a row that appeared (409) or vanished (404) since it was
/// read, answered to the write itself (not to a retry after a lost answer, which
/// [`Error::may_have_applied`] marks).
pub(crate) fn lost_race(err: &Error) -> bool {
    !err.may_have_applied() && row_changed(err)
}

/// Whether `err` means a row read earlier is no longer as read (412, 409, 404),
/// whether or not the write that met it may have applied. Steps that re-derive
/// everything from what they read (index upkeep) retry on it: if their own earlier
/// attempt applied, the next round sees it and writes nothing.
pub(crate) fn row_changed(err: &Error) -> bool {
    matches!(
        err.kind(),
        ErrorKind::PreconditionFailed | ErrorKind::EntityAlreadyExists | ErrorKind::EntityNotFound
    )
}

/// The rounds of one read-plan-write.
#[derive(Debug)]
pub(crate) struct ConflictLoop {
    retries: u32,
    lost: u32,
    attempts: u32,
}

impl ConflictLoop {
    /// A loop that retries at most `retries` lost races.
    pub(crate) fn new(retries: u32) -> ConflictLoop {
        ConflictLoop {
            retries,
            lost: 0,
            attempts: 0,
        }
    }

    /// Counts `n` requests sent for the write (the remote engine's own retries
    /// included).
    pub(crate) fn sent(&mut self, n: u32) {
        self.attempts = self.attempts.saturating_add(n.max(1));
    }

    /// Counts the requests an engine call made, from its outcome or error.
    pub(crate) fn sent_for(&mut self, err: &Error) {
        self.sent(err.attempts().unwrap_or(1));
    }

    /// Requests sent so far (at least 1).
    pub(crate) fn attempts(&self) -> u32 {
        self.attempts.max(1)
    }

    /// Records a lost race (`err`, which did not apply) and lets other tasks run
    /// before the next round; longer after each loss, so that writers contending for
    /// one row spread out.
    ///
    /// # Errors
    ///
    /// After more than `retries` losses: [`ErrorKind::PreconditionFailed`] saying so,
    /// with `err` as its source.
    /// Writes `op`, planned from rows read in this round: `Ok(true)` when it applied,
    /// `Ok(false)` when a row changed first (after the pause before the next round,
    /// which reads again: if an earlier attempt applied after all, that read shows it
    /// and nothing more is written), an error otherwise or after too many rounds.
    pub(crate) async fn write_planned(
        &mut self,
        engine: &dyn Engine,
        table: &str,
        op: &WriteOp,
    ) -> Result<bool> {
        match engine.write(table, op).await {
            Ok(_) => Ok(true),
            Err(err) if row_changed(&err) => self.lost(err).await.map(|()| false),
            Err(err) => Err(err),
        }
    }

    pub(crate) async fn lost(&mut self, err: Error) -> Result<()> {
        self.lost += 1;
        if self.lost > self.retries {
            return Err(gave_up(err, self.retries).with_attempts(self.attempts()));
        }
        // Yields rather than sleeps: the runtime may have no timer (a current-thread
        // runtime built without `enable_time`), and a yield lets every other ready
        // task run first. 1, 2, 4, .. up to 64 yields.
        for _ in 0..1u32 << (self.lost - 1).min(6) {
            tokio::task::yield_now().await;
        }
        Ok(())
    }
}

/// The error after `retries` lost races in a row.
fn gave_up(last: Error, retries: u32) -> Error {
    let mut err = Error::new(
        ErrorKind::PreconditionFailed,
        format!(
            "gave up after {retries} retries: concurrent writers kept changing the rows this \
             write depends on (raise ClientOptions::max_conflict_retries, or write less \
             concurrently to the same rows)"
        ),
    )
    .with_origin(last.origin());
    if let Some(index) = last.batch_index() {
        err = err.with_batch_index(index);
    }
    if let Some(key) = last.entity_key() {
        err = err.with_entity_key(key.clone());
    }
    if last.may_have_applied() {
        err = err.with_may_have_applied();
    }
    err.with_source(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_certain_losses_are_lost_races() {
        let conflict = Error::new(ErrorKind::PreconditionFailed, "412");
        assert!(lost_race(&conflict));
        let doubtful = conflict.with_may_have_applied();
        assert!(!lost_race(&doubtful));
        assert!(row_changed(&doubtful));
        assert!(!row_changed(&Error::new(ErrorKind::Server, "500")));
    }

    #[tokio::test]
    async fn gives_up_after_the_bound_keeping_the_mark_and_the_key() {
        let mut rounds = ConflictLoop::new(2);
        rounds.sent(3);
        let err = || {
            Error::new(ErrorKind::EntityAlreadyExists, "409")
                .with_batch_index(1)
                .with_entity_key(tables_core::EntityKey::new("p", "r"))
        };
        rounds.lost(err()).await.unwrap();
        rounds.lost(err()).await.unwrap();
        let last = err().with_may_have_applied();
        let gave_up = rounds.lost(last).await.unwrap_err();
        assert_eq!(gave_up.kind(), ErrorKind::PreconditionFailed);
        assert_eq!(gave_up.batch_index(), Some(1));
        assert!(gave_up.may_have_applied(), "the mark survives");
        assert_eq!(gave_up.attempts(), Some(3));
        assert!(gave_up.to_string().contains("gave up after 2 retries"));
    }
}
