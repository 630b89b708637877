//! [`Recorder`]: an engine wrapper that records every call and can fail the single
//! writes that follow a transaction.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::future::BoxFuture;
use tables_client::{
    ContinuationToken, DynamicEntity, Engine, EntityKey, Error, ErrorKind, ListTablesOptions, Page,
    QuerySpec, Result, TablePage, TableServiceClient, WriteOp, WriteOutcome,
};

/// One engine call, as the recorder saw it.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    /// `get_entity` of a table and key.
    Get(String, EntityKey),
    /// `query` of a table.
    Query(String),
    /// `write` to a table.
    Write(String, WriteOp),
    /// `submit_batch` to a table.
    Batch(String, Vec<WriteOp>),
    /// A table call: create, delete or list.
    Other,
}

/// Wraps any engine: records every call, and, once armed with
/// [`Recorder::fail_writes_after_commit`], fails every single write that follows a
/// transaction, as a process dying right after its transaction commits (or, with
/// [`Recorder::fail_writes_after_write_to`], right after it wrote a chosen row);
/// with [`Recorder::before_get`] or [`Recorder::before_delete`], lets another
/// writer's change land just before a read or a delete; with [`Recorder::send_next_batch_twice`] or [`Recorder::hold_next_batch`],
/// keeps a copy of a transaction for a late delivery.
#[derive(Clone)]
pub struct Recorder {
    inner: Arc<dyn Engine>,
    calls: Arc<Mutex<Vec<Call>>>,
    fail_writes: Arc<AtomicBool>,
    committed: Arc<AtomicBool>,
    hook: Arc<Mutex<Option<Hook>>>,
    crash_after: Arc<Mutex<Option<(String, EntityKey)>>>,
    twice: Arc<AtomicBool>,
    hold: Arc<AtomicBool>,
    late_copy: Arc<Mutex<Option<Transaction>>>,
}

/// A transaction as sent: its table and operations.
type Transaction = (String, Vec<WriteOp>);

/// What [`Recorder::before_get`] or [`Recorder::before_delete`] runs, and before
/// which call.
struct Hook {
    table: String,
    key: EntityKey,
    on_delete: bool,
    run: Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// Wraps `inner`, recording from now on, failing nothing.
    pub fn new(inner: Arc<dyn Engine>) -> Recorder {
        Recorder {
            inner,
            calls: Arc::default(),
            fail_writes: Arc::default(),
            committed: Arc::default(),
            hook: Arc::default(),
            crash_after: Arc::default(),
            twice: Arc::default(),
            hold: Arc::default(),
            late_copy: Arc::default(),
        }
    }

    /// Runs `run` (once, to its end) when the next `get_entity` of `key` in `table`
    /// arrives, before that read: a change another writer makes between two reads
    /// of a worker.
    ///
    /// # Panics
    ///
    /// If a thread panicked while arming or reading.
    pub fn before_get(
        &self,
        table: &str,
        key: EntityKey,
        run: impl FnOnce() -> BoxFuture<'static, ()> + Send + 'static,
    ) {
        self.arm(table, key, false, Box::new(run));
    }

    /// Runs `run` (once, to its end) when the next single write deleting `key` in
    /// `table` arrives, before that delete: a change another writer makes between a
    /// worker's last read and its delete.
    ///
    /// # Panics
    ///
    /// If a thread panicked while arming or writing.
    pub fn before_delete(
        &self,
        table: &str,
        key: EntityKey,
        run: impl FnOnce() -> BoxFuture<'static, ()> + Send + 'static,
    ) {
        self.arm(table, key, true, Box::new(run));
    }

    fn arm(
        &self,
        table: &str,
        key: EntityKey,
        on_delete: bool,
        run: Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>,
    ) {
        *self.hook.lock().expect("no calling thread panicked") = Some(Hook {
            table: table.to_owned(),
            key,
            on_delete,
            run,
        });
    }

    /// Takes the armed hook when it is for this call.
    fn hook_for(&self, table: &str, key: &EntityKey, delete: bool) -> Option<Hook> {
        let mut armed = self.hook.lock().expect("no arming thread panicked");
        match armed.take() {
            Some(hook) if hook.table == table && hook.key == *key && hook.on_delete == delete => {
                Some(hook)
            }
            other => {
                *armed = other;
                None
            }
        }
    }

    /// A client over a recorder wrapping `service`'s engine, with its options.
    pub fn wrap(service: &TableServiceClient) -> (TableServiceClient, Recorder) {
        let recorder = Recorder::new(Arc::clone(service.engine()));
        let client =
            TableServiceClient::with_options(Arc::new(recorder.clone()), service.options().clone());
        (client, recorder)
    }

    /// The calls recorded since the last `take`, in order.
    ///
    /// # Panics
    ///
    /// If a thread panicked while recording.
    pub fn take(&self) -> Vec<Call> {
        std::mem::take(&mut *self.calls.lock().expect("no recording thread panicked"))
    }

    /// Arms (or disarms) the crash: every single write after the next successful
    /// transaction fails with a transport error.
    pub fn fail_writes_after_commit(&self, fail: bool) {
        self.committed.store(false, Ordering::SeqCst);
        self.fail_writes.store(fail, Ordering::SeqCst);
    }

    /// Arms the crash at a chosen row: once a single write to `key` in `table`
    /// applies, that write and every single write after it fail with a transport
    /// error (the process died before it heard the answer).
    ///
    /// # Panics
    ///
    /// If a thread panicked while arming or writing.
    pub fn fail_writes_after_write_to(&self, table: &str, key: EntityKey) {
        *self.crash_after.lock().expect("no writing thread panicked") =
            Some((table.to_owned(), key));
    }

    /// Arms a duplicate: the next transaction applies and reports two attempts, as
    /// when the transport sent it again after losing the answer, while a copy of it
    /// is still on its way; [`Recorder::deliver_late_copy`] delivers that copy.
    pub fn send_next_batch_twice(&self) {
        self.twice.store(true, Ordering::SeqCst);
    }

    /// Arms a delay: the next transaction is kept, not applied, and fails with a
    /// timeout that says it may have applied (the request is still on its way);
    /// [`Recorder::deliver_late_copy`] delivers it.
    pub fn hold_next_batch(&self) {
        self.hold.store(true, Ordering::SeqCst);
    }

    /// Whether a transaction is kept for a late delivery.
    ///
    /// # Panics
    ///
    /// If a thread panicked while keeping it.
    pub fn holds_a_copy(&self) -> bool {
        self.late_copy
            .lock()
            .expect("no keeping thread panicked")
            .is_some()
    }

    /// Delivers the transaction [`Recorder::send_next_batch_twice`] or
    /// [`Recorder::hold_next_batch`] kept, to the wrapped engine, and returns what
    /// the engine answered.
    ///
    /// # Panics
    ///
    /// If no copy is kept, or a thread panicked while keeping it.
    pub async fn deliver_late_copy(&self) -> Result<Vec<WriteOutcome>> {
        let (table, ops) = self
            .late_copy
            .lock()
            .expect("no keeping thread panicked")
            .take()
            .expect("a transaction was kept");
        self.inner.submit_batch(&table, &ops).await
    }

    fn record(&self, call: Call) {
        self.calls
            .lock()
            .expect("no recording thread panicked")
            .push(call);
    }
}

#[async_trait]
impl Engine for Recorder {
    fn capabilities(&self) -> tables_core::EngineCapabilities {
        self.inner.capabilities()
    }

    async fn create_table(&self, table: &str) -> Result<()> {
        self.record(Call::Other);
        self.inner.create_table(table).await
    }

    async fn delete_table(&self, table: &str) -> Result<()> {
        self.record(Call::Other);
        self.inner.delete_table(table).await
    }

    async fn list_tables(&self, options: &ListTablesOptions) -> Result<TablePage> {
        self.record(Call::Other);
        self.inner.list_tables(options).await
    }

    async fn get_entity(
        &self,
        table: &str,
        key: &EntityKey,
        select: Option<&[String]>,
    ) -> Result<Option<DynamicEntity>> {
        self.record(Call::Get(table.to_owned(), key.clone()));
        if let Some(hook) = self.hook_for(table, key, false) {
            (hook.run)().await;
        }
        self.inner.get_entity(table, key, select).await
    }

    async fn query(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation: Option<&ContinuationToken>,
    ) -> Result<Page<DynamicEntity>> {
        self.record(Call::Query(table.to_owned()));
        self.inner.query(table, spec, continuation).await
    }

    async fn write(&self, table: &str, op: &WriteOp) -> Result<WriteOutcome> {
        self.record(Call::Write(table.to_owned(), op.clone()));
        if matches!(op, WriteOp::Delete { .. }) {
            if let Some(hook) = self.hook_for(table, &op.key(), true) {
                (hook.run)().await;
            }
        }
        if self.fail_writes.load(Ordering::SeqCst) && self.committed.load(Ordering::SeqCst) {
            return Err(Error::new(ErrorKind::Transport, "simulated crash"));
        }
        let outcome = self.inner.write(table, op).await?;
        let mut crash_after = self.crash_after.lock().expect("no arming thread panicked");
        if crash_after
            .as_ref()
            .is_some_and(|(t, key)| t == table && *key == op.key())
        {
            *crash_after = None;
            self.committed.store(true, Ordering::SeqCst);
            self.fail_writes.store(true, Ordering::SeqCst);
            return Err(Error::new(ErrorKind::Transport, "simulated crash").with_may_have_applied());
        }
        Ok(outcome)
    }

    async fn submit_batch(&self, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
        self.record(Call::Batch(table.to_owned(), ops.to_vec()));
        if self.hold.swap(false, Ordering::SeqCst) {
            *self
                .late_copy
                .lock()
                .expect("no delivering thread panicked") = Some((table.to_owned(), ops.to_vec()));
            return Err(Error::new(ErrorKind::Timeout, "simulated delay").with_may_have_applied());
        }
        let mut outcome = self.inner.submit_batch(table, ops).await;
        self.committed.store(outcome.is_ok(), Ordering::SeqCst);
        if let Ok(outcomes) = &mut outcome {
            if self.twice.swap(false, Ordering::SeqCst) {
                *self
                    .late_copy
                    .lock()
                    .expect("no delivering thread panicked") =
                    Some((table.to_owned(), ops.to_vec()));
                for outcome in outcomes {
                    outcome.attempts = 2;
                }
            }
        }
        outcome
    }
}
