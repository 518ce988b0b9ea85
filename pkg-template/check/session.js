// How the checker speaks to the server under test: the MCP TypeScript SDK's own client over Streamable HTTP
// (through the checker's proxy), one client per tenant's headers; every answer turned into one shape, and the
// comparison the checks make between two answers (the tool's business identifiers: its structuredContent,
// else its content).
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { LEDGER_META_KEY } from '../generated/names.js';

/** A fresh operation id for one check's intent: a plain UUID (what servers that validate the id's form accept). */
export const freshId = () => randomUUID();

/**
 * The checker's fetch: it follows no redirect (a 3xx is the request's answer). Followed, a redirect to another
 * origin would carry the user's `--header` values (credentials) there. The SDK's transport, given it, still
 * follows a redirect within the origin it speaks to (its `same-origin` policy): the proxy's, back to the server.
 */
export const noRedirectFetch = (url, init) => fetch(url, { ...init, redirect: 'manual' });

/**
 * Connects one MCP client to `url` sending `headers` on every request; resolves to { call(name, args) →
 * Promise<Answer>, request(method, params), sessionId, protocolVersion, close() }.
 */
export async function connectAs(url, headers, timeoutMs) {
  const client = new Client({ name: 'mcp-retry-policy-check', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers }, fetch: noRedirectFetch });
  await client.connect(transport, { timeout: timeoutMs });
  return {
    client,
    sessionId: transport.sessionId,
    protocolVersion: transport.protocolVersion,
    call: (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs }).then(fromResult, fromError),
    listTools: () => client.listTools(undefined, { timeout: timeoutMs }),
    close: () => client.close().catch(() => {}),
  };
}

/**
 * One answer, whatever it was:
 *   { kind: 'result', isError, content, structuredContent, ledger } — the tool (or the server's ledger) answered;
 *   { kind: 'rpc_error', code, message } — a JSON-RPC error; { kind: 'http_error', status, message };
 *   { kind: 'no_answer', message } — the connection broke or the client's timeout passed.
 */
export function fromResult(result) {
  return {
    kind: 'result',
    isError: result?.isError === true,
    content: result?.content,
    structuredContent: result?.structuredContent,
    ledger: result?._meta?.[LEDGER_META_KEY],
  };
}

export function fromError(error) {
  if (error instanceof McpError && error.code !== ErrorCode.RequestTimeout && error.code !== ErrorCode.ConnectionClosed) {
    return { kind: 'rpc_error', code: error.code, message: error.message };
  }
  if (error instanceof StreamableHTTPError && typeof error.code === 'number' && error.code >= 400) {
    return { kind: 'http_error', status: error.code, message: error.message };
  }
  return { kind: 'no_answer', message: error?.message ?? String(error) };
}

/** A JSON-RPC response message (what the proxy kept of an answer the client never read) → an Answer. */
export function fromMessage(message) {
  if (!message) return undefined;
  if (message.error) return { kind: 'rpc_error', code: message.error.code, message: message.error.message };
  return fromResult(message.result);
}

/** A success: the tool answered without `isError`. */
export const succeeded = (a) => a?.kind === 'result' && !a.isError;

/** A refusal: an `isError` result or a JSON-RPC error (the server said no; no new business result). */
export const refused = (a) => (a?.kind === 'result' && a.isError) || a?.kind === 'rpc_error';

/** Throttled: HTTP 429 or 503 (nothing done; come back later). */
export const throttled = (a) => a?.kind === 'http_error' && (a.status === 429 || a.status === 503);

/** The ledger's "still running" answer (withIdempotency's `in_progress`). */
export const inProgress = (a) => a?.kind === 'result' && a.ledger?.status === 'in_progress';

/** What a caller keeps of a result: its structuredContent, else its content. */
export const identifiers = (a) => (a?.structuredContent !== undefined ? a.structuredContent : a?.content);

/** The same outcome: both successes (or both tool errors) with the same business identifiers. */
export const sameOutcome = (a, b) =>
  a?.kind === 'result' && b?.kind === 'result' && a.isError === b.isError && isDeepStrictEqual(identifiers(a), identifiers(b));

/** A short, one-line description of an answer for a report's reason. */
export function describe(a) {
  if (!a) return 'nothing';
  switch (a.kind) {
    case 'result': {
      const what = a.ledger?.status ? `ledger ${a.ledger.status}` : a.isError ? 'tool error' : 'result';
      const said = a.isError && a.structuredContent === undefined ? a.content?.find?.((c) => c?.type === 'text')?.text : undefined;
      return `${what} ${said !== undefined ? JSON.stringify(clip(said, 70)) : clip(JSON.stringify(identifiers(a)) ?? '')}`;
    }
    case 'rpc_error':
      return `JSON-RPC error ${a.code} (${clip(a.message)})`;
    case 'http_error':
      return `HTTP ${a.status}`;
    default:
      return `no answer (${clip(a.message)})`;
  }
}

export function clip(text, max = 90) {
  const s = String(text ?? '').replace(/\s+/g, ' ');
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
