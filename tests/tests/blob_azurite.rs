//! The blob conformance suite on Azurite's blob service (`azurite-blob`, started by
//! `scripts/test.sh`): the remote store with its defaults (one request per blob up
//! to 4 MiB, so the suite's 3 MiB blob goes up whole), with small blocks (everything
//! over 64 KiB goes up in 64 KiB blocks, so the 70,000-byte and 3 MiB blobs are
//! block uploads), and behind the fault injector.

#![allow(clippy::unwrap_used)] // tests: a failed expectation is a failed test

use tables_client::remote::{DEFAULT_BLOCK_SIZE, DEFAULT_SINGLE_PUT_LIMIT};
use tables_mem::FaultInjector;
use tables_tests::azurite::blob_store_or_skip;

mod single_put {
    use super::*;

    tables_tests::blob_suite!(or_skip blob_store_or_skip(
        "blob_azurite::single_put",
        DEFAULT_SINGLE_PUT_LIMIT,
        DEFAULT_BLOCK_SIZE
    ));
}

mod blocks {
    use super::*;

    tables_tests::blob_suite!(or_skip blob_store_or_skip(
        "blob_azurite::blocks",
        64 * 1024,
        64 * 1024
    ));
}

mod fault_injector {
    use super::*;

    tables_tests::blob_suite!(or_skip blob_store_or_skip(
        "blob_azurite::fault_injector",
        64 * 1024,
        64 * 1024
    )
    .map(FaultInjector::new));
}

/// The store signs with a key given as SharedKeyLite (as SharedKey) and with
/// container SAS tokens too; a token
/// refuses what it does not grant, and a wrong key is refused with a hint.
mod credentials {
    use tables_client::remote::{
        AccountKey, ContainerSasBuilder, ContainerSasPermissions, Credential, RemoteBlobStore,
    };
    use tables_client::{AuthHint, DateTime, ErrorKind};
    use tables_core::{BlobCondition, BlobStore, ListBlobsOptions};
    use tables_tests::azurite::{blob_url_or_skip, dev_key, DEV_ACCOUNT};
    use tables_tests::blob_suite::unique_container;

    fn store(url: &str, credential: Credential) -> RemoteBlobStore {
        RemoteBlobStore::builder(url)
            .credential(credential)
            .build()
            .unwrap()
    }

    fn in_an_hour() -> DateTime {
        DateTime::now()
            .checked_add_ticks(3600 * 10_000_000)
            .unwrap()
    }

    #[tokio::test]
    async fn a_shared_key_lite_credential_signs_blob_requests() {
        let Some(url) = blob_url_or_skip("blob_azurite::shared_key_lite") else {
            return;
        };
        let lite = store(&url, Credential::SharedKeyLite(dev_key()));
        let container = unique_container("lite");
        lite.create_container(&container).await.unwrap();
        lite.put_blob(&container, "a b", b"lite".to_vec(), &BlobCondition::Absent)
            .await
            .unwrap();
        let page = lite
            .list_blobs(&container, &ListBlobsOptions::default().with_prefix("a"))
            .await
            .unwrap();
        assert_eq!(page.blobs.len(), 1);
        let got = lite.get_blob(&container, "a b").await.unwrap().unwrap();
        assert_eq!(got.data, b"lite");
        lite.delete_container(&container).await.unwrap();
    }

    #[tokio::test]
    async fn a_wrong_key_is_refused_with_a_hint() {
        let Some(url) = blob_url_or_skip("blob_azurite::wrong_key") else {
            return;
        };
        let wrong = AccountKey::new(DEV_ACCOUNT, "c2VjcmV0LWtleS10aGF0LWlzLXdyb25n").unwrap();
        let err = store(&url, Credential::SharedKey(wrong))
            .create_container(&unique_container("wrongkey"))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Auth, "{err}");
        assert_eq!(err.auth_hint(), Some(AuthHint::WrongAccountOrKey), "{err}");
    }

    #[tokio::test]
    async fn container_sas_tokens_grant_what_they_say() {
        let Some(url) = blob_url_or_skip("blob_azurite::container_sas") else {
            return;
        };
        let owner = store(&url, Credential::SharedKey(dev_key()));
        let container = unique_container("sas");
        owner.create_container(&container).await.unwrap();

        let all =
            ContainerSasBuilder::new(&container, ContainerSasPermissions::all(), in_an_hour())
                .sign(&dev_key())
                .unwrap();
        let writer = store(&url, Credential::Sas(all));
        let put = writer
            .put_blob(
                &container,
                "doc",
                b"by sas".to_vec(),
                &BlobCondition::Absent,
            )
            .await
            .unwrap();
        let range = writer
            .get_blob_range(&container, "doc", 3, 3, Some(&put.etag))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(range.data, b"sas");
        let listed = writer
            .list_blobs(&container, &ListBlobsOptions::default())
            .await
            .unwrap();
        assert_eq!(listed.blobs.len(), 1);

        let read = ContainerSasBuilder::new(
            &container,
            ContainerSasPermissions::read_only(),
            in_an_hour(),
        )
        .sign(&dev_key())
        .unwrap();
        let reader = store(&url, Credential::Sas(read));
        assert_eq!(
            reader
                .get_blob(&container, "doc")
                .await
                .unwrap()
                .unwrap()
                .data,
            b"by sas"
        );
        let refused = reader
            .put_blob(&container, "doc", b"no".to_vec(), &BlobCondition::Any)
            .await
            .unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::Auth, "{refused}");
        assert!(refused.auth_hint().is_some(), "{refused}");
        assert!(!refused.may_have_applied());

        let elsewhere = ContainerSasBuilder::new(
            "another-container",
            ContainerSasPermissions::all(),
            in_an_hour(),
        )
        .sign(&dev_key())
        .unwrap();
        let err = store(&url, Credential::Sas(elsewhere))
            .get_blob(&container, "doc")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Auth, "{err}");

        let still = owner.get_blob(&container, "doc").await.unwrap().unwrap();
        assert_eq!(still.data, b"by sas", "a refused write changed the blob");
        owner.delete_container(&container).await.unwrap();
    }
}
