// How one attempt ended, mapped to the engine's outcome vocabulary. Observation only: no decision here.
import { typeError } from '../errors.js';

/** The `_meta` key that tags each attempt, so `observeFetch` can tell which HTTP response belongs to it. */
export const ATTEMPT_META_KEY = 'dev.mcp-retry-policy/attempt';

// Failures that happen before a request can leave this machine: nothing was sent.
const NOT_SENT = new Set([
  'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT', 'ERR_INVALID_URL', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID',
]);

const observed = new Map(); // attempt tag → { status, retryAfterMs }
const OBSERVED_MAX = 1024;

function errorCode(error) {
  for (let e = error, depth = 0; e && depth < 4; e = e.cause, depth++) {
    if (typeof e.code === 'string') return e.code;
  }
  return undefined;
}

/** Parses `Retry-After` (delta-seconds or an HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(value, now = Date.now()) {
  if (value == null || value === '') return undefined;
  const s = String(value).trim();
  if (/^\d+$/.test(s)) return Math.min(Number(s) * 1000, 86_400_000);
  const at = Date.parse(s);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - now), 86_400_000);
}

/**
 * Wraps `fetch` for `StreamableHTTPClientTransport({ fetch })` so that `withRetry` sees what the SDK hides:
 * the HTTP status and `Retry-After` of a refused `tools/call`. It changes nothing about the request.
 */
export function observeFetch(inner = globalThis.fetch) {
  if (typeof inner !== 'function') throw typeOptionError('fetch', 'a function');
  return async function observedFetch(input, init) {
    const response = await inner(input, init);
    const body = init?.body;
    if (!response.ok && typeof body === 'string' && body.includes(ATTEMPT_META_KEY)) {
      try {
        const messages = [].concat(JSON.parse(body));
        for (const m of messages) {
          const tag = m?.params?._meta?.[ATTEMPT_META_KEY];
          if (typeof tag !== 'string') continue;
          if (observed.size >= OBSERVED_MAX) observed.delete(observed.keys().next().value);
          observed.set(tag, { status: response.status, retryAfterMs: parseRetryAfter(response.headers.get('retry-after')) });
        }
      } catch {
        // Not JSON we understand: nothing to observe.
      }
    }
    return response;
  };
}

function takeObserved(tag) {
  const o = observed.get(tag);
  observed.delete(tag);
  return o;
}

function isResultType(t) {
  return t === 'complete' || t === 'input_required' || t === 'task';
}

const LEDGER_META_KEY = 'dev.mcp-retry-policy/ledger';
const LEDGER_STATUSES = new Set(['in_progress', 'unknown', 'conflict']);

/** The outcome of an attempt that returned a result (or the server ledger's answer in its place). */
export function resultOutcome(result) {
  const ledger = result?.isError ? result?._meta?.[LEDGER_META_KEY] : undefined;
  if (ledger && LEDGER_STATUSES.has(ledger.status)) {
    const ms = ledger.retryAfterMs;
    return { kind: 'ledger', status: ledger.status, ...(Number.isFinite(ms) && ms >= 0 && ms <= 86_400_000 ? { retryAfterMs: ms } : {}) };
  }
  const resultType = isResultType(result?.resultType) ? result.resultType : result?.task ? 'task' : undefined;
  return { kind: 'result', isError: result?.isError === true, ...(resultType ? { resultType } : {}) };
}

/**
 * The outcome of an attempt that threw. `ctx`: `{ tag, aborted, hadSession }` — `aborted` is the caller's
 * signal state (the SDK reports an abort and its own timeout alike, as -32001).
 */
export function errorOutcome(error, ctx) {
  if (ctx.aborted) return { kind: 'aborted', sent: ctx.sent === false ? 'no' : 'maybe' };
  const code = error?.code;
  const name = error?.name ?? error?.constructor?.name;
  if (typeof code === 'number' && (name === 'McpError' || name === 'UrlElicitationRequiredError')) {
    // The SDK's own timeouts carry { timeout } or { maxTotalTimeout } in data; a server's -32001 does not.
    if (code === -32001 && (typeof error.data?.timeout === 'number' || typeof error.data?.maxTotalTimeout === 'number')) {
      return { kind: 'timeout' };
    }
    return { kind: 'jsonrpc_error', code };
  }
  if (name === 'StreamableHTTPError' || (typeof code === 'number' && /^Streamable HTTP error/.test(error?.message ?? ''))) {
    if (Number.isInteger(code) && code >= 100 && code <= 999) {
      const seen = ctx.tag ? takeObserved(ctx.tag) : undefined;
      const out = { kind: 'http', status: code, hadSession: !!ctx.hadSession };
      if (seen?.status === code && seen.retryAfterMs !== undefined) out.retryAfterMs = seen.retryAfterMs;
      return out;
    }
    return { kind: 'network', sent: 'maybe' };
  }
  if (name === 'UnauthorizedError') return { kind: 'http', status: 401, hadSession: !!ctx.hadSession };
  const sys = errorCode(error);
  if (sys && NOT_SENT.has(sys)) return { kind: 'network', sent: 'no' };
  // A browser's bare TypeError, a reset after the request was written, a body cut mid-way: maybe sent.
  return { kind: 'network', sent: 'maybe' };
}

export function typeOptionError(field, expected) {
  return typeError(field, `${field} must be ${expected}`);
}
