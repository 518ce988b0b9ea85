// What a client depends on besides the six windows: the tool's annotations against what it was seen to do,
// the declared operation-id argument, the status tool (present, answering, tenant-scoped), the answer to a
// lost session, and `Retry-After` when the server throttles. Each: ctx → { status, reason, evidence? }.
import { OPERATION_STATUSES } from '../generated/names.js';
import { clip, describe, freshId, fromResult, identifiers, noRedirectFetch, sameOutcome } from './session.js';
import { INVALID_STATUS_HEADER } from './proxy.js';
import { FAIL, NOT_TESTABLE, PASS, SKIPPED, result } from './report.js';

/** The tool's input schema declares the operation-id argument (an SDK server strips undeclared arguments). */
export function idArgument(ctx) {
  const props = ctx.toolInfo.inputSchema?.properties;
  if (props && Object.hasOwn(props, ctx.idArg)) return result(PASS, `the input schema declares ${ctx.idArg}`);
  return result(FAIL,
    `the input schema does not declare ${ctx.idArg}: an SDK server drops undeclared arguments before the handler sees them, ` +
      'and a client (withRetry) treats the tool as unsafe to retry; declare it (or pass --id-arg with its name)');
}

/** The annotations against what the tool was seen to do (the baseline: two operations, same input). */
export function annotations(ctx) {
  const a = ctx.toolInfo.annotations ?? {};
  const said = `readOnlyHint ${a.readOnlyHint ?? '(absent)'}, idempotentHint ${a.idempotentHint ?? '(absent)'}, destructiveHint ${a.destructiveHint ?? '(absent)'}`;
  const evidence = { annotations: a, first: describe(ctx.baseline.first), second: describe(ctx.baseline.second) };
  if (a.readOnlyHint === true) {
    if (ctx.baseline.distinct) {
      return result(FAIL, `annotated readOnlyHint: true, but two operations with the same input made two different results (${evidence.first}; ${evidence.second}): ` +
        'a client re-sends a read-only tool freely, with no operation id', evidence);
    }
    return result(NOT_TESTABLE, `annotated readOnlyHint: true; whether it writes cannot be seen from its results (${said})`, evidence);
  }
  return result(PASS, `annotated as a write (${said}): a client re-sends it only with the same ${ctx.idArg}`, evidence);
}

/** The status tool: listed, and answering for an operation that succeeded with its recorded result. */
export async function statusTool(ctx) {
  if (!ctx.toolNames.includes(ctx.statusTool)) {
    return result(FAIL,
      `no ${ctx.statusTool} tool: a client whose write ended unknown (a lost answer) cannot ask what happened without sending the write again ` +
        '(registerStatusTool adds it; --status-tool names another)');
  }
  const { id, first } = ctx.baseline;
  const known = await askStatus(ctx, ctx.a, id);
  const unused = await askStatus(ctx, ctx.a, freshId());
  const evidence = { operationId: id, known: known.text, unused: unused.text };
  if (!known.sc) return result(FAIL, `asked about an operation that succeeded, ${ctx.statusTool} gave no status a client can read (${known.text})`, evidence);
  if (known.sc.status !== 'succeeded') return result(FAIL, `asked about an operation that succeeded, ${ctx.statusTool} said ${known.sc.status}`, evidence);
  if (!sameOutcome(fromResult(known.sc.result), first)) {
    return result(FAIL, `${ctx.statusTool} says succeeded, but its recorded result (${clip(JSON.stringify(identifiers(fromResult(known.sc.result))))}) is not the call's (${describe(first)})`, evidence);
  }
  if (unused.sc?.status !== 'not_found') return result(FAIL, `asked about an id never used, ${ctx.statusTool} said ${unused.text}, not not_found`, evidence);
  return result(PASS, `${ctx.statusTool} answers succeeded with the recorded result, and not_found for an unused id`, evidence);
}

/** The status tool answers tenant B about tenant A's operation as about an unused id. */
export async function statusTenantScoped(ctx) {
  if (!ctx.b) return result(SKIPPED, 'no --other-tenant-header given: one tenant only');
  if (!ctx.toolNames.includes(ctx.statusTool)) return result(SKIPPED, `no ${ctx.statusTool} tool to ask`);
  const asked = await askStatus(ctx, ctx.b, ctx.baseline.id);
  const evidence = { operationId: ctx.baseline.id, tenantB: asked.text };
  if (asked.sc?.status === 'not_found' && asked.sc.result === undefined) return result(PASS, 'tenant B asking about tenant A\'s operation reads not_found', evidence);
  if (asked.sc?.result !== undefined || asked.sc?.status === 'succeeded') {
    return result(FAIL, `tenant B asking about tenant A's operation was told ${asked.text}: the status tool reads across tenants`, evidence);
  }
  return result(FAIL, `tenant B asking about tenant A's operation was told ${asked.text}, not not_found (it tells B the id is in use)`, evidence);
}

async function askStatus(ctx, session, operationId) {
  const answer = await session.call(ctx.statusTool, { action: ctx.tool, operation_id: operationId });
  const sc = answer.kind === 'result' && !answer.isError ? answer.structuredContent : undefined;
  const readable = sc && OPERATION_STATUSES.includes(sc.status) && sc.operation_id === operationId ? sc : undefined;
  return { sc: readable, text: readable ? readable.status : describe(answer) };
}

/** A request on an unknown session id: the spec's answer is 404, which a client reads as "initialize again". */
export async function lostSession(ctx) {
  if (!ctx.a.sessionId) return result(SKIPPED, 'the server gave no Mcp-Session-Id at initialize (stateless): there is no session to lose');
  let status;
  let body;
  let res;
  try {
    // Through the proxy (its cap on an answer, its 502 for a status that is not one; the URL without userinfo), and
    // no redirect followed: a redirect is the answer, never a request of the user's headers to another origin.
    res = await noRedirectFetch(ctx.proxy.url, {
      method: 'POST',
      headers: {
        ...ctx.headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': `lost-${freshId()}`,
        ...(ctx.a.protocolVersion ? { 'mcp-protocol-version': ctx.a.protocolVersion } : {}),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      signal: AbortSignal.timeout(ctx.timeoutMs),
    });
    status = res.status;
    body = await bodyStart(res);
  } catch (e) {
    return result(NOT_TESTABLE, `the request on an unknown session got no answer (${clip(e?.message)})`);
  }
  const evidence = { status, body: clip(body, 200) };
  const invalid = res.headers.get(INVALID_STATUS_HEADER);
  if (invalid) return result(FAIL, `HTTP ${invalid}, not a valid status, to a request on an unknown session id: the spec says 404, which is how a client knows to initialize again`, { status: invalid });
  if (status >= 300 && status < 400) {
    const to = originOf(res.headers.get('location'), ctx.url);
    return result(FAIL, `HTTP ${status}, a redirect${to ? ` to ${to}` : ''} (not followed: the checker follows no redirect), to a request on an unknown session id: the spec says 404, which is how a client knows to initialize again`, evidence);
  }
  let code;
  try {
    code = JSON.parse(body)?.error?.code;
  } catch {
    code = undefined;
  }
  if (status === 404) return result(PASS, `HTTP 404 (body ${clip(body, 60)}): a client initializes a new session`, evidence);
  if (status === 400 && code === -32000) {
    return result(PASS, 'HTTP 400 with JSON-RPC -32000 (not the spec\'s 404; withRetry reads it as a lost session too, other clients may not)', evidence);
  }
  return result(FAIL, `HTTP ${status} (${clip(body, 60)}) to a request on an unknown session id: the spec says 404, which is how a client knows to initialize again`, evidence);
}

/** The first 64 KiB of an answer's body, as text (what the lost-session check reads of it; the rest is not read). */
async function bodyStart(res, max = 64 * 1024) {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const parts = [];
  let bytes = 0;
  try {
    while (bytes < max) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      bytes += value.length;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return Buffer.concat(parts).subarray(0, max).toString('utf8');
}

/** A redirect's target as `another origin` or `this origin` (never its path or query: they may carry secrets). */
function originOf(location, base) {
  try {
    return new URL(location, base).origin === new URL(base).origin ? 'the same origin' : 'another origin';
  } catch {
    return undefined;
  }
}

/** `Retry-After` on every 429/503 the server sent during the run (none sent: not observable). */
export function retryAfter(ctx) {
  const throttled = ctx.proxy.responses.filter((r) => r.status === 429 || r.status === 503);
  if (!throttled.length) {
    return result(NOT_TESTABLE, `the server sent no 429 or 503 during the run (${ctx.proxy.responses.length} responses); the checker does not flood a server to find out`);
  }
  const without = throttled.filter((r) => r.retryAfter === undefined);
  const evidence = { throttled: throttled.map((r) => `${r.method} ${r.status} retry-after ${r.retryAfter ?? '(none)'}`) };
  if (without.length) return result(FAIL, `${without.length} of ${throttled.length} throttling answers (429/503) without Retry-After: clients can only guess when to come back`, evidence);
  return result(PASS, `every 429/503 carried Retry-After (${throttled.length})`, evidence);
}

/** The client-dependence checks, in order: [key, title, run]. */
export const CLIENT_CHECKS = [
  ['id_argument', 'operation-id argument declared', idArgument],
  ['annotations', 'annotations vs what the tool did', annotations],
  ['status_tool', 'status tool present and answering', statusTool],
  ['status_tenant_scoped', 'status tool tenant-scoped', statusTenantScoped],
  ['lost_session', 'lost session answered 404', lostSession],
  ['retry_after', 'Retry-After when throttling', retryAfter],
];
