//! The status tool (`operation_status`, the JS `registerStatusTool`): a read-only tool through which a client
//! finds out what happened to one of its writes, by operation id, without sending the write again. It answers
//! for the caller's own tenant only, and that tenant comes from the request's authentication — the request
//! context's [`Extensions`] (rmcp's Streamable HTTP server puts the HTTP request's `http::request::Parts` there,
//! with what an authentication layer added to it), read by the closure the server gives — never from the tool's
//! arguments. A request without a tenant is refused. An optional [`Authorize`] hook narrows what a caller may
//! read; a refusal reads exactly as an id never used (`not_found`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ::rmcp::model::{CallToolResult, ContentBlock, Extensions, JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Map, Value};

use super::client::BoxError;
use super::ledger::{ledger_reply, store_down, LedgerEvent, LedgerKey, OperationLedger, STATUS_TOOL_NAME};
use crate::ledger::record::valid_operation_id;
use crate::ledger::reply::{Fill, Reply};
use crate::ledger::status_tool;

/// The status tool's definition: read-only, `{ action, operation_id }` — the text both faces serve
/// (`crate::ledger::status_tool`).
///
/// ```
/// use mcp_retry_policy::rmcp::status_tool;
///
/// let tool = status_tool();
/// assert_eq!(tool.name, "operation_status");
/// assert_eq!(tool.annotations.and_then(|a| a.read_only_hint), Some(true));
/// ```
pub fn status_tool() -> Tool {
    let schema: JsonObject = serde_json::from_str(status_tool::INPUT_SCHEMA).unwrap_or_default();
    let annotations: ToolAnnotations = serde_json::from_str(status_tool::ANNOTATIONS).unwrap_or_default();
    Tool::new(STATUS_TOOL_NAME, status_tool::DESCRIPTION, Arc::new(schema)).with_annotations(annotations)
}

fn status_words(status: &str, id: &str, retry_after_ms: Option<u64>) -> String {
    status_tool::words(status, id, retry_after_ms)
}

/// What the [`Authorize`] hook is asked: may this caller read the record found for `operation_id` under
/// `action` (the action it is recorded under, which may differ from the one asked)?
///
/// ```
/// use mcp_retry_policy::rmcp::{BoxError, StatusAsk};
///
/// /// Only the finance team reads payroll results.
/// async fn may_read(ask: StatusAsk) -> Result<bool, BoxError> {
///     Ok(ask.action != "payroll_adjust" || ask.tenant == "finance")
/// }
/// # let _ = may_read;
/// ```
#[derive(Clone, Debug)]
pub struct StatusAsk {
    /// The caller's tenant (from the request's authentication).
    pub tenant: String,
    /// The action the record was found under.
    pub action: String,
    /// The operation id asked about.
    pub operation_id: String,
    /// The request context's extensions (e.g. the HTTP request's `http::request::Parts`): who is asking.
    pub extensions: Extensions,
}

/// What an [`Authorize`] hook returns: a boxed future (so that the hook can be a trait object).
///
/// ```
/// use mcp_retry_policy::rmcp::{Authorize, AuthorizeFuture, StatusAsk};
///
/// struct OwnTenantOnly;
///
/// impl Authorize for OwnTenantOnly {
///     fn authorize<'a>(&'a self, ask: &'a StatusAsk) -> AuthorizeFuture<'a> {
///         Box::pin(async move { Ok(!ask.tenant.is_empty()) })
///     }
/// }
/// # let _ = OwnTenantOnly;
/// ```
pub type AuthorizeFuture<'a> = Pin<Box<dyn Future<Output = Result<bool, BoxError>> + Send + 'a>>;

/// The status tool's authorization hook ([`StatusTool::authorize`], the JS `authorize` option): anything but
/// `Ok(true)` — an `Err` included, told as [`LedgerEvent::AuthorizeError`] — answers exactly as an id never
/// used (`not_found`), so a refusal tells nothing. A closure `Fn(StatusAsk) -> impl Future<Output =
/// Result<bool, BoxError>>` is one.
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{Authorize, AuthorizeFuture, MemoryLedgerStore, OperationLedger, StatusAsk, StatusTool};
///
/// /// A hook with state of its own: the actions each tenant may read.
/// struct Grants(std::collections::HashMap<String, Vec<String>>);
///
/// impl Authorize for Grants {
///     fn authorize<'a>(&'a self, ask: &'a StatusAsk) -> AuthorizeFuture<'a> {
///         let ok = self.0.get(&ask.tenant).is_some_and(|actions| actions.contains(&ask.action));
///         Box::pin(std::future::ready(Ok(ok)))
///     }
/// }
///
/// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
/// let grants = Grants([("alice".to_string(), vec!["create_ticket".to_string()])].into());
/// let status = StatusTool::new(&ledger, |_ext| Some("alice".to_string())).authorize(grants);
/// # let _ = status;
/// ```
pub trait Authorize: Send + Sync {
    /// Whether `ask`'s caller may read the record.
    fn authorize<'a>(&'a self, ask: &'a StatusAsk) -> AuthorizeFuture<'a>;
}

impl<F, Fut> Authorize for F
where
    F: Fn(StatusAsk) -> Fut + Send + Sync,
    Fut: Future<Output = Result<bool, BoxError>> + Send + 'static,
{
    fn authorize<'a>(&'a self, ask: &'a StatusAsk) -> AuthorizeFuture<'a> {
        Box::pin(self(ask.clone()))
    }
}

type TenantOf = Arc<dyn Fn(&Extensions) -> Option<String> + Send + Sync>;

/// The status tool over a ledger (the JS `registerStatusTool`). `tenant` reads the authenticated principal from
/// the request context's [`Extensions`] — the only place the tenant comes from; the tool's arguments are never
/// read for it. Over rmcp's Streamable HTTP server, the HTTP request's `http::request::Parts` are in the request
/// context's extensions, with what your authentication layer added to them:
///
/// ```no_run
/// # use axum::http;
/// # async fn demo(ledger: mcp_retry_policy::rmcp::OperationLedger, context: rmcp::service::RequestContext<rmcp::RoleServer>, args: rmcp::model::JsonObject) {
/// use mcp_retry_policy::rmcp::StatusTool;
///
/// #[derive(Clone)]
/// struct Principal(String); // what the authentication layer put in the HTTP request's extensions
///
/// let status = StatusTool::new(&ledger, |ext| {
///     Some(ext.get::<http::request::Parts>()?.extensions.get::<Principal>()?.0.clone())
/// });
/// // In `ServerHandler::call_tool(&self, request, context)`, for `STATUS_TOOL_NAME`:
/// let answer = status.call(&context.extensions, &args).await;
/// # }
/// ```
#[derive(Clone)]
pub struct StatusTool {
    ledger: OperationLedger,
    tenant: TenantOf,
    authorize: Option<Arc<dyn Authorize>>,
}

impl StatusTool {
    /// The status tool over `ledger`, the tenant read by `tenant` from the request context's extensions
    /// (`None` or an empty one: the call is refused, `rejected` with reason `unauthenticated`). Behind rmcp's
    /// Streamable HTTP server the extensions hold the HTTP request's `http::request::Parts`, with what your
    /// authentication layer added to them.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger, StatusTool};
    /// use rmcp::model::Extensions;
    ///
    /// /// What your authentication layer put in the request's extensions.
    /// #[derive(Clone)]
    /// struct Principal(String);
    ///
    /// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// // The tenant is the authenticated principal (the token's subject), never an argument.
    /// let status = StatusTool::new(&ledger, |ext: &Extensions| ext.get::<Principal>().map(|p| p.0.clone()));
    /// # let _ = status;
    /// ```
    pub fn new(
        ledger: &OperationLedger,
        tenant: impl Fn(&Extensions) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        StatusTool { ledger: ledger.clone(), tenant: Arc::new(tenant), authorize: None }
    }

    /// The authorization hook: whether the caller may read the record found (after the tenant narrowed the
    /// lookup to its own records); a refusal or an `Err` reads as `not_found`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{BoxError, MemoryLedgerStore, OperationLedger, StatusAsk, StatusTool};
    ///
    /// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// let status = StatusTool::new(&ledger, |_ext| Some("alice".to_string()))
    ///     .authorize(|ask: StatusAsk| async move { Ok::<_, BoxError>(ask.action != "payroll_adjust") });
    /// # let _ = status;
    /// ```
    pub fn authorize(mut self, hook: impl Authorize + 'static) -> Self {
        self.authorize = Some(Arc::new(hook));
        self
    }

    /// The tool's definition ([`status_tool()`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{MemoryLedgerStore, OperationLedger, StatusTool};
    /// use rmcp::model::ListToolsResult;
    ///
    /// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// let status = StatusTool::new(&ledger, |_ext| Some("alice".to_string()));
    /// // In `ServerHandler::list_tools`: listed beside the write tools (a client asks only a tool the server lists).
    /// let listed = ListToolsResult::with_all_items(vec![status.tool()]);
    /// assert_eq!(listed.tools[0].name, "operation_status");
    /// ```
    pub fn tool(&self) -> Tool {
        status_tool()
    }

    async fn allowed(&self, ask: StatusAsk) -> bool {
        let Some(hook) = &self.authorize else { return true };
        match hook.authorize(&ask).await {
            Ok(yes) => yes,
            Err(e) => {
                let key = LedgerKey { tenant: ask.tenant, action: ask.action, operation_id: ask.operation_id };
                self.ledger.emit(LedgerEvent::AuthorizeError { key, error: e.to_string() });
                false
            }
        }
    }

    /// Answers one status-tool call: `structuredContent` `{ status, action, operation_id, retryAfterMs?,
    /// result? }`, as the JS status tool answers, for the tenant `extensions` authenticate. Read-only: it
    /// claims and runs nothing (an outcome not known is asked of the ledger's reconcile hook).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::{with_idempotency, IdempotencyOptions, MemoryLedgerStore, OperationLedger, StatusTool};
    /// use rmcp::model::{CallToolResult, ContentBlock};
    /// use rmcp::model::Extensions;
    ///
    /// /// What your authentication layer put in the request's extensions.
    /// #[derive(Clone)]
    /// struct Principal(String);
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    /// let write = serde_json::json!({ "title": "Printer on fire", "operation_id": "op-0001-abcd" });
    /// with_idempotency(&ledger, &IdempotencyOptions::new("create_ticket"), Some("alice"), write.as_object().unwrap(), || async {
    ///     Ok(CallToolResult::success(vec![ContentBlock::text("opened T-1")]))
    /// })
    /// .await;
    ///
    /// let status = StatusTool::new(&ledger, |ext: &Extensions| ext.get::<Principal>().map(|p| p.0.clone()));
    /// let mut alice = Extensions::new(); // in `call_tool`: `&context.extensions`
    /// alice.insert(Principal("alice".into()));
    /// let ask = serde_json::json!({ "action": "create_ticket", "operation_id": "op-0001-abcd" });
    /// let answer = status.call(&alice, ask.as_object().unwrap()).await;
    /// assert_eq!(answer.structured_content.unwrap()["status"], "succeeded");
    ///
    /// // Another tenant asking about the same id hears what an unknown id gets.
    /// let mut bob = Extensions::new();
    /// bob.insert(Principal("bob".into()));
    /// let answer = status.call(&bob, ask.as_object().unwrap()).await;
    /// assert_eq!(answer.structured_content.unwrap()["status"], "not_found");
    /// # Ok(()) }
    /// ```
    pub async fn call(&self, extensions: &Extensions, arguments: &JsonObject) -> CallToolResult {
        let text = |k: &str| arguments.get(k).and_then(Value::as_str);
        let Some(operation_id) = text("operation_id").filter(|id| valid_operation_id(id)) else {
            return ledger_reply(Reply::StatusInvalidOperationId, None, Fill::default(), Map::new());
        };
        let Some(tenant) = (self.tenant)(extensions).filter(|t| !t.is_empty()) else {
            return ledger_reply(Reply::StatusUnauthenticated, Some(operation_id), Fill::default(), Map::new());
        };
        let tenant = tenant.as_str();
        let asked = text("action").unwrap_or_default();
        let ledger = &self.ledger;
        let answer = match ledger.locate(tenant, asked, operation_id).await {
            Err(e) => Err(e),
            Ok(None) => Ok((asked.to_string(), ("not_found", None, None))),
            Ok(Some(Err(()))) => Ok((asked.to_string(), ("unknown", None, None))),
            Ok(Some(Ok(action))) => {
                let ask = StatusAsk {
                    tenant: tenant.into(),
                    action: action.clone(),
                    operation_id: operation_id.into(),
                    extensions: if self.authorize.is_some() { extensions.clone() } else { Extensions::new() },
                };
                if self.allowed(ask).await {
                    let key =
                        LedgerKey { tenant: tenant.into(), action: action.clone(), operation_id: operation_id.into() };
                    ledger.status(&key).await.map(|s| (action, s))
                } else {
                    // Exactly as an id never used: the asked action, nothing of the record.
                    Ok((asked.to_string(), ("not_found", None, None)))
                }
            }
        };
        let (action, (status, result, retry_after_ms)) = match answer {
            Ok(a) => a,
            Err(e) => {
                let key = LedgerKey { tenant: tenant.into(), action: asked.into(), operation_id: operation_id.into() };
                ledger.emit(LedgerEvent::StoreError { during: "status", key: Some(key), error: e.to_string() });
                return store_down(operation_id, "operation_id");
            }
        };
        let mut sc = Map::new();
        sc.insert("status".into(), json!(status));
        sc.insert("action".into(), json!(action));
        sc.insert("operation_id".into(), json!(operation_id));
        if let Some(ms) = retry_after_ms {
            sc.insert("retryAfterMs".into(), json!(ms));
        }
        if let Some(r) = result.and_then(|t| serde_json::from_str::<Value>(&t).ok()) {
            sc.insert("result".into(), r);
        }
        let mut r = CallToolResult::structured(Value::Object(sc));
        r.content = vec![ContentBlock::text(status_words(status, operation_id, retry_after_ms))];
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_definition_is_the_shared_text_parsed_whole() {
        let tool = status_tool();
        assert_eq!(tool.name, status_tool::NAME);
        assert_eq!(tool.description.as_deref(), Some(status_tool::DESCRIPTION));
        let schema: JsonObject = serde_json::from_str(status_tool::INPUT_SCHEMA).unwrap_or_default();
        assert_eq!(schema.get("required"), Some(&json!(["action", "operation_id"])));
        assert_eq!(*tool.input_schema, schema);
        let a = tool.annotations.unwrap_or_default();
        assert_eq!(
            (a.read_only_hint, a.idempotent_hint, a.destructive_hint, a.open_world_hint),
            (Some(true), Some(true), Some(false), Some(false))
        );
    }
}
