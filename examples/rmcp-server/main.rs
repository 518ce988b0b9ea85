//! An rmcp 3.11 server whose write tools are deduplicated by the operation ledger: a retried `create_ticket`
//! with the same `operation_id` returns the first ticket instead of opening a second one. `open_ticket` keeps
//! its tickets in the ledger's own SQLite file and commits each with its ledger record in one transaction
//! (`with_idempotency_atomic`); the ledger's reconcile hook looks a write whose outcome is not known up in that
//! table.
//!
//! ```sh
//! cargo run --example rmcp-server --features rmcp,sqlite -- --port 8080 --ledger /tmp/ledger.db
//! ```
//! Serves `http://127.0.0.1:PORT/mcp` (Streamable HTTP) until killed, or for `--seconds S`.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mcp_retry_policy::rmcp::{
    with_idempotency, with_idempotency_atomic, BoxError, IdempotencyOptions, OperationLedger, ReconcileRequest,
    Reconciled, SqliteLedgerStore, StatusTool, STATUS_TOOL_NAME,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::{session::local::LocalSessionManager, StreamableHttpService};
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::{RoleServer, ServerHandler};
use serde_json::json;

#[derive(Clone)]
struct Desk {
    ledger: OperationLedger,
    store: Arc<SqliteLedgerStore>,
    status: StatusTool,
    tickets: Arc<AtomicU64>,
}

const TICKETS: &str =
    "CREATE TABLE IF NOT EXISTS tickets (id INTEGER PRIMARY KEY, operation_id TEXT NOT NULL UNIQUE, title TEXT NOT NULL)";

fn opened(id: i64, title: &str) -> CallToolResult {
    let mut r = CallToolResult::structured(json!({ "id": format!("T-{id}"), "title": title }));
    r.content = vec![ContentBlock::text(format!("opened T-{id}"))];
    r
}

// ANCHOR: reconcile
/// The reconcile hook: asked about a write whose outcome is not known (its process died mid-run, or it ended
/// `unknown`). A ticket row with its operation id proves it happened; no row proves nothing here (a write to a
/// downstream API would ask that API), so the answer is then `unknown` and the write never runs again.
fn reconcile_from(
    db: Arc<Mutex<rusqlite::Connection>>,
) -> impl Fn(ReconcileRequest) -> std::future::Ready<Result<Reconciled, BoxError>> {
    move |asked: ReconcileRequest| {
        let db = db.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let found = db.query_row(
            "SELECT id, title FROM tickets WHERE operation_id = ?",
            [asked.key.operation_id.as_str()],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)),
        );
        std::future::ready(match found {
            Ok((id, title)) => Ok(Reconciled::Succeeded(opened(id, &title))),
            Err(rusqlite::Error::QueryReturnedNoRows) => Ok(Reconciled::Unknown),
            Err(e) => Err(e.into()),
        })
    }
}
// ANCHOR_END: reconcile

impl ServerHandler for Desk {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({
            "type": "object",
            "properties": { "title": { "type": "string" }, "operation_id": { "type": "string" } },
            "required": ["title", "operation_id"]
        });
        let create = Tool::new(
            "create_ticket",
            "Open a ticket. Pass a fresh operation_id per intended ticket; a repeat with the same id returns the first ticket.",
            Arc::new(schema.as_object().cloned().unwrap_or_default()),
        );
        let open = Tool::new(
            "open_ticket",
            "Open a ticket, committed with its ledger record in one transaction. Pass a fresh operation_id per intended ticket.",
            Arc::new(schema.as_object().cloned().unwrap_or_default()),
        );
        // ANCHOR: list
        // The status tool is listed beside the write tools.
        Ok(ListToolsResult::with_all_items(vec![create, open, self.status.tool()]))
        // ANCHOR_END: list
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        // The tenant comes from the request's authentication (e.g. the bearer token's subject), never from the
        // arguments. This example has no authentication: one tenant.
        let tenant = Some("demo");
        match request.name.as_ref() {
            // ANCHOR: call
            "create_ticket" => {
                let opts = IdempotencyOptions::new("create_ticket");
                let title = args.get("title").and_then(|t| t.as_str()).unwrap_or_default().to_string();
                let result = with_idempotency(&self.ledger, &opts, tenant, &args, || async {
                    // The write itself: runs once per operation id.
                    let n = self.tickets.fetch_add(1, Ordering::SeqCst).saturating_add(1);
                    let mut r = CallToolResult::structured(json!({ "id": format!("T-{n}"), "title": title }));
                    r.content = vec![ContentBlock::text(format!("opened T-{n}"))];
                    Ok(r)
                })
                .await;
                Ok(result.into())
            }
            // ANCHOR_END: call
            // ANCHOR: atomic
            "open_ticket" => {
                let opts = IdempotencyOptions::new("open_ticket");
                let title = args.get("title").and_then(|t| t.as_str()).unwrap_or_default().to_string();
                let id = args.get("operation_id").and_then(|t| t.as_str()).unwrap_or_default().to_string();
                // The ticket row and the ledger's record commit together, or neither does.
                let work = self.store.transact(|tx| {
                    tx.execute("INSERT INTO tickets (operation_id, title) VALUES (?, ?)", [&id, &title])?;
                    Ok(opened(tx.last_insert_rowid(), &title))
                });
                Ok(with_idempotency_atomic(&self.ledger, &opts, tenant, &args, work).await.into())
            }
            // ANCHOR_END: atomic
            // ANCHOR: status
            // The status tool reads its tenant from the request context only (see `main`).
            STATUS_TOOL_NAME => Ok(self.status.call(&context.extensions, &args).await.into()),
            // ANCHOR_END: status
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i.saturating_add(1))).cloned();
    let port = arg("--port").unwrap_or_else(|| "8080".into());
    let file =
        arg("--ledger").unwrap_or_else(|| std::env::temp_dir().join("rmcp-server-ledger.db").display().to_string());
    let store = Arc::new(SqliteLedgerStore::open(&file)?);
    let app = rusqlite::Connection::open(&file)?;
    app.execute_batch(TICKETS)?;
    // ANCHOR: ledger
    let ledger =
        OperationLedger::builder(store.clone()).reconcile(reconcile_from(Arc::new(Mutex::new(app)))).build()?;
    // The status tool's tenant, from the request context (an authenticated server reads the principal its
    // authentication layer put in the HTTP request's `http::request::Parts`); this example has none: one tenant.
    let status = StatusTool::new(&ledger, |_ctx| Some("demo".to_string()));
    // ANCHOR_END: ledger
    let desk = Desk { ledger, store, status, tickets: Arc::default() };
    let service: StreamableHttpService<Desk, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(desk.clone()), Default::default(), StreamableHttpServerConfig::default());
    let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await?;
    println!("listening on http://{}/mcp (ledger {file})", listener.local_addr()?);
    let serve = axum::serve(listener, axum::Router::new().nest_service("/mcp", service));
    match arg("--seconds").and_then(|s| s.parse::<u64>().ok()) {
        Some(s) => {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(s), serve).await;
        }
        None => serve.await?,
    }
    Ok(())
}
