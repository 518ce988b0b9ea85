//! The rmcp face's server half (features `rmcp`, `sqlite`, `postgres`): the store contract on the memory, SQLite
//! and Postgres stores (a real PostgreSQL 15, started by tests/support/postgres.mjs), `with_idempotency` and the status tool, and the cross-language test — the package's JS
//! `OperationLedger` and this Rust ledger run the same operations on one SQLite file and write identical
//! records (state, fingerprint, lease, times, version), and each replays what the other recorded.
#![cfg(all(feature = "rmcp", feature = "sqlite", feature = "postgres"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use mcp_retry_policy::ledger::record::{Record, RecordState};
use mcp_retry_policy::rmcp::{
    status_call, with_idempotency, IdempotencyOptions, LedgerKey, LedgerStore, MemoryLedgerStore, OperationLedger,
    OutcomeUnknown, PostgresLedgerStore, SqliteLedgerStore,
};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde_json::{json, Value};

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
    let ledger = OperationLedger::new(store.clone()).with_clock(|| 1_000_000);
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
    let (mut harness, stdin, config, js_target) = postgres().await;
    let store = Arc::new(PostgresLedgerStore::connect(&config).await.unwrap());
    contract(store.as_ref()).await;
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
    let ledger = OperationLedger::new(store.clone()).with_config(LedgerConfig::new(60_000, 300).unwrap());
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
