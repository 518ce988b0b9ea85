// How one attempt ended, mapped to the engine's outcome vocabulary. Observation only: no decision here.
import { optionError as typeOptionError } from '../errors.js';
import { ATTEMPT_META_KEY, LEDGER_META_KEY, LEDGER_STATUSES, MAX_DURATION_MS, RESULT_TYPES } from '../generated/names.js';
import { ownSignal, releasingWhenDone } from './own-signal.js';
import { SUBREQUEST_BUDGET_SPENT } from './subrequest-brand.js';

/** The `_meta` key that tags each attempt, so `observeFetch` can tell which HTTP response belongs to it. */
export { ATTEMPT_META_KEY };

// Failures that prove the request never left this machine. A socket error is proof only when the failing
// step was `connect` (or the DNS lookup before it): on a reused keep-alive socket Linux reports a stored ICMP
// error (EHOSTUNREACH, ENETUNREACH) on the next read, after the request was written.
const NOT_SENT_AT_CONNECT = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'ENETDOWN', 'EHOSTDOWN']);
const CONNECT_STEPS = new Set(['connect', 'getaddrinfo']);
// Failures that only exist before a request is written: DNS answers, undici's connect timeout, a URL that
// cannot be fetched, a TLS handshake that failed (it precedes the request on its connection).
const NOT_SENT_ALWAYS = new Set([
  // This package's own: thrown by an adapter (mcp-retry-policy/agents) *instead of* calling the SDK, when the
  // connection has no transport — nothing was handed to any client, so nothing can have been sent.
  'ERR_MCP_RETRY_NOT_CONNECTED',
  // This package's own: `SubrequestBudget#fetch` (client/subrequests.js) throws it *instead of* fetching once the
  // invocation's subrequests are spent — the request was never made.
  SUBREQUEST_BUDGET_SPENT,
  'ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'UND_ERR_CONNECT_TIMEOUT', 'ERR_INVALID_URL',
  'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID',
  'SELF_SIGNED_CERT_IN_CHAIN',
]);

// Bounded: at most OBSERVED_MAX, the oldest out first; an entry goes when its attempt reads it.
const observed = new Map(); // attempt tag → { status, retryAfterMs }
const OBSERVED_MAX = 1024;

/** The first `{ code, syscall }` with a string code along the error's cause chain. */
function systemError(error) {
  for (let e = error, depth = 0; e && depth < 4; e = e.cause, depth++) {
    if (typeof e.code === 'string') return { code: e.code, syscall: typeof e.syscall === 'string' ? e.syscall : undefined };
  }
  return undefined;
}

/** Whether a network failure proves the request was not sent (see NOT_SENT_* above). */
export function provablyNotSent(error) {
  const sys = systemError(error);
  if (!sys) return false;
  if (NOT_SENT_ALWAYS.has(sys.code)) return true;
  return NOT_SENT_AT_CONNECT.has(sys.code) && CONNECT_STEPS.has(sys.syscall);
}

/**
 * The JSON-RPC error code in the body of a non-2xx answer, if the body held one. The SDK puts the body text
 * into its StreamableHTTPError message ("Error POSTing to endpoint: <body>"); 2026-07-28 says a client SHOULD
 * inspect it (-32020/-32021/-32022 arrive inside 4xx answers). Only a well-formed JSON-RPC error object counts.
 */
export function bodyErrorCode(message) {
  const code = bodyError(message)?.code;
  return Number.isSafeInteger(code) ? code : undefined;
}

/** The JSON-RPC error object in the body an SDK quotes in its HTTP error's message, or undefined. */
export function bodyError(message) {
  if (typeof message !== 'string') return undefined;
  const at = message.indexOf('{');
  const arr = message.indexOf('[');
  const start = at < 0 ? arr : arr < 0 ? at : Math.min(at, arr);
  if (start < 0 || message.length - start > 65_536) return undefined;
  let body;
  try {
    body = JSON.parse(message.slice(start));
  } catch {
    return undefined;
  }
  const one = Array.isArray(body) ? (body.length === 1 ? body[0] : undefined) : body;
  return one?.jsonrpc === '2.0' && one.error && typeof one.error === 'object' ? one.error : undefined;
}

/** Parses `Retry-After` (delta-seconds or an HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(value, now = Date.now()) {
  if (value == null || value === '') return undefined;
  const s = String(value).trim();
  if (/^\d+$/.test(s)) return Math.min(Number(s) * 1000, MAX_DURATION_MS);
  const at = Date.parse(s);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - now), MAX_DURATION_MS);
}

/**
 * Wraps `fetch` for `StreamableHTTPClientTransport({ fetch })` so that `withRetry` sees what the SDK hides:
 * the HTTP status and `Retry-After` of a refused `tools/call`. It changes nothing about the request but its
 * abort signal: each request gets one of its own, tied to the transport's (own-signal.js), so the transport's
 * shared signal does not collect a listener per request.
 */
export function observeFetch(inner = globalThis.fetch) {
  if (typeof inner !== 'function') throw typeOptionError('fetch', 'a function');
  return async function observedFetch(input, init) {
    const own = ownSignal(init);
    let response;
    try {
      response = await inner(input, own ? own.init : init);
    } catch (e) {
      own?.release();
      throw e;
    }
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
    return own ? releasingWhenDone(response, own.release) : response;
  };
}

function takeObserved(tag) {
  const o = observed.get(tag);
  observed.delete(tag);
  return o;
}

// The v2 SdkHttpError codes its Streamable HTTP transport throws for the answer to a POST (2.4.0: a non-2xx
// answer, a 401 after re-authentication, a 403 after the step-up limit). Its other HTTP codes (the GET stream,
// the session DELETE, version negotiation) never answer a tools/call: they stay "maybe sent".
const POST_HTTP_CODES = new Set(['CLIENT_HTTP_NOT_IMPLEMENTED', 'CLIENT_HTTP_AUTHENTICATION', 'CLIENT_HTTP_FORBIDDEN']);

/** The data of the SDK's own request timeout (v1 McpError -32001, v2 SdkError REQUEST_TIMEOUT). */
function sdkTimeout(data) {
  return typeof data?.timeout === 'number' || typeof data?.maxTotalTimeout === 'number';
}

function isResultType(t) {
  return RESULT_TYPES.includes(t);
}

/** The outcome of an attempt that returned a result (or the server ledger's answer in its place). */
export function resultOutcome(result) {
  const ledger = result?.isError ? result?._meta?.[LEDGER_META_KEY] : undefined;
  if (ledger && LEDGER_STATUSES.includes(ledger.status)) {
    const ms = ledger.retryAfterMs;
    return { kind: 'ledger', status: ledger.status, ...(Number.isFinite(ms) && ms >= 0 && ms <= MAX_DURATION_MS ? { retryAfterMs: ms } : {}) };
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
  // v1 (@modelcontextprotocol/sdk): McpError; v2 (@modelcontextprotocol/client, what Cloudflare `agents` uses):
  // ProtocolError — both are a JSON-RPC error object the server sent.
  if (typeof code === 'number' && (name === 'McpError' || name === 'ProtocolError' || name === 'UrlElicitationRequiredError')) {
    // v1's own timeouts are McpError -32001 with { timeout } or { maxTotalTimeout } in data; a server's -32001 is not.
    if (name === 'McpError' && code === -32001 && sdkTimeout(error.data)) return { kind: 'timeout' };
    return { kind: 'jsonrpc_error', code };
  }
  // v2's own timeout: SdkError('REQUEST_TIMEOUT', "Request timed out", { timeout }) (or { maxTotalTimeout }).
  // The same code without that data is a foreign abort reason: not our timer, so it proves nothing.
  if (name === 'SdkError' && code === 'REQUEST_TIMEOUT' && sdkTimeout(error.data)) return { kind: 'timeout' };
  // v1: StreamableHTTPError(code = status, "Streamable HTTP error: Error POSTing to endpoint: <body>");
  // v2: SdkHttpError(code 'CLIENT_HTTP_…', "Error POSTing to endpoint: <body>", data { status, statusText, text }).
  const status = name === 'SdkHttpError' && POST_HTTP_CODES.has(code) ? error.data?.status
    : name === 'StreamableHTTPError' || (typeof code === 'number' && /^Streamable HTTP error/.test(error?.message ?? '')) ? code
      : undefined;
  if (status !== undefined || name === 'StreamableHTTPError' || name === 'SdkHttpError') {
    if (Number.isInteger(status) && status >= 100 && status <= 999) {
      const seen = ctx.tag ? takeObserved(ctx.tag) : undefined;
      const out = { kind: 'http', status, hadSession: !!ctx.hadSession };
      if (seen?.status === status && seen.retryAfterMs !== undefined) out.retryAfterMs = seen.retryAfterMs;
      const jsonrpcCode = bodyErrorCode(error?.message);
      if (jsonrpcCode !== undefined) out.jsonrpcCode = jsonrpcCode;
      return out;
    }
    return { kind: 'network', sent: 'maybe' };
  }
  if (name === 'UnauthorizedError') return { kind: 'http', status: 401, hadSession: !!ctx.hadSession };
  if (provablyNotSent(error)) return { kind: 'network', sent: 'no' };
  // A browser's bare TypeError, a reset after the request was written, a body cut mid-way: maybe sent.
  return { kind: 'network', sent: 'maybe' };
}

export { typeOptionError };
