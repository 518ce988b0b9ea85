// The journal's unresolved entries, told when they pile up. A journal never drops a pending or unknown entry by
// itself (each is a write whose outcome nobody knows yet), so a server that keeps answering `unknown`, or an app
// that never calls `reconcile()`, grows the journal without bound: this says so instead of staying silent. Reads
// the journal's optional `stats()` (MemoryJournal has it) after each keyed call's begin. Telling only: nothing
// here changes a call.

/**
 * `(say, tool) => void` for `journal`, or `undefined` when it counts nothing. Says
 * `{ type: 'journal_backlog', tool, unresolved, threshold }` when the unresolved entries reach the journal's
 * `backlogThreshold`, and again at each further multiple of it (2×, 3×, …); a level is said again only after
 * they fell to half of it (no event per call for a count that hovers at the threshold).
 */
export function backlogWatch(journal) {
  if (typeof journal?.stats !== 'function') return undefined;
  let level = 0; // the highest multiple of the threshold said, while the count stays above half of it
  return (say, tool) => {
    let s;
    try {
      s = journal.stats();
    } catch {
      return; // a journal's own stats that fail tell nothing
    }
    const n = s?.unresolved;
    const t = s?.backlogThreshold;
    if (!Number.isSafeInteger(n) || !Number.isSafeInteger(t) || t < 1) return;
    const at = Math.floor(n / t);
    if (at > level) {
      level = at;
      say({ type: 'journal_backlog', tool, unresolved: n, threshold: t });
    } else if (n * 2 <= level * t) level = at;
  };
}
