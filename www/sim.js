// A retry-storm simulator on a simulated clock: N clients call one server at a steady rate; the server is
// down for a window, and can serve only `capacity` requests a second at any time. Each strategy decides
// how its clients retry. Pure JS and deterministic for a seed; runs in the browser (playground) and in
// Node (the benchmark). No timers: time is an event queue.
//
// Our engine is driven for real (the wasm RetryEngine, one per client: its own budget and breaker).
// cockatiel's ExponentialBackoff code is driven for real. p-retry and the AWS SDK's standard mode use real
// timers, so they are modelled from their documented defaults, and labelled so.

/** A small seeded PRNG (mulberry32) for arrivals and modelled jitter. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Heap {
  #a = [];
  push(x) {
    const a = this.#a;
    a.push(x);
    for (let i = a.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (a[p].t <= a[i].t) break;
      [a[p], a[i]] = [a[i], a[p]];
      i = p;
    }
  }
  pop() {
    const a = this.#a;
    const top = a[0];
    const last = a.pop();
    if (a.length) {
      a[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && a[l].t < a[m].t) m = l;
        if (r < a.length && a[r].t < a[m].t) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i], a[m]];
        i = m;
      }
    }
    return top;
  }
  get size() {
    return this.#a.length;
  }
}

/** An admission as the simulator takes it: `true` (send), a number (held: ask again after that many ms), or
 * `false` (the call ends without this attempt). */
const admitted = (a) => (a.admitted ? true : a.decision.action === 'retry' ? a.decision.delayMs : false);

/** Our engine, for real. `policy` as RetryEngine takes it. */
export function oursStrategy(RetryEngine, policy, label) {
  return {
    label,
    kind: 'ours (wasm engine, for real)',
    client(index) {
      const engine = new RetryEngine(policy, { seed: index + 1 });
      return {
        begin: (t) => engine.begin(t),
        admit: (call, t) => admitted(engine.admit(call, t)),
        failed: (call, t) => {
          const d = engine.record(call, { kind: 'http', status: 503 }, 'read_only', t).decision;
          return d.action === 'retry' ? d.delayMs : null;
        },
        succeeded: (call, t) => {
          engine.record(call, { kind: 'result' }, 'read_only', t);
        },
      };
    },
  };
}

/**
 * Our engine with the breaker shared by every client (issue 20 §4: `SharedBreaker` over a Durable Object): one
 * wasm engine per client, for real, and the object's rules modelled (client/shared-breaker.js's
 * `DurableObjectBreakerState`: the newest report wins; one probe lease at a time, for the attempt timeout; the
 * fleet's failures in a row counted while closed). Each client refreshes its snapshot every `syncMs` (a quarter
 * of it while its breaker sheds), reports
 * its breaker's transitions, each failure its breaker counted and the first answer after failures (the object's
 * answer adopted at once, as the client does), and asks for the lease before a probe. Each client's retry budget
 * stays its own. The object's round trip is not modelled (≤ 10 ms next to calls a second apart).
 */
export function sharedStrategy(RetryEngine, policy, label, { syncMs = 1_000 } = {}) {
  const store = { state: 'closed', sinceMs: 0, failures: 0, lease: undefined };
  const view = () => ({ state: store.state, sinceMs: store.sinceMs, failures: store.failures });
  const report = ({ state, sinceMs }, counted) => {
    if (sinceMs > store.sinceMs) {
      Object.assign(store, { state, sinceMs, failures: 0 });
      if (state !== 'half_open') store.lease = undefined;
    }
    if (counted === 'failure' && store.state === 'closed') store.failures++;
    if (counted === 'success') store.failures = 0;
    return view();
  };
  return {
    label,
    kind: 'ours (wasm engines, for real; the object modelled)',
    client(index) {
      const engine = new RetryEngine(policy, { seed: index + 1 });
      const leaseMs = engine.policy.attemptTimeoutMs;
      let synced = -Infinity;
      let mine = 0; // this engine's failures in a row, as last reported
      let fleet = 0; // the fleet's, as last answered
      const adopt = (snapshot, t) => {
        engine.adoptShared(snapshot);
        fleet = snapshot.failures;
        mine = engine.sharedSnapshot().failures;
        synced = t;
      };
      const recorded = (call, outcome, t) => {
        const step = engine.record(call, outcome, 'read_only', t);
        const own = engine.sharedSnapshot();
        let counted;
        if (!step.breaker && own.failures > mine) counted = 'failure';
        else if (!step.breaker && own.failures === 0 && (mine > 0 || fleet > 0)) counted = 'success';
        mine = own.failures;
        if (step.breaker || counted) adopt(report(own, counted), Math.floor(t));
        return step.decision;
      };
      return {
        begin: (t) => engine.begin(t),
        admit: (call, t) => {
          const now = Math.floor(t);
          if (engine.probeDue(now)) {
            const held = store.lease && store.lease.holder !== index && now < store.lease.untilMs;
            const newer = store.sinceMs > engine.sharedSnapshot().sinceMs && store.state !== 'half_open';
            if (held || newer) adopt(view(), now);
            else Object.assign(store, { state: 'half_open', sinceMs: Math.max(now, store.sinceMs + 1), failures: 0, lease: { holder: index, untilMs: now + leaseMs } });
            synced = now;
          } else if (now - synced >= (engine.breakerState === 'closed' ? syncMs : syncMs / 4)) {
            adopt(report(engine.sharedSnapshot()), now);
          }
          return admitted(engine.admit(call, t));
        },
        failed: (call, t) => {
          const d = recorded(call, { kind: 'http', status: 503 }, t);
          return d.action === 'retry' ? d.delayMs : null;
        },
        succeeded: (call, t) => {
          recorded(call, { kind: 'result' }, t);
        },
      };
    },
  };
}

/** Independent breakers against one shared breaker, our engine's defaults both (the §5b table's rows). */
export function sharingStrategies(RetryEngine) {
  return [
    oursStrategy(RetryEngine, undefined, 'ours, defaults: a breaker per client'),
    sharedStrategy(RetryEngine, undefined, 'ours, defaults: one breaker shared (sync 1 s)'),
  ];
}

/** cockatiel's own ExponentialBackoff (decorrelated jitter, 128 ms, 30 s cap) with `maxAttempts`. */
export function cockatielStrategy(ExponentialBackoff, maxAttempts = 3) {
  return {
    label: `cockatiel (ExponentialBackoff defaults, ${maxAttempts} attempts)`,
    kind: 'its own backoff code, for real',
    client() {
      return {
        begin: () => ({ attempts: 0, backoff: new ExponentialBackoff() }),
        admit: () => true,
        failed: (call) => {
          call.attempts++;
          if (call.attempts >= maxAttempts) return null;
          call.backoff = call.backoff.next();
          return call.backoff.duration;
        },
        succeeded: () => {},
      };
    },
  };
}

/** p-retry's documented defaults: 10 retries, 1 s · 2^n, no jitter, no cap (modelled: it uses real timers). */
export function pRetryStrategy() {
  return {
    label: 'p-retry defaults',
    kind: 'modelled from its defaults',
    client() {
      return {
        begin: () => ({ retries: 0 }),
        admit: () => true,
        failed: (call) => {
          if (call.retries >= 10) return null;
          const d = Math.round(1000 * 2 ** call.retries);
          call.retries++;
          return d;
        },
        succeeded: () => {},
      };
    },
  };
}

/** AWS SDK v3 standard mode: 3 attempts, full jitter on 100 ms · 2^n (cap 20 s), a 500-token quota per
 * client (a retry costs 5, a success returns 1). Modelled: it uses real timers. */
export function awsStandardStrategy(random) {
  return {
    label: 'AWS SDK standard mode',
    kind: 'modelled from its defaults',
    client() {
      let tokens = 500;
      return {
        begin: () => ({ attempts: 0, spent: 0 }),
        admit: () => true,
        failed: (call) => {
          call.attempts++;
          if (call.attempts >= 3 || tokens < 5) return null;
          tokens -= 5;
          call.spent += 5;
          return Math.floor(random() * Math.min(20_000, 100 * 2 ** (call.attempts - 1)));
        },
        succeeded: (call) => {
          tokens = Math.min(500, tokens + (call.spent ? call.spent : 1));
        },
      };
    },
  };
}

/**
 * The storm scenarios of the benchmark: [title, simulate() options]. The long brownout is where the retry
 * budget binds: the breaker rarely opens at a 20 % failure rate (and then for 2 s), so the budget is what
 * keeps retries in check. In the full outage the breaker sheds: open 2 s, then one probe.
 */
export const STORMS = [
  ['a 60 s full outage', { outageS: 60 }],
  ['a 60 s brownout (half the requests fail)', { outageS: 60, failureRate: 0.5 }],
  ['a 5-minute brownout (20 % of requests fail)', { outageS: 300, failureRate: 0.2 }],
];

/** The six strategies compared in the playground and the benchmark, in that order. `openMs`, when given,
 * replaces our breaker's open time (the playground's knob: a longer open time sheds more, recovers later). */
export function standardStrategies(RetryEngine, ExponentialBackoff, { openMs } = {}) {
  const breaker = openMs === undefined ? {} : { breaker: { openMs } };
  const named = (label) => (openMs === undefined ? label : `${label}, breaker open ${openMs / 1000} s`);
  return [
    oursStrategy(RetryEngine, openMs === undefined ? undefined : breaker, named('ours, defaults')),
    oursStrategy(RetryEngine, { budget: false, ...breaker }, named('ours, no budget')),
    pRetryStrategy(),
    cockatielStrategy(ExponentialBackoff, 3),
    awsStandardStrategy(rng(9)),
    oursStrategy(RetryEngine, { jitter: 'none', budget: false, breaker: false }, 'no jitter (exponential, 3 attempts)'),
  ];
}

/**
 * Runs one strategy. Returns per-second series and the summary figures.
 * amplification = attempts sent ÷ calls started, over the outage window (below 1 when a breaker sheds calls);
 * recoveryS = seconds after the outage until ≥ 95 % of new calls succeed at their first attempt, 5 s running
 * (calls a breaker sheds count as not succeeding; so do first attempts crowded out by a retry backlog).
 * failureRate < 1 makes a brownout: each request in the window fails with that probability.
 */
export function simulate(strategy, { clients = 100, ratePerClient = 1, durationS = 150, outageStartS = 30, outageS = 60, failureRate = 1, capacityFactor = 1.2, seed = 1 } = {}) {
  const random = rng(seed);
  const q = new Heap();
  const perS = Array.from({ length: durationS }, () => ({ sent: 0, first: 0, started: 0, ok: 0, firstOk: 0, failed: 0, shed: 0 }));
  const capacity = Math.floor(clients * ratePerClient * capacityFactor);
  const served = new Map(); // second → requests handled
  const outageStart = outageStartS * 1000;
  const outageEnd = (outageStartS + outageS) * 1000;
  const end = durationS * 1000;
  const cs = [];
  for (let i = 0; i < clients; i++) {
    cs.push(strategy.client(i));
    const phase = random() * (1000 / ratePerClient);
    q.push({ t: phase, client: i, call: null, first: true });
  }
  let calls = 0;
  let seq = 0;
  while (q.size) {
    const ev = q.pop();
    if (ev.t >= end) continue;
    const s = Math.floor(ev.t / 1000);
    const c = cs[ev.client];
    if (ev.first) {
      // The next call of this client, then this one's first attempt.
      q.push({ t: ev.t + 1000 / ratePerClient, client: ev.client, call: null, first: true, seq: seq++ });
      ev.call = c.begin(ev.t);
      calls++;
      perS[s].started++;
    }
    const go = c.admit(ev.call, ev.t);
    if (typeof go === 'number') {
      // Held by the breaker or the budget: the same call asks again later.
      q.push({ t: ev.t + go, client: ev.client, call: ev.call, first: false, seq: seq++ });
      continue;
    }
    if (!go) {
      perS[s].shed++;
      continue;
    }
    perS[s].sent++;
    if (ev.first) perS[s].first++;
    const handled = served.get(s) ?? 0;
    const down = ev.t >= outageStart && ev.t < outageEnd && random() < failureRate;
    if (!down && handled < capacity) {
      served.set(s, handled + 1);
      perS[s].ok++;
      if (ev.first) perS[s].firstOk++;
      c.succeeded(ev.call, ev.t + 20);
    } else {
      perS[s].failed++;
      const delay = c.failed(ev.call, ev.t + 20);
      if (delay !== null && delay !== undefined) q.push({ t: ev.t + 20 + delay, client: ev.client, call: ev.call, first: false, seq: seq++ });
    }
  }
  const window = perS.slice(outageStartS, outageStartS + outageS);
  const sent = window.reduce((n, x) => n + x.sent, 0);
  const started = window.reduce((n, x) => n + x.started, 0);
  const baseline = clients * ratePerClient;
  let recoveryS = null;
  for (let s = outageStartS + outageS; s + 5 <= durationS; s++) {
    if (perS.slice(s, s + 5).every((x) => x.firstOk >= 0.95 * x.started)) {
      recoveryS = s - (outageStartS + outageS);
      break;
    }
  }
  return {
    label: strategy.label,
    kind: strategy.kind,
    perSecond: perS,
    amplification: started ? sent / started : 0,
    peakLoad: Math.max(...perS.map((x) => x.sent)) / baseline,
    recoveryS,
    calls,
  };
}

/**
 * A blip: `calls` calls in flight through one client (they start within the first 50 ms; an attempt takes
 * `latencyMs`), every attempt sent during `[downFromMs, downFromMs + blipMs)` reset after it was sent, the server
 * fine after. A held call (`admit` answers a wait) asks again later. Returns the calls that ended `succeeded`,
 * attempts per call (amplification) and when the last call ended (time to drain), ms from the start.
 */
export function simulateBlip(strategy, { calls = 30, blipMs = 1_200, downFromMs = 0, latencyMs = 100, seed = 1 } = {}) {
  const random = rng(seed);
  const c = strategy.client(0);
  const q = new Heap();
  let seq = 0;
  for (let i = 0; i < calls; i++) q.push({ t: Math.floor(random() * 50), call: null, i, seq: seq++ });
  let ok = 0;
  let sent = 0;
  let drained = 0;
  while (q.size) {
    const ev = q.pop();
    if (ev.call === null) ev.call = c.begin(ev.t);
    if (ev.answerAt !== undefined) {
      drained = Math.max(drained, ev.t);
      if (ev.sentAt >= downFromMs && ev.sentAt < downFromMs + blipMs) {
        const delay = c.failed(ev.call, ev.t);
        if (delay !== null && delay !== undefined) q.push({ t: ev.t + delay, call: ev.call, i: ev.i, seq: seq++ });
      } else {
        c.succeeded(ev.call, ev.t);
        ok++;
      }
      continue;
    }
    const go = c.admit(ev.call, ev.t);
    if (typeof go === 'number') {
      q.push({ t: ev.t + go, call: ev.call, i: ev.i, seq: seq++ });
      continue;
    }
    if (!go) {
      drained = Math.max(drained, ev.t);
      continue;
    }
    sent++;
    q.push({ t: ev.t + latencyMs, call: ev.call, i: ev.i, sentAt: ev.t, answerAt: ev.t + latencyMs, seq: seq++ });
  }
  return { label: strategy.label, succeeded: ok, calls, amplification: sent / calls, drainMs: drained };
}
