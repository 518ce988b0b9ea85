// Benchmark §4b: where the client's shipped bytes go. The wasm by what its functions are (the allocator, the
// formatter, each core module, the binding) and its data (the tables and the words), read from a copy
// build.sh optimizes exactly as it ships but with names kept (target/size/client.named.wasm); the JS by source
// file, from esbuild's metafile of the bundle a browser app makes of `mcp-retry-policy/client`. Bytes are raw;
// gzip does not split by part, so each part's gzip share is its raw share of the module, scaled.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../../', import.meta.url));

function leb(bytes, at) {
  let value = 0;
  let shift = 0;
  let i = at;
  for (;;) {
    const b = bytes[i++];
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (b < 0x80) return [value, i];
  }
}

/** { functions: [{ name, size }], data: bytes of data segments, other: the rest } of a wasm binary. */
export function wasmParts(bytes) {
  const imported = [];
  const bodies = [];
  const names = new Map();
  let data = 0;
  let at = 8;
  while (at < bytes.length) {
    const id = bytes[at];
    const [size, start] = leb(bytes, at + 1);
    const end = start + size;
    if (id === 2) {
      // Imports: functions among them take the first indices.
      let [count, p] = leb(bytes, start);
      for (let k = 0; k < count; k++) {
        let len;
        [len, p] = leb(bytes, p);
        p += len;
        [len, p] = leb(bytes, p);
        p += len;
        const kind = bytes[p++];
        const limits = (q) => {
          const flag = bytes[q];
          let r = leb(bytes, q + 1)[1];
          if (flag & 1) r = leb(bytes, r)[1];
          return r;
        };
        if (kind === 0) {
          [, p] = leb(bytes, p);
          imported.push(k);
        } else if (kind === 1) p = limits(p + 1); // a table: its element type, then its limits
        else if (kind === 2) p = limits(p); // a memory: its limits
        else if (kind === 3) p += 2; // a global: its type and mutability
      }
    } else if (id === 10) {
      let [count, p] = leb(bytes, start);
      for (let k = 0; k < count; k++) {
        const [len, q] = leb(bytes, p);
        bodies.push(len + (q - p));
        p = q + len;
      }
    } else if (id === 11) {
      data += size;
    } else if (id === 0) {
      const [nameLen, p] = leb(bytes, start);
      const name = new TextDecoder().decode(bytes.subarray(p, p + nameLen));
      if (name === 'name') {
        let q = p + nameLen;
        while (q < end) {
          const sub = bytes[q];
          const [subSize, s0] = leb(bytes, q + 1);
          if (sub === 1) {
            let [count, r] = leb(bytes, s0);
            for (let k = 0; k < count; k++) {
              let index;
              let len;
              [index, r] = leb(bytes, r);
              [len, r] = leb(bytes, r);
              names.set(index, new TextDecoder().decode(bytes.subarray(r, r + len)));
              r += len;
            }
          }
          q = s0 + subSize;
        }
      }
    }
    at = end;
  }
  const offset = imported.length;
  return { functions: bodies.map((size, i) => ({ name: names.get(i + offset) ?? `#${i + offset}`, size })), data };
}

// What a function is, by its (demangled) name: the first rule that matches.
const KINDS = [
  ['the exports (each entry point, with the core code inlined into it)', /^[a-z][A-Za-z0-9]*$/],
  ['panic machinery (linked, never reached: every path returns a typed failure)', /panicking|panic_fmt|PanicPayload|panic_handler|panic_bounds|unwrap_failed/],
  ['the allocator (lol_alloc\'s free list)', /lol_alloc|dlmalloc|__rust_alloc|__rust_dealloc|__rust_realloc|__rdl_|alloc::alloc|RawVec|raw_vec|__rg_/],
  ['formatting (core::fmt, messages)', /core::fmt|alloc::fmt|fmt::Write|Display|Debug|::fmt::|fmt::num|write_str|pad_integral/],
  ['classify (the table)', /retry::classify/],
  ['decide, ends (the gate, the end tables)', /retry::decide|retry::ends/],
  ['engine, breaker, budget, backoff', /retry::engine|retry::breaker|retry::budget|retry::backoff|retry::prng/],
  ['policy, safety, operation ids', /retry::policy|retry::safety|retry::operation_id/],
  ['the binding (handles, slabs, the out slots, failures)', /mcp_retry_policy::wasm|wasm::client|wasm::packed|wasm::out|wasm::fail|mcp_retry_policy::input|input::/],
  ['wasm-bindgen glue', /wasm_bindgen|__wbindgen|__wbg_|externref/],
  ['core and std (other)', /core::|alloc::|std::|compiler_builtins|memcpy|memset|memmove|memcmp/],
];

function kindOf(name) {
  for (const [kind, re] of KINDS) if (re.test(name)) return kind;
  return 'other (unnamed or inlined)';
}

export async function sizeSection({ say, fmt }) {
  const named = readFileSync(`${root}target/size/client.named.wasm`);
  const shipped = readFileSync(`${root}pkg/mcp_retry_policy_client_bg.wasm`);
  const shippedGz = gzipSync(shipped, { level: 9 }).length;
  const { functions, data } = wasmParts(new Uint8Array(named));
  const byKind = new Map();
  for (const f of functions) byKind.set(kindOf(f.name), (byKind.get(kindOf(f.name)) ?? 0) + f.size);
  const code = functions.reduce((a, f) => a + f.size, 0);
  const rows = [...byKind].sort((a, b) => b[1] - a[1]);
  rows.push(['data (the name tables, the words, the messages)', data]);
  const scale = (bytes) => (bytes / shipped.length) * shippedGz;
  say();
  say("## 4b. Where the client's wasm goes, by part (raw bytes; each part's gzip share scaled from its raw share)");
  say();
  say('| wasm part | raw | ≈ gzip share | share |');
  say('|---|---:|---:|---:|');
  for (const [kind, bytes] of rows) say(`| ${kind} | ${fmt(bytes / 1024, 1)} KB | ${fmt(scale(bytes) / 1024, 1)} KB | ${fmt((100 * bytes) / shipped.length, 0)} % |`);
  say(`| headers, exports, types, names of exports | ${fmt((shipped.length - code - data) / 1024, 1)} KB | | ${fmt((100 * (shipped.length - code - data)) / shipped.length, 0)} % |`);
  say(`| **the client wasm as shipped** | **${fmt(shipped.length / 1024, 1)} KB** | **${fmt(shippedGz / 1024, 1)} KB** | 100 % |`);

  const out = await build({
    stdin: { contents: `export { withRetry, RetryEngine } from './pkg/client.browser.js';`, resolveDir: root, loader: 'js' },
    bundle: true, minify: true, format: 'esm', platform: 'browser', write: false, metafile: true, logLevel: 'error',
    external: ['zod', 'pg', '@modelcontextprotocol/sdk', '*.wasm'], outfile: 'out.js',
  });
  const js = out.outputFiles[0].contents;
  const jsGz = gzipSync(js, { level: 9 }).length;
  const inputs = Object.entries(Object.values(out.metafile.outputs)[0].inputs)
    .map(([file, v]) => [file.replace(/^pkg\//, ''), v.bytesInOutput])
    .filter(([, b]) => b > 0)
    .sort((a, b) => b[1] - a[1]);
  say();
  say("## 4c. Where the client's JS goes, by file (the bundle of `withRetry` and `RetryEngine` from `mcp-retry-policy/client`)");
  say();
  say('| file | minified | ≈ gzip share |');
  say('|---|---:|---:|');
  for (const [file, bytes] of inputs) say(`| \`${file}\` | ${fmt(bytes / 1024, 1)} KB | ${fmt(((bytes / js.length) * jsGz) / 1024, 1)} KB |`);
  say(`| **the client JS as a browser app bundles it** | **${fmt(js.length / 1024, 1)} KB** | **${fmt(jsGz / 1024, 1)} KB** |`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { fmt } = await import('./measure.mjs');
  await sizeSection({ say: (s = '') => console.log(s), fmt });
}
