//! Committing a planned transaction, and learning exactly whether it committed when
//! its answer was lost.
//!
//! A transaction with an intent writes it (or, after claims, turns it `pending`) in
//! the same entity group transaction as the primaries: the intent is the
//! transaction's *commit marker*. When the answer is lost ([`Error::may_have_applied`]),
//! the marker tells:
//!
//! - intent `pending` or `done`: the transaction committed;
//! - intent `claiming` or absent: it did not yet, and to make sure it never does (a
//!   late delivery), the writer *fences* it: turns the `claiming` intent `aborted`,
//!   or inserts an `aborted` tombstone where the transaction would insert the intent.
//!   The transaction, conditional on the first, or inserting the second, then fails.
//!
//! Tombstones stay for [`crate::ClientOptions::intent_retention`]; the writer trusts
//! an absent marker only well within that time.
//!
//! Without an intent there is no marker: a doubtful transaction is reported with
//! the mark, never sent again.

use std::time::Instant;

use tables_core::{Engine, Error, IfMatch, Result, WriteOp, WriteOutcome};

use super::conflict::{row_changed, ConflictLoop};
use super::intents::{intent_row, IntentState, LiveIntent};
use super::plan::{Built, Claim, Retry};
use super::rows::{is_stale_claim, replace_over, taken, Holder, IndexOf};
use super::settle::{apply, fence_absent, Finish};
use crate::service::TableServiceClient;

/// How a round ended.
#[derive(Debug)]
pub(super) enum Outcome {
    /// Committed: one outcome per operation (unknown versions when the commit was
    /// learned from the marker), the intent to settle, and whether no attempt is in
    /// doubt.
    Committed {
        outcomes: Vec<WriteOutcome>,
        intent: Option<LiveIntent>,
        clean: bool,
    },
    /// A race lost on the client's own condition; nothing was written: plan again.
    Lost(Error),
    /// The error to return (marked when the write may have applied).
    Failed(Error),
}

/// What a commit marker says.
enum Marker {
    Committed(LiveIntent),
    NotCommitted,
    Unknown,
}

/// Sends the planned transaction (after its claims, if any).
pub(super) async fn commit(
    service: &TableServiceClient,
    table: &str,
    mut built: Built,
    rounds: &mut ConflictLoop,
) -> Outcome {
    let engine = service.engine().as_ref();
    let has_claims = built.intent.as_ref().is_some_and(|i| !i.claims.is_empty());
    let mut claiming = None;
    if has_claims {
        match claim(service, table, &mut built).await {
            Ok(live) => claiming = Some(live),
            Err(outcome) => return outcome,
        }
    }
    let started = Instant::now();
    let result = submit(engine, table, &built.ops).await;
    let err = match result {
        Ok(outcomes) => {
            let sent = outcomes.first().map_or(1, |o| o.attempts);
            rounds.sent(sent);
            let intent = built.intent.as_ref().map(|planned| {
                let etag = outcomes.get(planned.op_index).and_then(|o| o.etag.clone());
                LiveIntent::new(planned.key.clone(), etag, planned.doc.clone())
            });
            return Outcome::Committed {
                outcomes,
                intent,
                clean: sent == 1,
            };
        }
        Err(err) => err,
    };
    rounds.sent_for(&err);
    let err = if err.may_have_applied() {
        match built.intent.as_ref() {
            None => return Outcome::Failed(built.map_error(err)),
            Some(planned) => {
                let mode = claiming
                    .as_ref()
                    .and_then(|live: &LiveIntent| live.etag.clone());
                match read_marker(service, table, &planned.key, mode.is_some(), started).await {
                    Marker::Committed(live) => {
                        let unknown = vec![WriteOutcome::new(None, None); built.ops.len()];
                        return Outcome::Committed {
                            outcomes: unknown,
                            intent: Some(live),
                            clean: false,
                        };
                    }
                    Marker::NotCommitted => err.settled_not_applied(),
                    Marker::Unknown => return Outcome::Failed(built.map_error(err)),
                }
            }
        }
    } else {
        err
    };
    // Not committed: release what was claimed for it.
    if let Some(live) = claiming {
        abort_claims(service, table, live, &built).await;
    }
    match built.on_error(&err) {
        Retry::Conflict => Outcome::Lost(built.map_error(err)),
        Retry::No => Outcome::Failed(built.map_error(err)),
    }
}

/// Sends `ops`: one write, or one entity group transaction.
pub(super) async fn submit(
    engine: &dyn Engine,
    table: &str,
    ops: &[WriteOp],
) -> Result<Vec<WriteOutcome>> {
    match ops {
        [op] => engine.write(table, op).await.map(|outcome| vec![outcome]),
        _ => engine.submit_batch(table, ops).await,
    }
}

/// Writes the intent in its `claiming` state, then claims every value; on success
/// points the transaction's intent operation at the claiming version.
async fn claim(
    service: &TableServiceClient,
    table: &str,
    built: &mut Built,
) -> std::result::Result<LiveIntent, Outcome> {
    let engine = service.engine().as_ref();
    let retries = service.options().max_conflict_retries;
    let Some(planned) = built.intent.as_ref() else {
        return Err(Outcome::Failed(Error::new(
            tables_core::ErrorKind::InvalidInput,
            "claims without an intent",
        )));
    };
    let claiming = planned.doc.clone().with_state(IntentState::Claiming);
    let row = intent_row(&planned.key, &claiming).map_err(Outcome::Failed)?;
    // (The write's attempts count the sends of its transaction, not this one.)
    let etag = match engine.write(table, &WriteOp::Insert(row)).await {
        Ok(outcome) => outcome.etag,
        Err(err) if err.may_have_applied() => {
            // Whether the intent landed: it only ever starts a write, so if it did
            // not, nothing happened; if it lands late, reconcile() removes it.
            match engine.get_entity(table, &planned.key, None).await {
                Ok(Some(row)) => row.etag,
                Ok(None) => return Err(Outcome::Failed(err.settled_not_applied())),
                Err(_) => return Err(Outcome::Failed(err)),
            }
        }
        Err(err) => return Err(Outcome::Failed(err)),
    };
    let live = LiveIntent::new(planned.key.clone(), etag.clone(), claiming);
    let claims = planned.claims.clone();
    for claim in &claims {
        if let Err(err) = claim_one(engine, claim, &planned.key.partition_key, retries).await {
            abort_claims(service, table, live, built).await;
            return Err(Outcome::Failed(
                built.map_error(err.with_batch_index(claim.item)),
            ));
        }
    }
    if let (Some(planned), Some(etag)) = (built.intent.as_ref(), etag) {
        let row = intent_row(&planned.key, &planned.doc).map_err(Outcome::Failed)?;
        built.ops[planned.op_index] = WriteOp::Replace {
            entity: row,
            if_match: IfMatch::Etag(etag),
        };
    }
    Ok(live)
}

/// Claims one value: writes the claim, and after a lost race reads again (an
/// earlier attempt of this claim may have landed).
async fn claim_one(
    engine: &dyn Engine,
    claim: &Claim,
    primary_partition: &str,
    retries: u32,
) -> Result<()> {
    let of = IndexOf {
        kind: &claim.kind,
        index: claim.index,
    };
    let primary = tables_core::EntityKey::new(
        primary_partition,
        claim
            .row
            .get(tables_core::model::PRIMARY_ROW_KEY_PROPERTY)
            .and_then(tables_core::Value::as_str)
            .unwrap_or_default(),
    );
    let key = claim.row.key();
    let mut op = claim.op.clone();
    let mut rounds = ConflictLoop::new(retries);
    loop {
        let err = match engine.write(&claim.table, &op).await {
            Ok(_) => return Ok(()),
            Err(err) if row_changed(&err) => err,
            Err(err) => return Err(err),
        };
        let stored = engine.get_entity(&claim.table, &key, None).await?;
        op = match Holder::of(stored.as_ref(), of, &primary) {
            Holder::Mine(row)
                if row.get(super::rows::CLAIM_PROPERTY)
                    == claim.row.get(super::rows::CLAIM_PROPERTY) =>
            {
                return Ok(());
            }
            Holder::Mine(row) => replace_over(row, &claim.row),
            Holder::Absent => WriteOp::Insert(claim.row.clone()),
            Holder::Other { owner, row } => {
                if is_stale_claim(engine, row, of, claim.codec).await? {
                    replace_over(row, &claim.row)
                } else {
                    return Err(taken(of, &claim.table, key, owner, &primary));
                }
            }
            Holder::Foreign(row) => {
                return Err(taken(of, &claim.table, key, row.key(), &primary));
            }
        };
        rounds.lost(err).await?;
    }
}

/// Fences a claiming intent of a write that will not commit and releases its claims.
/// Failures leave the intent for `reconcile()`, which does the same.
async fn abort_claims(service: &TableServiceClient, table: &str, live: LiveIntent, built: &Built) {
    let codecs = built.codecs.clone();
    let codec_for = move |kind: &str| codecs.iter().find(|(k, _)| k == kind).map(|(_, c)| *c);
    if let Err(err) = apply(
        service,
        table,
        live,
        &codec_for,
        Finish::Owner { clean: true },
    )
    .await
    {
        tracing::debug!(error = %err, "releasing the claims of an uncommitted write failed; reconcile() will");
    }
}

/// Reads the commit marker of a transaction whose answer was lost, fencing it when
/// it did not commit. `replaced`: the transaction turns a `claiming` intent
/// `pending` (else it inserts a `pending` intent).
async fn read_marker(
    service: &TableServiceClient,
    table: &str,
    key: &tables_core::EntityKey,
    replaced: bool,
    started: Instant,
) -> Marker {
    let engine = service.engine().as_ref();
    let options = service.options();
    for _ in 0..=options.max_conflict_retries {
        // An absent marker means "not committed" only while a tombstone of it would
        // still be there.
        if started.elapsed() > options.intent_retention / 2 {
            return Marker::Unknown;
        }
        let row = match engine.get_entity(table, key, None).await {
            Ok(row) => row,
            Err(_) => return Marker::Unknown,
        };
        match row {
            Some(row) => {
                let Ok(mut live) = LiveIntent::from_row(&row) else {
                    return Marker::Unknown;
                };
                match live.doc.state() {
                    IntentState::Pending | IntentState::Done => return Marker::Committed(live),
                    IntentState::Aborted => return Marker::NotCommitted,
                    IntentState::Claiming => {
                        match live
                            .fence(engine, table, options.max_conflict_retries)
                            .await
                        {
                            Ok(Some(IntentState::Aborted)) | Ok(None) => {
                                return Marker::NotCommitted
                            }
                            Ok(Some(_)) => continue,
                            Err(_) => return Marker::Unknown,
                        }
                    }
                }
            }
            // Reconcile fenced and removed the claiming intent: the transaction,
            // conditional on it, can't commit.
            None if replaced => return Marker::NotCommitted,
            None => match fence_absent(engine, table, key).await {
                Ok(true) => return Marker::NotCommitted,
                Ok(false) => continue,
                Err(_) => return Marker::Unknown,
            },
        }
    }
    Marker::Unknown
}
