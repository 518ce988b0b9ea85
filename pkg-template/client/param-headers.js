// 2026-07-28 `Mcp-Param-*` headers: a tool's inputSchema may mark a property with `x-mcp-header: Name` (a property
// reached through `properties` keys only, of a primitive type); a `tools/call` then carries the argument's value
// as the header `Mcp-Param-Name`, which the server's transport checks against the body before dispatch (-32020 when
// they disagree). The SDK's own `callTool` adds them; withRetry sends through `client.request`, so it adds them
// here, from the tool listing the attempt goes out under. Decides nothing.

const PREFIX = 'Mcp-Param-';
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/; // RFC 9110 token
const PRIMITIVE = new Set(['string', 'integer', 'number', 'boolean']);
const SENTINEL_START = '=?base64?';
const SENTINEL_END = '?=';
const scans = new WeakMap(); // Tool object → its declarations (a refreshed list makes new objects)

/** The `x-mcp-header` declarations of a tool: [{ path, header }], or [] (none, or a schema that breaks the rules). */
export function declarationsOf(tool) {
  const schema = tool?.inputSchema;
  if (schema === null || typeof schema !== 'object') return [];
  let found = scans.get(tool);
  if (found) return found;
  found = [];
  const seen = new Set();
  let valid = true;
  const walk = (node, path, depth) => {
    const props = node?.properties;
    if (props === null || typeof props !== 'object' || depth > 32) return;
    for (const key of Object.keys(props)) {
      const p = props[key];
      if (p === null || typeof p !== 'object') continue;
      if (Object.hasOwn(p, 'x-mcp-header')) {
        const header = p['x-mcp-header'];
        const type = Array.isArray(p.type) ? p.type.filter((t) => t !== 'null') : [p.type];
        const lower = typeof header === 'string' ? header.toLowerCase() : '';
        if (!TOKEN.test(lower) || seen.has(lower) || type.length !== 1 || !PRIMITIVE.has(type[0])) valid = false;
        seen.add(lower);
        found.push({ path: [...path, key], header });
      }
      walk(p, [...path, key], depth + 1);
    }
  };
  walk(schema, [], 0);
  found = valid ? found : []; // an invalid declaration: the SDK sends none either (the tool is excluded)
  scans.set(tool, found);
  return found;
}

const needsBase64 = (s) => s.length === 0 || s !== s.trim() || (s.startsWith(SENTINEL_START) && s.endsWith(SENTINEL_END))
  || [...s].some((c) => { const n = c.codePointAt(0); return n !== 9 && (n < 32 || n > 126); });

function base64(s) {
  let bin = '';
  for (const b of new TextEncoder().encode(s)) bin += String.fromCharCode(b);
  return btoa(bin);
}

function asText(v) {
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number' && Number.isFinite(v) && (!Number.isInteger(v) || Number.isSafeInteger(v))) return String(v);
  return undefined;
}

/** The `Mcp-Param-*` headers for `args` under `tool`'s declarations, or undefined when there are none. */
export function paramHeaders(tool, args) {
  const decls = declarationsOf(tool);
  if (decls.length === 0) return undefined;
  const out = {};
  for (const { path, header } of decls) {
    let v = args;
    for (const k of path) v = v !== null && typeof v === 'object' ? v[k] : undefined;
    const text = v === undefined || v === null ? undefined : asText(v);
    if (text === undefined) continue;
    out[`${PREFIX}${header}`] = needsBase64(text) ? `${SENTINEL_START}${base64(text)}${SENTINEL_END}` : text;
  }
  return Object.keys(out).length ? out : undefined;
}
