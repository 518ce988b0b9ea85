// Benchmark: hedged reads with one slow replica in N. A read-only tool behind a load balancer that picks one of
// N replicas at random per request; one replica is slow. Calls arrive as a Poisson stream; time is simulated (an
// event queue, no timers); latencies are drawn (log-normal) from a seeded PRNG. Our strategies are decided by
// the real engine (the wasm RetryEngine: `hedge`, `hedgeEnded`, `record`, its budget and concurrency cap);
// Polly's hedging defaults (`Delay` 2 s, `MaxHedgedAttempts` 1, no budget) are modelled from its documentation,
// and labelled so. Prints p50/p99 call latency and load amplification (requests sent per call, cancelled
// copies included). README Benchmarks §10; alone: `node benches/js/hedge.mjs` after a build.
import { fileURLToPath } from 'node:url';
import { rng } from '../../www/sim.js';
import { hedgePlot } from './plots.mjs';

/** A binary heap of `{ t, run }` events, earliest first. */
function queue() {
  const a = [];
  const less = (i, j) => a[i].t < a[j].t;
  const swap = (i, j) => ([a[i], a[j]] = [a[j], a[i]]);
  return {
    get size() {
      return a.length;
    },
    push(e) {
      a.push(e);
      for (let i = a.length - 1; i > 0; ) {
        const p = (i - 1) >> 1;
        if (!less(i, p)) break;
        swap(i, p);
        i = p;
      }
    },
    pop() {
      const top = a[0];
      const last = a.pop();
      if (a.length > 0) {
        a[0] = last;
        for (let i = 0; ; ) {
          const l = 2 * i + 1;
          const r = l + 1;
          let m = i;
          if (l < a.length && less(l, m)) m = l;
          if (r < a.length && less(r, m)) m = r;
          if (m === i) break;
          swap(i, m);
          i = m;
        }
      }
      return top;
    },
  };
}

/**
 * One run: `calls` calls at `ratePerS`, N `replicas` of which replica 0 is slow. `strategy`: `{ kind: 'engine',
 * policy }` (the real engine decides every hedge) or `{ kind: 'polly', delayMs, maxHedges }` (modelled: a hedge
 * after every delay, no budget). Returns `{ p50, p99, amplification, hedges }`.
 */
export function runHedgeSim(RetryEngine, strategy, { calls = 20_000, ratePerS = 200, replicas = 5, fastMs = 20, slowMs = 1_000, sigma = 0.5, seed = 7 } = {}) {
  const random = rng(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const latency = () => {
    const slow = Math.floor(random() * replicas) === 0;
    return (slow ? slowMs : fastMs) * Math.exp(sigma * normal());
  };
  const engine = strategy.kind === 'engine' ? new RetryEngine(strategy.policy, { seed }) : undefined;
  const after = engine ? engine.hedging?.hedgeAfterMs : strategy.delayMs; // undefined: no hedging
  const q = queue();
  const took = [];
  let sent = 0;
  let hedges = 0;
  let t = 0;
  for (let i = 0; i < calls; i++) {
    t += -Math.log(1 - random()) * (1000 / ratePerS);
    const start = t;
    q.push({ t: start, run: (now) => startCall(now) });
  }
  function startCall(now) {
    const call = { start: now, done: false, copies: [] };
    if (engine) {
      call.state = engine.begin(now);
      engine.admit(call.state, now);
    }
    send(call, now, false);
    if (after !== undefined) q.push({ t: now + after, run: (at) => maybeHedge(call, at) });
  }
  function send(call, now, hedge) {
    sent++;
    const copy = { hedge, ended: false };
    call.copies.push(copy);
    q.push({ t: now + latency(), run: (at) => answer(call, copy, at) });
  }
  function maybeHedge(call, now) {
    if (call.done) return;
    if (engine) {
      if (!engine.hedge(call.state, 'read_only', now).admitted) return;
    } else if (call.copies.length > strategy.maxHedges) return;
    hedges++;
    send(call, now, true);
    q.push({ t: now + after, run: (at) => maybeHedge(call, at) });
  }
  function answer(call, copy, now) {
    if (call.done) return; // a cancelled copy: its answer is dropped
    call.done = true;
    took.push(now - call.start);
    if (!engine) return;
    // The first answer wins; every hedge ends now (the losers are cancelled); the winner is recorded.
    for (const c of call.copies) if (c.hedge) engine.hedgeEnded(call.state, c === copy);
    engine.record(call.state, { kind: 'result' }, 'read_only', now);
    call.state.free();
  }
  while (q.size > 0) {
    const e = q.pop();
    e.run(e.t);
  }
  took.sort((a, b) => a - b);
  const pct = (p) => took[Math.min(took.length - 1, Math.floor(p * took.length))];
  engine?.free();
  return { p50: pct(0.5), p99: pct(0.99), p999: pct(0.999), amplification: sent / calls, hedges: hedges / calls };
}

/** The strategies compared: no hedging, ours at a few settings, Polly's defaults. */
export const HEDGE_STRATEGIES = [
  ['no hedging (our defaults)', { kind: 'engine', policy: {} }],
  ['ours: hedgeAfterMs 50, maxHedges 1 (default budget)', { kind: 'engine', policy: { hedgeAfterMs: 50 } }],
  ['ours: hedgeAfterMs 50, maxHedges 2 (default budget)', { kind: 'engine', policy: { hedgeAfterMs: 50, maxHedges: 2 } }],
  ['ours: hedgeAfterMs 50, budget successRefill 0.5', { kind: 'engine', policy: { hedgeAfterMs: 50, budget: { successRefill: 0.5 } } }],
  ['ours: hedgeAfterMs 50, no budget (the concurrency cap only)', { kind: 'engine', policy: { hedgeAfterMs: 50, budget: false } }],
  ['Polly hedging defaults (Delay 2 s, MaxHedgedAttempts 1; modelled)', { kind: 'polly', delayMs: 2_000, maxHedges: 1 }],
  ['Polly with Delay 50 ms (no budget; modelled)', { kind: 'polly', delayMs: 50, maxHedges: 1 }],
];

/** The §10 tables (run.mjs calls it), one per slow share; with `plot`, each one's percentiles as
 * docs/src/plots/hedge-<replicas>.svg (benches/js/plots.mjs). */
export function hedgeSection({ say, RetryEngine, plot }) {
  for (const replicas of [5, 10, 20]) hedgeTable({ say, RetryEngine, replicas, plot });
}

function hedgeTable({ say, RetryEngine, replicas, plot }) {
  say();
  say(`## 10. Hedged reads: one slow replica in ${replicas} (20 ms vs 1 s median, log-normal σ 0.5), 200 calls/s, 20 000 calls`);
  say();
  say('| strategy | p50 | p99 | load amplification | hedges per call |');
  say('|---|---:|---:|---:|---:|');
  const rows = [];
  for (const [label, st] of HEDGE_STRATEGIES) {
    const r = runHedgeSim(RetryEngine, st, { replicas });
    rows.push({ label, ...r });
    say(`| ${label} | ${r.p50.toFixed(0)} ms | ${r.p99.toFixed(0)} ms | ${r.amplification.toFixed(2)}× | ${r.hedges.toFixed(2)} |`);
  }
  plot?.(`hedge-${replicas}`, hedgePlot({ replicas, rows }));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const pkg = process.env.PKG ?? '../../pkg';
  const { RetryEngine } = await import(`${pkg}/client.node.js`);
  const say = (s = '') => console.log(s);
  hedgeSection({ say, RetryEngine });
}
