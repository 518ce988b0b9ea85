// What every operation-id journal shares (journal.js, memory-journal.js): an entry's shape and checks, and which
// entries a purge may remove.
import { typeError } from '../errors.js';

export const UNRESOLVED = new Set(['pending', 'unknown']);
/** Whether a journal entry's state is still open (its outcome not known). */
export const unresolved = (entry) => UNRESOLVED.has(entry?.state);

/** Whether `e` may go in a purge at `before`: resolved, and settled at or before it. */
export const purgeable = (e, before) => !UNRESOLVED.has(e.state) && typeof e.settledAt === 'number' && e.settledAt <= before;

export function checkBefore(before) {
  if (typeof before !== 'number' || !Number.isFinite(before)) {
    throw typeError('settledBeforeMs', 'purge takes a time in ms (entries settled at or before it go)');
  }
}

export function checkBegin(e) {
  if (!e || typeof e.operationId !== 'string' || typeof e.tool !== 'string') {
    throw typeError('entry', 'journal entry needs a string operationId and tool');
  }
}

export function cloned(entry) {
  try {
    return structuredClone(entry);
  } catch (error) {
    throw typeError('arguments', `the call's arguments cannot be journaled (${String(error?.message ?? error).slice(0, 120)}): give plain JSON data`, 'not_cloneable');
  }
}

export const entryOf = (e) => ({
  operationId: e.operationId,
  tool: e.tool,
  ...(e.server !== undefined ? { server: e.server } : {}),
  ...(e.intent !== undefined ? { intent: e.intent } : {}),
  ...(e.arguments !== undefined ? { arguments: e.arguments } : {}),
  state: 'pending',
  createdAt: e.createdAt ?? Date.now(),
});
