// Node entry of the server face: compile its wasm synchronously from the file beside this one. Fingerprints
// hash with node:crypto here (same bytes, same hex as the wasm's SHA-256; tests/js/ledger.test.mjs checks both).
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { initSync } from './mcp_retry_policy_server.js';
import { useNodeCrypto } from './server/fingerprint.js';

initSync({ module: readFileSync(new URL('./mcp_retry_policy_server_bg.wasm', import.meta.url)) });
useNodeCrypto({
  byteLength: (text) => Buffer.byteLength(text, 'utf8'),
  sha256Hex: (text) => createHash('sha256').update(text, 'utf8').digest('hex'),
});

export * from './server.api.js';
// Node only: the Postgres ledger store (it uses the `pg` Pool you pass; the package never imports `pg`).
export { PostgresLedgerStore } from './server/postgres.js';
