// The ledger's OpenTelemetry instruments, made when a ledger is given `opentelemetry` (the @opentelemetry/api
// module): the answer and incident counters, and the gauge of unresolved records. The gauge is read from the
// store when the SDK collects — one `countUnresolved()` query, its answer kept `unresolvedCacheMs` (default
// 5 s) so that however many readers collect however often, the store is asked at most once per that period.
// Its attributes are the action and the state, not the tenant: one series per tenant would grow with the
// tenants (a flood from fresh tokens would make a series each); `countUnresolved({ tenant })` names them.
import { optionError as optError } from '../errors.js';
import {
  RECORD_PENDING, RECORD_UNKNOWN, TEL_LEDGER_ACTION, TEL_LEDGER_ANSWERS, TEL_LEDGER_INCIDENTS, TEL_LEDGER_STATE, TEL_LEDGER_UNRESOLVED,
} from '../generated/names.js';

const ACTION = TEL_LEDGER_ACTION;
const STATE = TEL_LEDGER_STATE;
const STATES = [RECORD_PENDING, RECORD_UNKNOWN];

/** The default, and the bounds, of `unresolvedCacheMs`. */
export const UNRESOLVED_CACHE_MS = 5_000;
const MAX_CACHE_MS = 3_600_000;

/** `unresolvedCacheMs`, checked: a whole number of ms from 0 (ask the store on every collection) to an hour. */
export function checkUnresolvedCacheMs(ms) {
  if (ms === undefined) return UNRESOLVED_CACHE_MS;
  if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > MAX_CACHE_MS) {
    throw optError('unresolvedCacheMs', `a whole number of milliseconds from 0 to ${MAX_CACHE_MS}`);
  }
  return ms;
}

/**
 * The instruments of one ledger: `{ answers, incidents, gauge }` (counters; `gauge` the state the unresolved
 * gauge reads, which the ledger keeps — its callback holds it weakly, and goes when the ledger is collected).
 * `inner` is the ledger's internals (store, clock, store I/O), `actions` its registered actions.
 */
export function ledgerInstruments(opentelemetry, inner, actions, cacheMs) {
  const meter = opentelemetry.metrics.getMeter('mcp-retry-policy');
  const out = {
    answers: meter.createCounter(TEL_LEDGER_ANSWERS, {
      unit: '{answer}',
      description: 'What the operation ledger answered a keyed write: execute, replay, conflict, in_progress, unknown, rejected, rolled_back.',
    }),
    incidents: meter.createCounter(TEL_LEDGER_INCIDENTS, {
      unit: '{incident}',
      description: 'What an operator must look at: store_error, lease_lost, late_finish, result_not_stored, handler_error, reconcile_error.',
    }),
  };
  if (typeof inner.store.countUnresolved !== 'function' || typeof meter.createObservableGauge !== 'function') return out;
  const gauge = meter.createObservableGauge(TEL_LEDGER_UNRESOLVED, {
    unit: '{record}',
    description: 'Unresolved operation-ledger records (pending or unknown: waiting for the reconcile hook or an operator), by action and state. Per tenant: OperationLedger.countUnresolved().',
  });
  out.gauge = { read: cachedCounts(inner, cacheMs), actions };
  const ref = new WeakRef(out.gauge);
  const observe = async (result) => {
    const state = ref.deref();
    if (!state) {
      gauge.removeCallback(observe); // the ledger is gone
      return;
    }
    const rows = await state.read();
    if (!rows) return; // the store failed (a store_error was told): no value rather than a stale one
    for (const [action, counts] of byAction(rows, state.actions)) {
      for (const s of STATES) result.observe(counts[s], { [ACTION]: action, [STATE]: s });
    }
  };
  gauge.addCallback(observe);
  return out;
}

/** `countUnresolved()` behind a cache of `cacheMs` on the ledger's clock; concurrent reads share one query. */
function cachedCounts(inner, cacheMs) {
  let at = -Infinity;
  let last;
  let asking;
  return () => {
    const now = inner.now();
    if (asking) return asking;
    if (now >= at && now - at < cacheMs) return last;
    asking = inner.io('countUnresolved', undefined, () => inner.store.countUnresolved({}))
      .then((rows) => (Array.isArray(rows) ? rows : null), () => null)
      .then((rows) => {
        at = now; // a failure is cached too: a store that is down is not asked on every collection
        last = rows;
        asking = undefined;
        return rows;
      });
    return asking;
  };
}

/** `[{ tenant, action, pending, unknown }]` summed over tenants, with a zero for every registered action. */
function byAction(rows, actions) {
  const out = new Map();
  for (const a of actions) out.set(a, { [RECORD_PENDING]: 0, [RECORD_UNKNOWN]: 0 });
  for (const r of rows) {
    const c = out.get(r.action) ?? { [RECORD_PENDING]: 0, [RECORD_UNKNOWN]: 0 };
    c[RECORD_PENDING] += Number(r.pending) || 0;
    c[RECORD_UNKNOWN] += Number(r.unknown) || 0;
    out.set(r.action, c);
  }
  return out;
}
