// OpenTelemetry for withRetry, optional: the app hands in its own `@opentelemetry/api` module
// (`withRetry(client, { opentelemetry: api })`); without it nothing here runs and nothing is imported, so the
// package has no dependency on it (an optional peer). What is recorded follows the OpenTelemetry semantic
// conventions for MCP (status: Development; open-telemetry/semantic-conventions-genai, docs/gen-ai/mcp.md):
//
// - one span per tool call, `tools/call {tool}` (kind CLIENT): `mcp.method.name`, `gen_ai.tool.name`,
//   `gen_ai.operation.name` = `execute_tool`, `mcp.session.id`, `mcp.protocol.version`, `error.type` when it did
//   not succeed (`tool_error` for an `isError` result), span status ERROR then; and this package's
//   `mcp_retry_policy.*` attributes (status, reason, safety, attempts, operation id);
// - one child span per attempt, the same name and attributes, with `http.request.resend_count` from the second
//   attempt on; its `error.type` is the JSON-RPC code (and `rpc.response.status_code`), the HTTP status, or the
//   classification's cause;
// - a span event `mcp_retry_policy.retry` on the call span for each retry decision (delay, reason, cause, recover);
// - the histogram `mcp.client.operation.duration` (seconds) per attempt (each is one MCP request);
// - the W3C trace context of each attempt in the request's `params._meta` (`traceparent`, `tracestate`,
//   `baggage`, unprefixed, as the conventions and SEP-414 say), through the app's configured propagator.
import { typeOptionError } from './attempt.js';
import { NO_TELEMETRY } from './no-telemetry.js';
// Every telemetry name from the Rust (src/telemetry_names.rs): both faces write the same.
import {
  TEL_ATTEMPTS, TEL_CAUSE, TEL_DELAY_MS, TEL_ERROR_TYPE, TEL_JOURNAL_UNRESOLVED, TEL_METHOD_NAME, TEL_OPERATION_DURATION,
  TEL_OPERATION_ID, TEL_OPERATION_NAME, TEL_PROTOCOL_VERSION, TEL_REASON, TEL_RECOVER, TEL_RESEND_COUNT, TEL_RETRY,
  TEL_RPC_STATUS_CODE, TEL_SAFETY, TEL_SESSION_ID, TEL_STATUS, TEL_TOOL_NAME,
} from '../generated/names.js';

const SCOPE = 'mcp-retry-policy';
const METHOD = 'tools/call';
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60, 120, 300];


/** The telemetry hooks for `api` (the app's `@opentelemetry/api`), or no-ops without it. */
export function telemetryFor(api) {
  if (api === undefined) return NO_TELEMETRY;
  const ok = api !== null && typeof api === 'object' &&
    typeof api.trace?.getTracer === 'function' && typeof api.trace?.setSpan === 'function' &&
    typeof api.metrics?.getMeter === 'function' && typeof api.context?.active === 'function' &&
    typeof api.context?.with === 'function' && typeof api.propagation?.inject === 'function';
  if (!ok) throw typeOptionError('opentelemetry', 'the @opentelemetry/api module (import * as api from \'@opentelemetry/api\')');
  const tracer = api.trace.getTracer(SCOPE);
  const duration = api.metrics.getMeter(SCOPE).createHistogram(TEL_OPERATION_DURATION, {
    unit: 's',
    description: 'The duration of the MCP request as observed on the sender, from the time it was sent until the response is received.',
    advice: { explicitBucketBoundaries: BUCKETS },
  });
  const CLIENT = api.SpanKind?.CLIENT ?? 2;
  const ERROR = api.SpanStatusCode?.ERROR ?? 2;

  return {
    /** A tool call begins: its span. `call` describes it ({ tool, safety, operationId, sessionId, protocolVersion }). */
    call({ tool, safety, operationId, sessionId, protocolVersion }) {
      const base = {
        [TEL_METHOD_NAME]: METHOD,
        [TEL_TOOL_NAME]: tool,
        [TEL_OPERATION_NAME]: 'execute_tool',
        ...(sessionId ? { [TEL_SESSION_ID]: sessionId } : {}),
        ...(protocolVersion ? { [TEL_PROTOCOL_VERSION]: protocolVersion } : {}),
      };
      const parent = api.context.active();
      const span = tracer.startSpan(`${METHOD} ${tool}`, {
        kind: CLIENT,
        attributes: { ...base, [TEL_SAFETY]: safety, ...(operationId ? { [TEL_OPERATION_ID]: operationId } : {}) },
      }, parent);
      const inCall = api.trace.setSpan(parent, span);
      let lastErrorType;
      return {
        /** Attempt `n` (1-based): its span, the trace context for `params._meta`, and a runner in its context. */
        attempt(n) {
          const attempt = tracer.startSpan(`${METHOD} ${tool}`, {
            kind: CLIENT,
            attributes: { ...base, ...(n > 1 ? { [TEL_RESEND_COUNT]: n - 1 } : {}) },
          }, inCall);
          const ctx = api.trace.setSpan(inCall, attempt);
          const meta = {};
          api.propagation.inject(ctx, meta, { set: (carrier, key, value) => { carrier[key] = String(value); } });
          return {
            meta,
            run: (f) => api.context.with(ctx, f),
            /** How the attempt ended (the engine's outcome and classification) and how long it took. */
            end(outcome, classification, durationMs) {
              const errorType = attemptErrorType(outcome, classification);
              if (errorType) {
                attempt.setAttribute(TEL_ERROR_TYPE, errorType);
                if (outcome?.kind === 'jsonrpc_error') attempt.setAttribute(TEL_RPC_STATUS_CODE, String(outcome.code));
                attempt.setStatus({ code: ERROR, ...(classification?.cause ? { message: classification.cause } : {}) });
                lastErrorType = errorType;
              }
              duration.record(durationMs / 1000, { ...withoutSession(base), ...(errorType ? { [TEL_ERROR_TYPE]: errorType } : {}) });
              attempt.end();
            },
          };
        },
        /** The engine decided to retry: an event on the call span. */
        retry({ delayMs, reason, recover }, cause) {
          span.addEvent(TEL_RETRY, {
            [TEL_DELAY_MS]: delayMs,
            [TEL_REASON]: reason,
            ...(cause ? { [TEL_CAUSE]: cause } : {}),
            ...(recover ? { [TEL_RECOVER]: recover } : {}),
          });
        },
        /** The call's outcome (a CallOutcome). */
        end(outcome) {
          span.setAttributes({
            [TEL_STATUS]: outcome.status,
            [TEL_REASON]: outcome.reason,
            [TEL_ATTEMPTS]: outcome.attempts.length,
          });
          // Not an error: a success, and a write still in progress (pending).
          if (outcome.status !== 'succeeded' && outcome.status !== 'pending') {
            const errorType = outcome.status === 'tool_error' ? 'tool_error' : lastErrorType ?? outcome.reason;
            span.setAttribute(TEL_ERROR_TYPE, errorType);
            span.setStatus({ code: ERROR, message: outcome.message });
          }
          span.end();
        },
        /** The call threw instead of answering (a journal that failed, say). */
        fail(error) {
          span.setAttribute(TEL_ERROR_TYPE, error?.name ?? '_OTHER');
          span.setStatus({ code: ERROR, message: String(error?.message ?? error) });
          span.end();
        },
      };
    },
  };
}

// The journals' unresolved entries, one gauge per `@opentelemetry/api` module: api → { gauge, refs, seen }.
// Weak on both sides — a journal is held by a WeakRef and pruned once collected, and the entry goes with the
// module — so many wrappers (one per agent, say) never keep a journal alive or grow this.
const journalGauges = new WeakMap();

/**
 * Observes `mcp_retry_policy.journal.unresolved` — the pending and unknown entries of every live journal that
 * counts them (`stats()`, as MemoryJournal does), summed, each journal once however many wrappers share it.
 * Nothing without `api`, a journal that counts, or a meter with observable gauges.
 */
export function watchJournal(api, journal) {
  if (api === undefined || typeof journal?.stats !== 'function') return;
  const meter = api.metrics.getMeter(SCOPE);
  if (typeof meter.createObservableGauge !== 'function') return;
  let g = journalGauges.get(api);
  if (!g) {
    const gauge = meter.createObservableGauge(TEL_JOURNAL_UNRESOLVED, {
      unit: '{entry}',
      description: 'Operation-id journal entries whose outcome is not known (pending or unknown: never forgotten, waiting for resolve or reconcile), in this process.',
    });
    g = { refs: new Set(), seen: new WeakSet() };
    gauge.addCallback((result) => {
      let n = 0;
      for (const ref of g.refs) {
        const j = ref.deref();
        if (!j) {
          g.refs.delete(ref); // collected: bounded by the live journals
          continue;
        }
        try {
          const u = j.stats()?.unresolved;
          if (Number.isSafeInteger(u) && u >= 0) n += u;
        } catch {
          // A journal's stats that fail add nothing.
        }
      }
      result.observe(n);
    });
    journalGauges.set(api, g);
  }
  if (g.seen.has(journal)) return;
  g.seen.add(journal);
  g.refs.add(new WeakRef(journal));
}

/** The attempt's `error.type`: none for a clean result; `tool_error`; the JSON-RPC code; the HTTP status; else the cause. */
function attemptErrorType(outcome, classification) {
  switch (outcome?.kind) {
    case 'result':
      return outcome.isError ? 'tool_error' : undefined;
    case 'jsonrpc_error':
      return String(outcome.code);
    case 'http':
      return String(outcome.status);
    default:
      return classification?.cause ?? outcome?.kind ?? '_OTHER';
  }
}

// The session id is high-cardinality: the conventions put it on spans, not on metrics.
function withoutSession(attributes) {
  const { [TEL_SESSION_ID]: _, ...rest } = attributes;
  return rest;
}

/** The telemetry part (`withRetry(client, { parts: [telemetry] })`): needed for `opentelemetry` from the browser entry. */
export const telemetry = Object.freeze({ part: 'telemetry', telemetryFor, watchJournal });
