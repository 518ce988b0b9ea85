// The storm tables of the benchmark (§5) alone, fast: `node benches/js/storms.mjs` after a build. With
// `--lengths`, the full outage again at outage lengths 55–65 s (recovery depends on where the outage ends
// relative to each client's probes; one length alone can flatter or punish a fixed open time).
import { ExponentialBackoff } from 'cockatiel';
import { simulate, standardStrategies, STORMS } from '../../www/sim.js';

const pkg = process.env.PKG ?? '../../pkg';
const { RetryEngine } = await import(`${pkg}/client.node.js`);
const fmt = (n) => n.toLocaleString('en-US', { maximumFractionDigits: 2, minimumFractionDigits: 2 });
for (const [title, opts] of STORMS) {
  console.log(`\n## 5. Retry storm: 100 clients × 1 call/s, ${title}, server capacity 1.2× normal\n`);
  console.log('| strategy | how it runs | amplification | peak load | recovery after |');
  console.log('|---|---|---:|---:|---:|');
  for (const st of standardStrategies(RetryEngine, ExponentialBackoff)) {
    const r = simulate(st, { clients: 100, durationS: 30 + opts.outageS + 60, outageStartS: 30, ...opts });
    console.log(`| ${r.label} | ${r.kind} | ${fmt(r.amplification)}× | ${fmt(r.peakLoad)}× | ${r.recoveryS === null ? '> 60 s' : `${r.recoveryS} s`} |`);
  }
}
if (process.argv.includes('--lengths')) {
  const lengths = Array.from({ length: 11 }, (_, i) => 55 + i);
  console.log(`\n## Full outage of ${lengths[0]}–${lengths.at(-1)} s: amplification (mean) and recovery (each length)\n`);
  console.log(`| strategy | amplification | recovery after, s (${lengths.join(', ')}) | worst |`);
  console.log('|---|---:|---|---:|');
  for (const [i] of standardStrategies(RetryEngine, ExponentialBackoff).entries()) {
    const rs = lengths.map((L) => simulate(standardStrategies(RetryEngine, ExponentialBackoff)[i], { clients: 100, durationS: 30 + L + 60, outageStartS: 30, outageS: L }));
    const rec = rs.map((r) => r.recoveryS ?? Infinity);
    const show = (v) => (v === Infinity ? '> 60' : v);
    console.log(`| ${rs[0].label} | ${fmt(rs.reduce((a, r) => a + r.amplification, 0) / rs.length)}× | ${rec.map(show).join(', ')} | ${show(Math.max(...rec))} s |`);
  }
}
