// checkServer(url, options): the six failure-window checks and what a client depends on, run against a
// live (staging) MCP server through the checker's own fault proxy on 127.0.0.1. It CALLS THE TOOL FOR REAL,
// several times (writes included): never point it at production.
import { optionError, rangeError } from '../errors.js';
import { STATUS_TOOL_NAME } from '../generated/names.js';
import { startCheckProxy } from './proxy.js';
import { connectAs, describe, freshId, sameOutcome, succeeded } from './session.js';
import { SEED_CHECKS } from './seed-checks.js';
import { CLIENT_CHECKS } from './client-checks.js';
import { NOT_TESTABLE, buildReport, result } from './report.js';
import { mapStrings, redactUrl, redactor, secretsOf } from './redact.js';

export { formatJson, formatTable, STATUSES } from './report.js';

const KNOWN = ['tool', 'args', 'idArg', 'headers', 'otherTenantHeaders', 'changedArgs', 'statusTool', 'timeoutMs', 'settleMs', 'settleTries'];

/** A failure of the run itself (the server unreachable, the tool not listed): `code` says which. */
export class CheckRunError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'CheckRunError';
    this.code = code;
  }
}

const isPlain = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

function headersOption(field, value) {
  if (value === undefined) return {};
  if (!isPlain(value) || Object.values(value).some((v) => typeof v !== 'string')) throw optionError(field, 'an object of header names → string values');
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.toLowerCase(), v]));
}

/** The options, checked: a TypeError/RangeError with `code` and `field` for anything wrong. */
export function readOptions(url, options) {
  let target;
  try {
    target = new URL(url);
  } catch {
    throw optionError('url', 'an http(s) URL of the MCP endpoint');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw optionError('url', 'an http(s) URL of the MCP endpoint');
  if (!isPlain(options)) throw optionError('options', 'an object with at least `tool`');
  for (const k of Object.keys(options)) if (!KNOWN.includes(k)) throw rangeError(k, `unknown option ${k} (known: ${KNOWN.join(', ')})`, 'unknown_option');
  const o = { ...options };
  if (typeof o.tool !== 'string' || !o.tool) throw optionError('tool', 'the name of the tool to check (a write that takes an operation id)');
  o.args = o.args ?? {};
  if (!isPlain(o.args)) throw optionError('args', 'an object of the tool\'s arguments (without the operation id)');
  if (o.changedArgs !== undefined && !isPlain(o.changedArgs)) throw optionError('changedArgs', 'an object of arguments');
  o.idArg = o.idArg ?? 'operation_id';
  if (typeof o.idArg !== 'string' || !o.idArg) throw optionError('idArg', 'the name of the operation-id argument');
  o.statusTool = o.statusTool ?? STATUS_TOOL_NAME;
  if (typeof o.statusTool !== 'string' || !o.statusTool) throw optionError('statusTool', 'the status tool\'s name');
  o.headers = headersOption('headers', o.headers);
  o.otherTenantHeaders = o.otherTenantHeaders === undefined ? undefined : headersOption('otherTenantHeaders', o.otherTenantHeaders);
  for (const [k, d, max] of [['timeoutMs', 10_000, 600_000], ['settleMs', 300, 60_000], ['settleTries', 10, 100]]) {
    o[k] = o[k] ?? d;
    if (typeof o[k] !== 'number' || !Number.isInteger(o[k]) || o[k] < 1 || o[k] > max) throw rangeError(k, `${k} must be a whole number from 1 to ${max}`);
  }
  return { url: target.href, ...o };
}

async function listAll(session) {
  const tools = [];
  let cursor;
  for (let page = 0; page < 100; page++) {
    const res = await session.client.listTools(cursor ? { cursor } : undefined, { timeout: session.timeoutMs });
    tools.push(...res.tools);
    cursor = res.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

async function connect(url, headers, timeoutMs, who) {
  try {
    const s = await connectAs(url, headers, timeoutMs);
    return { ...s, timeoutMs };
  } catch (e) {
    throw new CheckRunError('unreachable', `could not initialize an MCP session as ${who}: ${e?.message ?? e}`);
  }
}

/**
 * Runs every check; resolves to the report ({ checks, counts, ok, tested, cuts }). Rejects only when the run itself
 * cannot start. No credential is in the report or an error: the target is the URL with its userinfo and query
 * values as `***`, and the URL's secrets and the headers' values are hidden wherever a text quotes them.
 */
export async function checkServer(url, options) {
  const o = readOptions(url, options);
  const hide = redactor(secretsOf(o.url, o.headers, o.otherTenantHeaders));
  try {
    return mapStrings(await run(o), hide);
  } catch (e) {
    if (e instanceof CheckRunError) throw new CheckRunError(e.code, hide(e.message));
    if (e instanceof Error) e.message = hide(e.message);
    throw e;
  }
}

async function run(o) {
  const startedAt = new Date().toISOString();
  const proxy = await startCheckProxy(o.url);
  const sessions = [];
  try {
    const a = await connect(proxy.url, o.headers, o.timeoutMs, 'tenant A (--header)');
    sessions.push(a);
    const tools = await listAll(a);
    const toolInfo = tools.find((t) => t.name === o.tool);
    if (!toolInfo) throw new CheckRunError('tool_not_found', `the server lists no tool ${o.tool} (it lists: ${tools.map((t) => t.name).join(', ') || 'none'})`);
    let b;
    if (o.otherTenantHeaders) {
      b = await connect(proxy.url, { ...o.headers, ...o.otherTenantHeaders }, o.timeoutMs, 'tenant B (--other-tenant-header)');
      sessions.push(b);
    }
    const ctx = { ...o, a, b, proxy, toolInfo, toolNames: tools.map((t) => t.name), baseline: await baselineOf(o, a) };
    const checks = [];
    for (const [key, title, run] of [...SEED_CHECKS, ...CLIENT_CHECKS]) {
      const n = checks.length + 1;
      checks.push({ n, key, title, ...(await runOne(ctx, key, run)) });
    }
    return buildReport({ target: redactUrl(o.url), tool: o.tool, checks, cuts: proxy.cuts, startedAt, endedAt: new Date().toISOString() });
  } finally {
    for (const s of sessions) await s.close();
    await proxy.close();
  }
}

// Checks that compare a replay with a first outcome mean nothing when the tool's first call fails.
const NEEDS_SUCCESS = new Set(['same_id_twice', 'status_tool', 'status_tenant_scoped']);

async function runOne(ctx, key, run) {
  if (NEEDS_SUCCESS.has(key) && !ctx.baseline.ok) {
    return result(NOT_TESTABLE, `the tool's first call did not succeed (${describe(ctx.baseline.first)}); check --args`);
  }
  try {
    return await run(ctx);
  } catch (e) {
    return result(NOT_TESTABLE, `the check could not run: ${e?.message ?? e}`);
  }
}

/**
 * The baseline: two operations with the same input and two fresh ids. Their results must differ (a ticket id,
 * a payment id) for a replay to be told from a second write; `distinct` says whether they do.
 */
async function baselineOf(o, a) {
  const id = freshId();
  const first = await a.call(o.tool, { ...o.args, [o.idArg]: id });
  const second = await a.call(o.tool, { ...o.args, [o.idArg]: freshId() });
  const ok = succeeded(first);
  return { id, first, second, ok, distinct: ok && succeeded(second) && !sameOutcome(first, second) };
}
