//! The journal and snapshots on their own: restart, cut-short writes, damage,
//! snapshots while writing, the folder lock.

#![allow(clippy::unwrap_used)] // tests

use std::time::{Duration, Instant};

use tables_core::service::acl::AccessPolicy;
use tables_core::{
    DynamicEntity, Engine, EntityKey, ErrorKind, IfMatch, QuerySpec, WriteOp, WriteOutcome,
};

use super::*;

/// A folder of its own under the system's temporary folder, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "tables-persist-{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// An account opened from `dir`: its engine, what was restored, its journal.
#[derive(Debug)]
struct Opened {
    engine: MemEngine,
    restored: Restored,
    journal: Arc<Journal>,
}

fn open(dir: &Path, limit: u64) -> io::Result<Opened> {
    open_with(dir, limit, Recovery::Strict)
}

fn open_with(dir: &Path, limit: u64, recovery: Recovery) -> io::Result<Opened> {
    let engine = MemEngine::new();
    let (journal, restored) = Journal::open(dir, limit, &engine, recovery)?;
    let source_engine = engine.clone();
    journal.start(Box::new(move |out: &mut SnapshotWriter| {
        out.engine(&source_engine);
    }))?;
    Ok(Opened {
        engine,
        restored,
        journal,
    })
}

impl Opened {
    /// Writes `op` and waits until the journal holds it (what an answer waits for).
    async fn write_settled(&self, table: &str, op: &WriteOp) {
        self.engine.write(table, op).await.unwrap();
        self.journal.settle().await.unwrap();
    }
}

async fn all_rows(engine: &MemEngine, table: &str) -> Vec<DynamicEntity> {
    let mut rows = Vec::new();
    let mut token = None;
    loop {
        let page = engine
            .query(table, &QuerySpec::new(), token.as_ref())
            .await
            .unwrap();
        rows.extend(page.items);
        token = page.continuation;
        if token.is_none() {
            return rows;
        }
    }
}

fn row(pk: &str, rk: &str, n: i64) -> DynamicEntity {
    DynamicEntity::new(pk, rk)
        .with("N", n)
        .with("Text", "\u{00e9}t\u{00e9} \u{1F600}")
        .with("Bytes", vec![1_u8, 2, 3])
}

fn insert(entity: DynamicEntity) -> WriteOp {
    WriteOp::Insert(entity)
}

#[tokio::test]
async fn a_restart_restores_rows_tables_acls_and_properties_exactly() {
    let dir = TempDir::new("restart");
    let first = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap();
    let engine = &first.engine;
    engine.create_table("Orders").await.unwrap();
    engine.create_table("Gone").await.unwrap();
    engine
        .write("Gone", &insert(row("p", "r", 0)))
        .await
        .unwrap();
    engine.delete_table("Gone").await.unwrap();
    for i in 0..10 {
        engine
            .write("Orders", &insert(row("p", &format!("r{i}"), i)))
            .await
            .unwrap();
    }
    let batch: Vec<WriteOp> = (0..5)
        .map(|i| insert(row("q", &format!("b{i}"), i)))
        .collect();
    engine.submit_batch("Orders", &batch).await.unwrap();
    engine
        .write(
            "Orders",
            &WriteOp::Merge {
                entity: DynamicEntity::new("p", "r3").with("Extra", true),
                if_match: IfMatch::Any,
            },
        )
        .await
        .unwrap();
    engine
        .write(
            "Orders",
            &WriteOp::Delete {
                key: EntityKey::new("p", "r4"),
                if_match: IfMatch::Any,
            },
        )
        .await
        .unwrap();
    let acl = vec![SignedIdentifier {
        id: "readers".to_owned(),
        policy: AccessPolicy {
            permission: Some("r".to_owned()),
            ..AccessPolicy::default()
        },
    }];
    first.journal.record_acl("orders", &acl);
    let mut properties = ServiceProperties::default();
    properties.logging.read = true;
    first.journal.record_properties(&properties);
    first.journal.settle().await.unwrap();
    let before = all_rows(engine, "Orders").await;
    assert_eq!(before.len(), 14);
    first.journal.close();

    let second = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap();
    // Every row, with its Timestamp and ETag, as it was.
    assert_eq!(all_rows(&second.engine, "Orders").await, before);
    let err = second
        .engine
        .query("Gone", &QuerySpec::new(), None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TableNotFound);
    assert_eq!(second.restored.acls.get("orders"), Some(&acl));
    assert_eq!(second.restored.properties, properties);
    // New writes come after every restored one, and a restored ETag still guards.
    let latest = before.iter().filter_map(|e| e.timestamp).max().unwrap();
    let outcome: WriteOutcome = second
        .engine
        .write("Orders", &insert(row("z", "new", 1)))
        .await
        .unwrap();
    assert!(outcome.timestamp.unwrap() > latest);
    let r5 = before.iter().find(|e| e.row_key == "r5").unwrap();
    second
        .engine
        .write(
            "Orders",
            &WriteOp::Replace {
                entity: row("p", "r5", 50),
                if_match: IfMatch::Etag(r5.etag.clone().unwrap()),
            },
        )
        .await
        .unwrap();
    second.journal.settle().await.unwrap();
    second.journal.close();

    // The startup snapshot replaced the first run's segments, and the second run's
    // writes replay on top of it.
    let third = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap();
    let rows = all_rows(&third.engine, "Orders").await;
    assert_eq!(rows.len(), 15);
    assert_eq!(
        rows.iter().find(|e| e.row_key == "r5").unwrap().get("N"),
        Some(&50_i64.into())
    );
    third.journal.close();
}

/// The last segment's path and bytes.
fn last_segment(dir: &Path) -> (PathBuf, Vec<u8>) {
    let number = *list_segments(dir).unwrap().last().unwrap();
    let path = dir.join(segment_name(number));
    let bytes = fs::read(&path).unwrap();
    (path, bytes)
}

#[tokio::test]
async fn a_batch_cut_short_by_a_crash_is_dropped_whole() {
    let dir = TempDir::new("torn");
    let first = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap();
    first.engine.create_table("Tab").await.unwrap();
    first
        .write_settled("Tab", &insert(row("p", "kept", 1)))
        .await;
    let (_, before_batch) = last_segment(&dir.0);
    let batch: Vec<WriteOp> = (0..4)
        .map(|i| insert(row("p", &format!("b{i}"), i)))
        .collect();
    first.engine.submit_batch("Tab", &batch).await.unwrap();
    first.journal.settle().await.unwrap();
    first.journal.close();
    let (path, full) = last_segment(&dir.0);
    assert!(full.len() > before_batch.len());

    // Every cut inside the batch's record, and every changed byte of it (the
    // checksum), drops the whole batch and keeps the row before it; the next
    // write after the restart is kept too (the cut-short bytes were removed, so
    // it does not follow them).
    let cuts = (before_batch.len() + 1..full.len()).step_by(13);
    let flips = (before_batch.len()..full.len()).step_by(17);
    let damaged: Vec<Vec<u8>> = cuts
        .map(|cut| full[..cut].to_vec())
        .chain(flips.map(|at| {
            let mut bytes = full.clone();
            bytes[at] ^= 0x20;
            bytes
        }))
        .collect();
    assert!(damaged.len() > 20);
    for bytes in damaged {
        fs::remove_dir_all(&dir.0).unwrap();
        fs::create_dir_all(&dir.0).unwrap();
        fs::write(&path, &bytes).unwrap();
        let reopened = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap();
        let keys = |rows: Vec<DynamicEntity>| -> Vec<String> {
            rows.into_iter().map(|e| e.row_key).collect()
        };
        assert_eq!(keys(all_rows(&reopened.engine, "Tab").await), ["kept"]);
        reopened
            .write_settled("Tab", &insert(row("p", "next", 2)))
            .await;
        reopened.journal.close();
        let again = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap();
        assert_eq!(keys(all_rows(&again.engine, "Tab").await), ["kept", "next"]);
        again.journal.close();
    }
}

#[tokio::test]
async fn damage_before_acknowledged_writes_stops_the_start_with_the_file_named() {
    let dir = TempDir::new("damage");
    let first = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap();
    first.engine.create_table("Tab").await.unwrap();
    first.journal.settle().await.unwrap();
    first.journal.close();
    // A second run journals into a segment of its own: the first is no longer the
    // last, so damage in it is not a cut-short write. (Stop the startup snapshot
    // from covering it by removing it again.)
    let (first_segment, bytes) = last_segment(&dir.0);
    let second = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap();
    second.write_settled("Tab", &insert(row("p", "r", 1))).await;
    second.journal.close();
    let _ = fs::remove_file(dir.0.join(SNAPSHOT));
    let mut damaged = bytes.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 1;
    fs::write(&first_segment, &damaged).unwrap();

    let err = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    let message = err.to_string();
    assert!(
        message.contains(&first_segment.display().to_string()) && message.contains("checksum"),
        "{message}"
    );
    // Nothing was cut: the folder is as it was, for a backup to be restored over it.
    assert_eq!(fs::read(&first_segment).unwrap(), damaged);
}

/// One changed byte in the middle of the last segment, with intact records after
/// it, is damage, not a write cut short: the start stops, naming the file, the
/// offset and the records at stake, and nothing is cut; `Recovery::Salvage` keeps
/// every intact record, sets the file aside and starts.
#[tokio::test]
async fn a_flipped_byte_with_records_after_it_stops_the_start_and_salvage_keeps_the_rest() {
    let dir = TempDir::new("flip");
    let first = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap();
    first.engine.create_table("Tab").await.unwrap();
    let mut ends = Vec::new();
    for i in 0..40 {
        let key = format!("r{i:02}");
        first.write_settled("Tab", &insert(row("p", &key, i))).await;
        ends.push(last_segment(&dir.0).1.len());
    }
    first.journal.close();
    let (path, mut bytes) = last_segment(&dir.0);
    // The middle of the 21st row's record; 19 records follow it.
    let (start, end) = (ends[19], ends[20]);
    bytes[(start + end) / 2] ^= 0x01;
    fs::write(&path, &bytes).unwrap();

    let err = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    let message = err.to_string();
    for part in [
        path.display().to_string(),
        format!("at byte {start}"),
        format!("{} unreadable bytes", end - start),
        "19 intact records".to_owned(),
        "--salvage".to_owned(),
    ] {
        assert!(message.contains(&part), "{part:?} missing from: {message}");
    }
    assert_eq!(
        fs::read(&path).unwrap(),
        bytes,
        "the damaged file was changed"
    );

    let salvaged = open_with(&dir.0, DEFAULT_JOURNAL_LIMIT, Recovery::Salvage).unwrap();
    let keys: Vec<String> = all_rows(&salvaged.engine, "Tab")
        .await
        .into_iter()
        .map(|e| e.row_key)
        .collect();
    let expected: Vec<String> = (0..40)
        .filter(|i| *i != 20)
        .map(|i| format!("r{i:02}"))
        .collect();
    assert_eq!(keys, expected);
    salvaged.journal.close();
    // The damaged bytes are kept beside, under a new name.
    let aside: Vec<PathBuf> = fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".damaged-"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert_eq!(fs::read(&aside[0]).unwrap(), bytes);
    // What was kept is in the folder's files now: a plain start finds no damage.
    let again = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap();
    assert_eq!(all_rows(&again.engine, "Tab").await.len(), 39);
    again.journal.close();
}

#[tokio::test]
async fn a_damaged_snapshot_stops_the_start_and_salvage_keeps_its_intact_records() {
    let dir = TempDir::new("snapdamage");
    let first = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap();
    first.engine.create_table("Tab").await.unwrap();
    for i in 0..30 {
        first
            .write_settled("Tab", &insert(row(&format!("p{i:02}"), "r", i)))
            .await;
    }
    first.journal.close();
    // The second start snapshots the replayed segment (in the background).
    let second = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !dir.0.join(SNAPSHOT).exists() || second.journal.snapshotting.load(Ordering::Acquire) {
        assert!(Instant::now() < deadline, "no snapshot was written");
        std::thread::sleep(Duration::from_millis(10));
    }
    second.journal.close();
    let snapshot = dir.0.join(SNAPSHOT);
    let mut bytes = fs::read(&snapshot).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x10;
    fs::write(&snapshot, &bytes).unwrap();

    let message = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap_err().to_string();
    assert!(
        message.contains(&snapshot.display().to_string()) && message.contains("intact records"),
        "{message}"
    );
    let salvaged = open_with(&dir.0, DEFAULT_JOURNAL_LIMIT, Recovery::Salvage).unwrap();
    // One chunk of rows is lost with its record (a snapshot holds up to 1,000 rows a
    // record, so here all 30 are one record): the table's creation is kept.
    let rows = all_rows(&salvaged.engine, "Tab").await;
    assert!(rows.len() < 30, "{}", rows.len());
    salvaged.journal.close();
    assert!(fs::read_dir(&dir.0).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with("snapshot.damaged-")));
    let again = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap();
    assert_eq!(all_rows(&again.engine, "Tab").await.len(), rows.len());
    again.journal.close();
}

#[tokio::test]
async fn snapshots_taken_while_writing_keep_every_row_and_drop_old_segments() {
    let dir = TempDir::new("snapshot");
    let first = open(&dir.0, 4 << 10).unwrap();
    first.engine.create_table("Tab").await.unwrap();
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let engine = first.engine.clone();
            let journal = Arc::clone(&first.journal);
            tokio::spawn(async move {
                for i in 0..150 {
                    let key = format!("{i:04}");
                    engine
                        .write("Tab", &insert(row(&format!("w{w}"), &key, i)))
                        .await
                        .unwrap();
                    if i % 3 == 0 {
                        engine
                            .write(
                                "Tab",
                                &WriteOp::UpsertMerge(
                                    DynamicEntity::new("counter", format!("w{w}")).with("N", i),
                                ),
                            )
                            .await
                            .unwrap();
                    }
                    journal.settle().await.unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
    first.journal.settle().await.unwrap();
    // Let a snapshot that is under way finish.
    let deadline = Instant::now() + Duration::from_secs(20);
    while first.journal.snapshotting.load(Ordering::Acquire) {
        assert!(Instant::now() < deadline, "a snapshot never finished");
        std::thread::sleep(Duration::from_millis(10));
    }
    let before = all_rows(&first.engine, "Tab").await;
    first.journal.close();
    assert_eq!(before.len(), 604);
    assert!(dir.0.join(SNAPSHOT).exists(), "no snapshot was taken");
    let segments = list_segments(&dir.0).unwrap();
    // The rows' journal came to far more than 4 KiB, yet only the segments since
    // the last snapshot remain.
    assert!(segments.len() <= 3, "{segments:?}");

    let second = open(&dir.0, 4 << 10).unwrap();
    assert_eq!(all_rows(&second.engine, "Tab").await, before);
    second.journal.close();
}

/// The lock is the kernel's: a second server (here, in the same process) is
/// refused while the first holds the folder; a `LOCK` file naming a process that
/// runs (a crash's file, its process id since reused) blocks nothing; closing
/// releases it and leaves the file.
#[tokio::test]
async fn a_folder_serves_one_server_and_a_stale_lock_file_blocks_nothing() {
    let dir = TempDir::new("lock");
    let first = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap();
    let err = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
    let message = err.to_string();
    let me = std::process::id().to_string();
    assert!(
        message.contains("in use") && message.contains(&me),
        "{message}"
    );
    first.journal.close();
    assert!(dir.0.join("LOCK").exists());

    // Left by a crash, naming a process that runs: this very one, and pid 1.
    for pid in [me.as_str(), "1"] {
        fs::write(dir.0.join("LOCK"), pid).unwrap();
        let next = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap();
        assert_eq!(fs::read_to_string(dir.0.join("LOCK")).unwrap(), me);
        next.journal.close();
    }
}

#[tokio::test]
async fn a_change_after_close_is_refused_not_acknowledged() {
    let dir = TempDir::new("closed");
    let opened = open(&dir.0, DEFAULT_JOURNAL_LIMIT).unwrap();
    opened.engine.create_table("Tab").await.unwrap();
    opened.journal.close();
    opened
        .engine
        .write("Tab", &insert(row("p", "late", 1)))
        .await
        .unwrap();
    let why = opened.journal.settle().await.unwrap_err();
    assert!(why.contains("stopped"), "{why}");
}
