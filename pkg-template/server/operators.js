// The operators' side of the ledger: purge, release (one record, or many with one reason), and the listings
// of unresolved records. `inner` is the ledger's internals (store, rules, clock, store I/O); the
// OperationLedger methods of the same names call these.
import { optionError as optError, rangeError, typeError } from '../errors.js';
import { checkNowMs } from './stores.js';
import { storedAnswer, wroteAnswer } from './store-common.js';

/**
 * Deletes the resolved records (`succeeded`, `failed`) that expired at or before `nowMs` (default: the
 * ledger's clock) and resolves to how many went. Unresolved records (`pending`, `unknown`) are never
 * deleted, however old: they stay until the reconcile hook or an operator resolves them. Run it on a
 * timer (a Durable Object: `DurableObjectLedgerStore#purgeOnAlarm`); a store without `purge` is a
 * `TypeError` (`field: 'store'`).
 */
export async function purge(inner, nowMs = inner.now()) {
  checkNowMs(nowMs);
  if (typeof inner.store.purge !== 'function') throw optError('store', 'a ledger store with purge(nowMs) to purge');
  return inner.store.purge(nowMs);
}

/**
 * An operator's way out for an unresolved record (`unknown`, or `pending` whose lease ran out) when the
 * reconcile hook cannot tell: after checking by hand that the write did **not** take effect, release it,
 * and the next call with the same key executes. `reason` (required) is kept in the store beside the
 * released record. Resolves to `{ released: true, previousState, record }`; refuses with a `RangeError`
 * (`field: 'key'`) whose `code` is `not_found`, `resolved` (succeeded/failed: replayed, nothing to
 * release), `lease_live` (the handler may be running: wait `retryAfterMs`) or `already_released`.
 */
export async function release(inner, key, options) {
  const reason = options?.reason;
  if (typeof reason !== 'string' || !reason.trim()) {
    throw typeError('reason', 'release needs { reason }: a non-empty string saying how you know the operation did not happen');
  }
  for (let round = 0; round < 4; round++) {
    const now = inner.now();
    const stored = await inner.io('get', key, async () => storedAnswer(await inner.store.get(key)));
    if (!stored) throw refusal('not_found', `there is no ledger record for ${describe(key)}: nothing to release`);
    const r = inner.rules.release(stored.record, now);
    if (r.refused) {
      const state = stored.record.state;
      const why = {
        resolved: `its outcome is recorded (${state}) and is replayed: only an unresolved (pending or unknown) record can be released`,
        lease_live: `its claim is live for ${r.retryAfterMs} ms more: the operation may be running now. Release it after the lease ends`,
        already_released: 'it is already released: the next call executes',
      }[r.refused];
      throw refusal(r.refused, `cannot release ${describe(key)}: ${why}`, { state, ...(r.retryAfterMs !== undefined ? { retryAfterMs: r.retryAfterMs } : {}) });
    }
    const note = JSON.stringify({ released: { reason, previousState: stored.record.state, atMs: now } });
    if (await inner.io('replace', key, async () => wroteAnswer('replace', await inner.store.replace(key, stored.record.version, r.released, note)))) {
      return { released: true, previousState: stored.record.state, record: r.released };
    }
    // The record changed under us (a reconcile, a finish): look again.
  }
  throw refusal('contended', `cannot release ${describe(key)}: the record keeps changing; try again`);
}

/**
 * The unresolved records (`pending`, `unknown`) of `tenant` and/or `action` (both optional), oldest first,
 * at most `limit` (default 100, at most 10,000): `[{ key, record }]`. For operators: what waits for the
 * reconcile hook or a `release`. A store without `unresolved` is a `TypeError` (`field: 'store'`).
 */
export async function unresolved(inner, filter = {}) {
  const f = unresolvedFilter(filter, true);
  if (typeof inner.store.unresolved !== 'function') throw optError('store', 'a ledger store with unresolved() to list unresolved records');
  return inner.io('unresolved', undefined, () => inner.store.unresolved(f));
}

/** How many unresolved records each (tenant, action) holds: `[{ tenant, action, pending, unknown }]`. */
export async function countUnresolved(inner, filter = {}) {
  const f = unresolvedFilter(filter, false);
  if (typeof inner.store.countUnresolved !== 'function') throw optError('store', 'a ledger store with countUnresolved() to count unresolved records');
  return inner.io('countUnresolved', undefined, () => inner.store.countUnresolved(f));
}

/**
 * Releases, with one `reason`, the unresolved records of `tenant` and/or `action` — at most `limit` (default
 * 100) of them, oldest first — after you checked that none of them took effect (a downstream that never
 * received them, an outage window). Each goes through `release` (a live lease is refused, never released).
 * Resolves to `{ released: [key…], refused: [{ key, code }] }`.
 */
export async function releaseAll(inner, filter, { reason } = {}) {
  if (typeof reason !== 'string' || !reason.trim()) {
    throw typeError('reason', 'releaseAll needs { reason }: a non-empty string saying how you know these operations did not happen');
  }
  const released = [];
  const refused = [];
  for (const { key } of await unresolved(inner, filter)) {
    try {
      await release(inner, key, { reason });
      released.push(key);
    } catch (e) {
      if (e?.field !== 'key') throw e;
      refused.push({ key, code: e.code });
    }
  }
  return { released, refused };
}

/** `{ tenant?, action?, limit? }` of the unresolved listings, checked. */
function unresolvedFilter(filter, withLimit) {
  if (filter === null || typeof filter !== 'object') throw typeError('filter', 'the filter is { tenant?, action?, limit? }');
  const { tenant, action, limit = 100 } = filter;
  for (const [field, v] of [['tenant', tenant], ['action', action]]) {
    if (v !== undefined && (typeof v !== 'string' || !v)) throw typeError(field, `${field} must be a non-empty string, or left out for any`);
  }
  if (!withLimit) return { tenant, action };
  if (typeof limit !== 'number') throw typeError('limit', `limit must be a number, not ${typeof limit}`);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw rangeError('limit', `limit must be a whole number from 1 to 10000 (${limit})`);
  return { tenant, action, limit };
}

const describe = (key) => `operation ${key?.operationId} (tenant ${key?.tenant}, action ${key?.action})`;

function refusal(code, message, extra = {}) {
  return Object.assign(rangeError('key', message, code), extra);
}

