//! A small rmcp 3.11 server for the peer matrix (tests/peers): the tools every peer has, over rmcp's own
//! Streamable HTTP service (stateful, `LocalSessionManager`) nested in an axum 0.8 router.
//!
//!   peers-rmcp-server --port P --effects FILE
//!
//! Each effect is appended to FILE as one JSON line (`{"srv","intent","tool","id","op"}`), and read back at
//! start: the "database" that survives a restart, and the truth the matrix counts. `GET /counts` answers the
//! effects per intent (the side channel); `GET /health` answers `ok`.
use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::routing::get;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode, ErrorData,
    JsonObject, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::{
    session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
};
use rmcp::{RoleServer, ServerHandler};
use serde_json::{json, Value};

#[derive(Clone)]
struct Effects {
    file: String,
    // intent → effects; operation id → effect id
    state: Arc<Mutex<(HashMap<String, u64>, HashMap<String, String>)>>,
}

impl Effects {
    fn load(file: &str) -> Self {
        let mut counts = HashMap::new();
        let mut ops = HashMap::new();
        if let Ok(text) = std::fs::read_to_string(file) {
            for line in text.lines() {
                let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
                let intent = v["intent"].as_str().unwrap_or_default().to_string();
                *counts.entry(intent).or_insert(0) += 1;
                if let (Some(op), Some(id)) = (v["op"].as_str(), v["id"].as_str()) {
                    ops.insert(op.to_string(), id.to_string());
                }
            }
        }
        Effects { file: file.to_string(), state: Arc::new(Mutex::new((counts, ops))) }
    }

    /// Does the effect (once per operation id when one is given); returns the effect's id.
    fn effect(&self, tool: &str, intent: &str, op: Option<&str>) -> String {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(id) = op.and_then(|o| st.1.get(o)) {
            return id.clone();
        }
        let n = st.0.values().sum::<u64>();
        let id = format!("{:08x}", (std::process::id() as u64) << 16 ^ n ^ 0x5eed);
        let line = json!({ "srv": "rmcp", "intent": intent, "tool": tool, "id": id, "op": op });
        if let Ok(mut f) = OpenOptions::new().create(true).append(true).open(&self.file) {
            let _ = writeln!(f, "{line}");
        }
        *st.0.entry(intent.to_string()).or_insert(0) += 1;
        if let Some(o) = op {
            st.1.insert(o.to_string(), id.clone());
        }
        id
    }

    fn counts(&self) -> Value {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        json!(st.0)
    }
}

#[derive(Clone)]
struct Peer {
    effects: Effects,
}

fn schema(props: Value, required: &[&str]) -> Arc<JsonObject> {
    let v = json!({ "type": "object", "properties": props, "required": required });
    Arc::new(v.as_object().cloned().unwrap_or_default())
}

fn text(s: String) -> Vec<ContentBlock> {
    vec![ContentBlock::text(s)]
}

fn tools() -> Vec<Tool> {
    let base = json!({ "intent": { "type": "string" }, "title": { "type": "string" }, "delay_ms": { "type": "number" } });
    let mut keyed = base.clone();
    keyed["operation_id"] = json!({ "type": "string" });
    vec![
        Tool::new("create_ticket", "Create a ticket (not idempotent).", schema(base.clone(), &["intent"])),
        Tool::new("create_ticket_keyed", "Create a ticket, once per operation_id.", schema(keyed, &["intent", "operation_id"])),
        Tool::new("slow", "Works for a while, reporting progress.", schema(json!({ "intent": { "type": "string" }, "steps": { "type": "number" }, "ms": { "type": "number" } }), &["intent"]))
            .with_annotations(ToolAnnotations::new().read_only(true)),
        Tool::new("fail_plain", "Raises an error (the tool's own).", schema(base.clone(), &["intent"])),
        Tool::new("fail_after_effect", "Acts, then raises a protocol error.", schema(base.clone(), &["intent"])),
        Tool::new("bad_output", "Acts, then returns output its schema refuses.", schema(base, &["intent"]))
            .with_raw_output_schema(schema(json!({ "n": { "type": "number" } }), &["n"])),
    ]
}

impl ServerHandler for Peer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let intent = args.get("intent").and_then(Value::as_str).unwrap_or_default().to_string();
        let delay = args.get("delay_ms").and_then(Value::as_u64).unwrap_or(0);
        let name = request.name.to_string();
        let done = |id: String| CallToolResult::success(text(format!("{name} done, effect:{id}")));
        match name.as_str() {
            "create_ticket" | "create_ticket_keyed" => {
                let op = args.get("operation_id").and_then(Value::as_str).filter(|_| name == "create_ticket_keyed");
                let id = self.effects.effect(&name, &intent, op);
                tokio::time::sleep(Duration::from_millis(delay)).await;
                Ok(done(id).into())
            }
            "slow" => {
                let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(5);
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(200);
                let token = context.meta.get_progress_token();
                for i in 0..steps {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    if let Some(t) = token.clone() {
                        let p = ProgressNotificationParam::new(t, (i + 1) as f64).with_total(steps as f64);
                        let _ = context.peer.notify_progress(p).await;
                    }
                }
                let id = self.effects.effect(&name, &intent, None);
                Ok(done(id).into())
            }
            "fail_plain" => Ok(CallToolResult::error(text("fail_plain: the tool failed".into())).into()),
            "fail_after_effect" => {
                self.effects.effect(&name, &intent, None);
                Err(ErrorData::new(ErrorCode::INTERNAL_ERROR, "fail_after_effect: failed after acting", None))
            }
            "bad_output" => {
                let id = self.effects.effect(&name, &intent, None);
                let mut r = CallToolResult::structured(json!({ "n": format!("effect:{id}") }));
                r.content = text(format!("bad_output done, effect:{id}"));
                Ok(r.into())
            }
            _ => Err(ErrorData::invalid_params(format!("no tool {name}"), None)),
        }
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned().unwrap_or_default();
    let port = arg("--port");
    let effects = Effects::load(&arg("--effects"));
    let for_service = effects.clone();
    let service: StreamableHttpService<Peer, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(Peer { effects: for_service.clone() }),
        Default::default(),
        StreamableHttpServerConfig::default(),
    );
    let counts = effects.clone();
    let router = axum::Router::new()
        .route("/health", get(|| async { "ok" }))
        .route("/counts", get(move || async move { axum::Json(counts.counts()) }))
        .nest_service("/mcp", service);
    let listener = match tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("bind 127.0.0.1:{port}: {e}");
            std::process::exit(2);
        }
    };
    println!("listening on 127.0.0.1:{port}");
    let _ = axum::serve(listener, router).await;
}
