// Benchmark §5, the retry storms: `stormSection` prints the tables (run.mjs calls it); alone, fast:
// `node benches/js/storms.mjs` after a build. With `--lengths`, the full outage again at outage lengths 55–65 s
// (recovery depends on where the outage ends relative to each client's probes; one length alone can flatter or
// punish a fixed open time).
import { fileURLToPath } from 'node:url';
import { ExponentialBackoff } from 'cockatiel';
import { rng, sharingStrategies, simulate, simulateBlip, standardStrategies, STORMS } from '../../www/sim.js';
import { fmt } from './measure.mjs';
import { blipPlot, sharedPlot, stormPlot, stormSlug } from './plots.mjs';

/** cockatiel's jitter draws `Math.random`: seeded for each run of the simulator, so its rows (and the plots drawn
 * from them) come out the same every time, like the rest of the simulation. */
function seeded(fn, seed = 11) {
  const random = Math.random;
  Math.random = rng(seed);
  try {
    return fn();
  } finally {
    Math.random = random;
  }
}

/** The §5 tables, one per scenario in `STORMS`, every strategy in the same run; with `plot`, each scenario's load
 * per second as docs/src/plots/storm-<scenario>.svg (benches/js/plots.mjs), and 5b's and 5c's. */
export function stormSection({ say, RetryEngine, plot }) {
  for (const [title, opts] of STORMS) {
    say();
    say(`## 5. Retry storm: 100 clients × 1 call/s, ${title}, server capacity 1.2× normal`);
    say();
    say('| strategy | how it runs | amplification | peak load | recovery after |');
    say('|---|---|---:|---:|---:|');
    const results = [];
    for (const st of standardStrategies(RetryEngine, ExponentialBackoff)) {
      const r = seeded(() => simulate(st, { clients: 100, durationS: 30 + opts.outageS + 60, outageStartS: 30, ...opts }));
      results.push(r);
      say(`| ${r.label} | ${r.kind} | ${fmt(r.amplification)}× | ${fmt(r.peakLoad)}× | ${r.recoveryS === null ? '> 60 s' : `${r.recoveryS} s`} |`);
    }
    plot?.(`storm-${stormSlug(opts)}`, stormPlot({ title, opts, results }));
  }
  sharedSection({ say, RetryEngine, plot });
  blipSection({ say, RetryEngine, plot });
}

/** §5c: a blip — calls in flight when every connection resets for 1.2 s, then the server is back. */
export function blipSection({ say, RetryEngine, plot }) {
  const tables = [];
  for (const calls of [5, 30]) {
    const rows = [];
    tables.push({ calls, rows });
    say();
    say(`## 5c. A 1.2 s blip with ${calls} calls in flight (every attempt in it reset after it was sent; 100 ms an attempt)`);
    say();
    say('| strategy | calls that succeeded | amplification | time to drain |');
    say('|---|---:|---:|---:|');
    for (const st of standardStrategies(RetryEngine, ExponentialBackoff)) {
      const r = seeded(() => simulateBlip(st, { calls }));
      rows.push(r);
      say(`| ${r.label} | ${r.succeeded} of ${r.calls} | ${fmt(r.amplification)}× | ${(r.drainMs / 1000).toFixed(1)} s |`);
    }
  }
  plot?.('blip', blipPlot(tables));
}

/** §5b: the same storms, each client a separate process (an isolate): a breaker each, or one shared (issue 20 §4). */
export function sharedSection({ say, RetryEngine, plot }) {
  say();
  say('## 5b. Retry storm across 100 isolates: a breaker each, or one shared through a Durable Object');
  say();
  say('| storm | breaker | attempts into the outage | calls answered in it | amplification | peak load | recovery after |');
  say('|---|---|---:|---:|---:|---:|---:|');
  const plots = [];
  for (const [title, opts] of STORMS) {
    const results = [];
    for (const st of sharingStrategies(RetryEngine)) {
      const r = seeded(() => simulate(st, { clients: 100, durationS: 30 + opts.outageS + 60, outageStartS: 30, ...opts }));
      results.push(r);
      const window = r.perSecond.slice(30, 30 + opts.outageS);
      const sum = (k) => window.reduce((n, x) => n + x[k], 0);
      const answered = `${Math.round((100 * sum('ok')) / sum('started'))} %`;
      say(`| ${title} | ${r.label.replace('ours, defaults: ', '')} | ${sum('sent')} | ${answered} | ${fmt(r.amplification)}× | ${fmt(r.peakLoad)}× | ${r.recoveryS === null ? '> 60 s' : `${r.recoveryS} s`} |`);
    }
    if (plot) plots.push([`shared-${stormSlug(opts)}`, sharedPlot({ title, opts, results })]);
  }
  for (const [name, svg] of plots) plot?.(name, svg);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const pkg = process.env.PKG ?? '../../pkg';
  const { RetryEngine } = await import(`${pkg}/client.node.js`);
  const say = (s = '') => console.log(s);
  stormSection({ say, RetryEngine });
  if (process.argv.includes('--lengths')) {
    const lengths = Array.from({ length: 11 }, (_, i) => 55 + i);
    say(`\n## Full outage of ${lengths[0]}–${lengths.at(-1)} s: amplification (mean) and recovery (each length)\n`);
    say(`| strategy | amplification | recovery after, s (${lengths.join(', ')}) | worst |`);
    say('|---|---:|---|---:|');
    for (const [i] of standardStrategies(RetryEngine, ExponentialBackoff).entries()) {
      const rs = lengths.map((L) => simulate(standardStrategies(RetryEngine, ExponentialBackoff)[i], { clients: 100, durationS: 30 + L + 60, outageStartS: 30, outageS: L }));
      const rec = rs.map((r) => r.recoveryS ?? Infinity);
      const show = (v) => (v === Infinity ? '> 60' : v);
      say(`| ${rs[0].label} | ${fmt(rs.reduce((a, r) => a + r.amplification, 0) / rs.length)}× | ${rec.map(show).join(', ')} | ${show(Math.max(...rec))} s |`);
    }
  }
}
