//! The official Azure SDK's credentials (`azure_core`, so every `azure_identity`
//! credential) as this SDK's bearer token source (feature `azure_identity`).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use tables_core::{Error, ErrorKind, Result};

use super::credential::{AccessToken, TokenCredential};

/// The scope of Azure Storage's Table service.
const STORAGE_SCOPE: &str = "https://storage.azure.com/.default";
/// The scope of Azure Cosmos DB for Table.
const COSMOS_SCOPE: &str = "https://cosmos.azure.com/.default";

/// An `azure_core` token credential (`azure_identity`'s `ManagedIdentityCredential`,
/// `WorkloadIdentityCredential`, `DeveloperToolsCredential`, ...) asking for the
/// service's scope: `https://storage.azure.com/.default`, or
/// `https://cosmos.azure.com/.default` for Cosmos DB for Table. Wrap it in
/// [`Credential::Bearer`](super::Credential::Bearer), or let
/// [`TableServiceClient::with_azure_credential`](crate::TableServiceClient::with_azure_credential)
/// pick the scope from the URL.
///
/// ```no_run
/// use std::sync::Arc;
/// use tables_client::remote::{AzureCredential, Credential, RemoteEngine};
///
/// # fn demo(identity: Arc<dyn azure_core::credentials::TokenCredential>) -> tables_client::Result<()> {
/// // identity: for example azure_identity::ManagedIdentityCredential::new(None)?
/// let engine = RemoteEngine::builder("https://myaccount.table.core.windows.net")
///     .credential(Credential::Bearer(Arc::new(AzureCredential::storage(identity))))
///     .build()?;
/// # let _ = engine;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct AzureCredential {
    inner: Arc<dyn azure_core::credentials::TokenCredential>,
    scope: Cow<'static, str>,
}

impl fmt::Debug for AzureCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // azure_core's credentials keep their secrets out of Debug.
        f.debug_struct("AzureCredential")
            .field("credential", &self.inner)
            .field("scope", &self.scope)
            .finish()
    }
}

impl AzureCredential {
    /// For Azure Storage's Table service (`https://storage.azure.com/.default`).
    pub fn storage(
        credential: Arc<dyn azure_core::credentials::TokenCredential>,
    ) -> AzureCredential {
        AzureCredential {
            inner: credential,
            scope: Cow::Borrowed(STORAGE_SCOPE),
        }
    }

    /// For Azure Cosmos DB for Table (`https://cosmos.azure.com/.default`).
    pub fn cosmos(
        credential: Arc<dyn azure_core::credentials::TokenCredential>,
    ) -> AzureCredential {
        AzureCredential {
            inner: credential,
            scope: Cow::Borrowed(COSMOS_SCOPE),
        }
    }

    /// For another audience (a sovereign cloud's, `https://storage.azure.us/.default`).
    pub fn with_scope(
        credential: Arc<dyn azure_core::credentials::TokenCredential>,
        scope: impl Into<String>,
    ) -> AzureCredential {
        AzureCredential {
            inner: credential,
            scope: Cow::Owned(scope.into()),
        }
    }

    /// The scope it asks tokens for.
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// The scope a request to `endpoint` needs: Cosmos DB for Table's on its hosts,
    /// Azure Storage's elsewhere.
    pub(crate) fn for_endpoint(
        credential: Arc<dyn azure_core::credentials::TokenCredential>,
        cosmos: bool,
    ) -> AzureCredential {
        if cosmos {
            AzureCredential::cosmos(credential)
        } else {
            AzureCredential::storage(credential)
        }
    }
}

#[async_trait::async_trait]
impl TokenCredential for AzureCredential {
    async fn token(&self) -> Result<AccessToken> {
        let token = self
            .inner
            .get_token(&[self.scope.as_ref()], None)
            .await
            .map_err(|e| {
                Error::local(
                    ErrorKind::Auth,
                    format!("no token for the scope {}: {e}", self.scope),
                )
            })?;
        let expires_on = SystemTime::from(token.expires_on);
        Ok(AccessToken::new(
            token.token.secret().to_owned(),
            Some(expires_on),
        ))
    }
}
