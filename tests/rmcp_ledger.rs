//! The rmcp face's server half (features `rmcp`, `sqlite`, `postgres`): the store contract on the memory, SQLite
//! and Postgres stores (a real PostgreSQL 15, started by tests/support/postgres.mjs), `with_idempotency` and the status tool, and the cross-language test — the package's JS
//! `OperationLedger` and this Rust ledger run the same operations on one SQLite file and write identical
//! records (state, fingerprint, lease, times, version), and each replays what the other recorded. Then the
//! parity with the JS ledger (#21): the reconcile hook (never re-running an unresolved record unless it says
//! `not_done`; a record changed while it was asked looked at again), the operators (listings, release, purge),
//! and the write and its record in one transaction (rolled back together, a killed process leaving neither) —
//! on memory, SQLite files and the real PostgreSQL, and across languages on one file and one table.
#![cfg(all(feature = "rmcp", feature = "sqlite", feature = "postgres"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::arithmetic_side_effects
)]

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use mcp_retry_policy::ledger::record::{Record, RecordState};
use mcp_retry_policy::rmcp::{
    with_idempotency, IdempotencyOptions, LedgerKey, LedgerStore, MemoryLedgerStore, OperationLedger, OutcomeUnknown,
    PostgresLedgerStore, SqliteLedgerStore, StatusTool,
};
use rmcp::model::{CallToolResult, ContentBlock, Extensions, JsonObject};
use serde_json::{json, Value};

#[path = "rmcp_ledger/lease.rs"]
mod lease;

/// Whether the repository's Node peers are here (`tests/support/`, `tests/peers/`). A copy of the crate from
/// crates.io has not got them (they are the npm layer's): the tests that drive them say so and pass.
fn peers_here() -> bool {
    let here = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support")).is_dir();
    if !here {
        eprintln!("skipped: this test drives the repository's Node peers (tests/support/), not in this copy");
    }
    here
}

fn key(op: &str) -> LedgerKey {
    LedgerKey { tenant: "t".into(), action: "a".into(), operation_id: op.into() }
}

fn record(state: RecordState, version: u64, expires_ms: u64) -> Record {
    Record { state, fingerprint: "f".into(), lease_until_ms: 10, created_ms: 1, expires_ms, version }
}

/// The store contract (tests/support/ledger-store-contract.mjs, the parts this trait has).
async fn contract(store: &dyn LedgerStore) {
    assert_eq!(store.get(&key("k-1")).await.unwrap(), None);
    assert!(store.insert(&key("k-1"), &record(RecordState::Pending, 1, 100)).await.unwrap());
    // The claim is atomic: a second insert for the key loses.
    assert!(!store.insert(&key("k-1"), &record(RecordState::Pending, 1, 100)).await.unwrap());
    // Replace is a compare-and-set on the version; a result is kept as given, and None leaves none.
    assert!(!store.replace(&key("k-1"), 7, &record(RecordState::Succeeded, 2, 100), Some("x")).await.unwrap());
    assert!(store.replace(&key("k-1"), 1, &record(RecordState::Succeeded, 2, 100), Some("{\"a\":1}")).await.unwrap());
    let got = store.get(&key("k-1")).await.unwrap().unwrap();
    assert_eq!((got.record, got.result.as_deref()), (record(RecordState::Succeeded, 2, 100), Some("{\"a\":1}")));
    assert!(store.replace(&key("k-1"), 2, &record(RecordState::Failed, 3, 100), None).await.unwrap());
    assert_eq!(store.get(&key("k-1")).await.unwrap().unwrap().result, None);
    // Keys differ by each part.
    for k in
        [LedgerKey { tenant: "u".into(), ..key("k-1") }, LedgerKey { action: "b".into(), ..key("k-1") }, key("k-2")]
    {
        assert_eq!(store.get(&k).await.unwrap(), None);
    }
    // Purge: only resolved records expired at or before now; never pending, unknown or released.
    for (op, state) in [
        ("p-1", RecordState::Pending),
        ("p-2", RecordState::Unknown),
        ("p-3", RecordState::Released),
        ("p-4", RecordState::Succeeded),
    ] {
        assert!(store.insert(&key(op), &record(state, 1, 50)).await.unwrap());
    }
    assert_eq!(store.purge(49).await.unwrap(), 0);
    assert_eq!(store.purge(100).await.unwrap(), 2, "p-4 and k-1");
    for op in ["p-1", "p-2", "p-3"] {
        assert!(store.get(&key(op)).await.unwrap().is_some(), "{op} kept");
    }
}

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mrp-ledger-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("ledger.db")
}

#[tokio::test]
async fn memory_and_sqlite_stores_keep_the_contract() {
    contract(&MemoryLedgerStore::new()).await;
    contract(&SqliteLedgerStore::open(temp("contract")).unwrap()).await;
}

fn args(v: Value) -> JsonObject {
    v.as_object().cloned().unwrap_or_default()
}

/// The principal an authentication layer put in the request context (here, by hand: the HTTP tests below read
/// it from the bearer token of a real rmcp server's request).
#[derive(Clone)]
struct Who(String);

fn who(e: &Extensions) -> Option<String> {
    e.get::<Who>().map(|w| w.0.clone())
}

/// The status tool as a server wires it: the tenant read from the request context, `tenant` the principal
/// authenticated there (`None`: no authentication).
async fn status_call(ledger: &OperationLedger, tenant: Option<&str>, arguments: &JsonObject) -> CallToolResult {
    let mut context = Extensions::new();
    if let Some(t) = tenant {
        context.insert(Who(t.to_string()));
    }
    StatusTool::new(ledger, who).call(&context, arguments).await
}

fn ledger_status(r: &CallToolResult) -> Option<String> {
    r.meta.as_ref()?.get("dev.mcp-retry-policy/ledger")?.get("status")?.as_str().map(str::to_string)
}

#[tokio::test]
async fn a_replayed_write_runs_once_and_unknown_is_never_run_again() {
    let ledger = OperationLedger::new(Arc::new(MemoryLedgerStore::new()));
    let opts = IdempotencyOptions::new("create_ticket");
    let runs = Arc::new(AtomicU32::new(0));
    let call = |a: Value| {
        let (ledger, opts, runs) = (ledger.clone(), opts.clone(), runs.clone());
        async move {
            with_idempotency(&ledger, &opts, Some("tenant-1"), &args(a), || async {
                let n = runs.fetch_add(1, Ordering::SeqCst) + 1;
                Ok(CallToolResult::success(vec![ContentBlock::text(format!("created T-{n}"))]))
            })
            .await
        }
    };
    let first = call(json!({ "title": "x", "operation_id": "op-00000001" })).await;
    let again = call(json!({ "title": "x", "operation_id": "op-00000001" })).await;
    assert_eq!(first, again, "the replay is the first answer");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let other = call(json!({ "title": "y", "operation_id": "op-00000001" })).await;
    assert_eq!(ledger_status(&other).as_deref(), Some("conflict"));
    let bad = call(json!({ "title": "x", "operation_id": "short" })).await;
    assert_eq!(ledger_status(&bad).as_deref(), Some("rejected"));
    let none = with_idempotency(&ledger, &opts, None, &args(json!({ "operation_id": "op-00000002" })), || async {
        Ok(CallToolResult::success(vec![]))
    })
    .await;
    assert_eq!(ledger_status(&none).as_deref(), Some("rejected"));
    assert_eq!(runs.load(Ordering::SeqCst), 1, "nothing ran for a conflict or a rejection");
    // A handler that cannot say whether it took effect: unknown, and never run again for that id.
    let a = args(json!({ "operation_id": "op-00000003" }));
    let unknown =
        with_idempotency(&ledger, &opts, Some("tenant-1"), &a, || async { Err(OutcomeUnknown("bank timeout".into())) })
            .await;
    assert_eq!(ledger_status(&unknown).as_deref(), Some("unknown"));
    let retried = with_idempotency(&ledger, &opts, Some("tenant-1"), &a, || async {
        runs.fetch_add(100, Ordering::SeqCst);
        Ok(CallToolResult::success(vec![]))
    })
    .await;
    assert_eq!(ledger_status(&retried).as_deref(), Some("unknown"));
    assert_eq!(runs.load(Ordering::SeqCst), 1, "an unknown record is never executed again without reconcile");
    // The status tool: read-only, per tenant, by tool name.
    let s = status_call(
        &ledger,
        Some("tenant-1"),
        &args(json!({ "action": "create_ticket", "operation_id": "op-00000001" })),
    )
    .await;
    let sc = s.structured_content.clone().unwrap_or_default();
    assert_eq!(sc["status"], json!("succeeded"), "{sc}");
    assert_eq!(sc["result"]["content"][0]["text"], json!("created T-1"));
    let s = status_call(
        &ledger,
        Some("tenant-2"),
        &args(json!({ "action": "create_ticket", "operation_id": "op-00000001" })),
    )
    .await;
    assert_eq!(s.structured_content.unwrap_or_default()["status"], json!("not_found"), "another tenant sees nothing");
    let s = status_call(
        &ledger,
        Some("tenant-1"),
        &args(json!({ "action": "create_ticket", "operation_id": "op-00000003" })),
    )
    .await;
    assert_eq!(s.structured_content.unwrap_or_default()["status"], json!("unknown"));
}

const OPS: &str = r#"[["op-aaaaaaaa",{"title":"one"}],["op-bbbbbbbb",{"title":"bad"}],["op-aaaaaaaa",{"title":"one"}],["op-aaaaaaaa",{"title":"two"}],["op-cccccccc",{"title":"ü","tags":["b","a"],"n":1e21,"x":0.1}]]"#;

fn node(args: &[&str]) -> Value {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("node")
        .arg(format!("{root}/tests/support/rust-ledger-peer.mjs"))
        .args(args)
        .env("OPS", OPS)
        .output()
        .expect("node");
    assert!(out.status.success(), "node: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("node's answer")
}

#[tokio::test]
async fn the_js_and_rust_ledgers_write_identical_records_on_one_sqlite_file() {
    if !peers_here() {
        return;
    }
    let path = temp("cross");
    let store = Arc::new(SqliteLedgerStore::open(&path).unwrap());
    cross_language(store, path.to_str().unwrap()).await;
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

/// The JS ledger and the Rust ledger on one store: `store` (Rust) and `file` (what the JS peer opens).
async fn cross_language(store: Arc<dyn LedgerStore>, file: &str) {
    // The JS ledger first (tenant "js"), then the Rust ledger (tenant "rs"): the same operations, one clock.
    let js = node(&["run", file, "js"]);
    assert_eq!(js["runs"], json!(3), "{js}");
    let ledger = OperationLedger::builder(store.clone()).clock(|| 1_000_000).build().unwrap();
    let opts = IdempotencyOptions::new("create_ticket");
    let ops: Vec<(String, Value)> = serde_json::from_str(OPS).unwrap();
    let mut answers = Vec::new();
    let runs = AtomicU32::new(0);
    for (op, input) in &ops {
        let mut a = args(input.clone());
        a.insert("operation_id".into(), json!(op));
        let title = input["title"].as_str().unwrap_or_default().to_string();
        let r = with_idempotency(&ledger, &opts, Some("rs"), &a, || async {
            runs.fetch_add(1, Ordering::SeqCst);
            let mut r = CallToolResult::structured(json!({ "title": title, "n": 1.5 }));
            r.content = vec![ContentBlock::text(format!("created {title}"))];
            if title == "bad" {
                r = CallToolResult::error(vec![ContentBlock::text(format!("refused {title}"))]);
            } else {
                r.is_error = None;
            }
            // The JS handler's result has no resultType (rmcp's constructors add one): the same result on both sides.
            r.result_type = None;
            Ok(r)
        })
        .await;
        let kind =
            ledger_status(&r).unwrap_or_else(|| if r.is_error == Some(true) { "tool_error" } else { "result" }.into());
        answers.push(kind);
    }
    assert_eq!(json!(answers), js["answers"], "the same answers");
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    // Identical records, field by field (the fingerprints byte for byte).
    for op in ["op-aaaaaaaa", "op-bbbbbbbb", "op-cccccccc"] {
        let k = |t: &str| LedgerKey { tenant: t.into(), action: "create_ticket".into(), operation_id: op.into() };
        let (j, r) = (store.get(&k("js")).await.unwrap().unwrap(), store.get(&k("rs")).await.unwrap().unwrap());
        assert_eq!(j.record, r.record, "{op}");
        assert_eq!(j.record.fingerprint.len(), 64);
        let parse = |t: &Option<String>| t.as_deref().map(|t| serde_json::from_str::<Value>(t).unwrap());
        assert_eq!(parse(&j.result), parse(&r.result), "{op}: the same result, as JSON");
    }
    // Each replays what the other recorded: the Rust ledger on the JS tenant's record, and the JS lookup of Rust's.
    let mut a = args(json!({ "title": "one", "operation_id": "op-aaaaaaaa" }));
    let replay = with_idempotency(&ledger, &opts, Some("js"), &a, || async { panic!("a replay must not run") }).await;
    assert_eq!(replay.content[0].as_text().map(|t| t.text.as_str()), Some("created one"));
    a.insert("title".into(), json!("two"));
    let conflict =
        with_idempotency(&ledger, &opts, Some("js"), &a, || async { panic!("a conflict must not run") }).await;
    assert_eq!(ledger_status(&conflict).as_deref(), Some("conflict"));
    let s = node(&["status", file, "rs", "create_ticket", "op-cccccccc"]);
    assert_eq!(s["status"], json!("succeeded"), "{s}");
    assert_eq!(s["result"]["structuredContent"]["title"], json!("ü"));
    // The fingerprint of one tricky value, in both languages.
    let v = r#"{"z":[1e21,0.1,-0,"\u00fc"],"a":{"b":1,"a":2},"é":true}"#;
    let js_print = node(&["fingerprint", v]);
    let rust_print = mcp_retry_policy::ledger::fingerprint::fingerprint(
        &serde_json::to_string(&serde_json::from_str::<Value>(v).unwrap()).unwrap(),
    )
    .unwrap();
    assert_eq!(js_print["fingerprint"], json!(rust_print));
    unresolved_across(store, file, &ledger).await;
}

/// A record the JS ledger left unknown is listed, and reconciled, by the Rust ledger (and the JS lookup reads
/// the Rust hook's answer); one the Rust ledger left unknown is listed by the JS ledger.
async fn unresolved_across(store: Arc<dyn LedgerStore>, file: &str, ledger: &OperationLedger) {
    let lost = node(&["unknown", file, "js-lost", "op-lost-0001"]);
    assert_eq!(lost["status"], json!("unknown"), "{lost}");
    let listed = ledger.unresolved(&UnresolvedFilter::any().tenant("js-lost")).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].key.action.as_str(), listed[0].key.operation_id.as_str(), listed[0].record.state),
        ("create_ticket", "op-lost-0001", RecordState::Unknown)
    );
    let counts = ledger.count_unresolved(&UnresolvedFilter::any().tenant("js-lost")).await.unwrap();
    assert_eq!((counts.len(), counts[0].pending, counts[0].unknown), (1, 0, 1));
    let opts = IdempotencyOptions::new("create_ticket");
    let a = args(json!({ "title": "lost", "operation_id": "op-lost-0001" }));
    // Without a hook: unknown, never run again.
    let r = with_idempotency(ledger, &opts, Some("js-lost"), &a, || async { panic!("an unknown record must not run") })
        .await;
    assert_eq!(ledger_status(&r).as_deref(), Some("unknown"));
    // With one: the Rust hook's answer is recorded over the JS record's version, and the JS lookup replays it.
    let hooked = OperationLedger::builder(store.clone())
        .clock(|| 1_000_000)
        .reconcile(|req: ReconcileRequest| {
            assert_eq!(req.record.state, RecordState::Unknown);
            std::future::ready(Ok::<_, BoxError>(Reconciled::Succeeded(ticket("found by the Rust hook"))))
        })
        .build()
        .unwrap();
    let r =
        with_idempotency(&hooked, &opts, Some("js-lost"), &a, || async { panic!("a reconciled record must not run") })
            .await;
    assert_eq!(text_of(&r), "found by the Rust hook");
    let s = node(&["status", file, "js-lost", "create_ticket", "op-lost-0001"]);
    assert_eq!(
        (s["status"].clone(), s["result"]["content"][0]["text"].clone()),
        (json!("succeeded"), json!("found by the Rust hook")),
        "{s}"
    );
    // The other way: the Rust ledger leaves one unknown; the JS ledger lists and counts it.
    let a = args(json!({ "title": "lost", "operation_id": "op-lost-0002" }));
    let r =
        with_idempotency(ledger, &opts, Some("rs-lost"), &a, || async { Err(OutcomeUnknown("bank timeout".into())) })
            .await;
    assert_eq!(ledger_status(&r).as_deref(), Some("unknown"));
    let js = node(&["unresolved", file, "rs-lost"]);
    assert_eq!(js["listed"][0]["key"]["operationId"], json!("op-lost-0002"), "{js}");
    assert_eq!(js["listed"][0]["record"]["state"], json!("unknown"));
    assert_eq!(js["counts"], json!([{ "tenant": "rs-lost", "action": "create_ticket", "pending": 0, "unknown": 1 }]));
    let _ = store;
}

/// A throwaway PostgreSQL (through the Node harness, which starts it, and stops it when its stdin closes):
/// (harness, its stdin, libpq config, JS target).
async fn postgres() -> (tokio::process::Child, tokio::process::ChildStdin, String, String) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let root = env!("CARGO_MANIFEST_DIR");
    let mut child = tokio::process::Command::new("node")
        .arg(format!("{root}/tests/support/rust-harness.mjs"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("node");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(b"{\"op\":\"postgres\"}\n").await.expect("write");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let line = tokio::time::timeout(std::time::Duration::from_secs(60), lines.next_line()).await.expect("in time");
    let v: Value = serde_json::from_str(&line.expect("read").expect("a line")).expect("json");
    assert_eq!(v["ok"], json!(true), "{v}");
    let c = &v["connection"];
    let config = format!(
        "host={} port={} user={} dbname={}",
        c["host"].as_str().unwrap(),
        c["port"],
        c["user"].as_str().unwrap(),
        c["database"].as_str().unwrap()
    );
    (child, stdin, config, format!("pg:{c}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_postgres_store_keeps_the_contract_and_shares_its_table_with_the_js_ledger() {
    if !peers_here() {
        return;
    }
    let (mut harness, stdin, config, js_target) = postgres().await;
    let store = Arc::new(PostgresLedgerStore::connect(&config).await.unwrap());
    // The operators first, on the fresh table (their listings see every tenant).
    operators_on(store.clone()).await;
    contract(store.as_ref()).await;
    reconcile_on(store.clone()).await;
    postgres_transactions(&store, &config).await;
    postgres_killed_inside_its_transaction(&store, &config).await;
    let (admin, connection) = tokio_postgres::connect(&config, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    results_on(store.clone(), Admin::Postgres(admin), &js_target).await;
    // A NUL cannot be kept by Postgres text: refused, not mangled.
    assert!(store.get(&key("nul\0-key")).await.is_err());
    cross_language(store, &js_target).await;
    // Closing the harness's stdin stops PostgreSQL and ends the harness (a failed test drops it the same way).
    drop(stdin);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(30), harness.wait()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_claim_is_renewed_so_a_repeat_is_in_progress_not_unknown() {
    use mcp_retry_policy::ledger::record::LedgerConfig;
    let store = Arc::new(MemoryLedgerStore::new());
    // A 300 ms lease, renewed every 100 ms; the handler runs 900 ms; a repeat comes at 600 ms (past the first
    // lease: without renewal it would find the claim expired and answer unknown).
    let ledger =
        OperationLedger::builder(store.clone()).config(LedgerConfig::new(60_000, 300).unwrap()).build().unwrap();
    let opts = IdempotencyOptions::new("slow_write");
    let a = args(json!({ "operation_id": "op-slow-0001" }));
    let first = with_idempotency(&ledger, &opts, Some("t"), &a, || async {
        tokio::time::sleep(std::time::Duration::from_millis(900)).await;
        Ok(CallToolResult::success(vec![ContentBlock::text("done")]))
    });
    let second = async {
        tokio::time::sleep(std::time::Duration::from_millis(600)).await;
        with_idempotency(&ledger, &opts, Some("t"), &a, || async { panic!("a running write must not run twice") }).await
    };
    let (r1, r2) = tokio::join!(first, second);
    assert_eq!(ledger_status(&r2).as_deref(), Some("in_progress"), "{r2:?}");
    assert_eq!(r1.is_error, Some(false));
    let k = LedgerKey { tenant: "t".into(), action: "slow_write".into(), operation_id: "op-slow-0001".into() };
    let row = store.get(&k).await.unwrap().unwrap();
    assert_eq!(row.record.state, RecordState::Succeeded);
    assert!(row.record.version >= 5, "claimed, renewed several times, finished: {:?}", row.record);
}

// ── The reconcile hook, the operators, the transaction (issue #21: parity with the JS ledger) ─────────────

use mcp_retry_policy::ledger::record::LedgerConfig;
use mcp_retry_policy::rmcp::{
    with_idempotency_atomic, BoxError, LedgerEvent, OperatorError, ReconcileRequest, Reconciled, UnresolvedFilter,
};
use std::sync::atomic::AtomicU64;
use std::sync::Mutex;

fn text_of(r: &CallToolResult) -> String {
    r.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()).unwrap_or_default()
}

fn ticket(text: &str) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.result_type = None;
    r
}

/// A record as a process that died mid-run (or a handler that said unknown) left it, under `k`.
async fn left(store: &dyn LedgerStore, k: &LedgerKey, state: RecordState, input: &Value, created_ms: u64) -> Record {
    let mut a = args(input.clone());
    a.remove("operation_id");
    let print = mcp_retry_policy::ledger::fingerprint::fingerprint(&serde_json::to_string(&a).unwrap()).unwrap();
    let r = Record {
        state,
        fingerprint: print,
        lease_until_ms: created_ms + 10,
        created_ms,
        expires_ms: created_ms + 86_400_000,
        version: 3,
    };
    assert!(store.insert(k, &r).await.unwrap());
    r
}

/// What the hook answers, per operation id; every question is counted.
type Answers = Arc<Mutex<Vec<(String, Reconciled)>>>;

fn hook(answers: Answers, asked: Arc<AtomicU32>) -> impl Fn(ReconcileRequest) -> futures_ready::Ready + Send + Sync {
    move |req: ReconcileRequest| {
        asked.fetch_add(1, Ordering::SeqCst);
        let found = answers.lock().unwrap().iter().find(|(id, _)| *id == req.key.operation_id).map(|(_, v)| v.clone());
        std::future::ready(match found {
            Some(v) => Ok(v),
            None => Err(BoxError::from("the bank's API is down")),
        })
    }
}

mod futures_ready {
    pub type Ready = std::future::Ready<Result<mcp_retry_policy::rmcp::Reconciled, mcp_retry_policy::rmcp::BoxError>>;
}

/// The reconcile hook on one store: asked about a stale claim and an unknown record; each answer recorded with
/// the version check; a record is never executed again unless the hook says it did not run.
async fn reconcile_on(store: Arc<dyn LedgerStore>) {
    let now = 5_000_000;
    let answers: Answers = Arc::default();
    let asked = Arc::new(AtomicU32::new(0));
    let events = Arc::new(Mutex::new(Vec::<String>::new()));
    let ev = events.clone();
    let ledger = OperationLedger::builder(store.clone())
        .clock(move || now)
        .reconcile(hook(answers.clone(), asked.clone()))
        .on_event(move |e: &LedgerEvent| ev.lock().unwrap().push(e.kind().to_string()))
        .build()
        .unwrap();
    let opts = IdempotencyOptions::new("pay");
    let runs = Arc::new(AtomicU32::new(0));
    let call = |id: &str| {
        let (ledger, opts, runs) = (ledger.clone(), opts.clone(), runs.clone());
        let a = args(json!({ "amount": 5, "operation_id": id }));
        async move {
            with_idempotency(&ledger, &opts, Some("t"), &a, || async {
                runs.fetch_add(1, Ordering::SeqCst);
                Ok(ticket("paid by this run"))
            })
            .await
        }
    };
    let k = |id: &str| LedgerKey { tenant: "t".into(), action: "pay".into(), operation_id: id.into() };
    let input = json!({ "amount": 5 });
    // A stale claim (its process died) and an unknown record; the hook cannot tell (an Err, then Unknown).
    left(store.as_ref(), &k("op-stale-01"), RecordState::Pending, &input, 1_000).await;
    left(store.as_ref(), &k("op-unkn-001"), RecordState::Unknown, &input, 1_001).await;
    let r = call("op-stale-01").await;
    assert_eq!(ledger_status(&r).as_deref(), Some("unknown"), "{r:?}");
    assert_eq!(events.lock().unwrap().as_slice(), ["reconcile_error"]);
    answers.lock().unwrap().push(("op-unkn-001".into(), Reconciled::Unknown));
    let r = call("op-unkn-001").await;
    assert_eq!(ledger_status(&r).as_deref(), Some("unknown"));
    assert_eq!(
        runs.load(Ordering::SeqCst),
        0,
        "an unresolved record is never executed again without the hook saying so"
    );
    assert_eq!(store.get(&k("op-unkn-001")).await.unwrap().unwrap().record.version, 3, "unknown: nothing recorded");
    // The hook finds out: succeeded → recorded (version + 1) and replayed; asked no more.
    answers.lock().unwrap().push(("op-stale-01".into(), Reconciled::Succeeded(ticket("paid, found by the hook"))));
    let r = call("op-stale-01").await;
    assert_eq!(text_of(&r), "paid, found by the hook");
    let row = store.get(&k("op-stale-01")).await.unwrap().unwrap();
    assert_eq!((row.record.state, row.record.version), (RecordState::Succeeded, 4));
    let before = asked.load(Ordering::SeqCst);
    assert_eq!(text_of(&call("op-stale-01").await), "paid, found by the hook");
    assert_eq!(asked.load(Ordering::SeqCst), before, "a resolved record is replayed, the hook not asked");
    // Failed → recorded as failed and replayed as the error result.
    left(store.as_ref(), &k("op-fail-001"), RecordState::Unknown, &input, 1_002).await;
    answers
        .lock()
        .unwrap()
        .push(("op-fail-001".into(), Reconciled::Failed(CallToolResult::error(vec![ContentBlock::text("declined")]))));
    let r = call("op-fail-001").await;
    assert_eq!((r.is_error, text_of(&r).as_str()), (Some(true), "declined"));
    assert_eq!(store.get(&k("op-fail-001")).await.unwrap().unwrap().record.state, RecordState::Failed);
    // Not done → this call claims it (over the unresolved record's version) and runs it, once.
    left(store.as_ref(), &k("op-none-001"), RecordState::Pending, &input, 1_003).await;
    answers.lock().unwrap().push(("op-none-001".into(), Reconciled::NotDone));
    assert_eq!(text_of(&call("op-none-001").await), "paid by this run");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let row = store.get(&k("op-none-001")).await.unwrap().unwrap();
    assert_eq!((row.record.state, row.record.version), (RecordState::Succeeded, 5), "claimed (4), finished (5)");
    assert_eq!(text_of(&call("op-none-001").await), "paid by this run");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "then replayed");
    // The status tool asks the hook too (read-only for the handler: it never runs it).
    left(store.as_ref(), &k("op-stat-001"), RecordState::Unknown, &input, 1_004).await;
    answers.lock().unwrap().push(("op-stat-001".into(), Reconciled::Succeeded(ticket("paid, told to status"))));
    let s = status_call(&ledger, Some("t"), &args(json!({ "action": "pay", "operation_id": "op-stat-001" }))).await;
    let sc = s.structured_content.unwrap_or_default();
    assert_eq!(
        (sc["status"].clone(), sc["result"]["content"][0]["text"].clone()),
        (json!("succeeded"), json!("paid, told to status"))
    );
    left(store.as_ref(), &k("op-stat-002"), RecordState::Unknown, &input, 1_005).await;
    answers.lock().unwrap().push(("op-stat-002".into(), Reconciled::NotDone));
    let s = status_call(&ledger, Some("t"), &args(json!({ "action": "pay", "operation_id": "op-stat-002" }))).await;
    assert_eq!(s.structured_content.unwrap_or_default()["status"], json!("not_done"));
    assert_eq!(
        store.get(&k("op-stat-002")).await.unwrap().unwrap().record.state,
        RecordState::Unknown,
        "status records no not_done"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_reconcile_hook_resolves_what_is_not_known_on_memory_and_sqlite() {
    reconcile_on(Arc::new(MemoryLedgerStore::new())).await;
    let path = temp("reconcile");
    reconcile_on(Arc::new(SqliteLedgerStore::open(&path).unwrap())).await;
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[tokio::test]
async fn a_record_changed_while_the_hook_was_asked_is_looked_at_again() {
    let store = Arc::new(SqliteLedgerStore::open(temp("raced")).unwrap());
    let k = LedgerKey { tenant: "t".into(), action: "pay".into(), operation_id: "op-race-001".into() };
    let input = json!({ "amount": 5 });
    let stale = left(store.as_ref(), &k, RecordState::Unknown, &input, 1_000).await;
    // While the hook looks, another process resolves the record (its own reconcile, say): succeeded, "theirs".
    let (s2, k2, asked) = (store.clone(), k.clone(), Arc::new(AtomicU32::new(0)));
    let a2 = asked.clone();
    let ledger = OperationLedger::builder(store.clone())
        .clock(|| 5_000_000)
        .reconcile(move |req: ReconcileRequest| {
            let (s2, k2, stale) = (s2.clone(), k2.clone(), stale.clone());
            a2.fetch_add(1, Ordering::SeqCst);
            async move {
                let theirs = Record { state: RecordState::Succeeded, version: stale.version + 1, ..stale.clone() };
                let text = serde_json::to_string(&ticket("theirs")).unwrap();
                assert!(s2.replace(&k2, req.record.version, &theirs, Some(&text)).await.unwrap());
                Ok::<_, BoxError>(Reconciled::Succeeded(ticket("mine")))
            }
        })
        .build()
        .unwrap();
    let r = with_idempotency(
        &ledger,
        &IdempotencyOptions::new("pay"),
        Some("t"),
        &args(json!({ "amount": 5, "operation_id": "op-race-001" })),
        || async { panic!("a raced reconcile must not run the write") },
    )
    .await;
    assert_eq!(text_of(&r), "theirs", "the version check refused ours; the second look replays theirs");
    let row = store.get(&k).await.unwrap().unwrap();
    assert_eq!(
        (row.record.version, text_of(&serde_json::from_str(row.result.as_deref().unwrap()).unwrap())),
        (4, "theirs".into())
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    // Not done, raced: the record was resolved meanwhile, so the claim over the old version loses: replayed, not run.
    let k3 = LedgerKey { operation_id: "op-race-002".into(), ..k.clone() };
    let stale = left(store.as_ref(), &k3, RecordState::Pending, &input, 1_000).await;
    let (s3, k3c) = (store.clone(), k3.clone());
    let ledger = OperationLedger::builder(store.clone())
        .clock(|| 5_000_000)
        .reconcile(move |_req: ReconcileRequest| {
            let (s3, k3c, stale) = (s3.clone(), k3c.clone(), stale.clone());
            async move {
                let theirs = Record { state: RecordState::Succeeded, version: stale.version + 1, ..stale.clone() };
                let text = serde_json::to_string(&ticket("finished late")).unwrap();
                assert!(s3.replace(&k3c, stale.version, &theirs, Some(&text)).await.unwrap());
                Ok::<_, BoxError>(Reconciled::NotDone)
            }
        })
        .build()
        .unwrap();
    let r = with_idempotency(
        &ledger,
        &IdempotencyOptions::new("pay"),
        Some("t"),
        &args(json!({ "amount": 5, "operation_id": "op-race-002" })),
        || async { panic!("a record resolved meanwhile must not run again") },
    )
    .await;
    assert_eq!(text_of(&r), "finished late");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hook_is_never_asked_about_a_claim_this_process_holds() {
    // The clock jumps past the lease while the handler runs (a paused process): the record reads as a stale
    // claim, but it is this process's live one — in progress, never reconciled (the JS ledger's guard).
    let clock = Arc::new(AtomicU64::new(1_000_000));
    let c = clock.clone();
    let asked = Arc::new(AtomicU32::new(0));
    let a = asked.clone();
    let ledger = OperationLedger::builder(Arc::new(MemoryLedgerStore::new()))
        .clock(move || c.load(Ordering::SeqCst))
        .reconcile(move |_req: ReconcileRequest| {
            a.fetch_add(1, Ordering::SeqCst);
            std::future::ready(Ok::<_, BoxError>(Reconciled::NotDone))
        })
        .build()
        .unwrap();
    let opts = IdempotencyOptions::new("slow");
    let a1 = args(json!({ "operation_id": "op-held-001" }));
    let first = with_idempotency(&ledger, &opts, Some("t"), &a1, || async {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        Ok(ticket("done once"))
    });
    let second = async {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        clock.fetch_add(120_000, Ordering::SeqCst);
        with_idempotency(&ledger, &opts, Some("t"), &a1, || async { panic!("a held claim must not run twice") }).await
    };
    let (r1, r2) = tokio::join!(first, second);
    assert_eq!(ledger_status(&r2).as_deref(), Some("in_progress"), "{r2:?}");
    assert_eq!(text_of(&r1), "done once");
    assert_eq!(asked.load(Ordering::SeqCst), 0);
}

/// The operators on one store: the listings (filter, order, limit), release and its refusals, release_all, purge.
async fn operators_on(store: Arc<dyn LedgerStore>) {
    let now = Arc::new(AtomicU64::new(10_000));
    let n = now.clone();
    let ledger = OperationLedger::builder(store.clone())
        .config(LedgerConfig::new(1_000_000, 1_000).unwrap())
        .clock(move || n.load(Ordering::SeqCst))
        .build()
        .unwrap();
    let key = |t: &str, a: &str, id: &str| LedgerKey { tenant: t.into(), action: a.into(), operation_id: id.into() };
    let rec = |state, created_ms, lease_until_ms| Record {
        state,
        fingerprint: "f".into(),
        lease_until_ms,
        created_ms,
        expires_ms: created_ms + 100,
        version: 1,
    };
    for (k, r) in [
        (key("t1", "pay", "op-00000003"), rec(RecordState::Unknown, 30, 40)),
        (key("t1", "pay", "op-00000001"), rec(RecordState::Pending, 10, 20)),
        (key("t1", "ship", "op-00000002"), rec(RecordState::Pending, 20, 50_000)), // a live lease
        (key("t2", "pay", "op-00000004"), rec(RecordState::Unknown, 5, 6)),
        (key("t1", "pay", "op-00000005"), rec(RecordState::Succeeded, 1, 2)),
        (key("t1", "pay", "op-00000006"), rec(RecordState::Released, 2, 3)),
    ] {
        assert!(store.insert(&k, &r).await.unwrap());
    }
    let ids = |v: Vec<mcp_retry_policy::rmcp::UnresolvedRecord>| {
        v.into_iter().map(|u| u.key.operation_id).collect::<Vec<_>>()
    };
    assert_eq!(
        ids(ledger.unresolved(&UnresolvedFilter::any()).await.unwrap()),
        ["op-00000004", "op-00000001", "op-00000002", "op-00000003"],
        "unresolved only, oldest first"
    );
    assert_eq!(
        ids(ledger.unresolved(&UnresolvedFilter::any().tenant("t1")).await.unwrap()),
        ["op-00000001", "op-00000002", "op-00000003"]
    );
    assert_eq!(
        ids(ledger.unresolved(&UnresolvedFilter::any().tenant("t1").action("pay")).await.unwrap()),
        ["op-00000001", "op-00000003"]
    );
    assert_eq!(
        ids(ledger.unresolved(&UnresolvedFilter::any().action("pay").limit(2)).await.unwrap()),
        ["op-00000004", "op-00000001"]
    );
    let listed = ledger.unresolved(&UnresolvedFilter::any().tenant("t2")).await.unwrap();
    assert_eq!(listed[0].record, rec(RecordState::Unknown, 5, 6), "the record as stored");
    let counts: Vec<_> = ledger
        .count_unresolved(&UnresolvedFilter::any())
        .await
        .unwrap()
        .into_iter()
        .map(|c| (c.tenant, c.action, c.pending, c.unknown))
        .collect();
    assert_eq!(
        counts,
        [("t1".into(), "pay".into(), 1, 1), ("t1".into(), "ship".into(), 1, 0), ("t2".into(), "pay".into(), 0, 1)]
    );
    for bad in [
        UnresolvedFilter::any().tenant(""),
        UnresolvedFilter::any().action(""),
        UnresolvedFilter::any().limit(0),
        UnresolvedFilter::any().limit(10_001),
    ] {
        let e = ledger.unresolved(&bad).await.unwrap_err();
        assert_eq!(e.code(), "invalid_argument", "{bad:?}");
    }
    assert!(ledger.count_unresolved(&UnresolvedFilter::any().limit(0)).await.is_ok(), "counts ignore the limit");
    // release: a reason is required; each refusal with its code; the released record keeps its note.
    let code = |r: Result<_, OperatorError>| r.map(|_| ()).unwrap_err().code();
    assert_eq!(code(ledger.release(&key("t1", "pay", "op-00000003"), " ").await), "invalid_argument");
    assert_eq!(code(ledger.release(&key("t1", "pay", "op-missing1"), "checked").await), "not_found");
    assert_eq!(code(ledger.release(&key("t1", "pay", "op-00000005"), "checked").await), "resolved");
    assert_eq!(code(ledger.release(&key("t1", "pay", "op-00000006"), "checked").await), "already_released");
    assert_eq!(code(ledger.release(&key("t1", "ship", "op-00000002"), "checked").await), "lease_live");
    let done = ledger.release(&key("t1", "pay", "op-00000003"), "the bank has no such payment").await.unwrap();
    assert_eq!(
        (done.previous_state, done.record.state, done.record.version),
        (RecordState::Unknown, RecordState::Released, 2)
    );
    let row = store.get(&key("t1", "pay", "op-00000003")).await.unwrap().unwrap();
    assert_eq!(
        row.result.as_deref(),
        Some(r#"{"released":{"reason":"the bank has no such payment","previousState":"unknown","atMs":10000}}"#),
        "the JS ledger's note, byte for byte"
    );
    // release_all: the live lease is refused, never released.
    let all = ledger
        .release_all(&UnresolvedFilter::any().tenant("t1"), "an outage window: nothing reached the bank")
        .await
        .unwrap();
    assert_eq!(all.released.iter().map(|k| k.operation_id.as_str()).collect::<Vec<_>>(), ["op-00000001"]);
    assert_eq!(
        all.refused.iter().map(|(k, c)| (k.operation_id.as_str(), *c)).collect::<Vec<_>>(),
        [("op-00000002", "lease_live")]
    );
    assert_eq!(ledger.release_all(&UnresolvedFilter::any(), "").await.unwrap_err().code(), "invalid_argument");
    // A released key executes on its next call.
    let mut a = args(json!({ "operation_id": "op-00000001" }));
    let r = with_idempotency(&ledger, &IdempotencyOptions::new("pay"), Some("t1"), &a, || async {
        Ok(ticket("ran after release"))
    })
    .await;
    assert_eq!(text_of(&r), "ran after release");
    a.insert("x".into(), json!(1));
    // purge: resolved and expired only (op-00000005 expired at 101; op-00000001 just finished: kept).
    assert_eq!(ledger.purge(None).await.unwrap(), 1);
    assert!(store.get(&key("t1", "pay", "op-00000005")).await.unwrap().is_none());
    for id in ["op-00000001", "op-00000003", "op-00000006"] {
        assert!(store.get(&key("t1", "pay", id)).await.unwrap().is_some(), "{id} kept");
    }
    assert!(store.get(&key("t2", "pay", "op-00000004")).await.unwrap().is_some(), "unresolved kept");
}

#[tokio::test]
async fn the_operators_list_release_and_purge_on_memory_and_sqlite() {
    operators_on(Arc::new(MemoryLedgerStore::new())).await;
    let path = temp("operators");
    operators_on(Arc::new(SqliteLedgerStore::open(&path).unwrap())).await;
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[tokio::test]
async fn a_sqlite_transaction_commits_the_write_with_its_record_or_neither() {
    let path = temp("tx");
    let store = Arc::new(SqliteLedgerStore::open(&path).unwrap());
    let ledger = OperationLedger::new(store.clone());
    // The business table in the ledger's own file (another connection, as the app's own code would have).
    let app = rusqlite::Connection::open(&path).unwrap();
    app.execute_batch("CREATE TABLE tickets (id INTEGER PRIMARY KEY, title TEXT NOT NULL)").unwrap();
    let tickets = || app.query_row("SELECT COUNT(*) FROM tickets", [], |r| r.get::<_, i64>(0)).unwrap();
    let opts = IdempotencyOptions::new("open_ticket");
    let open = |id: &str, fail: bool| {
        let a = args(json!({ "title": "printer on fire", "operation_id": id }));
        let (ledger, opts, store) = (ledger.clone(), opts.clone(), store.clone());
        async move {
            with_idempotency_atomic(
                &ledger,
                &opts,
                Some("t"),
                &a,
                store.transact(|tx| {
                    tx.execute("INSERT INTO tickets (title) VALUES (?)", ["printer on fire"])?;
                    if fail {
                        return Err("the printer API said no".into());
                    }
                    Ok(ticket(&format!("opened T-{}", tx.last_insert_rowid())))
                }),
            )
            .await
        }
    };
    let r = open("op-tx-00001", false).await;
    assert_eq!(text_of(&r), "opened T-1");
    assert_eq!(text_of(&open("op-tx-00001", false).await), "opened T-1", "replayed");
    assert_eq!(tickets(), 1, "one ticket for two calls");
    let k = |id: &str| LedgerKey { tenant: "t".into(), action: "open_ticket".into(), operation_id: id.into() };
    let row = store.get(&k("op-tx-00001")).await.unwrap().unwrap();
    assert_eq!((row.record.state, row.record.version), (RecordState::Succeeded, 2));
    // A failing handler: its write and the claim rolled back together; rejected (rolled_back), then runs again.
    let r = open("op-tx-00002", true).await;
    assert_eq!(ledger_status(&r).as_deref(), Some("rejected"));
    assert_eq!(r.meta.as_ref().unwrap()["dev.mcp-retry-policy/ledger"]["reason"], json!("rolled_back"));
    assert_eq!(tickets(), 1, "the failed handler's ticket was rolled back");
    assert_eq!(
        store.get(&k("op-tx-00002")).await.unwrap(),
        None,
        "and so was its claim: no pending record, no unknown"
    );
    assert_eq!(text_of(&open("op-tx-00002", false).await), "opened T-2");
    assert_eq!(tickets(), 2);
    // A transaction on a store that is not the ledger's is refused before anything runs.
    let other = SqliteLedgerStore::open(temp("tx-other")).unwrap();
    let a = args(json!({ "title": "x", "operation_id": "op-tx-00003" }));
    let r = with_idempotency_atomic(&ledger, &opts, Some("t"), &a, other.transact(|_tx| panic!("must not run"))).await;
    assert_eq!(ledger_status(&r).as_deref(), Some("unknown"));
    assert_eq!(r.meta.as_ref().unwrap()["dev.mcp-retry-policy/ledger"]["reason"], json!("store_unavailable"));
    // An unresolved record is reconciled before a transaction too: without a hook, unknown and never run.
    let input = json!({ "title": "printer on fire" });
    left(store.as_ref(), &k("op-tx-00004"), RecordState::Unknown, &input, 1_000).await;
    let r = open("op-tx-00004", false).await;
    assert_eq!(ledger_status(&r).as_deref(), Some("unknown"));
    assert_eq!(tickets(), 2);
    // A handler that ends the transaction itself (COMMIT), then fails: its ticket and the claim are committed
    // — no proof of "nothing took effect": unknown, never rejected (rolled_back).
    let a = args(json!({ "title": "committed early", "operation_id": "op-tx-00005" }));
    let early = store.transact(|tx| {
        tx.execute("INSERT INTO tickets (title) VALUES (?)", ["committed early"])?;
        tx.execute_batch("COMMIT")?;
        Err("the printer API said no".into())
    });
    let r = with_idempotency_atomic(&ledger, &opts, Some("t"), &a, early).await;
    assert_eq!(ledger_status(&r).as_deref(), Some("unknown"), "{r:?}");
    assert_eq!(tickets(), 3, "its ticket was committed");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

/// The write and its record in one Postgres transaction: committed together, rolled back together (a failing
/// handler, a connection killed before the commit), two concurrent first calls running it once, and a handler
/// that committed itself and then failed answered unknown.
async fn postgres_transactions(store: &Arc<PostgresLedgerStore>, config: &str) {
    let (app, connection) = tokio_postgres::connect(config, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    app.batch_execute("CREATE TABLE tickets (id BIGSERIAL PRIMARY KEY, title TEXT NOT NULL)").await.unwrap();
    let tickets = || async { app.query_one("SELECT COUNT(*) FROM tickets", &[]).await.unwrap().get::<_, i64>(0) };
    let ledger = OperationLedger::new(store.clone());
    let opts = IdempotencyOptions::new("open_ticket");
    // `how`: 0 commits, 1 fails after its write, 2 kills its own connection after its write, 3 commits slowly.
    let open = |id: &str, how: u8| {
        let a = args(json!({ "title": "printer on fire", "operation_id": id }));
        let (ledger, opts, store) = (ledger.clone(), opts.clone(), store.clone());
        async move {
            with_idempotency_atomic(
                &ledger,
                &opts,
                Some("t"),
                &a,
                store.transact(|tx| {
                    Box::pin(async move {
                        let row = tx
                            .query_one("INSERT INTO tickets (title) VALUES ('printer on fire') RETURNING id", &[])
                            .await?;
                        let id: i64 = row.get(0);
                        match how {
                            1 => return Err("the printer API said no".into()),
                            2 => {
                                tx.batch_execute("SELECT pg_terminate_backend(pg_backend_pid())").await?;
                            }
                            3 => tokio::time::sleep(std::time::Duration::from_millis(300)).await,
                            4 => {
                                tx.batch_execute("COMMIT").await?;
                                return Err("the printer API said no".into());
                            }
                            _ => {}
                        }
                        Ok(ticket(&format!("opened T-{id}")))
                    })
                }),
            )
            .await
        }
    };
    let k = |id: &str| LedgerKey { tenant: "t".into(), action: "open_ticket".into(), operation_id: id.into() };
    let first = open("op-pgtx-0001", 0).await;
    assert!(text_of(&first).starts_with("opened T-"), "{first:?}");
    assert_eq!(text_of(&open("op-pgtx-0001", 0).await), text_of(&first), "replayed");
    assert_eq!(tickets().await, 1);
    assert_eq!(store.get(&k("op-pgtx-0001")).await.unwrap().unwrap().record.state, RecordState::Succeeded);
    for how in [1, 2] {
        let id = format!("op-pgtx-000{}", how + 1);
        let r = open(&id, how).await;
        assert_eq!(ledger_status(&r).as_deref(), Some("rejected"), "{how}: {r:?}");
        assert_eq!(r.meta.as_ref().unwrap()["dev.mcp-retry-policy/ledger"]["reason"], json!("rolled_back"));
        assert_eq!(tickets().await, 1, "{how}: the handler's write was rolled back");
        assert_eq!(store.get(&k(&id)).await.unwrap(), None, "{how}: and its claim: nothing to reconcile");
    }
    // Two first calls at once: the second's claim waits on the first's row, then replays it.
    let (r1, r2) = tokio::join!(open("op-pgtx-0004", 3), async {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        open("op-pgtx-0004", 3).await
    });
    assert_eq!(text_of(&r1), text_of(&r2), "{r1:?} {r2:?}");
    assert_eq!(tickets().await, 2, "one ticket for the two");
    // A handler that ends the transaction itself (COMMIT), then fails: its ticket and the claim are committed
    // — no proof of "nothing took effect": unknown, never rejected (rolled_back).
    let r = open("op-pgtx-0006", 4).await;
    assert_eq!(ledger_status(&r).as_deref(), Some("unknown"), "{r:?}");
    assert_eq!(tickets().await, 3, "its ticket was committed");
    assert_eq!(store.get(&k("op-pgtx-0006")).await.unwrap().unwrap().record.state, RecordState::Pending);
    // A store made over a client (no config for transaction connections) refuses: nothing runs.
    let (c, connection) = tokio_postgres::connect(config, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let bare = Arc::new(PostgresLedgerStore::new(c).await.unwrap());
    let ledger = OperationLedger::new(bare.clone());
    let a = args(json!({ "title": "x", "operation_id": "op-pgtx-0005" }));
    let r = with_idempotency_atomic(&ledger, &opts, Some("t"), &a, bare.transact(|_tx| panic!("must not run"))).await;
    assert_eq!(r.meta.as_ref().unwrap()["dev.mcp-retry-policy/ledger"]["reason"], json!("store_unavailable"));
}

// ── A process killed inside its transaction (after its write, before the record) ───────────────────────────
// The test binary runs itself as the child (`kill_child` below, selected by `--exact` and told what to do by
// the environment); the parent kills it with SIGKILL once its handler has written, then looks at what is left.

const KILL_CHILD: &str = "kill_child_runs_a_transaction_until_it_is_killed";

#[tokio::test]
async fn kill_child_runs_a_transaction_until_it_is_killed() {
    // Only as the child of `killed_inside_its_transaction` (MRP_KILL_MARKER set); otherwise nothing to do.
    let Ok(marker) = std::env::var("MRP_KILL_MARKER") else { return };
    let marker = std::path::PathBuf::from(marker);
    let a = args(json!({ "title": "doomed", "operation_id": "op-kill-0001" }));
    let opts = IdempotencyOptions::new("open_ticket");
    if let Ok(file) = std::env::var("MRP_KILL_SQLITE") {
        let store = Arc::new(SqliteLedgerStore::open(&file).unwrap());
        let ledger = OperationLedger::new(store.clone());
        let m = marker.clone();
        let _ = with_idempotency_atomic(
            &ledger,
            &opts,
            Some("t"),
            &a,
            store.transact(move |tx| {
                tx.execute("INSERT INTO tickets (title) VALUES ('doomed')", [])?;
                std::fs::write(&m, "written").unwrap();
                // Killed here: after the handler's write, before the record and the commit.
                std::thread::sleep(std::time::Duration::from_secs(60));
                Ok(ticket("never committed"))
            }),
        )
        .await;
    } else if let Ok(config) = std::env::var("MRP_KILL_PG") {
        let store = Arc::new(PostgresLedgerStore::connect(&config).await.unwrap());
        let ledger = OperationLedger::new(store.clone());
        let m = marker.clone();
        let _ = with_idempotency_atomic(
            &ledger,
            &opts,
            Some("t"),
            &a,
            store.transact(move |tx| {
                let m = m.clone();
                Box::pin(async move {
                    tx.execute("INSERT INTO tickets (title) VALUES ('doomed')", &[]).await?;
                    std::fs::write(&m, "written").unwrap();
                    tokio::time::sleep(std::time::Duration::from_secs(60)).await;
                    Ok(ticket("never committed"))
                })
            }),
        )
        .await;
    }
    panic!("the child was not killed in 60 s");
}

/// Runs the child with `env`, waits for its handler's write (the marker), kills it (SIGKILL).
fn kill_child_after_its_write(env: (&str, &str)) {
    let marker = temp("kill-marker").with_file_name("marker");
    let _ = std::fs::remove_file(&marker);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", KILL_CHILD, "--nocapture"])
        .env("MRP_KILL_MARKER", &marker)
        .env(env.0, env.1)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..200 {
        if marker.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(marker.exists(), "the child's handler wrote within 10 s");
    child.kill().unwrap();
    child.wait().unwrap();
    let _ = std::fs::remove_dir_all(marker.parent().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_killed_inside_its_sqlite_transaction_leaves_neither_the_write_nor_a_record() {
    let path = temp("kill-sqlite");
    let app = rusqlite::Connection::open(&path).unwrap();
    app.execute_batch("CREATE TABLE tickets (id INTEGER PRIMARY KEY, title TEXT NOT NULL)").unwrap();
    drop(SqliteLedgerStore::open(&path).unwrap());
    kill_child_after_its_write(("MRP_KILL_SQLITE", path.to_str().unwrap()));
    let tickets = || app.query_row("SELECT COUNT(*) FROM tickets", [], |r| r.get::<_, i64>(0)).unwrap();
    assert_eq!(tickets(), 0, "the killed transaction's ticket is gone");
    let store = Arc::new(SqliteLedgerStore::open(&path).unwrap());
    let k = LedgerKey { tenant: "t".into(), action: "open_ticket".into(), operation_id: "op-kill-0001".into() };
    assert_eq!(store.get(&k).await.unwrap(), None, "and so is its claim: nothing pending, nothing to reconcile");
    // The next call with the id runs it, once.
    let ledger = OperationLedger::new(store.clone());
    let a = args(json!({ "title": "doomed", "operation_id": "op-kill-0001" }));
    let opts = IdempotencyOptions::new("open_ticket");
    for _ in 0..2 {
        let r = with_idempotency_atomic(
            &ledger,
            &opts,
            Some("t"),
            &a,
            store.transact(|tx| {
                tx.execute("INSERT INTO tickets (title) VALUES ('doomed')", [])?;
                Ok(ticket("opened after the crash"))
            }),
        )
        .await;
        assert_eq!(text_of(&r), "opened after the crash");
    }
    assert_eq!(tickets(), 1);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

/// The same on Postgres (inside the Postgres test: its server, its `tickets` table).
async fn postgres_killed_inside_its_transaction(store: &Arc<PostgresLedgerStore>, config: &str) {
    let (app, connection) = tokio_postgres::connect(config, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let before: i64 = app.query_one("SELECT COUNT(*) FROM tickets", &[]).await.unwrap().get(0);
    let config_owned = config.to_string();
    tokio::task::spawn_blocking(move || kill_child_after_its_write(("MRP_KILL_PG", &config_owned))).await.unwrap();
    let k = LedgerKey { tenant: "t".into(), action: "open_ticket".into(), operation_id: "op-kill-0001".into() };
    let after: i64 = app.query_one("SELECT COUNT(*) FROM tickets", &[]).await.unwrap().get(0);
    assert_eq!(after, before, "the killed transaction's ticket is not there");
    assert_eq!(store.get(&k).await.unwrap(), None, "nor its claim");
    // The next call with the id runs it (its claim waits until the server has rolled the dead one back).
    let ledger = OperationLedger::new(store.clone());
    let a = args(json!({ "title": "doomed", "operation_id": "op-kill-0001" }));
    let r = with_idempotency_atomic(
        &ledger,
        &IdempotencyOptions::new("open_ticket"),
        Some("t"),
        &a,
        store.transact(|tx| {
            Box::pin(async move {
                tx.execute("INSERT INTO tickets (title) VALUES ('doomed')", &[]).await?;
                Ok(ticket("opened after the crash"))
            })
        }),
    )
    .await;
    assert_eq!(text_of(&r), "opened after the crash");
    let after: i64 = app.query_one("SELECT COUNT(*) FROM tickets", &[]).await.unwrap().get(0);
    assert_eq!(after, before + 1);
}

#[tokio::test]
async fn a_finish_over_a_lost_claim_is_refused_and_told() {
    let store = Arc::new(MemoryLedgerStore::new());
    let events = Arc::new(Mutex::new(Vec::<LedgerEvent>::new()));
    let ev = events.clone();
    let ledger = OperationLedger::builder(store.clone())
        .clock(|| 1_000)
        .on_event(move |e| ev.lock().unwrap().push(e.clone()))
        .build()
        .unwrap();
    let k = LedgerKey { tenant: "t".into(), action: "a".into(), operation_id: "op-late-0001".into() };
    let mcp_retry_policy::rmcp::Begin::Execute(claimed) = ledger.begin(&k, "f").await.unwrap() else {
        panic!("a claim")
    };
    // Another process took the key over (its reconcile said not done, and it claimed): version 2.
    let theirs = Record { version: 2, ..claimed.clone() };
    assert!(store.replace(&k, claimed.version, &theirs, None).await.unwrap());
    assert!(!ledger.finish(&k, &claimed, RecordState::Succeeded, Some("{}")).await.unwrap());
    assert_eq!(store.get(&k).await.unwrap().unwrap().record, theirs, "not written over");
    let e = events.lock().unwrap().clone();
    assert_eq!(e, [LedgerEvent::LateFinish { key: k, version: 1, state: RecordState::Succeeded }]);
    assert_eq!(e[0].kind(), "late_finish");
}

// ── The status tool's tenant and authorization, over a real rmcp server with bearer tokens (#21) ──────────

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::streamable_http_server::{session::local::LocalSessionManager, StreamableHttpService};
use rmcp::transport::{StreamableHttpClientTransport, StreamableHttpServerConfig};
use rmcp::{RoleServer, ServerHandler, ServiceExt};

/// One OAuth client used by two people, and a third of another client: token → (client id, subject).
const TOKENS: [(&str, &str, &str); 3] = [
    ("alice", "https://app.example/oauth-client.json", "user-alice"),
    ("bob", "https://app.example/oauth-client.json", "user-bob"),
    ("carol", "https://other.example/client.json", "user-carol"),
];

/// The bearer token's (client id, subject), from the HTTP request rmcp's server put in the request context.
fn token_of(e: &Extensions) -> Option<(&'static str, &'static str)> {
    let parts = e.get::<axum::http::request::Parts>()?;
    let bearer = parts.headers.get("authorization")?.to_str().ok()?.strip_prefix("Bearer ")?;
    TOKENS.iter().find(|(t, _, _)| *t == bearer).map(|(_, app, sub)| (*app, *sub))
}

/// The principal: the token's subject (what the README shows).
fn subject(e: &Extensions) -> Option<String> {
    token_of(e).map(|(_, sub)| sub.to_string())
}

/// An org-wide tenant: the OAuth client (narrowed by an authorize hook below).
fn client_app(e: &Extensions) -> Option<String> {
    token_of(e).map(|(app, _)| app.to_string())
}

/// A desk whose `tickets_create` records under the action `create_ticket`, with `payroll_adjust` and the
/// status tool; every tenant from the request context, through `tenant`.
#[derive(Clone)]
struct AuthDesk {
    ledger: OperationLedger,
    status: StatusTool,
    tenant: fn(&Extensions) -> Option<String>,
    effects: Arc<Mutex<Vec<String>>>,
}

impl ServerHandler for AuthDesk {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![self.status.tool()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let a = request.arguments.unwrap_or_default();
        let tenant = (self.tenant)(&context.extensions);
        let action = match request.name.as_ref() {
            "tickets_create" => "create_ticket",
            "payroll_adjust" => "payroll_adjust",
            _ => return Ok(self.status.call(&context.extensions, &a).await.into()),
        };
        let what = a.get("title").or_else(|| a.get("amount")).map(Value::to_string).unwrap_or_default();
        let opts = IdempotencyOptions::new(action);
        let r = with_idempotency(&self.ledger, &opts, tenant.as_deref(), &a, || async {
            let mut effects = self.effects.lock().unwrap();
            effects.push(format!("{action} {what} by {}", tenant.as_deref().unwrap_or("?")));
            let mut r = CallToolResult::structured(json!({ "n": effects.len(), "what": what }));
            r.content = vec![ContentBlock::text(format!("{action}: {what}"))];
            Ok(r)
        })
        .await;
        Ok(r.into())
    }
}

/// Serves `desk` over Streamable HTTP on 127.0.0.1 (axum, as examples/rmcp-server does): its URL and task.
async fn serve(desk: AuthDesk) -> (String, tokio::task::JoinHandle<()>) {
    let service: StreamableHttpService<AuthDesk, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(desk.clone()), Default::default(), StreamableHttpServerConfig::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, axum::Router::new().nest_service("/mcp", service)).await;
    });
    (url, task)
}

/// A real rmcp client with `token` as its bearer token (none: `""`).
async fn connect_as(url: &str, token: &str) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if !token.is_empty() {
        config = config.auth_header(token);
    }
    ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap()
}

async fn call_as(client: &rmcp::service::RunningService<rmcp::RoleClient, ()>, tool: &str, a: Value) -> CallToolResult {
    client.call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args(a))).await.unwrap()
}

fn status_of(r: &CallToolResult) -> Value {
    r.structured_content.clone().unwrap_or_default()["status"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_tool_answers_the_authenticated_tenant_only_never_the_arguments() {
    let file = temp("status-tenant");
    let ledger = OperationLedger::new(Arc::new(SqliteLedgerStore::open(&file).unwrap()));
    let effects = Arc::new(Mutex::new(Vec::new()));
    let desk = AuthDesk {
        ledger: ledger.clone(),
        status: StatusTool::new(&ledger, subject),
        tenant: subject,
        effects: effects.clone(),
    };
    let (url, server) = serve(desk).await;
    let (alice, bob, carol) =
        (connect_as(&url, "alice").await, connect_as(&url, "bob").await, connect_as(&url, "carol").await);
    let id = "op-medical-0001";
    let first = call_as(&alice, "tickets_create", json!({ "title": "alice: medical leave", "operation_id": id })).await;
    assert_eq!(first.is_error, Some(false), "{first:?}");
    // Alice reads her own, by tool name and by the ledger's action.
    for action in ["tickets_create", "create_ticket"] {
        let own = call_as(&alice, "operation_status", json!({ "action": action, "operation_id": id })).await;
        assert_eq!(status_of(&own), json!("succeeded"), "{own:?}");
        assert_eq!(
            own.structured_content.unwrap()["result"]["structuredContent"]["what"],
            json!("\"alice: medical leave\"")
        );
    }
    // Bob (same OAuth client) and Carol learn nothing — even naming Alice's tenant in the arguments.
    for (who, client) in [("bob", &bob), ("carol", &carol)] {
        for a in [
            json!({ "action": "tickets_create", "operation_id": id }),
            json!({ "action": "create_ticket", "operation_id": id, "tenant": "user-alice" }),
        ] {
            let read = call_as(client, "operation_status", a).await;
            assert_eq!(status_of(&read), json!("not_found"), "{who}: {read:?}");
            let wire = serde_json::to_string(&read).unwrap();
            assert!(!wire.contains("medical leave"), "{who} reads nothing of Alice's: {wire}");
        }
    }
    // No authentication: refused, nothing read.
    let anonymous = connect_as(&url, "").await;
    let refused =
        call_as(&anonymous, "operation_status", json!({ "action": "create_ticket", "operation_id": id })).await;
    assert_eq!(ledger_status(&refused).as_deref(), Some("rejected"), "{refused:?}");
    assert!(!serde_json::to_string(&refused).unwrap().contains("medical leave"));
    // Bob replaying Alice's id is his own operation (it runs for him), never her result.
    let replay = call_as(&bob, "tickets_create", json!({ "title": "alice: medical leave", "operation_id": id })).await;
    assert_eq!(replay.structured_content.unwrap()["n"], json!(2));
    assert_eq!(
        effects.lock().unwrap().clone(),
        ["create_ticket \"alice: medical leave\" by user-alice", "create_ticket \"alice: medical leave\" by user-bob"]
    );
    for c in [alice, bob, carol, anonymous] {
        let _ = c.cancel().await;
    }
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_tools_authorize_hook_decides_and_a_refusal_reads_as_not_found() {
    let events = Arc::new(Mutex::new(Vec::<LedgerEvent>::new()));
    let ev = events.clone();
    let ledger = OperationLedger::builder(Arc::new(SqliteLedgerStore::open(temp("status-authorize")).unwrap()))
        .on_event(move |e| ev.lock().unwrap().push(e.clone()))
        .build()
        .unwrap();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    // ANCHOR: authorize
    // An org-wide tenant (the OAuth client), narrowed by the hook: only Alice reads payroll results.
    let authorize = move |ask: mcp_retry_policy::rmcp::StatusAsk| {
        let sub = subject(&ask.extensions);
        seen.lock().unwrap().push((ask.tenant.clone(), ask.action.clone(), ask.operation_id.clone(), sub.clone()));
        std::future::ready(Ok::<_, BoxError>(ask.action != "payroll_adjust" || sub.as_deref() == Some("user-alice")))
    };
    let status = StatusTool::new(&ledger, client_app).authorize(authorize);
    // ANCHOR_END: authorize
    let desk = AuthDesk { ledger: ledger.clone(), status, tenant: client_app, effects: Arc::default() };
    let (url, server) = serve(desk).await;
    let (alice, bob) = (connect_as(&url, "alice").await, connect_as(&url, "bob").await);
    let id = "op-payroll-0001";
    call_as(&alice, "payroll_adjust", json!({ "amount": -300, "operation_id": id })).await;
    let own = call_as(&alice, "operation_status", json!({ "action": "payroll_adjust", "operation_id": id })).await;
    assert_eq!(status_of(&own), json!("succeeded"), "{own:?}");
    let refused = call_as(&bob, "operation_status", json!({ "action": "payroll_adjust", "operation_id": id })).await;
    assert_eq!(status_of(&refused), json!("not_found"), "refused exactly like an id never used: {refused:?}");
    assert_eq!(refused.structured_content.unwrap().get("result"), None);
    let app = "https://app.example/oauth-client.json".to_string();
    assert_eq!(
        asked.lock().unwrap().last().cloned(),
        Some((app, "payroll_adjust".into(), id.into(), Some("user-bob".into())))
    );
    // Asked by another name, the record found under payroll_adjust is still refused, and the answer does not
    // name the action it was found under.
    let sideways = call_as(&bob, "operation_status", json!({ "action": "no_such_tool", "operation_id": id })).await;
    assert_eq!(
        sideways.structured_content.clone().unwrap(),
        json!({ "status": "not_found", "action": "no_such_tool", "operation_id": id })
    );
    server.abort();
    // A hook that fails refuses too, and is told.
    let failing =
        |_: mcp_retry_policy::rmcp::StatusAsk| std::future::ready(Err::<bool, BoxError>("policy service down".into()));
    let status = StatusTool::new(&ledger, client_app).authorize(failing);
    let (url2, server2) =
        serve(AuthDesk { ledger: ledger.clone(), status, tenant: client_app, effects: Arc::default() }).await;
    let alice2 = connect_as(&url2, "alice").await;
    let thrown = call_as(&alice2, "operation_status", json!({ "action": "payroll_adjust", "operation_id": id })).await;
    assert_eq!(status_of(&thrown), json!("not_found"));
    assert!(!serde_json::to_string(&thrown).unwrap().contains("policy service"));
    let told: Vec<_> = events.lock().unwrap().iter().filter(|e| e.kind() == "authorize_error").cloned().collect();
    assert_eq!(told.len(), 1, "{told:?}");
    for c in [alice, bob, alice2] {
        let _ = c.cancel().await;
    }
    server2.abort();
}

// ── A result too large, or refused by the store, is recorded with a note, never left pending (#21) ─────────

fn big(n: usize, failed: bool) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text("x".repeat(n))]);
    r.is_error = Some(failed);
    r
}

fn meta_of(r: &CallToolResult) -> Value {
    r.meta.as_ref().and_then(|m| m.get("dev.mcp-retry-policy/ledger")).cloned().unwrap_or_default()
}

/// A second connection to the store's database, through which the real store is made to refuse a result text
/// longer than some bytes (a trigger on SQLite, a CHECK constraint on Postgres), and allowed again.
enum Admin {
    Sqlite(rusqlite::Connection),
    Postgres(tokio_postgres::Client),
}

impl Admin {
    async fn refuse_over(&self, bytes: usize) {
        match self {
            Admin::Sqlite(db) => db
                .execute_batch(&format!(
                    "CREATE TRIGGER refuse_big BEFORE UPDATE ON mcp_operation_ledger WHEN length(NEW.result) > {bytes}
                     BEGIN SELECT RAISE(ABORT, 'result too large for this store'); END"
                ))
                .unwrap(),
            Admin::Postgres(db) => db
                .batch_execute(&format!(
                    "ALTER TABLE mcp_operation_ledger ADD CONSTRAINT result_fits CHECK (length(result) <= {bytes}) NOT VALID"
                ))
                .await
                .unwrap(),
        }
    }

    async fn allow(&self) {
        match self {
            Admin::Sqlite(db) => db.execute_batch("DROP TRIGGER refuse_big").unwrap(),
            Admin::Postgres(db) => {
                db.batch_execute("ALTER TABLE mcp_operation_ledger DROP CONSTRAINT result_fits").await.unwrap()
            }
        }
    }
}

/// `js_target`: the same database for the JS ledger (a SQLite file, or `pg:` and its connection).
async fn results_on(store: Arc<dyn LedgerStore>, admin: Admin, js_target: &str) {
    let events = Arc::new(Mutex::new(Vec::<LedgerEvent>::new()));
    let ev = events.clone();
    let ledger = OperationLedger::builder(store.clone())
        .on_event(move |e| ev.lock().unwrap().push(e.clone()))
        .max_result_bytes(2_000)
        .build()
        .unwrap();
    assert!(OperationLedger::builder(store.clone()).max_result_bytes(0).build().is_err());
    assert!(OperationLedger::builder(store.clone()).max_result_bytes((1 << 30) + 1).build().is_err());
    assert_eq!(OperationLedger::new(store.clone()).max_result_bytes(), 1 << 20);
    let k = |op: &str| LedgerKey { tenant: "t".into(), action: "report".into(), operation_id: op.into() };
    let run = |op: &'static str, n: usize, failed: bool| {
        let ledger = ledger.clone();
        async move {
            let a = args(json!({ "operation_id": op }));
            let opts = IdempotencyOptions::new("report");
            with_idempotency(&ledger, &opts, Some("t"), &a, || async move { Ok(big(n, failed)) }).await
        }
    };
    // Too large for max_result_bytes: the caller gets the result now; the record ends as it ended, with a note.
    for (op, failed, state) in [("op-big-ok-01", false, "succeeded"), ("op-big-err-1", true, "failed")] {
        let first = run(op, 5_000, failed).await;
        assert_eq!(text_of(&first).len(), 5_000, "the first answer is the result itself");
        let row = store.get(&k(op)).await.unwrap().unwrap();
        assert_eq!(row.record.state.as_str(), state, "recorded as it ended, never pending");
        let again = run(op, 5_000, failed).await;
        assert_eq!(again.is_error, Some(failed));
        let m = meta_of(&again);
        assert_eq!((m["status"].clone(), m["state"].clone()), (json!("result_not_stored"), json!(state)), "{again:?}");
        assert!(m["reason"].as_str().unwrap().contains("max_result_bytes, 2000 bytes"), "{m}");
        assert!(text_of(&again).contains("It has taken effect: do not repeat it"), "{}", text_of(&again));
        // The JS ledger on the same database reads the note as the recorded result, in the state it ended.
        let js = node(&["status", js_target, "t", "report", op]);
        assert_eq!(js["status"], json!(state), "{js}");
        assert_eq!(js["result"]["_meta"]["dev.mcp-retry-policy/ledger"], m, "{js}");
    }
    // Small enough: stored and replayed as it was.
    let small = run("op-small-001", 100, false).await;
    assert_eq!(run("op-small-001", 100, false).await, small);
    // The store refuses a result (too large for it): the outcome is recorded with a note instead.
    admin.refuse_over(1_000).await;
    let first = run("op-refused-1", 1_500, false).await;
    assert_eq!(text_of(&first).len(), 1_500);
    let row = store.get(&k("op-refused-1")).await.unwrap().unwrap();
    assert_eq!(row.record.state, RecordState::Succeeded, "never left pending");
    let again = run("op-refused-1", 1_500, false).await;
    assert_eq!(meta_of(&again)["reason"], json!("the store refused it"), "{again:?}");
    admin.allow().await;
    let told: Vec<_> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            LedgerEvent::ResultNotStored { key, state, .. } => Some((key.operation_id.clone(), *state)),
            _ => None,
        })
        .collect();
    assert_eq!(
        told,
        [
            ("op-big-ok-01".to_string(), RecordState::Succeeded),
            ("op-big-err-1".to_string(), RecordState::Failed),
            ("op-refused-1".to_string(), RecordState::Succeeded)
        ]
    );
}

#[tokio::test]
async fn a_result_too_large_or_refused_is_recorded_with_a_note_on_sqlite() {
    if !peers_here() {
        return;
    }
    let file = temp("results");
    let store = Arc::new(SqliteLedgerStore::open(&file).unwrap());
    results_on(store, Admin::Sqlite(rusqlite::Connection::open(&file).unwrap()), file.to_str().unwrap()).await;
}

// ── The running claim's hold tells when its lease is late or lost (#21, the JS lease.js events) ─────────────

/// A ledger on `store` with a 300 ms lease (renewed every 100 ms), a clock `offset` ms ahead of the wall clock,
/// and its events.
fn leased(store: Arc<dyn LedgerStore>, offset: Arc<AtomicU64>) -> (OperationLedger, Arc<Mutex<Vec<LedgerEvent>>>) {
    let events = Arc::new(Mutex::new(Vec::<LedgerEvent>::new()));
    let ev = events.clone();
    let wall = || {
        u64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis()).unwrap()
    };
    let ledger = OperationLedger::builder(store)
        .config(LedgerConfig::new(60_000, 300).unwrap())
        .clock(move || wall() + offset.load(Ordering::SeqCst))
        .on_event(move |e| ev.lock().unwrap().push(e.clone()))
        .build()
        .unwrap();
    (ledger, events)
}

fn kinds(events: &Mutex<Vec<LedgerEvent>>) -> Vec<&'static str> {
    events.lock().unwrap().iter().map(LedgerEvent::kind).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hold_tells_a_late_renewal_and_a_lost_lease() {
    let file = temp("lease");
    let store = Arc::new(SqliteLedgerStore::open(&file).unwrap());
    let ms = |n| std::time::Duration::from_millis(n);
    // Late: the clock jumps 150 ms (a stalled process) before the first renewal (due at 100 ms): the renewal
    // finds under a third of the lease left; nobody took the claim, so it holds, and operators hear it.
    let offset = Arc::new(AtomicU64::new(0));
    let (ledger, events) = leased(store.clone(), offset.clone());
    let k = LedgerKey { tenant: "t".into(), action: "a".into(), operation_id: "op-lease-late".into() };
    let mcp_retry_policy::rmcp::Begin::Execute(claimed) = ledger.begin(&k, "f").await.unwrap() else {
        panic!("a claim")
    };
    let (_, held) = ledger
        .hold(&k, claimed.clone(), async {
            tokio::time::sleep(ms(40)).await;
            offset.store(150, Ordering::SeqCst);
            tokio::time::sleep(ms(200)).await;
        })
        .await;
    assert!(ledger.finish(&k, &held, RecordState::Succeeded, Some("{}")).await.unwrap(), "kept: finished");
    let e = events.lock().unwrap().clone();
    let [LedgerEvent::LeaseLate { key, fence, left_ms }, ..] = e.as_slice() else { panic!("lease_late first: {e:?}") };
    assert_eq!((key, *fence), (&k, claimed.version));
    assert!(*left_ms <= 100, "under a third of the lease was left: {left_ms}");
    assert!(!kinds(&events).contains(&"lease_lost"), "{e:?}");

    // Lost (record_changed): another process claimed the key while this run went on; the renewal finds it,
    // stops, tells it; the run's finish is refused and told.
    let (ledger, events) = leased(store.clone(), Arc::new(AtomicU64::new(0)));
    let k = LedgerKey { operation_id: "op-lease-lost".into(), ..k };
    let mcp_retry_policy::rmcp::Begin::Execute(claimed) = ledger.begin(&k, "f").await.unwrap() else {
        panic!("a claim")
    };
    let (theirs, held) = ledger
        .hold(&k, claimed.clone(), async {
            tokio::time::sleep(ms(50)).await;
            // Over whatever version the record has now (a renewal may have come first on a loaded machine).
            let now = store.get(&k).await.unwrap().unwrap().record;
            let theirs = Record { version: 100, ..now.clone() };
            assert!(store.replace(&k, now.version, &theirs, None).await.unwrap());
            tokio::time::sleep(ms(250)).await;
            theirs
        })
        .await;
    assert!(!ledger.finish(&k, &held, RecordState::Succeeded, Some("{}")).await.unwrap());
    assert_eq!(store.get(&k).await.unwrap().unwrap().record, theirs, "not written over");
    assert_eq!(kinds(&events), ["lease_lost", "late_finish"]);
    assert_eq!(
        events.lock().unwrap()[0],
        LedgerEvent::LeaseLost { key: k.clone(), fence: claimed.version, reason: "record_changed" }
    );

    // Lost (not_renewed): the store fails every renewal (a real SQLite refusing the update, by a trigger);
    // once only a third of the lease is left unrenewed, the claim is given up before anyone may reconcile it.
    let (ledger, events) = leased(store.clone(), Arc::new(AtomicU64::new(0)));
    let k = LedgerKey { operation_id: "op-lease-sick".into(), ..k };
    let mcp_retry_policy::rmcp::Begin::Execute(claimed) = ledger.begin(&k, "f").await.unwrap() else {
        panic!("a claim")
    };
    let admin = rusqlite::Connection::open(&file).unwrap();
    admin
        .execute_batch(
            "CREATE TRIGGER sick BEFORE UPDATE ON mcp_operation_ledger WHEN NEW.state = 'pending'
             BEGIN SELECT RAISE(ABORT, 'disk is sick'); END",
        )
        .unwrap();
    let (_, held) = ledger.hold(&k, claimed.clone(), tokio::time::sleep(ms(450))).await;
    admin.execute_batch("DROP TRIGGER sick").unwrap();
    let told = kinds(&events);
    assert_eq!(told.last(), Some(&"lease_lost"), "{told:?}");
    // Each renewal that reached the store before the give-up point was refused (on a loaded machine the give-up
    // point, on the monotonic clock, may come before the first renewal's answer: then none is told).
    assert!(told[..told.len() - 1].iter().all(|k| *k == "store_error"), "{told:?}");
    assert_eq!(
        events.lock().unwrap().last().cloned(),
        Some(LedgerEvent::LeaseLost { key: k.clone(), fence: claimed.version, reason: "not_renewed" })
    );
    assert_eq!(held, claimed, "never renewed");
    // Given up, the renewals stopped: no store error after the loss (the run went on past it).
    assert!(ledger.finish(&k, &held, RecordState::Succeeded, Some("{}")).await.unwrap(), "nobody took it meanwhile");
}

/// A real memory store whose first `replace` once armed hangs `hang_ms`, then fails: a network store that
/// stalled. A wrapper: no real store here can be made to hang on cue (everything else is the real store's).
struct Hanging {
    inner: MemoryLedgerStore,
    hang_ms: u64,
    armed: std::sync::atomic::AtomicBool,
}

impl LedgerStore for Hanging {
    fn get<'a>(
        &'a self,
        key: &'a LedgerKey,
    ) -> mcp_retry_policy::rmcp::StoreFuture<'a, Option<mcp_retry_policy::rmcp::StoredRecord>> {
        self.inner.get(key)
    }
    fn insert<'a>(&'a self, key: &'a LedgerKey, record: &'a Record) -> mcp_retry_policy::rmcp::StoreFuture<'a, bool> {
        self.inner.insert(key, record)
    }
    fn replace<'a>(
        &'a self,
        key: &'a LedgerKey,
        expected_version: u64,
        record: &'a Record,
        result: Option<&'a str>,
    ) -> mcp_retry_policy::rmcp::StoreFuture<'a, bool> {
        if self.armed.swap(false, Ordering::SeqCst) {
            let hang = self.hang_ms;
            return Box::pin(async move {
                tokio::time::sleep(std::time::Duration::from_millis(hang)).await;
                Err(mcp_retry_policy::rmcp::StoreError("stalled, then failed".into()))
            });
        }
        self.inner.replace(key, expected_version, record, result)
    }
    fn purge(&self, now_ms: u64) -> mcp_retry_policy::rmcp::StoreFuture<'_, u64> {
        self.inner.purge(now_ms)
    }
}

#[tokio::test(start_paused = true)]
async fn a_renewal_that_hangs_past_the_lease_gives_up_in_time_and_the_handler_runs_on() {
    let ms = std::time::Duration::from_millis;
    let store = Arc::new(Hanging { inner: MemoryLedgerStore::new(), hang_ms: 1_000, armed: Default::default() });
    let start = tokio::time::Instant::now();
    let elapsed = move || u64::try_from(start.elapsed().as_millis()).unwrap();
    let events = Arc::new(Mutex::new(Vec::<(u64, LedgerEvent)>::new()));
    let ev = events.clone();
    // A 300 ms lease renewed every 100 ms, on a clock that moves with tokio's (paused) time.
    let ledger = OperationLedger::builder(store.clone())
        .config(LedgerConfig::new(60_000, 300).unwrap())
        .clock(move || 1_000_000 + elapsed())
        .on_event(move |e| ev.lock().unwrap().push((elapsed(), e.clone())))
        .build()
        .unwrap();
    let k = key("op-renewal-hangs");
    let mcp_retry_policy::rmcp::Begin::Execute(claimed) = ledger.begin(&k, "f").await.unwrap() else {
        panic!("a claim")
    };
    store.armed.store(true, Ordering::SeqCst);
    // The first renewal (at 100 ms) hangs until 1 100 ms, then fails. The handler works 600 ms in 10 ms steps.
    let (ended_at, held) = ledger
        .hold(&k, claimed.clone(), async {
            for _ in 0..60 {
                tokio::time::sleep(ms(10)).await;
            }
            elapsed()
        })
        .await;
    // The handler was polled all along: it ended at 600 ms, not after the hung renewal answered.
    assert_eq!(ended_at, 600, "the handler ran on while the renewal hung");
    assert_eq!(held, claimed, "never renewed");
    // Given up at the give-up point (lease end − period: 200 ms), without waiting for the renewal's answer.
    let e = events.lock().unwrap().clone();
    let lost: Vec<_> = e.iter().filter(|(_, e)| e.kind() == "lease_lost").collect();
    assert_eq!(lost.len(), 1, "{e:?}");
    assert_eq!(lost[0].1, LedgerEvent::LeaseLost { key: k.clone(), fence: claimed.version, reason: "not_renewed" });
    assert!((200..=210).contains(&lost[0].0), "told lost at {} ms: {e:?}", lost[0].0);
}

#[tokio::test(start_paused = true)]
async fn a_lost_hold_does_not_unlist_the_later_hold_of_its_key() {
    let ms = std::time::Duration::from_millis;
    let store = Arc::new(MemoryLedgerStore::new());
    let now = Arc::new(AtomicU64::new(1_000_000));
    let asked = Arc::new(AtomicU32::new(0));
    let (clock, a2) = (now.clone(), asked.clone());
    let ledger = OperationLedger::builder(store.clone())
        .config(LedgerConfig::new(60_000, 300).unwrap())
        .clock(move || clock.load(Ordering::SeqCst))
        .reconcile(move |_req: ReconcileRequest| {
            a2.fetch_add(1, Ordering::SeqCst);
            std::future::ready(Ok::<_, BoxError>(Reconciled::NotDone))
        })
        .build()
        .unwrap();
    let k = key("op-two-holds");
    let mcp_retry_policy::rmcp::Begin::Execute(a) = ledger.begin(&k, "f").await.unwrap() else { panic!("a claim") };
    // A holds its claim; at 5 ms the key is claimed again (released and re-run: version 2) and B holds that.
    let b = Record { version: a.version + 1, ..a.clone() };
    let hold_a = ledger.hold(&k, a.clone(), tokio::time::sleep(ms(400)));
    let hold_b = async {
        tokio::time::sleep(ms(5)).await;
        assert!(store.replace(&k, a.version, &b, None).await.unwrap());
        ledger.hold(&k, b.clone(), tokio::time::sleep(ms(400))).await
    };
    let look = async {
        // A's renewal (100 ms) finds the record changed: A is lost. B still runs, its claim this process's.
        tokio::time::sleep(ms(150)).await;
        // The clock jumps past B's lease (a stall) before B renews: its record looks expired from outside.
        now.fetch_add(10_000, Ordering::SeqCst);
        let seen = ledger.begin(&k, "f").await.unwrap();
        let status = ledger.status(&k).await.unwrap();
        (seen, status)
    };
    let (_, _, (seen, status)) = tokio::join!(hold_a, hold_b, look);
    assert!(matches!(seen, mcp_retry_policy::rmcp::Begin::InProgress { .. }), "B's live claim: {seen:?}");
    assert_eq!(status.0, "in_progress", "{status:?}");
    assert_eq!(asked.load(Ordering::SeqCst), 0, "a live claim of this process is never reconciled");
}

// ── The ledger's counters through tracing (#21; the JS metrics.js answers and incidents) ─────────────────

/// What a real `tracing_subscriber` layer saw of the ledger's events: (name, fields as text).
#[derive(Clone, Default)]
struct LedgerEvents(Arc<Mutex<Vec<Seen>>>);

type Seen = (String, std::collections::BTreeMap<String, String>);

struct FieldText<'a>(&'a mut std::collections::BTreeMap<String, String>);

impl tracing::field::Visit for FieldText<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_string(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for LedgerEvents {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if event.metadata().target() == "mcp_retry_policy"
            && event.metadata().name().starts_with("mcp_retry_policy.ledger.")
        {
            let mut fields = std::collections::BTreeMap::new();
            event.record(&mut FieldText(&mut fields));
            self.0.lock().unwrap().push((event.metadata().name().to_string(), fields));
        }
    }
}

#[tokio::test]
async fn the_ledger_counts_its_answers_and_incidents_through_tracing() {
    use tracing::instrument::WithSubscriber;
    use tracing_subscriber::layer::SubscriberExt;
    let seen = LedgerEvents::default();
    // tracing caches each callsite's interest process-wide (see tests/rmcp_client.rs): a global (empty) registry
    // keeps the ledger's events enabled; this test's layer is scoped to its own calls.
    let _ = tracing::subscriber::set_global_default(tracing_subscriber::registry());
    let subscriber = tracing::Dispatch::new(tracing_subscriber::registry().with(seen.clone()));
    tracing::callsite::rebuild_interest_cache();
    let ledger = OperationLedger::builder(Arc::new(SqliteLedgerStore::open(temp("telemetry")).unwrap()))
        .max_result_bytes(200)
        .build()
        .unwrap();
    let opts = IdempotencyOptions::new("create_ticket");
    let call = |a: Value, n: usize| {
        let (ledger, opts) = (ledger.clone(), opts.clone());
        async move {
            with_idempotency(&ledger, &opts, Some("tenant-secret"), &args(a), || async move { Ok(big(n, false)) }).await
        }
    };
    async {
        call(json!({ "title": "x", "operation_id": "op-tele-0001" }), 10).await;
        call(json!({ "title": "x", "operation_id": "op-tele-0001" }), 10).await;
        call(json!({ "title": "y", "operation_id": "op-tele-0001" }), 10).await;
        call(json!({ "title": "x", "operation_id": "bad" }), 10).await;
        // Too large to keep: executed, and the incident told; its replay is a replay (of the note).
        call(json!({ "operation_id": "op-tele-0002" }), 500).await;
        call(json!({ "operation_id": "op-tele-0002" }), 500).await;
    }
    .with_subscriber(subscriber)
    .await;
    let seen = seen.0.lock().unwrap().clone();
    let line = |(name, f): &Seen| {
        let what = f.get("mcp_retry_policy.ledger.answer").or_else(|| f.get("mcp_retry_policy.ledger.incident"));
        let count = f
            .get("monotonic_counter.mcp_retry_policy.ledger.answers")
            .or_else(|| f.get("monotonic_counter.mcp_retry_policy.ledger.incidents"));
        format!(
            "{name} {} {} {}",
            what.unwrap(),
            f.get("mcp_retry_policy.ledger.action").map_or("-", String::as_str),
            count.unwrap()
        )
    };
    assert_eq!(
        seen.iter().map(line).collect::<Vec<_>>(),
        [
            "mcp_retry_policy.ledger.answer execute create_ticket 1",
            "mcp_retry_policy.ledger.answer replay create_ticket 1",
            "mcp_retry_policy.ledger.answer conflict create_ticket 1",
            "mcp_retry_policy.ledger.answer rejected create_ticket 1",
            "mcp_retry_policy.ledger.incident result_not_stored create_ticket 1",
            "mcp_retry_policy.ledger.answer execute create_ticket 1",
            "mcp_retry_policy.ledger.answer replay create_ticket 1",
        ]
    );
    assert!(!format!("{seen:?}").contains("tenant-secret"), "never the tenant (unbounded): {seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_hears_its_claim_lost_and_carries_its_fence() {
    use mcp_retry_policy::rmcp::{with_idempotency_claimed, HandlerClaim};
    let store = Arc::new(SqliteLedgerStore::open(temp("claim")).unwrap());
    let (ledger, events) = leased(store.clone(), Arc::new(AtomicU64::new(0)));
    let opts = IdempotencyOptions::new("transfer");
    let a = args(json!({ "amount": 5, "operation_id": "op-claim-0001" }));
    let k = LedgerKey { tenant: "t".into(), action: "transfer".into(), operation_id: "op-claim-0001".into() };
    let seen = Arc::new(Mutex::new(None::<(u64, LedgerKey, Option<&'static str>)>));
    let started = std::time::Instant::now();
    // ANCHOR: claimed
    let run = with_idempotency_claimed(&ledger, &opts, Some("t"), &a, |claim: HandlerClaim| {
        let seen = seen.clone();
        async move {
            *seen.lock().unwrap() = Some((claim.fence(), claim.key().clone(), claim.lost()));
            // The write would take 5 s; it stops as soon as another run may take over.
            tokio::select! {
                reason = claim.until_lost() => Err(OutcomeUnknown(format!("stopped: the claim was lost ({reason})"))),
                () = tokio::time::sleep(std::time::Duration::from_secs(5)) => Ok(CallToolResult::success(vec![ContentBlock::text("moved")])),
            }
        }
    });
    // ANCHOR_END: claimed
    // Another process takes the key over while the handler runs.
    let takeover = async {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let now = store.get(&k).await.unwrap().unwrap().record;
        let theirs = Record { version: 100, ..now.clone() };
        assert!(store.replace(&k, now.version, &theirs, None).await.unwrap());
        theirs
    };
    let (r, theirs) = tokio::join!(run, takeover);
    assert!(started.elapsed() < std::time::Duration::from_secs(3), "stopped early: {:?}", started.elapsed());
    assert_eq!(ledger_status(&r).as_deref(), Some("unknown"), "{r:?}");
    assert!(text_of(&r).contains("record_changed"), "{}", text_of(&r));
    assert_eq!(seen.lock().unwrap().clone(), Some((1, k.clone(), None)), "the fence is the claim's version");
    assert_eq!(store.get(&k).await.unwrap().unwrap().record, theirs, "the late finish wrote nothing");
    assert_eq!(kinds(&events), ["lease_lost", "late_finish"]);
}
