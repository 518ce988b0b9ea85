//! The Streamable HTTP session a [`RetryClient`](super::RetryClient)'s calls go on, for its spans'
//! `mcp.session.id` (the JS layer reads `client.transport.sessionId`). rmcp 3.11's transport keeps the
//! `Mcp-Session-Id` inside its worker; [`SessionIdClient`] wraps the HTTP client it posts with and keeps the
//! last id a request carried (or an `initialize` answer gave), in a [`SessionId`] the `RetryClient` reads
//! ([`RetryClient::session_id`](super::RetryClient::session_id)). Observation only: every request is the
//! wrapped client's, unchanged (its errors too — `classify.rs` reads them by type).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! use mcp_retry_policy::rmcp::{RetryClient, RetryOptions, SessionId, SessionIdClient};
//! use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
//! use rmcp::transport::StreamableHttpClientTransport;
//! use rmcp::ServiceExt;
//!
//! let ids = SessionId::default();
//! // Redirects not followed (`http_client`): a 303 stays the POST's answer, never a GET's.
//! let http = SessionIdClient::new(mcp_retry_policy::rmcp::http_client()?, ids.clone());
//! let config = StreamableHttpClientTransportConfig::with_uri("http://127.0.0.1:8080/mcp");
//! let running = ().serve(StreamableHttpClientTransport::with_client(http, config)).await?;
//! let client = RetryClient::new(running, RetryOptions::default()).session_id(ids);
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use ::rmcp::model::ClientJsonRpcMessage;
use ::rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use futures_core::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use sse_stream::Sse;

/// The HTTP client to build an rmcp Streamable HTTP transport on (`StreamableHttpClientTransport::with_client`,
/// or inside [`SessionIdClient::new`]): reqwest's, with redirects **not followed**. reqwest's default policy
/// follows up to 10, and a 301/302/303 turns the POST into a GET: a server (or a gateway) that processed the
/// `tools/call` and answered 303 would surface the GET's 405/404/400 — read as the server refusing a request
/// it never acted on. Unfollowed, the 3xx is the POST's own answer, which the core reads as unknown (no proof
/// either way). (rmcp's `StreamableHttpClientTransport::from_uri` builds its own client, which follows only
/// same-origin 307/308; like it, this one keeps no idle connections, against delayed-ACK stalls on reuse.)
///
/// ```
/// use mcp_retry_policy::rmcp::http_client;
/// use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
/// use rmcp::transport::StreamableHttpClientTransport;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), reqwest::Error> {
/// let config = StreamableHttpClientTransportConfig::with_uri("http://127.0.0.1:8080/mcp");
/// let transport = StreamableHttpClientTransport::with_client(http_client()?, config); // `().serve(transport)`
/// # let _ = transport;
/// # Ok(()) }
/// ```
pub fn http_client() -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder().pool_max_idle_per_host(0).redirect(reqwest::redirect::Policy::none()).build()
}

/// The last Streamable HTTP session id the wrapped transport used (shared: clone it into each transport a
/// reconnect factory makes, and into the `RetryClient`).
///
/// ```
/// use mcp_retry_policy::rmcp::SessionId;
///
/// let ids = SessionId::default(); // clone it into the transport's SessionIdClient and the RetryClient
/// assert_eq!(ids.get(), None); // nothing sent yet
/// ```
#[derive(Clone, Debug, Default)]
pub struct SessionId(Arc<Mutex<Option<Arc<str>>>>);

impl SessionId {
    /// The session id, if the transport has one (a 2026-07-28 server has no sessions).
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::SessionId;
    ///
    /// let ids = SessionId::default();
    /// if let Some(id) = ids.get() {
    ///     println!("on session {id}");
    /// }
    /// ```
    pub fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).as_deref().map(str::to_string)
    }

    fn set(&self, id: Option<Arc<str>>) {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = id;
    }
}

/// An rmcp Streamable HTTP client (default: reqwest's) that keeps the session id its requests carry.
///
/// ```
/// use mcp_retry_policy::rmcp::{http_client, SessionId, SessionIdClient};
/// use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
/// use rmcp::transport::StreamableHttpClientTransport;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), reqwest::Error> {
/// let ids = SessionId::default();
/// let http = SessionIdClient::new(http_client()?, ids.clone());
/// let transport = StreamableHttpClientTransport::with_client(http, StreamableHttpClientTransportConfig::with_uri("http://127.0.0.1:8080/mcp"));
/// # let _ = transport;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct SessionIdClient<C = reqwest::Client> {
    inner: C,
    id: SessionId,
}

impl<C> SessionIdClient<C> {
    /// Wraps `inner`; the session id goes to `id`.
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::{SessionId, SessionIdClient};
    ///
    /// let ids = SessionId::default();
    /// let http = SessionIdClient::new(reqwest::Client::new(), ids.clone()); // prefer `http_client()`: no redirects
    /// # let _ = http;
    /// ```
    pub fn new(inner: C, id: SessionId) -> Self {
        SessionIdClient { inner, id }
    }
}

fn answered_id(response: &StreamableHttpPostResponse) -> Option<Arc<str>> {
    match response {
        StreamableHttpPostResponse::Json(_, Some(id)) | StreamableHttpPostResponse::Sse(_, Some(id)) => {
            Some(id.as_str().into())
        }
        _ => None,
    }
}

type Post<E> = Result<StreamableHttpPostResponse, StreamableHttpError<E>>;
type Stream<E> = Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<E>>;

impl<C: StreamableHttpClient + Sync> SessionIdClient<C> {
    /// Notes the session a post carried, or the one its answer gave (the `initialize` answer).
    async fn noting(&self, carried: Option<Arc<str>>, post: impl Future<Output = Post<C::Error>>) -> Post<C::Error> {
        let answer = post.await;
        match answer.as_ref().ok().and_then(answered_id).or(carried) {
            Some(id) => self.id.set(Some(id)),
            // A post without a session: a new session is being made (or none is used).
            None => self.id.set(None),
        }
        answer
    }
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for SessionIdClient<C> {
    type Error = C::Error;

    fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Post<C::Error>> + Send + '_ {
        let carried = session_id.clone();
        self.noting(carried, self.inner.post_message(uri, message, session_id, auth_header, custom_headers))
    }

    fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> impl Future<Output = Post<C::Error>> + Send + '_ {
        let carried = session_id.clone();
        let post = self.inner.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        );
        self.noting(carried, post)
    }

    fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> impl Future<Output = Post<C::Error>> + Send + '_ {
        let carried = session_id.clone();
        let post =
            self.inner.post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits);
        self.noting(carried, post)
    }

    fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Result<(), StreamableHttpError<C::Error>>> + Send + '_ {
        self.inner.delete_session(uri, session_id, auth_header, custom_headers)
    }

    fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Stream<C::Error>> + Send + '_ {
        self.inner.get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
    }

    fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> impl Future<Output = Stream<C::Error>> + Send + '_ {
        self.inner.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        )
    }
}
