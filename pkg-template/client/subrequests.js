// A Worker invocation's outgoing requests, counted. Cloudflare Workers allow a fixed number of subrequests per
// invocation (the limits page: 50 on the free plan, 10,000 on the paid one; Workers for Platforms sets its own)
// and the platform throws once they are spent — so a retry that spends the last one leaves the app unable to
// answer its own request. A `SubrequestBudget` is made per invocation, hands out a `fetch` that counts (give it
// to the MCP transport, and use it for the app's own fetches), and keeps `reserve` requests for the app:
// withRetry tells the engine how much `room` is left before every attempt, and the engine never starts one it
// cannot finish (`subrequest_budget`). Counting only; every decision is the engine's.
import { rangeError, typeError, typeName } from '../errors.js';
import { BUDGETS, SUBREQUEST_BUDGET_SPENT } from './subrequest-brand.js';

export { SUBREQUEST_BUDGET_SPENT };
const MAX_LIMIT = 1_000_000;

function count(v, field, min) {
  if (typeof v !== 'number') throw typeError(field, `${field} must be a number, got ${typeName(v)}`);
  if (!Number.isFinite(v)) throw rangeError(field, `${field} must be finite, got ${v}`, 'not_finite');
  if (!Number.isInteger(v)) throw rangeError(field, `${field} must be a whole number, got ${v}`, 'not_integer');
  if (v < min) throw rangeError(field, `${field} must be at least ${min}, got ${v}`, 'too_small');
  if (v > MAX_LIMIT) throw rangeError(field, `${field} must be at most ${MAX_LIMIT}, got ${v}`, 'too_large');
  return v;
}

export class SubrequestBudget {
  #limit;
  #reserve;
  #spent = 0;

  /**
   * `limit`: the invocation's subrequests (the plan's, or what Workers for Platforms set). `reserve`: how many
   * to keep for the app itself (its own answer's fetches); default 1. `spent`: already used (default 0).
   */
  constructor(options) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw typeError('options', `options must be an object with a limit, got ${typeName(options)}`);
    }
    for (const k of Object.keys(options)) {
      if (k !== 'limit' && k !== 'reserve' && k !== 'spent') throw typeError(k, `${k} is not a known option`, 'unknown_option');
    }
    const { limit, reserve = 1, spent = 0 } = options;
    this.#limit = count(limit, 'limit', 1);
    this.#reserve = count(reserve, 'reserve', 0);
    if (this.#reserve >= this.#limit) throw rangeError('reserve', `reserve must be below limit (${this.#limit}), got ${this.#reserve}`, 'too_large');
    this.#spent = count(spent, 'spent', 0);
    if (this.#spent > this.#limit) throw rangeError('spent', `spent must be at most limit (${this.#limit}), got ${this.#spent}`, 'too_large');
    this.fetch = this.fetch.bind(this);
    BUDGETS.add(this);
  }

  get limit() {
    return this.#limit;
  }

  get reserve() {
    return this.#reserve;
  }

  get spent() {
    return this.#spent;
  }

  /** Requests left in the invocation. */
  get remaining() {
    return this.#limit - this.#spent;
  }

  /** Requests withRetry may still make: what is left, less the app's reserve. */
  get room() {
    return Math.max(0, this.#limit - this.#spent - this.#reserve);
  }

  /** Counts `n` requests the app made some other way (a binding's fetch, a service call). */
  spend(n = 1) {
    count(n, 'n', 0);
    this.#spent = Math.min(this.#limit, this.#spent + n);
    return this.remaining;
  }

  /**
   * `fetch`, counted. With nothing left it does not fetch: it throws an error with `code`
   * `ERR_MCP_RETRY_SUBREQUEST_BUDGET` (the request was never made, so nothing was sent).
   */
  fetch(input, init) {
    if (this.#spent >= this.#limit) {
      const e = new Error(`the invocation's ${this.#limit} subrequests are spent: not sent`);
      e.name = 'SubrequestBudgetError';
      e.code = SUBREQUEST_BUDGET_SPENT;
      return Promise.reject(e);
    }
    this.#spent++;
    return globalThis.fetch(input, init);
  }
}
