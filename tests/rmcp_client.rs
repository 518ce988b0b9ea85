//! The rmcp face's client against real peers (feature `rmcp`): the TypeScript SDK test server and the rmcp 3.11
//! peer server (`tests/peers/rmcp-server`), each behind our fault proxy, over Streamable HTTP on 127.0.0.1 —
//! driven through `tests/support/rust-harness.mjs`. The same invariants as the JS suite: no duplicate effect
//! for an unsafe tool after a cut, a keyed tool re-sent with its one operation id, a read-only tool retried,
//! a restarted server's lost session re-initialized, and no status that claims more than the facts.
#![cfg(feature = "rmcp")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::process::Stdio;
use std::sync::Arc;

use mcp_retry_policy::retry::{Cause, FinalStatus, Policy, Reason, Safety};
use mcp_retry_policy::rmcp::{CallOutcome, FileJournal, Journal, RetryClient, RetryOptions};
use rmcp::model::CallToolRequestParams;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Whether the repository's Node peers are here (`tests/support/`, `tests/peers/`). A copy of the crate from
/// crates.io has not got them (they are the npm layer's): the tests that drive them say so and pass.
fn peers_here() -> bool {
    let here = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support")).is_dir();
    if !here {
        eprintln!("skipped: this test drives the repository's Node peers (tests/support/), not in this copy");
    }
    here
}

struct Harness {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Harness {
    async fn start() -> Harness {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut child = Command::new("node")
            .arg(format!("{root}/tests/support/rust-harness.mjs"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            // Not killed on drop: a test that fails drops its stdin, and the harness then closes what it started.
            .spawn()
            .unwrap_or_else(|e| panic!("node tests/support/rust-harness.mjs: {e}"));
        let stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        Harness { _child: child, stdin, lines: BufReader::new(stdout).lines() }
    }

    async fn ask(&mut self, command: Value) -> Value {
        let line = format!("{command}\n");
        self.stdin.write_all(line.as_bytes()).await.unwrap_or_else(|e| panic!("harness stdin: {e}"));
        let answer = tokio::time::timeout(std::time::Duration::from_secs(30), self.lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("harness: no answer to {command} in 30 s"))
            .unwrap_or_else(|e| panic!("harness stdout: {e}"))
            .unwrap_or_else(|| panic!("harness ended"));
        let v: Value = serde_json::from_str(&answer).unwrap_or_else(|e| panic!("harness answer {answer}: {e}"));
        assert_eq!(v["ok"], json!(true), "harness: {command} → {v}");
        v
    }

    /// A server of `kind` ("ts" or "rmcp") behind a fault proxy: (server id, proxy id, proxy url).
    async fn behind_proxy(&mut self, kind: &str) -> (String, String, String) {
        let s = self.ask(json!({ "op": kind })).await;
        let p = self.ask(json!({ "op": "proxy", "target": s["url"] })).await;
        let text = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().to_string();
        (text(&s, "id"), text(&p, "id"), text(&p, "url"))
    }

    async fn faults(&mut self, proxy: &str, faults: Value) {
        self.ask(json!({ "op": "faults", "proxy": proxy, "faults": faults })).await;
    }

    async fn calls(&mut self, proxy: &str) -> u64 {
        self.ask(json!({ "op": "calls", "proxy": proxy })).await["n"].as_u64().unwrap_or(0)
    }

    async fn effects(&mut self, server: &str) -> Value {
        self.ask(json!({ "op": "effects", "server": server })).await
    }

    async fn close(mut self) {
        self.ask(json!({ "op": "close" })).await;
    }
}

fn policy() -> Policy {
    Policy {
        base_delay_ms: 20,
        max_delay_ms: 200,
        attempt_timeout_ms: 5_000,
        total_timeout_ms: 20_000,
        ..Policy::default()
    }
}

async fn client(url: &str, options: RetryOptions) -> RetryClient {
    let url: Arc<str> = url.into();
    let connect = move || ().serve(StreamableHttpClientTransport::from_uri(url.clone()));
    let first = connect().await.unwrap_or_else(|e| panic!("connect: {e}"));
    RetryClient::new(first, options.policy(policy()).seed(7)).reconnect(connect)
}

fn call(tool: &str, args: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_string()).with_arguments(args.as_object().cloned().unwrap_or_default())
}

async fn run(c: &RetryClient, tool: &str, args: Value) -> CallOutcome {
    c.call_tool(call(tool, args)).await.unwrap_or_else(|e| panic!("{tool}: {e}"))
}

fn n(v: &Value, path: &[&str]) -> u64 {
    path.iter().fold(v, |v, k| &v[*k]).as_u64().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_server_unsafe_tool_after_a_cut_is_unknown_and_not_resent() {
    if !peers_here() {
        return;
    }
    let mut h = Harness::start().await;
    let (server, proxy, url) = h.behind_proxy("ts").await;
    let c = client(&url, RetryOptions::default().trusted(true)).await;
    h.faults(&proxy, json!(["drop"])).await;
    let out = run(&c, "create_ticket", json!({ "title": "printer" })).await;
    assert_eq!(out.status, FinalStatus::Unknown, "{out:?}");
    assert_eq!(out.reason, Reason::UnsafeAfterUnknown);
    assert!(out.message.contains("may or may not have taken effect"), "{}", out.message);
    assert!(out.result.is_none(), "no result claimed");
    assert_eq!(h.calls(&proxy).await, 1, "sent once");
    assert_eq!(n(&h.effects(&server).await, &["tickets"]), 1, "one effect");
    // The same after a cut mid-answer.
    h.faults(&proxy, json!(["cut"])).await;
    let out = run(&c, "create_ticket", json!({ "title": "printer 2" })).await;
    assert_eq!(out.status, FinalStatus::Unknown, "{out:?}");
    assert_eq!(h.calls(&proxy).await, 2);
    assert_eq!(n(&h.effects(&server).await, &["tickets"]), 2);
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_server_untrusted_annotations_are_ignored() {
    if !peers_here() {
        return;
    }
    let mut h = Harness::start().await;
    let (server, proxy, url) = h.behind_proxy("ts").await;
    // close_ticket claims readOnlyHint: true and is not: untrusted, it is unsafe.
    let c = client(&url, RetryOptions::default()).await;
    h.faults(&proxy, json!(["drop"])).await;
    let out = run(&c, "close_ticket", json!({ "id": "T-1" })).await;
    assert_eq!((out.status, out.safety), (FinalStatus::Unknown, Safety::Unsafe), "{out:?}");
    assert_eq!(n(&h.effects(&server).await, &["deletes"]), 1);
    assert_eq!(h.calls(&proxy).await, 1);
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_server_read_only_is_retried_and_keyed_reuses_its_id() {
    if !peers_here() {
        return;
    }
    let mut h = Harness::start().await;
    let (server, proxy, url) = h.behind_proxy("ts").await;
    let c = client(&url, RetryOptions::default().trusted(true)).await;
    h.faults(&proxy, json!(["drop"])).await;
    let out = run(&c, "search_tickets", json!({ "query": "x" })).await;
    assert_eq!((out.status, out.safety), (FinalStatus::Succeeded, Safety::ReadOnly), "{out:?}");
    assert_eq!(out.attempts.len(), 2);
    assert_eq!(n(&h.effects(&server).await, &["searches"]), 2);
    // Keyed: the schema declares operation_id; re-sent after the drop with the same id, deduped by the server.
    h.faults(&proxy, json!(["drop", "cut"])).await;
    let out = run(&c, "create_ticket_keyed", json!({ "title": "once" })).await;
    assert_eq!((out.status, out.safety), (FinalStatus::Succeeded, Safety::Keyed), "{out:?}");
    assert_eq!(out.attempts.len(), 3);
    let e = h.effects(&server).await;
    assert_eq!((n(&e, &["tickets"]), n(&e, &["keyed"])), (1, 1), "one ticket for three sends: {e}");
    assert!(out.operation_id.as_deref().is_some_and(|id| id.len() == 36));
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_server_refusals_with_proof_are_retried_and_without_are_not() {
    if !peers_here() {
        return;
    }
    let mut h = Harness::start().await;
    let (server, proxy, url) = h.behind_proxy("ts").await;
    let c = client(&url, RetryOptions::default().trusted(true)).await;
    // A 503 with Retry-After, answered without forwarding: a refusal (not processed), retried after the wait.
    h.faults(&proxy, json!([{ "status": 503, "retryAfter": 0 }])).await;
    let out = run(&c, "create_ticket", json!({ "title": "a" })).await;
    assert_eq!(out.status, FinalStatus::Succeeded, "{out:?}");
    assert_eq!(n(&h.effects(&server).await, &["tickets"]), 1);
    // A 502 from a gateway after it forwarded: no proof, unknown, not re-sent.
    h.faults(&proxy, json!([{ "status": 502, "afterForward": true }])).await;
    let out = run(&c, "create_ticket", json!({ "title": "b" })).await;
    assert_eq!(out.status, FinalStatus::Unknown, "{out:?}");
    assert_eq!(n(&h.effects(&server).await, &["tickets"]), 2);
    // A plain 400 (not forwarded): permanent, failed, the model told to fix the arguments.
    h.faults(&proxy, json!([{ "status": 400 }])).await;
    let out = run(&c, "create_ticket", json!({ "title": "c" })).await;
    assert_eq!((out.status, out.reason), (FinalStatus::Failed, Reason::Permanent), "{out:?}");
    assert_eq!(n(&h.effects(&server).await, &["tickets"]), 2);
    // A fresh client (the refusals above count toward this one's breaker).
    let c = client(&url, RetryOptions::default().trusted(true)).await;
    // The same with Retry-After as an HTTP date (already past: come back now) — read as the JS layer reads it.
    // Before the date was read, this 503 counted as one without Retry-After: no proof, unknown, not re-sent.
    for date in ["Wed, 21 Oct 2015 07:28:00 GMT", "Wednesday, 21-Oct-15 07:28:00 GMT", "Wed Oct 21 07:28:00 2015"] {
        h.faults(&proxy, json!([{ "status": 503, "retryAfter": date }])).await;
        let out = run(&c, "create_ticket", json!({ "title": date })).await;
        assert_eq!(out.status, FinalStatus::Succeeded, "{date}: {out:?}");
        assert_eq!(out.attempts.len(), 2, "{date}");
    }
    assert_eq!(n(&h.effects(&server).await, &["tickets"]), 5);
    // A Retry-After that is no date: as if there were none — a 503 without proof, unknown, sent once.
    let sent = h.calls(&proxy).await;
    h.faults(&proxy, json!([{ "status": 503, "retryAfter": "tomorrow-ish" }])).await;
    let out = run(&c, "create_ticket", json!({ "title": "garbage" })).await;
    assert_eq!(out.status, FinalStatus::Unknown, "{out:?}");
    assert_eq!(h.calls(&proxy).await, sent.saturating_add(1), "sent once");
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_server_expired_session_is_reinitialized() {
    if !peers_here() {
        return;
    }
    let mut h = Harness::start().await;
    let (server, _proxy, url) = h.behind_proxy("ts").await;
    // rmcp's transport, as configured by default, recovers an expired session itself.
    let c = client(&url, RetryOptions::default().trusted(true)).await;
    assert_eq!(run(&c, "create_ticket", json!({ "title": "a" })).await.status, FinalStatus::Succeeded);
    h.ask(json!({ "op": "expire", "server": server })).await;
    let out = run(&c, "create_ticket", json!({ "title": "b" })).await;
    assert_eq!(out.status, FinalStatus::Succeeded, "{out:?}");
    // rmcp's transport re-initialized by itself (it re-sends the one POST the 404 refused): one attempt here.
    assert_eq!(out.attempts.len(), 1, "{out:?}");
    assert_eq!(n(&h.effects(&server).await, &["tickets"]), 2, "one effect per call");
    // With rmcp's own recovery off, the 404 reaches the wrapper: the engine asks to re-initialize (a lost
    // session proves the request was not processed), `reconnect` makes a new session, the call goes once.
    let url: Arc<str> = url.as_str().into();
    let connect = move || {
        let config = StreamableHttpClientTransportConfig::with_uri(url.clone()).reinit_on_expired_session(false);
        ().serve(StreamableHttpClientTransport::from_config(config))
    };
    let first = connect().await.unwrap_or_else(|e| panic!("connect: {e}"));
    let c = RetryClient::new(first, RetryOptions::default().trusted(true).policy(policy()).seed(7)).reconnect(connect);
    assert_eq!(run(&c, "create_ticket", json!({ "title": "c" })).await.status, FinalStatus::Succeeded);
    h.ask(json!({ "op": "expire", "server": server })).await;
    let out = run(&c, "create_ticket", json!({ "title": "d" })).await;
    assert_eq!(out.status, FinalStatus::Succeeded, "{out:?}");
    let causes: Vec<Cause> = out.attempts.iter().map(|a| a.classification.cause).collect();
    assert_eq!(causes, vec![Cause::HttpSessionExpired, Cause::Result], "{out:?}");
    assert_eq!(n(&h.effects(&server).await, &["tickets"]), 4, "one effect per call");
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_server_cut_restart_and_keyed_with_a_file_journal() {
    if !peers_here() {
        return;
    }
    let mut h = Harness::start().await;
    let (server, proxy, url) = h.behind_proxy("rmcp").await;
    let dir = std::env::temp_dir().join(format!("mrp-rmcp-client-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("journal.jsonl");
    let _ = std::fs::remove_file(&path);
    let journal: Arc<dyn Journal> = Arc::new(FileJournal::open(&path).unwrap_or_else(|e| panic!("{e}")));
    let c = client(&url, RetryOptions::default().trusted(true)).await.journal(journal.clone());
    // Unsafe (no annotations): a drop after the server acted is unknown, one effect.
    h.faults(&proxy, json!(["drop"])).await;
    let out = run(&c, "create_ticket", json!({ "intent": "u1" })).await;
    assert_eq!((out.status, out.safety), (FinalStatus::Unknown, Safety::Unsafe), "{out:?}");
    assert_eq!(n(&h.effects(&server).await, &["counts", "create_ticket"]), 1);
    // Read-only (trusted): retried.
    h.faults(&proxy, json!(["drop"])).await;
    let out = run(&c, "slow", json!({ "intent": "r1", "steps": 1, "ms": 1 })).await;
    assert_eq!((out.status, out.safety), (FinalStatus::Succeeded, Safety::ReadOnly), "{out:?}");
    assert_eq!(n(&h.effects(&server).await, &["counts", "slow"]), 2);
    // Keyed, by intent: the id is journaled before the first send; a drop, a re-send with the same id.
    h.faults(&proxy, json!(["drop"])).await;
    let params = call("create_ticket_keyed", json!({ "intent": "k1" }));
    let out = c.call_tool_for(params.clone(), Some("tool-call-1")).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((out.status, out.safety), (FinalStatus::Succeeded, Safety::Keyed), "{out:?}");
    let id = out.operation_id.clone().unwrap_or_default();
    let e = h.effects(&server).await;
    assert_eq!((n(&e, &["counts", "create_ticket_keyed"]), n(&e, &["operationIds"])), (1, 1), "{e}");
    // The server restarts (kill -9): its sessions are gone. The same intent, from a reopened journal (a
    // restarted agent), reuses the first id; the lost session is re-initialized; still one effect.
    h.ask(json!({ "op": "restart", "server": server })).await;
    let reopened: Arc<dyn Journal> = Arc::new(FileJournal::open(&path).unwrap_or_else(|e| panic!("{e}")));
    let c = c.journal(reopened);
    let again = c.call_tool_for(params, Some("tool-call-1")).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.status, FinalStatus::Succeeded, "{again:?}");
    assert_eq!(again.operation_id.as_deref(), Some(id.as_str()), "the intent's one id");
    assert_eq!(n(&h.effects(&server).await, &["counts", "create_ticket_keyed"]), 1, "deduped across the restart");
    // After the restart an unsafe call goes through on a new session (re-initialized), once.
    let out = run(&c, "create_ticket", json!({ "intent": "u2" })).await;
    assert_eq!(out.status, FinalStatus::Succeeded, "{out:?}");
    assert_eq!(n(&h.effects(&server).await, &["counts", "create_ticket"]), 2);
    assert!(journal.pending().unwrap_or_default().is_empty(), "settled in the journal");
    let _ = std::fs::remove_dir_all(&dir);
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_server_a_call_cancelled_in_flight_is_unknown_and_never_resent() {
    if !peers_here() {
        return;
    }
    use mcp_retry_policy::rmcp::CancellationToken;
    let mut h = Harness::start().await;
    let (server, proxy, url) = h.behind_proxy("rmcp").await;
    // Read-only (trusted): a tool the engine re-sends after a lost answer — but not after the caller's cancel.
    let c = client(&url, RetryOptions::default().trusted(true)).await;
    let cancel = CancellationToken::new();
    let later = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        later.cancel();
    });
    let params = call("slow", json!({ "intent": "c1", "steps": 10, "ms": 100 }));
    let out = c.call_tool_cancellable(params, None, &cancel).await.unwrap();
    assert_eq!(
        (out.status, out.reason, out.safety),
        (FinalStatus::Unknown, Reason::Aborted, Safety::ReadOnly),
        "{out:?}"
    );
    assert_eq!(out.attempts.len(), 1, "{out:?}");
    assert_eq!(h.calls(&proxy).await, 1, "sent once, never again");
    // The server was told (notifications/cancelled, through the proxy); this tool does not watch its
    // cancellation token, so its work still ends — once.
    let mut told = false;
    for _ in 0..50 {
        let m = h.ask(json!({ "op": "methods", "proxy": proxy })).await;
        told = m["methods"].as_array().is_some_and(|m| m.contains(&json!("notifications/cancelled")));
        if told {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(told, "notifications/cancelled reached the server");
    tokio::time::sleep(std::time::Duration::from_millis(1_200)).await;
    assert_eq!(n(&h.effects(&server).await, &["counts", "slow"]), 1, "ran once: {}", h.effects(&server).await);
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_connections_fail_cleanly_and_never_read_unknown() {
    if !peers_here() {
        return;
    }
    let mut h = Harness::start().await;
    let (server, proxy, url) = h.behind_proxy("ts").await;
    let c = client(&url, RetryOptions::default()).await;
    assert_eq!(run(&c, "create_ticket", json!({ "title": "a" })).await.status, FinalStatus::Succeeded);
    // Nothing listens on the proxy's port any more: every attempt is refused at connect, so nothing was sent —
    // an unsafe tool is retried, and the call ends failed (not unknown), with no effect.
    h.ask(json!({ "op": "stop", "proxy": proxy })).await;
    let out = run(&c, "create_ticket", json!({ "title": "b" })).await;
    assert_eq!((out.status, out.reason), (FinalStatus::Failed, Reason::MaxAttempts), "{out:?}");
    assert_eq!(out.attempts.len(), 3, "every attempt: not sent, so retried");
    assert!(out.message.contains("did not take effect"), "{}", out.message);
    assert_eq!(n(&h.effects(&server).await, &["tickets"]), 1);
    h.close().await;
}

/// The crate's examples/rmcp-server binary (`cargo build --examples --features rmcp,sqlite`; scripts/test.sh builds it).
fn example_server() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join("examples").join("rmcp-server");
    bin.exists().then(|| bin.display().to_string())
}

/// A harness with examples/rmcp-server behind a fault proxy: (harness, proxy id, proxy url).
async fn rust_server_behind_proxy() -> (Harness, String, String) {
    let bin = example_server()
        .unwrap_or_else(|| panic!("examples/rmcp-server is not built: cargo build --examples --features rmcp,sqlite"));
    let mut h = Harness::start().await;
    let s = h.ask(json!({ "op": "rust-server", "bin": bin })).await;
    let p = h.ask(json!({ "op": "proxy", "target": s["url"] })).await;
    let (proxy, url) =
        (p["id"].as_str().unwrap_or_default().to_string(), p["url"].as_str().unwrap_or_default().to_string());
    (h, proxy, url)
}

/// The result's content, as text (for "opened T-n").
fn text(o: &CallOutcome) -> String {
    format!("{:?}", o.result.as_ref().map(|r| &r.content))
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_server_dedupes_a_keyed_write_the_rust_client_resends() {
    if !peers_here() {
        return;
    }
    let (mut h, proxy, url) = rust_server_behind_proxy().await;
    // Trusted: the schema's operation_id makes create_ticket keyed. The server acts on all three sends; its
    // ledger runs the write once and replays it.
    let c = client(&url, RetryOptions::default().trusted(true)).await;
    h.faults(&proxy, json!(["drop", "cut"])).await;
    let out = run(&c, "create_ticket", json!({ "title": "once" })).await;
    assert_eq!((out.status, out.safety, out.attempts.len()), (FinalStatus::Succeeded, Safety::Keyed, 3), "{out:?}");
    assert!(text(&out).contains("opened T-1"), "{}", text(&out));
    assert_eq!(h.calls(&proxy).await, 3);
    // The next intended ticket is T-2: the three sends opened one.
    let next = run(&c, "create_ticket", json!({ "title": "next" })).await;
    assert!(text(&next).contains("opened T-2"), "{}", text(&next));
    // The status tool answers for the first operation, read-only.
    let id = out.operation_id.clone().unwrap_or_default();
    let status = run(&c, "operation_status", json!({ "action": "create_ticket", "operation_id": id })).await;
    let sc = status.result.and_then(|r| r.structured_content).unwrap_or_default();
    assert_eq!(sc["status"], json!("succeeded"), "{sc}");
    h.close().await;
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyed_write_left_unknown_is_closed_by_the_status_tool_not_resent() {
    if !peers_here() {
        return;
    }
    let (mut h, proxy, url) = rust_server_behind_proxy().await;
    let c = client(&url, RetryOptions::default().trusted(true)).await;
    // Every attempt's answer is lost (the server acted each time): the engine ends the call unknown; the
    // wrapper then asks operation_status (one more tools/call, read-only) and reports what the server recorded.
    h.faults(&proxy, json!(["drop", "drop", "drop"])).await;
    let out = run(&c, "create_ticket", json!({ "title": "lost answers" })).await;
    assert_eq!((out.status, out.reason), (FinalStatus::Succeeded, Reason::ResolvedByStatus), "{out:?}");
    assert_eq!(out.attempts.len(), 3);
    assert!(text(&out).contains("opened T-1"), "the recorded result: {}", text(&out));
    assert_eq!(h.calls(&proxy).await, 4, "three sends of the write, one status lookup");
    let next = run(&c, "create_ticket", json!({ "title": "next" })).await;
    assert!(text(&next).contains("opened T-2"), "{}", text(&next));
    // Without the status tool the same case stays unknown, with the same one id.
    let bare = client(&url, RetryOptions { status_tool: None, ..RetryOptions::default() }.trusted(true)).await;
    h.faults(&proxy, json!(["drop", "drop", "drop"])).await;
    let out = run(&bare, "create_ticket", json!({ "title": "lost again" })).await;
    assert_eq!((out.status, out.reason), (FinalStatus::Unknown, Reason::MaxAttempts), "{out:?}");
    h.close().await;
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operation_id_journaled_for_another_tool_is_refused_and_the_status_tool_is_never_keyed() {
    if !peers_here() {
        return;
    }
    let (mut h, proxy, url) = rust_server_behind_proxy().await;
    // No status tool configured: the write's answers are lost, it stays unknown, its id journaled.
    let c = client(&url, RetryOptions { status_tool: None, ..RetryOptions::default() }.trusted(true)).await;
    h.faults(&proxy, json!(["drop", "drop", "drop"])).await;
    let out = run(&c, "create_ticket", json!({ "title": "lost" })).await;
    assert_eq!(out.status, FinalStatus::Unknown, "{out:?}");
    let id = out.operation_id.clone().unwrap_or_default();
    let sent = h.calls(&proxy).await;
    // The app asks the ledger's status tool by hand: a lookup, read-only, not a keyed call of its own — the
    // write's journal entry is not taken over and not settled with the lookup's status.
    let status = run(&c, "operation_status", json!({ "action": "create_ticket", "operation_id": id })).await;
    assert_eq!(
        (status.status, status.safety, status.operation_id.clone()),
        (FinalStatus::Succeeded, Safety::ReadOnly, None)
    );
    let sc = status.result.and_then(|r| r.structured_content).unwrap_or_default();
    assert_eq!(sc["status"], json!("succeeded"), "{sc}");
    let entry = c.journal_ref().get(&id).ok().flatten().unwrap_or_else(|| panic!("{id} journaled"));
    assert_eq!((entry.tool.as_str(), entry.settled), ("create_ticket", Some(FinalStatus::Unknown)), "{entry:?}");
    // Another keyed tool given the write's operation id: refused, typed, nothing sent.
    let other = c.call_tool(call("open_ticket", json!({ "title": "x", "operation_id": id }))).await;
    match other {
        Err(mcp_retry_policy::rmcp::CallError::OperationIdReused { operation_id, tool }) => {
            assert_eq!((operation_id.as_str(), tool.as_str()), (id.as_str(), "create_ticket"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(h.calls(&proxy).await, sent + 1, "only the status lookup was sent");
    let entry = c.journal_ref().get(&id).ok().flatten().unwrap_or_else(|| panic!("{id} journaled"));
    assert_eq!((entry.tool.as_str(), entry.settled), ("create_ticket", Some(FinalStatus::Unknown)), "{entry:?}");
    h.close().await;
}

/// What a real `tracing_subscriber` layer saw: every span (name, parent, fields as text, events) in creation order.
mod recorded {
    use std::collections::BTreeMap;
    use std::fmt::Debug;
    use std::sync::{Arc, Mutex};

    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Subscriber};
    use tracing_subscriber::layer::Context;
    use tracing_subscriber::registry::LookupSpan;
    use tracing_subscriber::Layer;

    #[derive(Clone, Debug, Default)]
    pub struct Span {
        pub name: String,
        pub parent: Option<usize>,
        pub fields: BTreeMap<String, String>,
        pub events: Vec<(String, BTreeMap<String, String>)>,
        pub closed: bool,
    }

    #[derive(Clone, Default)]
    pub struct Spans(pub Arc<Mutex<Vec<Span>>>);

    struct Fields<'a>(&'a mut BTreeMap<String, String>);
    impl Visit for Fields<'_> {
        fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
            self.0.insert(field.name().to_string(), format!("{value:?}"));
        }
        fn record_str(&mut self, field: &Field, value: &str) {
            self.0.insert(field.name().to_string(), value.to_string());
        }
    }

    /// The index of a span in the list (stored in the registry's extensions).
    struct Index(usize);

    impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Spans {
        fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
            if attrs.metadata().target() != "mcp_retry_policy" {
                return;
            }
            let mut fields = BTreeMap::new();
            attrs.record(&mut Fields(&mut fields));
            let parent = ctx.span(id).and_then(|s| s.parent()).and_then(|p| p.extensions().get::<Index>().map(|i| i.0));
            let mut all = self.0.lock().unwrap();
            all.push(Span { name: attrs.metadata().name().to_string(), parent, fields, ..Span::default() });
            if let Some(s) = ctx.span(id) {
                s.extensions_mut().insert(Index(all.len().saturating_sub(1)));
            }
        }
        fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
            let Some(i) = ctx.span(id).and_then(|s| s.extensions().get::<Index>().map(|i| i.0)) else { return };
            values.record(&mut Fields(&mut self.0.lock().unwrap()[i].fields));
        }
        fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
            if event.metadata().target() != "mcp_retry_policy" {
                return;
            }
            let Some(i) = ctx.event_span(event).and_then(|s| s.extensions().get::<Index>().map(|i| i.0)) else {
                return;
            };
            let mut fields = BTreeMap::new();
            event.record(&mut Fields(&mut fields));
            self.0.lock().unwrap()[i].events.push((event.metadata().name().to_string(), fields));
        }
        fn on_close(&self, id: Id, ctx: Context<'_, S>) {
            if let Some(i) = ctx.span(&id).and_then(|s| s.extensions().get::<Index>().map(|i| i.0)) {
                self.0.lock().unwrap()[i].closed = true;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_per_call_and_attempt_with_the_js_names() {
    if !peers_here() {
        return;
    }
    use tracing::instrument::WithSubscriber;
    use tracing_subscriber::layer::SubscriberExt;

    let spans = recorded::Spans::default();
    // tracing caches each callsite's interest process-wide, from the first thread to reach it: a test running
    // alongside with no subscriber would cache "never" for RetryClient's spans. A global (empty) registry keeps
    // them enabled; this test's own layer is scoped to its calls (`with_subscriber`).
    let _ = tracing::subscriber::set_global_default(tracing_subscriber::registry());
    let subscriber = tracing::Dispatch::new(tracing_subscriber::registry().with(spans.clone()));
    tracing::callsite::rebuild_interest_cache();
    let mut h = Harness::start().await;
    let (_server, proxy, url) = h.behind_proxy("ts").await;
    let c = client(&url, RetryOptions::default().trusted(true)).await;
    // A read-only tool whose first answer is lost: one call span, two attempt spans, one retry event.
    h.faults(&proxy, json!(["drop"])).await;
    let out = run(&c, "search_tickets", json!({ "query": "x" })).with_subscriber(subscriber.clone()).await;
    assert_eq!(out.status, FinalStatus::Succeeded, "{out:?}");
    // An unsafe one after a drop: unknown, an error span.
    h.faults(&proxy, json!(["drop"])).await;
    let lost = run(&c, "create_ticket", json!({ "title": "t" })).with_subscriber(subscriber).await;
    assert_eq!(lost.status, FinalStatus::Unknown, "{lost:?}");
    h.close().await;

    let all = spans.0.lock().unwrap().clone();
    let f = |s: &recorded::Span, k: &str| s.fields.get(k).cloned().unwrap_or_default();
    let calls: Vec<usize> = (0..all.len()).filter(|i| all[*i].parent.is_none()).collect();
    assert_eq!(calls.len(), 2, "{all:#?}");
    let (call, unknown) = (&all[calls[0]], &all[calls[1]]);
    assert!(all.iter().all(|s| s.closed && s.name == "tools/call"), "{all:#?}");
    for (k, v) in [
        ("otel.name", "tools/call search_tickets"),
        ("otel.kind", "client"),
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "search_tickets"),
        ("gen_ai.operation.name", "execute_tool"),
        ("mcp_retry_policy.safety", "read_only"),
        ("mcp_retry_policy.status", "succeeded"),
        ("mcp_retry_policy.reason", "succeeded"),
        ("mcp_retry_policy.attempts", "2"),
    ] {
        assert_eq!(f(call, k), v, "{k}: {call:#?}");
    }
    assert!(!f(call, "mcp.protocol.version").is_empty(), "{call:#?}");
    assert!(!call.fields.contains_key("error.type"), "a success is no error: {call:#?}");
    let attempts: Vec<&recorded::Span> = all.iter().filter(|s| s.parent == Some(calls[0])).collect();
    assert_eq!(attempts.len(), 2, "{all:#?}");
    assert_eq!(
        (f(attempts[0], "mcp_retry_policy.attempt"), f(attempts[1], "mcp_retry_policy.attempt")),
        ("1".into(), "2".into())
    );
    assert!(!attempts[0].fields.contains_key("http.request.resend_count"), "{:#?}", attempts[0]);
    assert_eq!(f(attempts[1], "http.request.resend_count"), "1");
    assert_eq!(f(attempts[0], "error.type"), "network_maybe_sent", "{:#?}", attempts[0]);
    assert_eq!(f(attempts[0], "otel.status_code"), "ERROR");
    assert!(!attempts[1].fields.contains_key("error.type"), "{:#?}", attempts[1]);
    assert_eq!(call.events.len(), 1, "{call:#?}");
    let (name, retry) = &call.events[0];
    assert_eq!(name, "mcp_retry_policy.retry");
    assert_eq!(retry.get("mcp_retry_policy.reason").map(String::as_str), Some("transient"), "{retry:?}");
    assert_eq!(retry.get("mcp_retry_policy.cause").map(String::as_str), Some("network_maybe_sent"), "{retry:?}");
    let delay: u64 = retry.get("mcp_retry_policy.delay_ms").and_then(|d| d.parse().ok()).unwrap_or(u64::MAX);
    assert_eq!(delay, out.attempts[0].decision_delay(), "the engine's delay");
    // The unknown call: an error, in the engine's words, never a success.
    assert_eq!(f(unknown, "mcp_retry_policy.status"), "unknown", "{unknown:#?}");
    assert_eq!(f(unknown, "mcp_retry_policy.reason"), "unsafe_after_unknown");
    assert_eq!(f(unknown, "error.type"), "network_maybe_sent");
    assert_eq!(f(unknown, "otel.status_code"), "ERROR");
    assert_eq!(f(unknown, "otel.status_message"), lost.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_spans_session_id_follows_a_reinitialized_session() {
    if !peers_here() {
        return;
    }
    use mcp_retry_policy::rmcp::{SessionId, SessionIdClient};
    use tracing::instrument::WithSubscriber;
    use tracing_subscriber::layer::SubscriberExt;

    let spans = recorded::Spans::default();
    let _ = tracing::subscriber::set_global_default(tracing_subscriber::registry()); // see the spans test
    let subscriber = tracing::Dispatch::new(tracing_subscriber::registry().with(spans.clone()));
    tracing::callsite::rebuild_interest_cache();
    let mut h = Harness::start().await;
    let (server, _proxy, url) = h.behind_proxy("ts").await;
    // rmcp's own recovery off: the wrapper's reconnect makes the new session, each transport on a SessionIdClient.
    let ids = SessionId::default();
    let (url, kept): (Arc<str>, SessionId) = (url.as_str().into(), ids.clone());
    let connect = move || {
        let config = StreamableHttpClientTransportConfig::with_uri(url.clone()).reinit_on_expired_session(false);
        let http = SessionIdClient::new(mcp_retry_policy::rmcp::http_client().unwrap(), kept.clone());
        ().serve(StreamableHttpClientTransport::with_client(http, config))
    };
    let first = connect().await.unwrap();
    let options = RetryOptions::default().trusted(true).policy(policy()).seed(7);
    let c = RetryClient::new(first, options).reconnect(connect).session_id(ids.clone());
    let before = ids.get().unwrap_or_else(|| panic!("a session after initialize"));
    h.ask(json!({ "op": "expire", "server": server })).await;
    let out = run(&c, "create_ticket", json!({ "title": "x" })).with_subscriber(subscriber).await;
    assert_eq!((out.status, out.attempts.len()), (FinalStatus::Succeeded, 2), "{out:?}");
    let after = ids.get().unwrap_or_default();
    assert!(!after.is_empty() && after != before, "a new session: {before} → {after}");
    h.close().await;
    let all = spans.0.lock().unwrap().clone();
    let f = |s: &recorded::Span| s.fields.get("mcp.session.id").cloned().unwrap_or_default();
    let call = all.iter().position(|s| s.parent.is_none()).unwrap_or_else(|| panic!("{all:#?}"));
    assert_eq!(f(&all[call]), before, "the call began on the first session");
    let attempts: Vec<String> = all.iter().filter(|s| s.parent == Some(call)).map(f).collect();
    assert_eq!(attempts, vec![before, after], "each attempt on the session its request went on");
}

trait DecisionDelay {
    fn decision_delay(&self) -> u64;
}

impl DecisionDelay for mcp_retry_policy::rmcp::AttemptRecord {
    fn decision_delay(&self) -> u64 {
        match self.decision {
            mcp_retry_policy::retry::Decision::Retry { delay_ms, .. } => delay_ms,
            _ => u64::MAX,
        }
    }
}

/// The TS SDK's own 2025-11-25 task server (tests/support/task-server.mjs), in a node process: its url, and on
/// each line asked, `{ runs, methods, stopped, calls }` — how often each tool ran, every JSON-RPC method it
/// received, the tasks whose work saw their cancellation and stopped, each tools/call's `_meta` and session id.
struct TaskServer {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    url: String,
}

impl TaskServer {
    async fn start() -> TaskServer {
        let root = env!("CARGO_MANIFEST_DIR");
        let script = format!(
            "import {{ startTaskServer }} from '{root}/tests/support/task-server.mjs';
             import readline from 'node:readline';
             const s = await startTaskServer();
             console.log(JSON.stringify({{ url: String(s.url) }}));
             const rl = readline.createInterface({{ input: process.stdin }});
             rl.on('line', () => console.log(JSON.stringify({{ runs: s.runs, methods: s.methods, stopped: [...s.stopped], calls: s.calls }})));
             rl.on('close', async () => {{ await s.close(); process.exit(0); }});"
        );
        TaskServer::run(&script).await
    }

    /// [`TaskServer`] for `script` (an ES module run in the crate's root): it prints `{ url }` first, then one
    /// state line per line it reads.
    async fn run(script: &str) -> TaskServer {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut child = Command::new("node")
            .args(["--input-type=module", "-e", script])
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("node task server: {e}"));
        let stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
        let mut lines = BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("no stdout"))).lines();
        let first = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line()).await;
        let first = first.ok().and_then(Result::ok).flatten().unwrap_or_else(|| panic!("task server did not start"));
        let v: Value = serde_json::from_str(&first).unwrap_or_else(|e| panic!("{first}: {e}"));
        let url = v["url"].as_str().unwrap_or_default().to_string();
        TaskServer { _child: child, stdin, lines, url }
    }

    async fn state(&mut self) -> Value {
        self.stdin.write_all(b"?\n").await.unwrap_or_else(|e| panic!("task server stdin: {e}"));
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), self.lines.next_line()).await;
        let line = line.ok().and_then(Result::ok).flatten().unwrap_or_else(|| panic!("task server ended"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    async fn count(&mut self, method: &str) -> usize {
        let s = self.state().await;
        s["methods"].as_array().map_or(0, |m| m.iter().filter(|x| x.as_str() == Some(method)).count())
    }
}

async fn task_client(url: &str, options: RetryOptions) -> RetryClient {
    let url: Arc<str> = url.into();
    let first = ().serve(StreamableHttpClientTransport::from_uri(url)).await.unwrap_or_else(|e| panic!("connect: {e}"));
    let tasks = ["render_report", "flaky_job", "self_cancelling"].into_iter().fold(options, |o, t| o.task(t, None));
    RetryClient::new(first, tasks.policy(policy()).seed(7))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_created_task_is_followed_to_its_end_and_never_resent() {
    if !peers_here() {
        return;
    }
    let mut s = TaskServer::start().await;
    // render_report is marked read-only: a call the engine would re-send after any unknown answer. A created
    // task is not unknown: it is followed (tasks/get, tasks/result), and the call goes once.
    let c = task_client(&s.url, RetryOptions::default().tool("render_report", Safety::ReadOnly)).await;
    use tracing::instrument::WithSubscriber;
    use tracing_subscriber::layer::SubscriberExt;
    let spans = recorded::Spans::default();
    let _ = tracing::subscriber::set_global_default(tracing_subscriber::registry()); // see the spans test
    let subscriber = tracing::Dispatch::new(tracing_subscriber::registry().with(spans.clone()));
    tracing::callsite::rebuild_interest_cache();
    let out = run(&c, "render_report", json!({ "ms": 400, "label": "Q3" })).with_subscriber(subscriber).await;
    // Each look waited as the engine decided: the task's pollInterval (100 ms) as the floor, at most a tenth more
    // — the created task's interval kept where rmcp drops the 2025-11-25 one from a typed `tasks/get` answer.
    let looks: Vec<u64> = spans
        .0
        .lock()
        .unwrap()
        .iter()
        .flat_map(|s| s.events.clone())
        .filter(|(n, _)| n == "mcp_retry_policy.task")
        .filter_map(|(_, f)| f.get("mcp_retry_policy.delay_ms").and_then(|d| d.parse().ok()))
        .collect();
    assert!(looks.len() >= 2 && looks.iter().all(|d| (100..=110).contains(d)), "{looks:?}");
    assert_eq!((out.status, out.reason), (FinalStatus::Succeeded, Reason::Succeeded), "{out:?}");
    assert_eq!(out.attempts.len(), 1, "{out:?}");
    assert!(out.task_id.is_some(), "{out:?}");
    let result = out.result.clone().unwrap_or_else(|| panic!("the task's result: {out:?}"));
    assert_eq!(result.structured_content, Some(json!({ "label": "Q3" })));
    assert_eq!(s.count("tools/call").await, 1, "the call was sent once");
    assert!(s.count("tasks/get").await >= 2, "it looked while the task worked");
    assert_eq!(s.count("tasks/result").await, 1);
    assert_eq!(s.state().await["runs"]["render_report"], json!(1));
    // A task that failed is the tool's own error.
    let out = run(&c, "flaky_job", json!({ "ms": 150 })).await;
    assert_eq!(out.status, FinalStatus::ToolError, "{out:?}");
    assert!(format!("{:?}", out.result).contains("disk full"), "{out:?}");
    // The server cancels it: unknown (some of it may have run), never failed or succeeded.
    let out = run(&c, "self_cancelling", json!({ "ms": 150 })).await;
    assert_eq!((out.status, out.reason), (FinalStatus::Unknown, Reason::TaskCancelled), "{out:?}");
    assert!(out.message.contains("may or may not have taken effect"), "{}", out.message);
    assert!(out.result.is_none());
    assert_eq!(s.count("tools/call").await, 3, "each call sent once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_cancels_its_task_and_is_unknown_never_resent() {
    if !peers_here() {
        return;
    }
    use mcp_retry_policy::rmcp::CancellationToken;
    let mut s = TaskServer::start().await;
    // Read-only: a tool the engine would re-send after any unknown answer. A cancel is the caller's: the task
    // is cancelled on the server (tasks/cancel) and the call is unknown (it may have run in part), never re-sent.
    let c = task_client(&s.url, RetryOptions::default().tool("render_report", Safety::ReadOnly)).await;
    let cancel = CancellationToken::new();
    let later = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        later.cancel();
    });
    let started = std::time::Instant::now();
    let params = call("render_report", json!({ "ms": 5_000 }));
    let out = c.call_tool_cancellable(params, None, &cancel).await.unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(3), "ended at the cancel: {:?}", started.elapsed());
    assert_eq!((out.status, out.reason), (FinalStatus::Unknown, Reason::Aborted), "{out:?}");
    assert!(out.message.contains("may or may not have taken effect"), "{}", out.message);
    assert!(out.result.is_none(), "{out:?}");
    let task = out.task_id.clone().unwrap_or_else(|| panic!("the task's id: {out:?}"));
    assert_eq!(s.count("tasks/cancel").await, 1, "the server was told");
    assert_eq!(s.count("tools/call").await, 1, "sent once");
    // The server saw the cancel: its task's work stopped (it watches the stored status every 20 ms).
    let mut stopped = false;
    for _ in 0..50 {
        let state = s.state().await;
        stopped = state["stopped"].as_array().is_some_and(|t| t.contains(&json!(task)));
        if stopped {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(stopped, "the task's work stopped on the server");
    assert_eq!(s.state().await["runs"]["render_report"], json!(1), "it ran once");
    // Cancelled before the call left: nothing was sent — failed, aborted; not the server's to hear of.
    let out = c.call_tool_cancellable(call("render_report", json!({ "ms": 100 })), None, &cancel).await.unwrap();
    assert_eq!((out.status, out.reason), (FinalStatus::Failed, Reason::Aborted), "{out:?}");
    assert_eq!(s.count("tools/call").await, 1, "not sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opentelemetry_gets_the_duration_histogram_the_session_id_and_the_servers_get_the_trace_context() {
    if !peers_here() {
        return;
    }
    use mcp_retry_policy::rmcp::{SessionId, SessionIdClient, TraceContext};
    use opentelemetry::propagation::TextMapPropagator;
    use opentelemetry::trace::{SpanId, TracerProvider as _};
    use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
    use tracing::instrument::WithSubscriber;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    use tracing_subscriber::layer::SubscriberExt;

    // A real OpenTelemetry pipeline as an app wires it: tracing-opentelemetry's span and metrics layers over
    // the SDK (its in-memory exporters stand in for a collector), its W3C propagator for `_meta`.
    let spans = opentelemetry_sdk::trace::InMemorySpanExporter::default();
    let tracers = opentelemetry_sdk::trace::SdkTracerProvider::builder().with_simple_exporter(spans.clone()).build();
    let metrics = opentelemetry_sdk::metrics::InMemoryMetricExporter::default();
    let reader = opentelemetry_sdk::metrics::PeriodicReader::builder(metrics.clone()).build();
    let meters = opentelemetry_sdk::metrics::SdkMeterProvider::builder().with_reader(reader).build();
    let _ = tracing::subscriber::set_global_default(tracing_subscriber::registry()); // see the spans test
    let subscriber = tracing::Dispatch::new(
        tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(tracers.tracer("rmcp_client test")))
            .with(tracing_opentelemetry::MetricsLayer::new(meters.clone())),
    );
    tracing::callsite::rebuild_interest_cache();
    // ANCHOR: trace
    let propagator = TraceContext::new(|span, carrier| {
        opentelemetry_sdk::propagation::TraceContextPropagator::new().inject_context(&span.context(), carrier);
    });

    let mut s = TaskServer::start().await;
    let ids = SessionId::default();
    let http = SessionIdClient::new(mcp_retry_policy::rmcp::http_client().unwrap(), ids.clone());
    let config = StreamableHttpClientTransportConfig::with_uri(s.url.as_str());
    let first = ().serve(StreamableHttpClientTransport::with_client(http, config)).await.unwrap();
    let options = RetryOptions::default().task("render_report", None).trace_context(propagator);
    // ANCHOR_END: trace
    let c = RetryClient::new(first, options.policy(policy()).seed(7)).session_id(ids.clone());
    for label in ["a", "b"] {
        let out =
            run(&c, "render_report", json!({ "ms": 50, "label": label })).with_subscriber(subscriber.clone()).await;
        assert_eq!(out.status, FinalStatus::Succeeded, "{out:?}");
    }
    let _ = tracers.force_flush();
    let _ = meters.force_flush();
    let server = s.state().await;
    let received = server["calls"].as_array().cloned().unwrap_or_default();
    assert_eq!(received.len(), 2, "{server}");
    let session = received[0]["session"].as_str().unwrap_or_default().to_string();
    assert!(!session.is_empty() && ids.get().as_deref() == Some(session.as_str()), "{server}");

    let finished = spans.get_finished_spans().unwrap();
    let attr = |s: &opentelemetry_sdk::trace::SpanData, k: &str| {
        s.attributes.iter().find(|kv| kv.key.as_str() == k).map(|kv| kv.value.to_string())
    };
    let roots: Vec<_> = finished.iter().filter(|s| s.parent_span_id == SpanId::INVALID).collect();
    assert_eq!(roots.len(), 2, "{finished:#?}");
    for (call, seen) in roots.iter().zip(&received) {
        assert_eq!(call.name, "tools/call render_report");
        assert_eq!(attr(call, "mcp.session.id").as_deref(), Some(session.as_str()), "{call:#?}");
        let attempts: Vec<_> = finished.iter().filter(|a| a.parent_span_id == call.span_context.span_id()).collect();
        assert_eq!(attempts.len(), 1, "{finished:#?}");
        let attempt = attempts[0];
        assert_eq!(attr(attempt, "mcp.session.id").as_deref(), Some(session.as_str()), "{attempt:#?}");
        // The request carried the attempt span's own context, unprefixed in params._meta (W3C traceparent).
        let expected = format!("00-{}-{}-01", call.span_context.trace_id(), attempt.span_context.span_id());
        assert_eq!(seen["meta"]["traceparent"], json!(expected), "{seen}");
    }
    assert_ne!(received[0]["meta"]["traceparent"], received[1]["meta"]["traceparent"]);

    // The histogram: one point per attempt, in seconds, with the MCP attributes and no session id.
    let exported = metrics.get_finished_metrics().unwrap();
    let histogram = exported
        .iter()
        .flat_map(|rm| rm.scope_metrics())
        .flat_map(|sm| sm.metrics())
        .find(|m| m.name() == "mcp.client.operation.duration")
        .unwrap_or_else(|| panic!("no duration histogram: {exported:#?}"));
    let AggregatedMetrics::F64(MetricData::Histogram(h)) = histogram.data() else {
        panic!("not an f64 histogram: {histogram:#?}");
    };
    let points: Vec<_> = h.data_points().collect();
    assert_eq!(points.iter().map(|p| p.count()).sum::<u64>(), 2, "{points:#?}");
    for p in &points {
        let keys: Vec<String> = p.attributes().map(|kv| kv.key.as_str().to_string()).collect();
        for k in ["mcp.method.name", "gen_ai.tool.name", "gen_ai.operation.name", "mcp.protocol.version"] {
            assert!(keys.iter().any(|x| x == k), "{k}: {keys:?}");
        }
        assert!(!keys.iter().any(|x| x == "mcp.session.id"), "high-cardinality, not on metrics: {keys:?}");
        assert!(p.sum() > 0.0 && p.sum() < 5.0, "seconds: {}", p.sum());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_still_working_at_the_deadline_is_pending_with_its_id() {
    if !peers_here() {
        return;
    }
    let mut s = TaskServer::start().await;
    let quick = Policy { total_timeout_ms: 600, attempt_timeout_ms: 300, ..policy() };
    let url: Arc<str> = s.url.as_str().into();
    let first = ().serve(StreamableHttpClientTransport::from_uri(url)).await.unwrap_or_else(|e| panic!("connect: {e}"));
    let c = RetryClient::new(first, RetryOptions::default().task("render_report", Some(30_000)).policy(quick));
    let out = run(&c, "render_report", json!({ "ms": 5_000 })).await;
    assert_eq!(out.status, FinalStatus::Pending, "{out:?}");
    assert_eq!(out.reason, Reason::Deadline, "{out:?}");
    assert!(out.task_id.is_some() && out.result.is_none(), "{out:?}");
    assert!(out.message.contains("still in progress"), "{}", out.message);
    assert_eq!(s.count("tools/call").await, 1);
    assert_eq!(s.count("tasks/result").await, 0);
}

/// The TS SDK's task server (McpServer, InMemoryTaskStore, `experimental.tasks.registerToolTask`) with keyed
/// tools run as tasks whose work is wrapped in the server ledger (`withIdempotency`): the task ends with the
/// ledger's own error-flagged answer — `in_progress` (the same operation id is already running elsewhere) or
/// `unknown` — as its result. The answers are written here in the ledger's wire shape (`_meta` under the
/// ledger's key, as `src/rmcp/ledger/idempotency.rs` `reply` builds them); no status tool is listed, so it cannot be asked.
async fn ledger_task_server() -> TaskServer {
    let key = mcp_retry_policy::vocab::LEDGER_META_KEY;
    let script = format!(
        r#"import http from 'node:http';
        import {{ randomUUID }} from 'node:crypto';
        import readline from 'node:readline';
        import {{ McpServer }} from '@modelcontextprotocol/sdk/server/mcp.js';
        import {{ StreamableHTTPServerTransport }} from '@modelcontextprotocol/sdk/server/streamableHttp.js';
        import {{ InMemoryTaskStore }} from '@modelcontextprotocol/sdk/experimental/tasks';
        import {{ isInitializeRequest }} from '@modelcontextprotocol/sdk/types.js';
        import {{ z }} from 'zod';
        const taskStore = new InMemoryTaskStore();
        const methods = [];
        const runs = {{}};
        const ledger = (status, id, extra) => ({{ content: [{{ type: 'text', text: `ledger: ${{status}}` }}], isError: true,
          _meta: {{ '{key}': {{ status, operationId: id, ...extra }} }} }});
        const tools = (server) => {{
          for (const [name, taskStatus, answer] of [
            ['busy_write', 'completed', (id) => ledger('in_progress', id, {{ retryAfterMs: 100 }})],
            ['lost_write', 'failed', (id) => ledger('unknown', id, {{}})],
          ]) server.experimental.tasks.registerToolTask(name,
            {{ description: name, inputSchema: {{ operation_id: z.string(), n: z.number().optional() }} }},
            {{
              async createTask({{ operation_id }}, extra) {{
                runs[name] = (runs[name] ?? 0) + 1;
                const t = await extra.taskStore.createTask({{ ttl: 60_000, pollInterval: 50 }});
                setTimeout(() => extra.taskStore.storeTaskResult(t.taskId, taskStatus, answer(operation_id)).catch(() => {{}}), 100);
                return {{ task: t }};
              }},
              getTask: (_a, extra) => extra.taskStore.getTask(extra.taskId),
              getTaskResult: (_a, extra) => extra.taskStore.getTaskResult(extra.taskId),
            }});
        }};
        const transports = new Map();
        const httpServer = http.createServer(async (req, res) => {{
          let body = '';
          for await (const chunk of req) body += chunk;
          const parsed = body ? JSON.parse(body) : undefined;
          for (const m of [parsed].flat()) if (m?.method) methods.push(m.method);
          const sid = req.headers['mcp-session-id'];
          let transport = sid ? transports.get(sid) : undefined;
          if (!transport && isInitializeRequest(parsed)) {{
            transport = new StreamableHTTPServerTransport({{ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => transports.set(id, transport) }});
            const server = new McpServer({{ name: 'ledger-task-server', version: '1.0.0' }},
              {{ capabilities: {{ tasks: {{ list: {{}}, cancel: {{}}, requests: {{ tools: {{ call: {{}} }} }} }} }}, taskStore }});
            tools(server);
            await server.connect(transport);
          }}
          if (!transport) {{ res.writeHead(404).end(); return; }}
          await transport.handleRequest(req, res, parsed);
        }});
        await new Promise((r) => httpServer.listen(0, '127.0.0.1', r));
        console.log(JSON.stringify({{ url: `http://127.0.0.1:${{httpServer.address().port}}/mcp` }}));
        const rl = readline.createInterface({{ input: process.stdin }});
        rl.on('line', () => console.log(JSON.stringify({{ runs, methods }})));
        rl.on('close', async () => {{
          for (const t of transports.values()) await t.close().catch(() => {{}});
          taskStore.cleanup();
          httpServer.closeAllConnections?.();
          httpServer.close(() => process.exit(0));
        }});"#
    );
    TaskServer::run(&script).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_ends_with_the_ledgers_in_progress_or_unknown_is_open_never_succeeded() {
    if !peers_here() {
        return;
    }
    let mut s = ledger_task_server().await;
    let url: Arc<str> = s.url.as_str().into();
    let first = ().serve(StreamableHttpClientTransport::from_uri(url)).await.unwrap_or_else(|e| panic!("connect: {e}"));
    let options = ["busy_write", "lost_write"]
        .into_iter()
        .fold(RetryOptions::default(), |o, t| o.task(t, None).tool(t, Safety::Keyed));
    let c = RetryClient::new(first, options.policy(policy()).seed(7));
    // The task completed with the ledger's "still running": the operation is open — pending, with its id to
    // check — never the task's "completed" read as the tool's success.
    let out = run(&c, "busy_write", json!({ "n": 1 })).await;
    assert_eq!((out.status, out.reason), (FinalStatus::Pending, Reason::StatusInProgress), "{out:?}");
    assert!(out.operation_id.is_some() && out.task_id.is_some(), "{out:?}");
    // The task failed with the ledger's "unknown": unknown, never the tool's own error.
    let out = run(&c, "lost_write", json!({ "n": 2 })).await;
    assert_eq!((out.status, out.reason), (FinalStatus::Unknown, Reason::StatusUnknown), "{out:?}");
    assert!(out.result.is_none(), "{out:?}");
    // Each call was sent once: a task is followed, never re-sent.
    assert_eq!(s.count("tools/call").await, 2);
    assert_eq!(s.count("tasks/result").await, 2);
    let state = s.state().await;
    assert_eq!((state["runs"]["busy_write"].clone(), state["runs"]["lost_write"].clone()), (json!(1), json!(1)));
}

/// A real rmcp 3.11 server (2026-07-28) whose `confirm_order` tool asks for input first (`input_required`: one
/// elicitation, a `requestState`) and runs only on the round that carries the answer; over Streamable HTTP on
/// 127.0.0.1 (rmcp's own server in an axum router).
mod mrtr {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};

    use rmcp::model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequest, ElicitRequestParams,
        ErrorData, InputRequest, InputRequests, InputRequiredResult, ListToolsResult, PaginatedRequestParams,
        ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
    };
    use rmcp::service::RequestContext;
    use rmcp::transport::streamable_http_server::{session::local::LocalSessionManager, StreamableHttpService};
    use rmcp::transport::StreamableHttpServerConfig;
    use rmcp::{RoleServer, ServerHandler};
    use serde_json::json;

    pub const STATE: &str = "round/1 \"exact\"";

    #[derive(Clone, Default)]
    pub struct Orders {
        /// Every tools/call the server received, and each round's requestState as it arrived.
        pub calls: Arc<Mutex<Vec<Option<String>>>>,
        /// Orders placed (the tool's effect).
        pub placed: Arc<AtomicU64>,
    }

    impl ServerHandler for Orders {
        fn get_info(&self) -> ServerConfig {
            let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
            info.protocol_version = ProtocolVersion::V_2026_07_28;
            info
        }

        async fn list_tools(
            &self,
            _: Option<PaginatedRequestParams>,
            _: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            let schema = json!({ "type": "object", "properties": { "item": { "type": "string" } } });
            let tool = Tool::new(
                "confirm_order",
                "Place an order after the user confirms it.",
                Arc::new(schema.as_object().cloned().unwrap_or_default()),
            );
            Ok(ListToolsResult::with_all_items(vec![tool]))
        }

        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            _: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            self.calls.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(request.request_state.clone());
            if request.name == "confirm_pair" {
                // Two signatures asked in one round; placed only when both came back.
                let both =
                    request.input_responses.as_ref().is_some_and(|r| r.get("a").is_some() && r.get("b").is_some());
                if both && request.request_state.as_deref() == Some(STATE) {
                    self.placed.fetch_add(1, Ordering::SeqCst);
                    return Ok(CallToolResult::success(vec![ContentBlock::text("pair placed")]).into());
                }
                let mut requests = InputRequests::new();
                for key in ["a", "b"] {
                    let schema = json!({ "type": "object", "properties": { "name": { "type": "string" } } });
                    let ask = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
                        meta: None,
                        message: format!("Slow: who signs {key}?"),
                        requested_schema: serde_json::from_value(schema)
                            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
                    });
                    requests.insert(key.into(), InputRequest::Elicitation(ask));
                }
                return Ok(InputRequiredResult::new(Some(requests), Some(STATE.into())).into());
            }
            if request.name == "summarize" {
                // Asks for sampling (a handler the client may not have).
                #[allow(deprecated)]
                let ask = rmcp::model::CreateMessageRequest::new(rmcp::model::CreateMessageRequestParams::new(
                    vec![rmcp::model::SamplingMessage::user_text("Summarize the order.")],
                    100,
                ));
                let mut requests = InputRequests::new();
                requests.insert("summary".into(), InputRequest::CreateMessage(ask));
                return Ok(InputRequiredResult::new(Some(requests), None).into());
            }
            let answer = request.input_responses.as_ref().and_then(|r| r.get("confirm")).cloned();
            match (request.request_state.as_deref(), answer) {
                (Some(STATE), Some(a)) if a["action"] == json!("accept") => {
                    let n = self.placed.fetch_add(1, Ordering::SeqCst).saturating_add(1);
                    let text = format!("order {n} placed for {}", a["content"]["name"].as_str().unwrap_or("?"));
                    Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
                }
                (Some(STATE), Some(_)) => Ok(CallToolResult::error(vec![ContentBlock::text("not confirmed")]).into()),
                _ => {
                    let schema = json!({ "type": "object", "properties": { "name": { "type": "string" } } });
                    let ask = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
                        meta: None,
                        message: "Who confirms this order?".into(),
                        requested_schema: serde_json::from_value(schema)
                            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
                    });
                    let mut requests = InputRequests::new();
                    requests.insert("confirm".into(), InputRequest::Elicitation(ask));
                    Ok(InputRequiredResult::new(Some(requests), Some(STATE.into())).into())
                }
            }
        }
    }

    /// Serves `orders` on 127.0.0.1: its url.
    pub async fn serve(orders: Orders) -> String {
        let service: StreamableHttpService<Orders, LocalSessionManager> = StreamableHttpService::new(
            move || Ok(orders.clone()),
            Default::default(),
            StreamableHttpServerConfig::default(),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let serve = axum::serve(listener, axum::Router::new().nest_service("/mcp", service));
            let _ = tokio::time::timeout(std::time::Duration::from_secs(60), serve).await;
        });
        url
    }
}

/// A client that answers elicitation (the app's own handler, as rmcp runs it). A "Slow: …" question takes
/// 300 ms; `busy` / `most` count the answers in progress, and the most at once.
#[derive(Clone, Default)]
struct Confirms {
    busy: Arc<std::sync::atomic::AtomicUsize>,
    most: Arc<std::sync::atomic::AtomicUsize>,
}

impl rmcp::ClientHandler for Confirms {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        // Elicitation declared, and 2026-07-28 asked for (rmcp's default handshake asks for 2025-11-25).
        let caps = rmcp::model::ClientCapabilities::builder().enable_elicitation().build();
        rmcp::model::ClientConfig::new(caps, rmcp::model::Implementation::new("mrtr-test", "0.0.0"))
            .with_protocol_version(rmcp::model::ProtocolVersion::V_2026_07_28)
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::model::ErrorData> {
        use std::sync::atomic::Ordering::SeqCst;
        let slow = matches!(&request, rmcp::model::ElicitRequestParams::FormElicitationParams { message, .. } if message.starts_with("Slow"));
        if slow {
            let now = self.busy.fetch_add(1, SeqCst).saturating_add(1);
            self.most.fetch_max(now, SeqCst);
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            self.busy.fetch_sub(1, SeqCst);
        }
        Ok(rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept)
            .with_content(json!({ "name": "Ada" })))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_input_round_is_answered_by_the_clients_handler_and_continued() {
    let orders = mrtr::Orders::default();
    let url: Arc<str> = mrtr::serve(orders.clone()).await.into();
    // 2026-07-28 has no initialize: rmcp's client discovers the server (server/discover) and sends the
    // per-request metadata.
    let modern = || rmcp::service::ClientLifecycleMode::Discover {
        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
    };
    let transport = StreamableHttpClientTransport::from_uri(url.clone());
    let confirms = Confirms::default();
    let first = rmcp::service::serve_client_with_lifecycle(confirms.clone(), transport, modern()).await.unwrap();
    let c = RetryClient::new(first, RetryOptions::default().policy(policy()).seed(7));
    let out = c.call_tool(call("confirm_order", json!({ "item": "book" }))).await.unwrap();
    assert_eq!((out.status, out.reason), (FinalStatus::Succeeded, Reason::Succeeded), "{out:?}");
    assert!(format!("{:?}", out.result).contains("order 1 placed for Ada"), "{out:?}");
    let calls = orders.calls.lock().unwrap().clone();
    assert_eq!(
        calls,
        vec![None, Some(mrtr::STATE.to_string())],
        "the first phase, then one round with the state as sent"
    );
    assert_eq!(orders.placed.load(std::sync::atomic::Ordering::SeqCst), 1);
    // Two questions in one round are answered at once (as the JS layer's Promise.all): both in flight together.
    let out = c.call_tool(call("confirm_pair", json!({}))).await.unwrap();
    assert_eq!(out.status, FinalStatus::Succeeded, "{out:?}");
    assert_eq!(confirms.most.load(std::sync::atomic::Ordering::SeqCst), 2, "both handlers ran at once");
    assert_eq!(orders.placed.load(std::sync::atomic::Ordering::SeqCst), 2);
    // Elicitation declared, sampling not: a sampling request is not the handler's to answer (rmcp's default
    // `create_message` would answer `method not found`; it is not even asked) — failed, input_required_unhandled,
    // the round never sent.
    let before = orders.calls.lock().unwrap().len();
    let out = c.call_tool(call("summarize", json!({}))).await.unwrap();
    assert_eq!((out.status, out.reason), (FinalStatus::Failed, Reason::InputRequiredUnhandled), "{out:?}");
    assert_eq!(orders.calls.lock().unwrap().len(), before.saturating_add(1), "asked once, never continued");
    // rmcp's default `()` handler declares no capability: an elicitation is not the app's answer to give. Before,
    // rmcp's default `create_elicitation` declined it *to the server* (a second tools/call carrying a decline the
    // app never made; the tool answered "not confirmed"). Now, as the JS withRetry: the call ends locally,
    // failed (nothing ran), input_required_unhandled, and the round is not sent.
    let transport = StreamableHttpClientTransport::from_uri(url);
    let first = rmcp::service::serve_client_with_lifecycle((), transport, modern()).await.unwrap();
    let c = RetryClient::new(first, RetryOptions::default().policy(policy()).seed(7));
    let before = orders.calls.lock().unwrap().len();
    let out = c.call_tool(call("confirm_order", json!({ "item": "pen" }))).await.unwrap();
    assert_eq!((out.status, out.reason), (FinalStatus::Failed, Reason::InputRequiredUnhandled), "{out:?}");
    assert!(out.message.contains("did not take effect"), "{}", out.message);
    assert_eq!(orders.calls.lock().unwrap().len(), before.saturating_add(1), "the first phase only: no decline sent");
    assert_eq!(orders.placed.load(std::sync::atomic::Ordering::SeqCst), 2, "not placed");
    let out = c.call_tool(call("summarize", json!({}))).await.unwrap();
    assert_eq!((out.status, out.reason), (FinalStatus::Failed, Reason::InputRequiredUnhandled), "{out:?}");
    assert_eq!(orders.calls.lock().unwrap().len(), before.saturating_add(2), "each asked once, never continued");
}

/// A real rmcp 3.11 server whose keyed `book_room` always answers the server ledger's `unknown` (the wire shape
/// `with_idempotency` answers, error-flagged, `_meta` under the ledger's key), and whose `operation_status`
/// says the write `succeeded` with a recorded `result` that is not a tool result — a stand-in for a ledger
/// whose record's result cannot be read (the real ledger writes only results it can read back).
mod unreadable {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    use rmcp::model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData, JsonObject, ListToolsResult,
        MetaObject, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    };
    use rmcp::service::RequestContext;
    use rmcp::transport::streamable_http_server::{session::local::LocalSessionManager, StreamableHttpService};
    use rmcp::transport::StreamableHttpServerConfig;
    use rmcp::{RoleServer, ServerHandler};
    use serde_json::json;

    #[derive(Clone, Default)]
    pub struct Rooms {
        /// tools/call of `book_room` received.
        pub writes: Arc<AtomicU64>,
    }

    impl ServerHandler for Rooms {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        }

        async fn list_tools(
            &self,
            _: Option<PaginatedRequestParams>,
            _: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            let schema = |props: serde_json::Value| {
                Arc::new(json!({ "type": "object", "properties": props }).as_object().cloned().unwrap_or_default())
            };
            Ok(ListToolsResult::with_all_items(vec![
                Tool::new("book_room", "Book a room.", schema(json!({ "operation_id": { "type": "string" } }))),
                Tool::new(
                    "operation_status",
                    "What the ledger recorded.",
                    schema(json!({ "action": { "type": "string" }, "operation_id": { "type": "string" } })),
                ),
            ]))
        }

        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            _: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            let args = request.arguments.clone().unwrap_or_default();
            let id = args.get("operation_id").cloned().unwrap_or_default();
            if request.name == "book_room" {
                self.writes.fetch_add(1, Ordering::SeqCst);
                let mut r = CallToolResult::error(vec![ContentBlock::text("ledger: unknown")]);
                let mut meta = MetaObject(JsonObject::new());
                meta.0.insert(
                    mcp_retry_policy::vocab::LEDGER_META_KEY.to_string(),
                    json!({ "status": "unknown", "operationId": id }),
                );
                r.meta = Some(meta);
                return Ok(r.into());
            }
            let sc =
                json!({ "status": "succeeded", "action": args.get("action"), "operation_id": id, "result": "garbled" });
            Ok(CallToolResult::structured(sc).into())
        }
    }

    /// Serves `rooms` on 127.0.0.1: its url.
    pub async fn serve(rooms: Rooms) -> String {
        let service: StreamableHttpService<Rooms, LocalSessionManager> = StreamableHttpService::new(
            move || Ok(rooms.clone()),
            Default::default(),
            StreamableHttpServerConfig::default(),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let serve = axum::serve(listener, axum::Router::new().nest_service("/mcp", service));
            let _ = tokio::time::timeout(std::time::Duration::from_secs(60), serve).await;
        });
        url
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_answer_whose_result_cannot_be_read_carries_no_result() {
    let rooms = unreadable::Rooms::default();
    let url: Arc<str> = unreadable::serve(rooms.clone()).await.into();
    let first = ().serve(StreamableHttpClientTransport::from_uri(url)).await.unwrap_or_else(|e| panic!("connect: {e}"));
    let options = RetryOptions::default().tool("book_room", Safety::Keyed).policy(policy()).seed(7);
    let c = RetryClient::new(first, options);
    // Every attempt hears the ledger's `unknown`; the status tool then says `succeeded`, its result unreadable.
    let out = run(&c, "book_room", json!({})).await;
    assert_eq!((out.status, out.reason), (FinalStatus::Succeeded, Reason::ResolvedByStatus), "{out:?}");
    assert_eq!(rooms.writes.load(std::sync::atomic::Ordering::SeqCst), 3, "{out:?}");
    // Not the last attempt's answer (the ledger's error-flagged `unknown`) passed off as the succeeded write's.
    assert!(out.result.is_none(), "{:?}", out.result);
}

/// A server on 127.0.0.1 that answers every request `303 See Other` (to itself) after reading it: a server that
/// processed the POST and redirects. Its url and the requests it got ("METHOD path").
async fn redirecting() -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        for _ in 0..8 {
            let Ok(Ok((mut socket, _))) =
                tokio::time::timeout(std::time::Duration::from_secs(20), listener.accept()).await
            else {
                return;
            };
            let mut buf = vec![0u8; 8192];
            let n = socket.read(&mut buf).await.unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).to_string();
            let line = head.lines().next().unwrap_or_default().split(' ').take(2).collect::<Vec<_>>().join(" ");
            log.lock().unwrap().push(line);
            let answer =
                "HTTP/1.1 303 See Other\r\nlocation: /elsewhere\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
            let _ = socket.write_all(answer.as_bytes()).await;
        }
    });
    (url, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_http_client_does_not_turn_a_post_into_a_get() {
    let (url, seen) = redirecting().await;
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call" }).to_string();
    let answer = mcp_retry_policy::rmcp::http_client().unwrap().post(&url).body(body.clone()).send().await.unwrap();
    // The POST's own answer, the one request the server got: never followed by a GET.
    assert_eq!(answer.status().as_u16(), 303);
    assert_eq!(seen.lock().unwrap().clone(), ["POST /mcp"]);
    // reqwest's default client (what `SessionIdClient::new(reqwest::Client::new(), …)` did) follows it as a GET.
    // (This server redirects every request: the client ends on its redirect limit or the closed listener.)
    let _ = reqwest::Client::new().post(&url).body(body).send().await;
    assert_eq!(seen.lock().unwrap()[..3], ["POST /mcp", "POST /mcp", "GET /elsewhere"]);
}
