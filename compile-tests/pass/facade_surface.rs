//! What a program that depends on `tables-client` alone can reach: options built
//! from their defaults, an engine behind a `Box`, a token credential implemented
//! with the facade's own `async_trait`.
#![deny(missing_debug_implementations, missing_docs)]

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tables_client::mem::{MemEngine, MemOptions};
use tables_client::remote::{AccessToken, RetryPolicy, TokenCredential};
use tables_client::{
    async_trait, ClientOptions, Engine, ListTablesOptions, PrefixedEngine, TableServiceClient,
};

/// A fixed token.
#[derive(Debug)]
struct FixedToken;

#[async_trait]
impl TokenCredential for FixedToken {
    async fn token(&self) -> tables_client::Result<AccessToken> {
        let expires = SystemTime::now() + Duration::from_secs(60);
        Ok(AccessToken::new("token", Some(expires)))
    }
}

fn main() {
    let boxed: Box<dyn Engine> = Box::new(MemEngine::with_options(
        MemOptions::default().with_page_size(1),
    ));
    let prefixed = PrefixedEngine::new(boxed, "app").expect("a valid prefix");
    let _service = TableServiceClient::with_options(
        Arc::new(prefixed),
        ClientOptions::default().with_page_size(10),
    );
    let _retries = RetryPolicy::default().with_max_retries(1);
    let _listing = ListTablesOptions::default().with_prefix("app");
    let _credential: Arc<dyn TokenCredential> = Arc::new(FixedToken);
}
