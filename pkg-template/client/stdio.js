// A stdio server's process as withRetry sees it: whether it exited, whether it said anything since a request
// was written, whether it answers a ping, and how a lost one is ended before a fresh one starts. Observation and
// mechanics only: what a lost process means for a call — re-send it to a fresh process or stop — is the engine's
// (`process_exited` / `process_unresponsive` outcomes → `recover: reinitialize`, through the gate).
//
// The rule for a hang. A timeout alone proves nothing: a slow tool on a live process times out too, and a fresh
// process would only run it again. So a timed-out attempt on a process transport is reported
// `process_unresponsive` only when the process sent no message at all since the request was written (no answer,
// no progress, no notification, no answer to another request) *and* then did not answer a `ping` within the
// attempt's timeout either — every JSON-RPC request gets a response, and a ping (or, from servers of revisions
// without it, a -32601) costs the server nothing. A process that answers anything is alive: its timeout stays a
// timeout, retried on the same process as the engine decides. One ping at a time per process: the calls that
// time out together share it.
import { errorOutcome } from './attempt.js';

/** A process that exited or was found unresponsive gets this long to be gone before a fresh one is connected. */
const END_MS = 5_000;

/** Thrown instead of sending when the transport's process had already exited: nothing was written. */
export const PROCESS_EXITED = 'ERR_MCP_RETRY_PROCESS_EXITED';

const watches = new WeakMap(); // transport → { closed, whenClosed, heard, silentAt, probe }

/**
 * Whether `transport` runs its server as a child process: the MCP SDKs' `StdioClientTransport` (v1 and v2) have
 * a `pid`. Best effort: a transport that hides it is treated as a network transport (no restart).
 */
export function isProcessTransport(transport) {
  try {
    return transport !== null && typeof transport === 'object' && 'pid' in transport && typeof transport.close === 'function';
  } catch {
    return false;
  }
}

/**
 * The watch of a process transport — `closed` (its process exited: the SDK fired `onclose`), `heard` (messages
 * it delivered so far) — made on first use by chaining the transport's `onclose` and `onmessage` (before or after
 * the client set its own: the SDK chains the handlers it finds, and these run first, so a close is seen before
 * the requests it ends are rejected). `undefined` for another transport, or one that cannot be wrapped.
 */
export function watchProcess(transport) {
  if (!isProcessTransport(transport)) return undefined;
  let w = watches.get(transport);
  if (w) return w;
  let closed;
  w = { closed: false, whenClosed: new Promise((r) => (closed = r)), heard: 0, silentAt: -1, probe: undefined };
  try {
    const onclose = transport.onclose;
    const onmessage = transport.onmessage;
    transport.onclose = function onProcessClose(...args) {
      w.closed = true;
      closed();
      return onclose?.apply(this, args);
    };
    transport.onmessage = function onProcessMessage(...args) {
      w.heard++;
      return onmessage?.apply(this, args);
    };
  } catch {
    return undefined; // a frozen transport: not watched
  }
  watches.set(transport, w);
  return w;
}

/** The error a send is refused with when its transport's process had exited (no SDK method was called). */
export function processExitedError() {
  const e = new Error("the MCP server's process had exited; the request was not sent");
  e.code = PROCESS_EXITED;
  return e;
}

/** Whether the process stayed silent since it was found unresponsive (a message since: it is alive). */
export function foundUnresponsive(w) {
  return !!w && !w.closed && w.silentAt === w.heard;
}

/**
 * Asks the process a `ping` within `timeoutMs`, once at a time per process (concurrent callers share it).
 * Resolves to `'answered'` (a result, or any error the server sent — -32601 from a server without `ping` is an
 * answer), `'silent'` (the SDK's own timeout fired), `'closed'` (the process exited meanwhile) or `'unknown'`
 * (no `ping` on this client, or a failure that proves nothing).
 */
function ping(client, w, timeoutMs) {
  if (typeof client.ping !== 'function') return Promise.resolve('unknown');
  w.probe ??= (async () => {
    try {
      await client.ping({ timeout: timeoutMs });
      return 'answered';
    } catch (error) {
      if (w.closed) return 'closed';
      const o = errorOutcome(error, { aborted: false, sent: true });
      return o.kind === 'timeout' ? 'silent' : o.kind === 'jsonrpc_error' ? 'answered' : 'unknown';
    }
  })().finally(() => (w.probe = undefined));
  return w.probe;
}

/**
 * The outcome of an attempt whose request went out on process transport `transport` when the process had
 * delivered `heard` messages (`closedAtEnd`: whether its close had been seen when the attempt failed), refined from
 * the SDK-level `outcome`: `process_exited` (sent `no` for a send refused by `processExitedError`, else `maybe`),
 * `process_unresponsive` (see the rule above; `probeMs` bounds the ping), or `outcome` as it was.
 */
export async function processOutcome(client, { transport, heard, closedAtEnd }, error, outcome, probeMs) {
  const w = watches.get(transport);
  if (!w) return outcome;
  if (error?.code === PROCESS_EXITED) return { kind: 'process_exited', sent: 'no' };
  if (outcome.kind === 'aborted') return outcome;
  if (closedAtEnd) return { kind: 'process_exited', sent: 'maybe' };
  if (outcome.kind !== 'timeout' || w.heard !== heard) return outcome; // it spoke since: alive
  if (foundUnresponsive(w)) return { kind: 'process_unresponsive' };
  if (client.transport !== transport || !(probeMs >= 1)) return outcome;
  const answer = await ping(client, w, probeMs);
  if (answer === 'closed' || w.closed) return { kind: 'process_exited', sent: 'maybe' };
  if (answer !== 'silent' || w.heard !== heard) return outcome;
  w.silentAt = w.heard;
  return { kind: 'process_unresponsive' };
}

const within = (promise, ms) => {
  let timer;
  return Promise.race([promise, new Promise((r) => (timer = setTimeout(r, ms)))]).finally(() => clearTimeout(timer));
};

/**
 * Ends the process of `transport` found unresponsive, before a fresh one is started: SIGKILL (it reads nothing,
 * so a graceful close — stdin closed, then SIGTERM, each after 2 s — would only wait), then its close, so that the
 * client has let go of the transport (`connect` refuses while it holds one). Node only; elsewhere, `close()`.
 */
export async function endUnresponsive(transport) {
  const w = watches.get(transport);
  if (!w || w.closed) return;
  const pid = transport.pid;
  const kill = globalThis.process?.kill;
  try {
    if (typeof pid === 'number' && typeof kill === 'function') kill.call(globalThis.process, pid, 'SIGKILL');
    else await transport.close();
  } catch {
    // already gone
  }
  await within(w.whenClosed, END_MS);
}

/** After `client.close()`: waits (bounded) until the client let go of process transport `transport`. */
export async function letGo(client, transport) {
  const w = watchProcess(transport);
  if (w && client.transport === transport) await within(w.whenClosed, END_MS);
}

/** The stdio part (`withRetry(client, { parts: [stdio] })`): a stdio server's process watched, and a fresh one started
 *  when it is lost. Built into the Node entry; the browser entry has none (a browser runs no processes). */
export const stdio = Object.freeze({ part: 'stdio', watchProcess, processExitedError, foundUnresponsive, processOutcome, endUnresponsive, letGo });
