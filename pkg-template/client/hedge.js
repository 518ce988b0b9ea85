// Hedged reads — one attempt that may race copies of itself. While the attempt has no answer after the
// engine's `hedgeAfterMs`, the engine is asked for a hedge (it alone says yes: read_only / idempotent only,
// maxHedges, the deadline, the breaker, the shared retry budget, the concurrency cap); each copy is one more
// runAttempt with its own tag and its own abort. The first copy that the tool answered wins; the others are
// aborted (the SDK then sends `notifications/cancelled` for each). A copy that failed waits for the others;
// when none answers, the engine says which failed copy stands for the attempt (the one that says the most may
// have been delivered: a copy refused at connect never hides one that may have run). The engine is told how
// each hedge ended. A hedge is paid from the call's subrequest room, which the engine counted from the
// attempt's admission; `engine.hedge` is also handed the invocation's room now (`{ subrequests }`, as `admit`).
import { standingCopy } from './engine-hedge.js';
import { subrequestRoom } from './options.js';
import { tie } from './own-signal.js';
import { runAttempt } from './run-attempt.js';

// The engine's hedging is set once, when it is made: read it once per engine, not once per attempt. Weak: goes
// with the engine.
const settings = new WeakMap();
function hedgingOf(engine) {
  if (!settings.has(engine)) settings.set(engine, engine.hedging);
  return settings.get(engine);
}

/** A copy of the run whose requests go out with `signal` (the caller's, linked), for one copy of the attempt. */
function copyOf(run, signal) {
  return { ...run, requestOptions: { ...run.requestOptions, signal } };
}

/**
 * Runs one attempt (runAttempt's arguments), hedged when the engine has hedging on and the attempt is a plain
 * send (no recovery step first). Resolves like runAttempt to `{ outcome, result?, error? }`: the winner's.
 */
export function runHedged(ctx, run, args, { tool, safety, say }) {
  const hedging = args.recover ? undefined : hedgingOf(ctx.engine);
  if (!hedging) return runAttempt(ctx, run, args);
  const { engine, now } = ctx;
  const caller = run.requestOptions.signal;
  return new Promise((resolve) => {
    const copies = [];
    const failed = []; // the failed copies' ends, in the order they ended
    let pending = 0;
    let timer;
    let over = false;
    let untieCaller;
    const finish = (sent, winner) => {
      over = true;
      clearTimeout(timer);
      untieCaller?.();
      for (const c of copies) {
        if (c !== winner && !c.done) c.controller.abort(new Error('another copy of this hedged read answered first'));
        if (c.hedge && !c.ended) {
          c.ended = true;
          engine.hedgeEnded(run.state, c === winner);
          say({ type: 'hedge', tool, hedge: c.hedge, phase: c === winner ? 'won' : 'lost' });
        }
      }
      resolve(sent);
    };
    const launch = (hedge, timeoutMs) => {
      const controller = new AbortController();
      if (caller?.aborted) controller.abort(caller.reason);
      const c = { hedge, controller, done: false, ended: false };
      copies.push(c);
      pending++;
      const admission = timeoutMs === undefined ? args.admission : { ...args.admission, timeoutMs };
      runAttempt(ctx, copyOf(run, controller.signal), { ...args, admission }).then((sent) => {
        c.done = true;
        pending--;
        if (over) return;
        if (sent.result !== undefined) return finish(sent, c);
        // This copy failed: the others may still answer. A hedge that failed frees its slot now.
        if (c.hedge && !c.ended) {
          c.ended = true;
          engine.hedgeEnded(run.state, false);
          say({ type: 'hedge', tool, hedge: c.hedge, phase: 'failed' });
        }
        failed.push(sent);
        if (pending === 0) finish(failed.length > 1 ? failed[standingCopy(engine, failed.map((f) => f.outcome))] : sent, undefined);
      }).catch((error) => {
        // runAttempt returns its failures as outcomes; this is a bug of ours, not the server's: end the attempt.
        if (!over) finish({ outcome: { kind: 'network', sent: 'maybe' }, error }, undefined);
      });
    };
    const ask = () => {
      if (over) return;
      let h;
      try {
        h = engine.hedge(run.state, safety, now(), subrequestRoom(ctx.options));
      } catch {
        return; // the call's state is gone (it cannot be while the attempt runs): no copy, and no crash in a timer
      }
      if (!h.admitted) {
        say({ type: 'hedge', tool, phase: 'refused', refusal: h.refusal });
        return;
      }
      const n = copies.length;
      say({ type: 'hedge', tool, hedge: n, phase: 'sent', afterMs: now() - args.started });
      launch(n, h.timeoutMs);
      timer = setTimeout(ask, hedging.hedgeAfterMs);
    };
    if (caller && !caller.aborted) {
      // One listener on the caller's signal for all the calls it is given to (own-signal.js).
      untieCaller = tie(caller, () => {
        clearTimeout(timer);
        for (const c of copies) c.controller.abort(caller.reason);
      });
    }
    launch(0, undefined);
    timer = setTimeout(ask, hedging.hedgeAfterMs);
  });
}

/** The hedging part (`withRetry(client, { parts: [hedging] })`): needed for `policy.hedgeAfterMs` from the browser entry. */
export const hedging = Object.freeze({ part: 'hedging', runHedged });
