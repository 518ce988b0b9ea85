// The six failure-window checks a server author runs before an agent is connected to real accounts.
// Each is one function of the run's context (the tool, its arguments, tenant A's session through the proxy,
// tenant B's when given, the baseline) → { status, reason, evidence? }. What cannot be seen from outside is
// `not_testable`, never `pass`.
import { describe, freshId, fromMessage, inProgress, refused, sameOutcome, succeeded, throttled } from './session.js';
import { FAIL, NOT_TESTABLE, PASS, SKIPPED, result } from './report.js';

/** The baseline did not give two tells-apart results: no business identifier separates a replay from a second write. */
const indistinct = (ctx) =>
  `the tool gave the same result for two different operations (${describe(ctx.baseline.first)}), so a replay cannot be told from a ` +
  'second write from outside; make the tool return the identifier of what it created (a ticket id, a payment id)';

const withId = (ctx, id, args = ctx.args) => ({ ...args, [ctx.idArg]: id });

/** A first call with a fresh id that must succeed for a check to mean anything. */
async function firstCall(ctx, session = ctx.a) {
  const id = freshId();
  const answer = await session.call(ctx.tool, withId(ctx, id));
  return { id, answer, ok: succeeded(answer) };
}

const firstFailed = (answer) => result(NOT_TESTABLE, `the first call with a fresh id did not succeed (${describe(answer)}), so there is no outcome to compare with`);

/** 1. The same id and payload twice → one outcome, the same business identifiers. */
export async function sameIdTwice(ctx) {
  const { id, first } = ctx.baseline;
  const again = await ctx.a.call(ctx.tool, withId(ctx, id));
  const evidence = { operationId: id, first: describe(first), again: describe(again) };
  if (sameOutcome(first, again)) {
    if (!ctx.baseline.distinct) return result(NOT_TESTABLE, `the same answer came back, but ${indistinct(ctx)}`, evidence);
    return result(PASS, `the second call returned the first outcome (${describe(again)})`, evidence);
  }
  if (succeeded(again)) return result(FAIL, `a second write: the same id and input gave ${describe(again)}, the first call gave ${describe(first)}`, evidence);
  return result(FAIL, `the repeat was not answered with the first outcome but with ${describe(again)}: a client retrying a lost answer never learns it`, evidence);
}

/** The changed input for check 2: `--changed-args`, else the first string, number or boolean argument altered. */
export function changedInput(args, idArg, changedArgs) {
  if (changedArgs) return changedArgs;
  for (const [k, v] of Object.entries(args)) {
    if (k === idArg) continue;
    if (typeof v === 'string') return { ...args, [k]: `${v} (changed)` };
    if (typeof v === 'number') return { ...args, [k]: v + 1 };
    if (typeof v === 'boolean') return { ...args, [k]: !v };
  }
  return undefined;
}

/** 2. The same id, changed input → a conflict, not a second write (and the first outcome is kept). */
export async function sameIdChangedInput(ctx) {
  const changed = changedInput(ctx.args, ctx.idArg, ctx.changedArgs);
  if (!changed) return result(NOT_TESTABLE, 'no string, number or boolean argument to change; pass --changed-args');
  const first = await firstCall(ctx);
  if (!first.ok) return firstFailed(first.answer);
  const other = await ctx.a.call(ctx.tool, withId(ctx, first.id, changed));
  const evidence = { operationId: first.id, first: describe(first.answer), changed: describe(other) };
  if (succeeded(other)) {
    if (sameOutcome(other, first.answer)) {
      return result(FAIL, `the changed input was answered with the first result (${describe(other)}): the caller believes its change was applied; it must be told of a conflict`, evidence);
    }
    return result(FAIL, `a second write or an overwrite: the same id with a changed input succeeded with ${describe(other)} (first: ${describe(first.answer)})`, evidence);
  }
  if (!refused(other)) return result(NOT_TESTABLE, `the changed input got ${describe(other)}: neither a conflict nor a result`, evidence);
  const original = await ctx.a.call(ctx.tool, withId(ctx, first.id));
  evidence.original = describe(original);
  if (!sameOutcome(original, first.answer)) {
    return result(FAIL, `after the refused change, the original input with the same id no longer returns the first outcome (${describe(original)}): the record was overwritten`, evidence);
  }
  const how = other.kind === 'result' && other.ledger?.status === 'conflict' ? 'a ledger conflict' : describe(other);
  if (other.kind !== 'result' || other.ledger?.status !== 'conflict') {
    // A refusal that does not say "conflict" may be the changed input's own fault: it must succeed under a fresh id.
    const control = await ctx.a.call(ctx.tool, withId(ctx, freshId(), changed));
    evidence.changedUnderFreshId = describe(control);
    if (!succeeded(control)) {
      return result(NOT_TESTABLE, `the changed input is refused under a fresh id too (${describe(control)}), so its refusal says nothing of the id; pass --changed-args with a valid different input`, evidence);
    }
  }
  if (!ctx.baseline.distinct) return result(NOT_TESTABLE, `the change was refused (${how}), but ${indistinct(ctx)}`, evidence);
  return result(PASS, `refused (${how}); the original id still returns the first outcome`, evidence);
}

/** How many identical calls check 3 sends at once. */
export const CONCURRENT_CALLS = 3;

/** 3. Identical calls at once → one outcome (the others told it is in progress, or the same outcome). */
export async function concurrentCalls(ctx) {
  const id = freshId();
  const args = withId(ctx, id);
  const answers = await Promise.all(Array.from({ length: CONCURRENT_CALLS }, () => ctx.a.call(ctx.tool, args)));
  let after = await ctx.a.call(ctx.tool, args);
  for (let i = 0; i < ctx.settleTries && inProgress(after); i++) {
    await new Promise((r) => setTimeout(r, ctx.settleMs));
    after = await ctx.a.call(ctx.tool, args);
  }
  const evidence = { operationId: id, answers: answers.map(describe), after: describe(after) };
  const outcomes = [...answers.filter(succeeded), ...(succeeded(after) ? [after] : [])];
  const distinct = outcomes.filter((o, i) => outcomes.findIndex((p) => sameOutcome(o, p)) === i);
  if (distinct.length > 1) {
    return result(FAIL, `${distinct.length} different outcomes for one operation id: ${distinct.map(describe).join(' · ')}`, evidence);
  }
  if (distinct.length === 0) return result(NOT_TESTABLE, `no call succeeded (${evidence.answers.join(' · ')}; then ${evidence.after})`, evidence);
  const others = answers.filter((a) => !succeeded(a));
  if (others.some((a) => !refused(a) && !throttled(a))) {
    return result(NOT_TESTABLE, `some of the ${CONCURRENT_CALLS} calls got no usable answer (${evidence.answers.join(' · ')})`, evidence);
  }
  if (!ctx.baseline.distinct) return result(NOT_TESTABLE, `one outcome came back, but ${indistinct(ctx)}`, evidence);
  const said = (a) => (inProgress(a) ? 'it is in progress' : throttled(a) ? `to come back later (HTTP ${a.status})` : 'no');
  const told = [...new Set(others.map(said))].map((w) => `; ${others.filter((a) => said(a) === w).length} told ${w}`).join('');
  return result(PASS, `${CONCURRENT_CALLS} at once → one outcome (${describe(distinct[0])})${told}`, evidence);
}

/** 4. The response cut after the server acted, then a retry with the original id → the original outcome. */
export async function cutResponse(ctx) {
  const parts = [];
  for (const fault of ['drop', 'cut']) {
    const id = freshId();
    const captured = ctx.proxy.arm(fault);
    const seen = await ctx.a.call(ctx.tool, withId(ctx, id));
    const late = setTimeout(ctx.proxy.disarm, ctx.timeoutMs);
    const cap = await captured;
    clearTimeout(late);
    const original = cap.answer ? fromMessage(cap.answer) : undefined;
    const label = fault === 'drop' ? 'closed before the answer' : 'cut mid-answer';
    if (!cap.forwarded) return result(NOT_TESTABLE, `the request could not be forwarded (${cap.error})`);
    if (!succeeded(original)) return result(NOT_TESTABLE, `the server's own answer (${label}) was not a success: ${original ? describe(original) : `HTTP ${cap.status}, no JSON-RPC answer in it${cap.error ? ` (${cap.error})` : ''}`}`);
    const retry = await ctx.a.call(ctx.tool, withId(ctx, id));
    const part = { fault: label, operationId: id, original: describe(original), clientSaw: describe(seen), retry: describe(retry) };
    parts.push(part);
    if (!sameOutcome(original, retry)) {
      const what = succeeded(retry) ? 'a second write' : 'not the original outcome';
      return result(FAIL, `response ${label}, retry with the same id: ${what} (${describe(retry)}; the server had answered ${describe(original)})`, { parts });
    }
  }
  if (!ctx.baseline.distinct) return result(NOT_TESTABLE, `the retries returned the server's first answer, but ${indistinct(ctx)}`, { parts });
  return result(PASS, `closed before the answer and cut mid-answer: each retry returned the server's first answer (${parts[0].original})`, { parts });
}

/** 5. The same id under another tenant's credentials → neither tenant A's result nor an action on A's record. */
export async function otherTenant(ctx) {
  if (!ctx.b) return result(SKIPPED, 'no --other-tenant-header given: the checker has one tenant only');
  const first = await firstCall(ctx);
  if (!first.ok) return firstFailed(first.answer);
  // A's own replay first: a server that does not replay A's operation at all (check 1) tells nothing here of B.
  const control = await ctx.a.call(ctx.tool, withId(ctx, first.id));
  if (!sameOutcome(control, first.answer)) {
    return result(NOT_TESTABLE, `tenant A's own repeat already gave another answer (${describe(control)}; see check 1), so what tenant B's call did to A's record cannot be told`);
  }
  const theirs = await ctx.b.call(ctx.tool, withId(ctx, first.id));
  const again = await ctx.a.call(ctx.tool, withId(ctx, first.id));
  const evidence = { operationId: first.id, tenantA: describe(first.answer), tenantB: describe(theirs), tenantAAgain: describe(again) };
  if (sameOutcome(theirs, first.answer)) {
    if (!ctx.baseline.distinct) return result(NOT_TESTABLE, `tenant B got the same answer as A, but ${indistinct(ctx)}`, evidence);
    return result(FAIL, `tenant B, sending tenant A's operation id, was given tenant A's result (${describe(theirs)})`, evidence);
  }
  if (!sameOutcome(again, first.answer)) {
    return result(FAIL, `after tenant B used the id, tenant A's replay changed (${describe(again)}; was ${describe(first.answer)}): B acted on A's record`, evidence);
  }
  if (!succeeded(theirs) && !refused(theirs)) return result(NOT_TESTABLE, `tenant B's call got ${describe(theirs)}`, evidence);
  if (!ctx.baseline.distinct) return result(NOT_TESTABLE, `tenant B got its own answer, but ${indistinct(ctx)}`, evidence);
  return result(PASS, `tenant B got its own answer (${describe(theirs)}); tenant A's record is unchanged`, evidence);
}

/** 6. A downstream timeout inside the server: only the server's own tests can cause it. */
export function downstreamTimeout() {
  return result(NOT_TESTABLE,
    'a timeout of the server\'s own downstream call (its bank, its database) cannot be caused from outside; test it in the server\'s tests: ' +
      'the record must end unknown (withIdempotency: throw OutcomeUnknown), and a retry with the same id must not run the write again');
}

/** The seed's six, in order: [key, title, run]. */
export const SEED_CHECKS = [
  ['same_id_twice', 'same id, same input, twice → one outcome', sameIdTwice],
  ['same_id_changed_input', 'same id, changed input → a conflict', sameIdChangedInput],
  ['concurrent_calls', `${CONCURRENT_CALLS} identical calls at once → one outcome`, concurrentCalls],
  ['cut_response', 'answer lost after the server acted → retry gets it', cutResponse],
  ['other_tenant', 'same id, another tenant → nothing of tenant A', otherTenant],
  ['downstream_timeout', 'downstream timeout inside the server', downstreamTimeout],
];
