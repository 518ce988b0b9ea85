// Benchmark §3: fingerprints (RFC 8785 canonical JSON + SHA-256, hex), ours and every alternative measured,
// against a JS canonicalizer + WebCrypto SHA-256, all in one process and one run. `benches/js/run.mjs` calls
// it between §2 and §4; `node benches/js/fingerprint.mjs` runs it alone (after `bash scripts/build.sh`).
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { fingerprint } from '../../pkg/server.node.js';
import { fingerprintCanonical, fingerprintJson } from '../../pkg/mcp_retry_policy_server.js';
import { canonicalJson } from '../../pkg/server/canonical.js';
import { useNodeCrypto } from '../../pkg/server/fingerprint.js';
import { canonicalize } from '../../tests/support/jcs.mjs';
import { fmt, measure, measureAsync } from './measure.mjs';

const LIMIT = 16 * 1024 * 1024;

/** The arguments of a tool call of about `bytes` bytes of JSON: an array of small records. */
export function argsOf(bytes) {
  const items = [];
  let len = 0;
  for (let i = 0; len < bytes; i++) {
    const item = { id: i, title: `ticket number ${i} ünïcödé`, priority: i % 5, tags: ['a', 'b', 'c'], ratio: (i % 100) + 0.25, open: i % 2 === 0 };
    len += JSON.stringify(item).length + 1;
    items.push(item);
  }
  return { operation_id: 'x', items };
}

// 0.1.0's `fingerprint`: JSON.stringify with the NaN/boxed-number replacer, then the wasm parses that text
// again, sorts each object's members by key and hashes (`fingerprintJson`, still exported).
const numberValueOf = Number.prototype.valueOf;
function previousReplacer(key, v) {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new RangeError('not_finite');
    return v;
  }
  if (typeof v === 'object' && v !== null && !(Object.getPrototypeOf(v) === Object.prototype || Array.isArray(v))) {
    try {
      numberValueOf.call(v);
      return Number(v);
    } catch {
      return v;
    }
  }
  return v;
}

/** `fingerprint` on the shared path: the Node entry's node:crypto hash switched off for the call. */
function wasmHashed(v) {
  const node = useNodeCrypto(undefined);
  try {
    return fingerprint(v);
  } finally {
    useNodeCrypto(node);
  }
}

const hex = (buf) => Buffer.from(buf).toString('hex');
const enc = new TextEncoder();

/**
 * The §3 table. `measure(fn, n, rounds)` and `measureAsync(fn, n)` give ns per call; `say` prints a line.
 */
export async function fingerprintSection({ say, fmt, measure, measureAsync }) {
  const rows = [
    ['**ours in browsers and workerd: `fingerprint`** — JS canonical writer (`canonicalJson`) + SHA-256 in wasm (`fingerprintCanonical`)', false, wasmHashed],
    ['**ours in Node: `fingerprint`** — the same writer + `node:crypto` SHA-256 (what `server.node.js` sets up)', false, (v) => fingerprint(v)],
    ['the plain wasm path: `JSON.stringify` → wasm parses, sorts keys, hashes (`fingerprintJson`, streaming, no tree)', false, (v) => fingerprintJson(JSON.stringify(v, previousReplacer))],
    ['JS canonical writer + WebCrypto SHA-256 (async)', true, async (v) => hex(await crypto.subtle.digest('SHA-256', enc.encode(canonicalJson(v, LIMIT))))],
    ['peer: JS reference canonicalizer + WebCrypto SHA-256 (async)', true, async (v) => hex(await crypto.subtle.digest('SHA-256', enc.encode(canonicalize(v))))],
  ];
  const sizes = [['1 KB', 1_000, 3_000], ['100 KB', 100_000, 60], ['1 MB', 1_000_000, 8]];
  const results = Array.from({ length: rows.length + 2 }, () => []); // the rows, then the writer and the hash
  for (const [label, size, n] of sizes) {
    const v = argsOf(size);
    const expected = createHash('sha256').update(canonicalize(v)).digest('hex');
    const text = canonicalJson(v, LIMIT);
    // Where ours spends it: the writer alone, the hash alone.
    const ways = [...rows, ['writer', false, () => canonicalJson(v, LIMIT)], ['hash', false, () => fingerprintCanonical(text)]];
    for (const [name, async, fn] of rows) {
      const got = async ? await fn(v) : fn(v);
      if (got !== expected) throw new Error(`${name}: fingerprint differs for ${label}`);
    }
    // Round-robin: each round times every way once (n calls), so that a busy machine slows all of them
    // alike; the median round per way is reported.
    const times = ways.map(() => []);
    for (let round = 0; round < 9; round++) {
      for (const [w, [, async, fn]] of ways.entries()) {
        times[w].push(async ? await measureAsync(() => fn(v), n, 1) : measure(() => fn(v), n, 1));
      }
    }
    for (const [w, ts] of times.entries()) results[w].push(ts.sort((x, y) => x - y)[4] / 1000);
  }
  const peer = results[rows.length - 1];
  say();
  say('## 3. Fingerprint: RFC 8785 canonical JSON + SHA-256 (µs per value; × = peer ÷ this, ≥ 1 is faster)');
  say();
  say(`| way | ${sizes.map(([l]) => l).join(' | ')} | ${sizes.map(([l]) => `× at ${l}`).join(' | ')} |`);
  say(`|---|${sizes.map(() => '---:').join('|')}|${sizes.map(() => '---:').join('|')}|`);
  const line = (name, xs) => say(`| ${name} | ${xs.map((x) => fmt(x, 1)).join(' | ')} | ${xs.map((x, i) => fmt(peer[i] / x)).join(' | ')} |`);
  for (const [r, [name]] of rows.entries()) line(name, results[r]);
  line('↳ ours, the writer alone (`canonicalJson`)', results[rows.length]);
  line('↳ ours, the wasm SHA-256 alone (`fingerprintCanonical` of the text)', results[rows.length + 1]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await fingerprintSection({ say: (s = '') => console.log(s), fmt, measure, measureAsync });
}
