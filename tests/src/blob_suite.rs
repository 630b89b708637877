//! The blob conformance suite: the behaviours every [`BlobStore`] shares, written
//! once and run on each store by [`crate::blob_suite!`]: the in-memory store and
//! the remote store on Azurite's blob service, each alone and behind the fault
//! injector with no fault armed, and the remote one with single puts and with
//! block uploads.

#![allow(clippy::unwrap_used)] // a test suite: a failed expectation is a failed scenario

use std::sync::atomic::{AtomicU64, Ordering};

use tables_core::blob::MAX_LIST_RESULTS;
use tables_core::{BlobCondition, BlobStore, ErrorKind, ListBlobsOptions, Origin, Result};

/// A container name no other scenario of this process (or a run beside it) uses.
pub fn unique_container(scenario: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let run = std::process::id();
    let stem: String = scenario
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .take(40)
        .collect();
    format!("{stem}-{run:x}-{n}")
}

/// Creating a container twice fails; deleting it deletes its blobs.
pub async fn containers_are_created_once_and_deleted_with_their_blobs(
    store: &dyn BlobStore,
    container: &str,
) -> Result<()> {
    store.create_container(container).await?;
    let again = store.create_container(container).await.unwrap_err();
    assert_eq!(again.kind(), ErrorKind::ContainerAlreadyExists, "{again}");
    assert_eq!(again.status(), Some(409));
    assert_eq!(again.service_code(), Some("ContainerAlreadyExists"));
    store
        .put_blob(container, "a", b"x".to_vec(), &BlobCondition::Any)
        .await?;
    store.delete_container(container).await?;
    let gone = store.get_blob(container, "a").await.unwrap_err();
    assert_eq!(gone.kind(), ErrorKind::ContainerNotFound, "{gone}");
    let twice = store.delete_container(container).await.unwrap_err();
    assert_eq!(twice.kind(), ErrorKind::ContainerNotFound, "{twice}");
    Ok(())
}

/// Every byte value, an empty blob, and ranges inside, across and past the end.
pub async fn blobs_round_trip_whole_and_by_range(
    store: &dyn BlobStore,
    container: &str,
) -> Result<()> {
    store.create_container(container).await?;
    let bytes: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    let put = store
        .put_blob(
            container,
            "dir/all bytés",
            bytes.clone(),
            &BlobCondition::Any,
        )
        .await?;
    assert_eq!(put.size, 70_000);
    assert_eq!(put.name, "dir/all bytés");

    let whole = store.get_blob(container, "dir/all bytés").await?.unwrap();
    assert_eq!(whole.data, bytes);
    assert_eq!(whole.offset, 0);
    assert_eq!(whole.properties.etag, put.etag);
    assert_eq!(whole.properties.size, 70_000);

    let part = store
        .get_blob_range(container, "dir/all bytés", 65_530, 10, None)
        .await?
        .unwrap();
    assert_eq!(part.data, bytes[65_530..65_540]);
    assert_eq!((part.offset, part.properties.size), (65_530, 70_000));
    let tail = store
        .get_blob_range(container, "dir/all bytés", 69_990, 100, Some(&put.etag))
        .await?
        .unwrap();
    assert_eq!(tail.data, bytes[69_990..]);
    let past = store
        .get_blob_range(container, "dir/all bytés", 70_000, 10, None)
        .await?
        .unwrap();
    assert!(past.data.is_empty());
    assert_eq!(past.properties.size, 70_000);

    store
        .put_blob(container, "empty", Vec::new(), &BlobCondition::Absent)
        .await?;
    let empty = store.get_blob(container, "empty").await?.unwrap();
    assert!(empty.data.is_empty());
    assert_eq!(empty.properties.size, 0);
    let empty_range = store
        .get_blob_range(container, "empty", 0, 10, None)
        .await?
        .unwrap();
    assert!(empty_range.data.is_empty());

    assert!(store.get_blob(container, "missing").await?.is_none());
    assert!(store
        .get_blob_range(container, "missing", 0, 1, None)
        .await?
        .is_none());
    assert!(store.blob_properties(container, "missing").await?.is_none());
    let properties = store
        .blob_properties(container, "dir/all bytés")
        .await?
        .unwrap();
    assert_eq!((properties.size, properties.etag), (70_000, put.etag));
    store.delete_container(container).await
}

/// A write, whatever its condition, gives the blob a version no earlier write had.
pub async fn every_write_gets_a_new_etag(store: &dyn BlobStore, container: &str) -> Result<()> {
    store.create_container(container).await?;
    let mut seen = Vec::new();
    let first = store
        .put_blob(container, "v", b"0".to_vec(), &BlobCondition::Absent)
        .await?;
    seen.push(first.etag.clone());
    let mut last = first.etag;
    for round in 1..5u8 {
        let condition = if round % 2 == 0 {
            BlobCondition::Any
        } else {
            BlobCondition::Etag(last.clone())
        };
        let put = store
            .put_blob(container, "v", vec![round], &condition)
            .await?;
        assert!(!seen.contains(&put.etag), "{} reused", put.etag);
        seen.push(put.etag.clone());
        last = put.etag;
    }
    let got = store.get_blob(container, "v").await?.unwrap();
    assert_eq!((got.data, got.properties.etag), (vec![4], last));
    store.delete_container(container).await
}

/// `Absent` refuses a taken name; a stale ETag refuses a write, a delete and a
/// ranged read, and changes nothing; a delete of nothing answers `false`.
pub async fn conditions_guard_writes_and_deletes(
    store: &dyn BlobStore,
    container: &str,
) -> Result<()> {
    store.create_container(container).await?;
    let v1 = store
        .put_blob(container, "b", b"one".to_vec(), &BlobCondition::Absent)
        .await?;
    let taken = store
        .put_blob(container, "b", b"two".to_vec(), &BlobCondition::Absent)
        .await
        .unwrap_err();
    assert_eq!(taken.kind(), ErrorKind::BlobAlreadyExists, "{taken}");
    assert_eq!(taken.status(), Some(409));

    let v2 = store
        .put_blob(
            container,
            "b",
            b"two".to_vec(),
            &BlobCondition::Etag(v1.etag.clone()),
        )
        .await?;
    let stale = BlobCondition::Etag(v1.etag.clone());
    let err = store
        .put_blob(container, "b", b"three".to_vec(), &stale)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PreconditionFailed, "{err}");
    assert_eq!(err.status(), Some(412));
    let err = store.delete_blob(container, "b", &stale).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PreconditionFailed, "{err}");
    let err = store
        .get_blob_range(container, "b", 0, 3, Some(&v1.etag))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PreconditionFailed, "{err}");
    let still = store.get_blob(container, "b").await?.unwrap();
    assert_eq!(
        (still.data, still.properties.etag),
        (b"two".to_vec(), v2.etag.clone())
    );

    // An ETag condition on a blob that is not there.
    let err = store
        .put_blob(
            container,
            "never",
            b"x".to_vec(),
            &BlobCondition::Etag(v2.etag.clone()),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::BlobNotFound | ErrorKind::PreconditionFailed
        ),
        "{err}"
    );
    assert!(store.get_blob(container, "never").await?.is_none());

    assert!(
        store
            .delete_blob(container, "b", &BlobCondition::Etag(v2.etag))
            .await?
    );
    assert!(
        !store
            .delete_blob(container, "b", &BlobCondition::Any)
            .await?
    );
    let err = store
        .delete_blob(container, "b", &BlobCondition::Absent)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert_eq!(err.origin(), Origin::Local);
    store.delete_container(container).await
}

/// Listings come in name order, filtered by prefix, in pages that resume from
/// their marker.
pub async fn listings_page_by_prefix_in_name_order(
    store: &dyn BlobStore,
    container: &str,
) -> Result<()> {
    store.create_container(container).await?;
    let names = ["a/3", "a/1", "b/1", "a/2", "a0", "a/10"];
    for name in names {
        store
            .put_blob(
                container,
                name,
                name.as_bytes().to_vec(),
                &BlobCondition::Any,
            )
            .await?;
    }
    let mut listed = Vec::new();
    let mut marker = None;
    let mut pages = 0;
    loop {
        let options = ListBlobsOptions::default()
            .with_prefix("a/")
            .with_max_results(2)
            .with_marker(marker);
        let page = store.list_blobs(container, &options).await?;
        assert!(page.blobs.len() <= 2);
        listed.extend(page.blobs.into_iter().map(|b| (b.name, b.size)));
        pages += 1;
        assert!(pages <= 10, "the listing never ends");
        marker = page.next_marker;
        if marker.is_none() {
            break;
        }
    }
    let expected: Vec<(String, u64)> = ["a/1", "a/10", "a/2", "a/3"]
        .iter()
        .map(|n| ((*n).to_owned(), 3 + u64::from(n.len() == 4)))
        .collect();
    assert_eq!(listed, expected);

    let all = store
        .list_blobs(container, &ListBlobsOptions::default())
        .await?;
    let mut sorted: Vec<&str> = names.to_vec();
    sorted.sort_unstable();
    let all: Vec<String> = all.blobs.into_iter().map(|b| b.name).collect();
    assert_eq!(all, sorted);

    let err = store
        .list_blobs(
            container,
            &ListBlobsOptions::default().with_max_results(MAX_LIST_RESULTS + 1),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidQuery);
    store.delete_container(container).await
}

/// Every call on a container that does not exist says so.
pub async fn a_missing_container_is_reported(store: &dyn BlobStore, container: &str) -> Result<()> {
    let put = store
        .put_blob(container, "b", b"x".to_vec(), &BlobCondition::Any)
        .await
        .unwrap_err();
    assert_eq!(put.kind(), ErrorKind::ContainerNotFound, "{put}");
    assert_eq!(put.status(), Some(404));
    assert_eq!(put.service_code(), Some("ContainerNotFound"));
    let list = store
        .list_blobs(container, &ListBlobsOptions::default())
        .await
        .unwrap_err();
    assert_eq!(list.kind(), ErrorKind::ContainerNotFound, "{list}");
    let delete = store
        .delete_blob(container, "b", &BlobCondition::Any)
        .await
        .unwrap_err();
    assert_eq!(delete.kind(), ErrorKind::ContainerNotFound, "{delete}");
    Ok(())
}

/// Names that break the service's rules fail locally, naming the rule.
pub async fn bad_names_are_refused_before_anything_is_sent(
    store: &dyn BlobStore,
    container: &str,
) -> Result<()> {
    for bad in ["UPPER", "a_b", "ab", "-ab"] {
        let err = store.create_container(bad).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidBlobName, "{bad}: {err}");
        assert_eq!(err.origin(), Origin::Local, "{bad}");
    }
    store.create_container(container).await?;
    for bad in ["", "ends.", "ends/", "new\nline"] {
        let err = store
            .put_blob(container, bad, b"x".to_vec(), &BlobCondition::Any)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidBlobName, "{bad:?}: {err}");
        assert_eq!(err.origin(), Origin::Local, "{bad:?}");
    }
    let listed = store
        .list_blobs(container, &ListBlobsOptions::default())
        .await?;
    assert!(listed.blobs.is_empty(), "nothing was written");
    store.delete_container(container).await
}

/// A blob of several MiB (over the remote store's single-put limit in the test
/// setups, so written in blocks) reads back byte for byte, whole and by range, and
/// a replacement under its ETag replaces it whole: no block of the first version
/// survives in the second.
pub async fn large_blobs_round_trip_and_replace_whole(
    store: &dyn BlobStore,
    container: &str,
) -> Result<()> {
    store.create_container(container).await?;
    let first: Vec<u8> = (0..3 * 1024 * 1024 + 17u32)
        .map(|i| (i % 251) as u8)
        .collect();
    let put = store
        .put_blob(container, "big", first.clone(), &BlobCondition::Absent)
        .await?;
    assert_eq!(put.size, first.len() as u64);
    let got = store.get_blob(container, "big").await?.unwrap();
    assert!(got.data == first, "the large blob read back differs");
    let middle = store
        .get_blob_range(container, "big", 1_000_000, 2_000_000, Some(&put.etag))
        .await?
        .unwrap();
    assert!(middle.data == first[1_000_000..3_000_000]);

    let second: Vec<u8> = (0..1024 * 1024 + 3u32).map(|i| (i % 13) as u8).collect();
    let replaced = store
        .put_blob(
            container,
            "big",
            second.clone(),
            &BlobCondition::Etag(put.etag.clone()),
        )
        .await?;
    let got = store.get_blob(container, "big").await?.unwrap();
    assert_eq!(got.properties.size, second.len() as u64);
    assert!(got.data == second, "the replacement read back differs");
    let stale = store
        .put_blob(container, "big", first, &BlobCondition::Etag(put.etag))
        .await
        .unwrap_err();
    assert_eq!(stale.kind(), ErrorKind::PreconditionFailed, "{stale}");
    let after = store.blob_properties(container, "big").await?.unwrap();
    assert_eq!(
        after.etag, replaced.etag,
        "a refused write changed the blob"
    );
    store.delete_container(container).await
}

/// A streamed read gives the blob in order, in chunks of one version; a change
/// during the read ends it with an error instead of mixing versions.
pub async fn streamed_reads_come_from_one_version(
    store: &dyn BlobStore,
    container: &str,
) -> Result<()> {
    use futures::{StreamExt, TryStreamExt};
    use tables_client::blob::blob_chunks;

    store.create_container(container).await?;
    let bytes: Vec<u8> = (0..10_000u32).map(|i| (i % 7) as u8).collect();
    store
        .put_blob(container, "s", bytes.clone(), &BlobCondition::Absent)
        .await?;
    let chunks: Vec<_> = blob_chunks(store, container, "s", 4096)
        .try_collect()
        .await?;
    let sizes: Vec<usize> = chunks.iter().map(|c| c.data.len()).collect();
    assert_eq!(sizes, [4096, 4096, 1808]);
    let offsets: Vec<u64> = chunks.iter().map(|c| c.offset).collect();
    assert_eq!(offsets, [0, 4096, 8192]);
    let joined: Vec<u8> = chunks.into_iter().flat_map(|c| c.data).collect();
    assert!(joined == bytes);

    let mut stream = Box::pin(blob_chunks(store, container, "s", 4096));
    let first = stream.next().await.unwrap()?;
    store
        .put_blob(container, "s", vec![1; 10_000], &BlobCondition::Any)
        .await?;
    let changed = stream.next().await.unwrap().unwrap_err();
    assert_eq!(changed.kind(), ErrorKind::PreconditionFailed, "{changed}");
    assert!(
        stream.next().await.is_none(),
        "the stream ends after the error"
    );
    assert_eq!(first.data, bytes[..4096]);

    store
        .put_blob(container, "empty", Vec::new(), &BlobCondition::Absent)
        .await?;
    let empty: Vec<_> = blob_chunks(store, container, "empty", 10)
        .try_collect()
        .await?;
    assert_eq!(empty.len(), 1);
    assert!(empty[0].data.is_empty());
    let missing = blob_chunks(store, container, "missing", 10)
        .try_collect::<Vec<_>>()
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::BlobNotFound, "{missing}");
    store.delete_container(container).await
}

/// Runs the blob suite on a store: one `#[tokio::test]` per scenario, each on
/// the store `$store` builds (an expression evaluated per test). With `or_skip`,
/// `$store` is an `Option` and a `None` (a remote store that is not running, see
/// [`crate::azurite::blob_store_or_skip`]) ends the test after its `SKIPPED` line.
#[macro_export]
macro_rules! blob_suite {
    (or_skip $store:expr) => {
        $crate::blob_suite!(@scenarios [or_skip] $store);
    };
    ($store:expr) => {
        $crate::blob_suite!(@scenarios [] Some($store));
    };
    (@scenarios [$($skip:tt)?] $store:expr) => {
        $crate::blob_suite!(@tests $store;
            containers_are_created_once_and_deleted_with_their_blobs,
            blobs_round_trip_whole_and_by_range,
            every_write_gets_a_new_etag,
            conditions_guard_writes_and_deletes,
            listings_page_by_prefix_in_name_order,
            a_missing_container_is_reported,
            bad_names_are_refused_before_anything_is_sent,
            large_blobs_round_trip_and_replace_whole,
            streamed_reads_come_from_one_version,
        );
    };
    (@tests $store:expr; $($scenario:ident,)*) => {$(
        #[tokio::test]
        async fn $scenario() {
            let Some(store) = $store else { return };
            let container = $crate::blob_suite::unique_container(stringify!($scenario));
            if let Err(err) = $crate::blob_suite::$scenario(&store, &container).await {
                panic!("{}: {err}", stringify!($scenario));
            }
        }
    )*};
}
