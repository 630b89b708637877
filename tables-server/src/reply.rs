//! Answers: a status, headers and a body; errors in the service's form.

use std::borrow::Cow;

use bytes::Bytes;
use hyper::header::{self, HeaderName};
use tables_core::odata::continuation::header_name;
use tables_core::odata::response::{encode_error, encode_error_xml, Metadata};
use tables_core::{DateTime, ETag, Error, ErrorKind};

/// An answer, before the headers every answer carries are added.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    /// Names checked when compiled (or built checked), values checked when the
    /// answer is written ([`crate::http`] answers 500 for one that isn't HTTP).
    pub(crate) headers: Vec<(HeaderName, Cow<'static, str>)>,
    pub(crate) body: Bytes,
}

impl Reply {
    /// An answer without a body.
    pub(crate) fn empty(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Bytes::new(),
        }
    }

    /// A JSON answer at `metadata`'s level.
    pub(crate) fn json(status: u16, metadata: Metadata, body: Vec<u8>) -> Reply {
        Reply {
            status,
            headers: vec![(header::CONTENT_TYPE, metadata.content_type().into())],
            body: Bytes::from(body),
        }
    }

    /// An XML answer (the table ACL and service APIs).
    pub(crate) fn xml(status: u16, body: Vec<u8>) -> Reply {
        Reply::empty(status)
            .with_header(header::CONTENT_TYPE, "application/xml")
            .with_body(body)
    }

    pub(crate) fn with_body(mut self, body: Vec<u8>) -> Reply {
        self.body = Bytes::from(body);
        self
    }

    /// With `Preference-Applied` when the request stated a preference.
    pub(crate) fn with_preference(self, preference: Preference) -> Reply {
        match preference.applied() {
            Some(applied) => self.with_header(names::PREFERENCE_APPLIED, applied),
            None => self,
        }
    }

    pub(crate) fn with_header(
        mut self,
        name: HeaderName,
        value: impl Into<Cow<'static, str>>,
    ) -> Reply {
        self.headers.push((name, value.into()));
        self
    }

    /// With the `ETag` header of an entity that has one.
    pub(crate) fn with_etag(self, etag: Option<&ETag>) -> Reply {
        match etag {
            Some(etag) => self.with_header(header::ETAG, etag.as_str().to_owned()),
            None => self,
        }
    }
}

/// `x-ms-continuation-<name>` (a paging header) as a header name.
pub(crate) fn paging_header(name: &str) -> Result<HeaderName, Failure> {
    HeaderName::try_from(header_name(name)).map_err(|err| {
        Failure::new(
            500,
            "InternalError",
            format!("the paging header for {name} is not a header name: {err}"),
        )
    })
}

/// The service's own header names (the standard ones are [`hyper::header`]'s).
pub(crate) mod names {
    use hyper::header::HeaderName;

    pub(crate) const ERROR_CODE: HeaderName = HeaderName::from_static("x-ms-error-code");
    pub(crate) const REQUEST_ID: HeaderName = HeaderName::from_static("x-ms-request-id");
    pub(crate) const CLIENT_REQUEST_ID: HeaderName =
        HeaderName::from_static("x-ms-client-request-id");
    pub(crate) const VERSION: HeaderName = HeaderName::from_static("x-ms-version");
    pub(crate) const RETRY_AFTER_MS: HeaderName = HeaderName::from_static("x-ms-retry-after-ms");
    pub(crate) const PREFERENCE_APPLIED: HeaderName = HeaderName::from_static("preference-applied");
    // Read from requests.
    pub(crate) const X_MS_DATE: HeaderName = HeaderName::from_static("x-ms-date");
    pub(crate) const X_HTTP_METHOD: HeaderName = HeaderName::from_static("x-http-method");
    pub(crate) const DATA_SERVICE_ID: HeaderName = HeaderName::from_static("dataserviceid");
    pub(crate) const PREFER: HeaderName = HeaderName::from_static("prefer");
    pub(crate) const CONTENT_MD5: HeaderName = HeaderName::from_static("content-md5");
}

/// A refusal in the service's terms: status, error code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) status: u16,
    pub(crate) code: String,
    pub(crate) message: String,
    /// How long the client should wait before it retries (a `429` under a
    /// request-rate budget): sent as `x-ms-retry-after-ms`, as Cosmos DB does.
    pub(crate) retry_after: Option<std::time::Duration>,
    /// The bearer challenge of a `401` (`WWW-Authenticate`), as Azure sends it.
    pub(crate) www_authenticate: Option<String>,
}

impl Failure {
    pub(crate) fn new(status: u16, code: &str, message: impl Into<String>) -> Failure {
        Failure {
            status,
            code: code.to_owned(),
            message: message.into(),
            retry_after: None,
            www_authenticate: None,
        }
    }

    /// `400 InvalidInput`.
    pub(crate) fn invalid_input(message: impl Into<String>) -> Failure {
        Failure::new(400, "InvalidInput", message)
    }

    /// The engine's error as the service answers it. An error the engine found in
    /// the input before it ran (no status of its own) is the client's mistake: a
    /// `400`, never a `500`.
    pub(crate) fn from_error(err: &Error) -> Failure {
        let (default_status, default_code) = err.kind().service_default();
        let status = err
            .status()
            .or((default_status != 0).then_some(default_status))
            .unwrap_or(400);
        let code = err
            .service_code()
            .filter(|code| !code.is_empty())
            .unwrap_or(match err.kind() {
                ErrorKind::Decode => "InvalidInput",
                _ if !default_code.is_empty() => default_code,
                _ => "InvalidInput",
            });
        // A decode error names the request body the client sent.
        let status = if err.kind() == ErrorKind::Decode {
            400
        } else {
            status
        };
        let mut failure = Failure::new(status, code, err.message());
        failure.retry_after = err.retry_after();
        failure
    }

    /// The answer: JSON (`odata.error`), or XML (`<Error>`) for the XML APIs,
    /// with `x-ms-error-code`. The message ends, as the service's do, with the
    /// request id and the time.
    pub(crate) fn reply(&self, request_id: &str, xml: bool) -> Reply {
        let message = format!(
            "{}\nRequestId:{request_id}\nTime:{}",
            self.message,
            DateTime::now()
        );
        let mut body = Vec::with_capacity(message.len() + 96);
        let reply = if xml {
            encode_error_xml(&self.code, &message, &mut body);
            Reply::xml(self.status, body)
        } else {
            encode_error(&self.code, &message, &mut body);
            Reply::json(self.status, Metadata::Minimal, body)
        };
        let mut reply = reply.with_header(names::ERROR_CODE, self.code.clone());
        if let Some(challenge) = &self.www_authenticate {
            reply = reply.with_header(hyper::header::WWW_AUTHENTICATE, challenge.clone());
        }
        match self.retry_after {
            Some(wait) => {
                reply.with_header(names::RETRY_AFTER_MS, wait.as_millis().max(1).to_string())
            }
            None => reply,
        }
    }
}

impl From<Error> for Failure {
    fn from(err: Error) -> Failure {
        Failure::from_error(&err)
    }
}

/// What a `Prefer` header asks of an insert.
pub(crate) fn preference(prefer: Option<&str>) -> Preference {
    match prefer.map(str::trim) {
        Some(p) if p.eq_ignore_ascii_case("return-no-content") => Preference::NoContent,
        Some(p) if p.eq_ignore_ascii_case("return-content") => Preference::Content,
        _ => Preference::Unsaid,
    }
}

/// What an insert's `Prefer` header asked for: the answer has the entity (`201`)
/// unless it asked for no content (`204`), and says `Preference-Applied` only when
/// it asked ("Setting the Prefer header to manage response echo on insert
/// operations": without a Prefer header, 201 without Preference-Applied).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Preference {
    Content,
    NoContent,
    Unsaid,
}

impl Preference {
    pub(crate) fn no_content(self) -> bool {
        self == Preference::NoContent
    }

    /// The `Preference-Applied` value, if the request stated a preference.
    pub(crate) fn applied(self) -> Option<&'static str> {
        match self {
            Preference::Content => Some("return-content"),
            Preference::NoContent => Some("return-no-content"),
            Preference::Unsaid => None,
        }
    }
}
