// The zoo's cases: which server, which proxy, which tool safety, and the fault each tools/call attempt meets.
// A case id says all of it and is enough to run the case again: `server|proxy|safety|f1,f2,...|seed`.
import { rng } from '../../../www/sim.js';

/** Where an attempt breaks. 'pass' is no fault. */
export const FAULTS = {
  pass: 'no fault',
  refused: 'before the request leaves: connection refused (nothing listens)',
  upstream_down: "after it reaches the proxy: the proxy's upstream is down",
  drop_before: 'after the server received it: connection dropped before the tool runs',
  kill_during: 'during the tool: the server process is killed (SIGKILL), restarted',
  slow: 'during the tool: slower than the proxy timeout (the tool finishes and commits later)',
  cut_after_commit: 'after the tool committed, before the response: connection cut',
  midstream: 'mid-stream: the answer started (an SSE event / half the JSON body), then cut',
  tool_error: 'the tool runs and returns isError',
};
export const FAULT_POINTS = Object.keys(FAULTS).filter((f) => f !== 'pass');

export const SAFETIES = ['read_only', 'idempotent', 'keyed', 'unsafe'];
/** The tool of each safety, and its arguments for one intent. Safety comes from trusted annotations / schema. */
export const TOOLS = {
  read_only: { name: 'lookup', args: (intent) => ({ intent }) },
  idempotent: { name: 'set_status', args: (intent) => ({ intent, status: 'closed' }) },
  keyed: { name: 'open_ticket', args: (intent) => ({ intent, title: `ticket ${intent}` }) },
  unsafe: { name: 'create_ticket', args: (intent) => ({ intent, title: `ticket ${intent}` }) },
};

/** Faults that exist on a path: with no proxy there is no upstream to be down. */
export const faultsFor = (proxy) => FAULT_POINTS.filter((f) => !(proxy === 'none' && f === 'upstream_down'));
/** Keyed only where the server has an operation ledger. */
export const safetiesFor = (serverSpec) => SAFETIES.filter((s) => s !== 'keyed' || serverSpec.ledger);

export function caseId(c) {
  return [c.server, c.proxy, c.safety, c.schedule.join(',') || 'pass', c.seed].join('|');
}

export function parseCaseId(id) {
  const [server, proxy, safety, sched, seed] = id.split('|');
  return { server, proxy, safety, schedule: sched === 'pass' ? [] : sched.split(','), seed: Number(seed ?? 1), kind: 'given' };
}

/** Every server × proxy × safety × fault point, with the fault on attempt 1 only and on attempts 1–2. */
export function exhaustive({ servers, proxies, specs }) {
  const out = [];
  let seed = 1;
  for (const server of servers) {
    for (const proxy of proxies) {
      for (const safety of safetiesFor(specs[server])) {
        out.push({ kind: 'exhaustive', server, proxy, safety, schedule: [], seed: seed++ });
        for (const f of faultsFor(proxy)) {
          out.push({ kind: 'exhaustive', server, proxy, safety, schedule: [f], seed: seed++ });
          out.push({ kind: 'exhaustive', server, proxy, safety, schedule: [f, f], seed: seed++ });
        }
      }
    }
  }
  return out;
}


/** `n` random schedules from `seed`: faults across up to three attempts, pass about a third of the time. */
export function random({ n, seed, servers, proxies, specs }) {
  const r = rng(seed); // mulberry32 (www/sim.js): the same sequence on every machine
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  const out = [];
  for (let i = 0; i < n; i++) {
    const server = pick(servers);
    const proxy = pick(proxies);
    const safety = pick(safetiesFor(specs[server]));
    const len = 1 + Math.floor(r() * 3);
    const schedule = [];
    for (let k = 0; k < len; k++) schedule.push(r() < 0.3 ? 'pass' : pick(faultsFor(proxy)));
    while (schedule.length && schedule[schedule.length - 1] === 'pass') schedule.pop();
    out.push({ kind: 'random', server, proxy, safety, schedule, seed: (seed * 7919 + i) >>> 0 });
  }
  return out;
}
