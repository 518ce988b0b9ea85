//! Native benchmarks of the pure core (criterion). `scripts/bench.sh` runs them and tabulates the means;
//! `scripts/test.sh` runs each once (`cargo test --bench core`) so they never rot.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing
)]
#![cfg_attr(target_arch = "wasm32", allow(unused))]

// criterion is a native dev-dependency: on wasm32 (clippy --all-targets) this is an empty program.
#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
criterion::criterion_main!(native::benches);

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::hint::black_box;

    use criterion::{criterion_group, Criterion};
    use mcp_retry_policy::ledger::fingerprint::{fingerprint, sha256_hex};
    use mcp_retry_policy::retry::backoff::delay;
    use mcp_retry_policy::retry::{
        classify, decide, AttemptOutcome, DecisionInput, Engine, Jitter, Policy, Revision, Safety, SplitMix64,
    };

    fn args_json(bytes: usize) -> String {
        let mut items = Vec::new();
        let mut i = 0;
        let mut len = 2;
        while len < bytes {
            let item = format!(
                r#"{{"id":{i},"title":"ticket number {i}","priority":{},"tags":["a","b","c"],"ratio":{}.25,"open":true}}"#,
                i % 5,
                i % 100
            );
            len += item.len() + 1;
            items.push(item);
            i += 1;
        }
        format!(r#"{{"operation_id":"x","items":[{}]}}"#, items.join(","))
    }

    fn bench(c: &mut Criterion) {
        let outcome = AttemptOutcome::Http {
            status: 503,
            retry_after_ms: None,
            had_session: false,
            jsonrpc_code: None,
            mismatch_confirmed: false,
        };
        c.bench_function("classify", |b| b.iter(|| classify(black_box(&outcome), Revision::LATEST)));

        let policy = Policy::default();
        let cl = classify(&outcome, Revision::LATEST);
        let mut engine = Engine::new(policy);
        let call = engine.begin(0);
        c.bench_function("decide", |b| {
            b.iter(|| {
                decide(black_box(&DecisionInput {
                    policy: &policy,
                    call: &call,
                    classification: &cl,
                    safety: Safety::Keyed,
                    now_ms: 10,
                    random: 12345,
                    breaker_open_until_ms: None,
                    budget_milli: Some(10_000),
                }))
            })
        });

        let mut rng = SplitMix64::new(1);
        c.bench_function("engine cycle (begin, admit, record)", |b| {
            b.iter(|| {
                let mut call = engine.begin(0);
                engine.admit(&mut call, 0).ok();
                engine.record(&mut call, black_box(&outcome), Safety::ReadOnly, Revision::LATEST, 5, rng.next_u64())
            })
        });

        c.bench_function("backoff delay (full jitter)", |b| {
            b.iter(|| delay(200, 20_000, Jitter::Full, black_box(3), 0, rng.next_u64()))
        });

        // Ours (one pass, no tree) against serde_json_canonicalizer (serde_json::Value, then JCS) + the same
        // SHA-256: what a native Rust user could pick. Same text, same answer (checked first).
        for (label, size) in [("1 KB", 1_000), ("100 KB", 100_000), ("1 MB", 1_000_000)] {
            let text = args_json(size);
            let peer = |t: &str| sha256_hex(&serde_json_canonicalizer::pipe(t).unwrap().into_bytes());
            assert_eq!(fingerprint(&text).unwrap(), peer(&text));
            c.bench_function(&format!("fingerprint {label}"), |b| b.iter(|| fingerprint(black_box(&text)).unwrap()));
            c.bench_function(&format!("fingerprint {label}, serde_json_canonicalizer + sha2"), |b| {
                b.iter(|| peer(black_box(&text)))
            });
        }
    }

    criterion_group!(benches, bench);
}
