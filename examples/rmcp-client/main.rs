//! An rmcp 3.11 client wrapped by `RetryClient`: `create_ticket` is keyed (it takes an operation id), so the
//! wrapper creates one id for the intended call, journals it to a file before the first send, and re-sends
//! only with that id. The same intent asked again (a restarted agent, a model repeating itself) reuses it, and
//! the server's ledger answers with the first ticket.
//!
//! ```sh
//! cargo run --example rmcp-server --features rmcp,sqlite -- --port 8080 &
//! cargo run --example rmcp-client --features rmcp -- --url http://127.0.0.1:8080/mcp
//! ```
use std::sync::Arc;

use mcp_retry_policy::retry::{FinalStatus, Safety};
use mcp_retry_policy::rmcp::{FileJournal, RetryClient, RetryOptions};
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().collect();
    let url = args.iter().position(|a| a == "--url").and_then(|i| args.get(i.saturating_add(1))).cloned();
    let url: Arc<str> = url.unwrap_or_else(|| "http://127.0.0.1:8080/mcp".into()).into();
    let journal = std::env::temp_dir().join(format!("rmcp-client-journal-{}.jsonl", std::process::id()));

    // ANCHOR: wrap
    // The wrap: a connect function (used again to re-initialize a lost session), the options, a journal.
    let connect = move || ().serve(StreamableHttpClientTransport::from_uri(url.clone()));
    let client = RetryClient::new(connect().await?, RetryOptions::default().tool("create_ticket", Safety::Keyed))
        .journal(Arc::new(FileJournal::open(&journal)?))
        .reconnect(connect);

    let call = CallToolRequestParams::new("create_ticket")
        .with_arguments(json!({ "title": "printer on fire" }).as_object().cloned().unwrap_or_default());
    let first = client.call_tool_for(call.clone(), Some("tool-call-1")).await?;
    println!("{:?} {:?}: {}", first.status, first.operation_id, first.message);
    // ANCHOR_END: wrap
    // The same intended call again: the same operation id, the first ticket.
    let again = client.call_tool_for(call, Some("tool-call-1")).await?;
    println!("{:?} {:?}: {}", again.status, again.operation_id, again.message);
    let _ = std::fs::remove_file(&journal);

    let text = |o: &mcp_retry_policy::rmcp::CallOutcome| format!("{:?}", o.result.as_ref().map(|r| &r.content));
    let ok = first.status == FinalStatus::Succeeded
        && again.status == FinalStatus::Succeeded
        && first.operation_id == again.operation_id
        && text(&first) == text(&again);
    if !ok {
        return Err("the repeat did not return the first ticket".into());
    }
    println!("one ticket for two calls: {}", text(&again));
    Ok(())
}
