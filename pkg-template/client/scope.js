// Which server a journal entry belongs to. One journal may be shared by the wrappers of several servers (the
// Agents adapter keeps one per agent): an entry is bound to the server its write went to, so that reconcile()
// on server B never asks B about A's operation (and believes B's "not found" or "not done"), and a call to B
// never reuses an operation id A's intent made. Mechanics only: nothing here decides a status.
import { typeOptionError } from './attempt.js';

/**
 * The identity of the server `client` talks to: `option` when the app gives one (`withRetry({ server })`),
 * else the Streamable HTTP endpoint's origin and path (no query: it may hold a token), else the name the server
 * gave in `initialize`, else `"default"`.
 */
export function serverIdentity(client, option) {
  if (option !== undefined) return option;
  const t = client.transport;
  const url = t?._url ?? t?.url;
  if (url instanceof URL || typeof url === 'string') {
    try {
      const u = new URL(String(url));
      return `${u.origin}${u.pathname}`;
    } catch {
      // Not a URL: fall through.
    }
  }
  try {
    const name = client.getServerVersion?.()?.name;
    if (typeof name === 'string' && name) return `name:${name}`;
  } catch {
    // No server info: fall through.
  }
  return 'default';
}

export function checkServerOption(server) {
  if (server !== undefined && (typeof server !== 'string' || !server || server.length > 512)) {
    throw typeOptionError('server', 'a non-empty string of at most 512 characters (the server this journal\'s entries belong to)');
  }
}

/** Whether `entry` was written for `server`. Entries written before entries were bound (no `server`) are
 * nobody's for reconcile(): listed by pendingOperations(), resolved only when the app asks resolve(id). */
export const ofServer = (entry, server) => entry.server === server;
export const ofServerOrUnbound = (entry, server) => entry.server === undefined || entry.server === server;

/** The server's name from its `initialize` answer, when the SDK client has one (events name it). */
export function serverName(client) {
  try {
    const name = client.getServerVersion?.()?.name;
    return typeof name === 'string' && name ? name : undefined;
  } catch {
    return undefined;
  }
}
