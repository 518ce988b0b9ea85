// The story at the top of the playground: one `tools/call` whose answer is lost after the server acted, sent by
// two clients. Everything here is a modelled peer (plain JS, no decision of the package's): the MCP server (the
// tools it lists, its tickets, the ledger that remembers each operation id's first outcome), the network (the
// first answer is dropped after the server committed; later answers arrive), and a plain retry loop (what a
// generic retry library does: any error → wait → send the same request again). The other client is the
// package's engine, driven by main.js: it decides; nothing here does.

/** How long an attempt takes (simulated ms), and when within it the server commits its effect. */
export const ATTEMPT_MS = 50;
export const COMMIT_AT_MS = 30;

/** The tool the server lists, for each safety the page offers: the engine reads its safety from this listing. */
export const TOOLS = {
  keyed: {
    name: 'create_ticket',
    description: 'Opens a ticket. Send an operation_id: the server remembers its first outcome and replays it.',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    inputSchema: { type: 'object', properties: { title: { type: 'string' }, operation_id: { type: 'string' } }, required: ['title'] },
  },
  unsafe: {
    name: 'create_ticket',
    description: 'Opens a ticket. No operation id: the server cannot tell a re-send from a new request.',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
  },
  idempotent: {
    name: 'put_ticket',
    description: 'Writes the ticket with the id the caller chose: the same request twice leaves one ticket.',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    inputSchema: { type: 'object', properties: { ticket_id: { type: 'string' }, title: { type: 'string' } }, required: ['ticket_id', 'title'] },
  },
  read_only: {
    name: 'search_tickets',
    description: 'Searches the tickets. Writes nothing.',
    annotations: { readOnlyHint: true },
    inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  },
};

/** The arguments the app passes (the operation id, for a keyed tool, is added by the client that knows about it). */
export function argumentsFor(tool) {
  if (tool.name === 'put_ticket') return { ticket_id: 'T-1', title: 'printer on fire' };
  if (tool.name === 'search_tickets') return { query: 'printer' };
  return { title: 'printer on fire' };
}

/** The MCP server, modelled: its tickets, and a ledger keyed by operation id (the first outcome, replayed). */
export function ticketServer() {
  const tickets = new Map(); // id → title
  const ledger = new Map(); // operation_id → the first result
  const log = []; // { at, kind: 'created' | 'replayed' | 'overwrote' | 'read', ticket?, text }
  let next = 1;
  const result = (text) => ({ content: [{ type: 'text', text }], isError: false });
  function handle(name, args, at) {
    if (name === 'search_tickets') {
      log.push({ at, kind: 'read', text: 'searched: nothing written' });
      return result(`${tickets.size} tickets match`);
    }
    if (name === 'put_ticket') {
      const had = tickets.has(args.ticket_id);
      tickets.set(args.ticket_id, args.title);
      log.push({ at, kind: had ? 'overwrote' : 'created', ticket: args.ticket_id, text: had ? `${args.ticket_id} written again (same ticket)` : `${args.ticket_id} written` });
      return result(`ticket ${args.ticket_id}`);
    }
    // create_ticket
    const key = typeof args.operation_id === 'string' ? args.operation_id : undefined;
    if (key !== undefined && ledger.has(key)) {
      const first = ledger.get(key);
      log.push({ at, kind: 'replayed', ticket: first.ticket, text: `operation_id seen: ${first.ticket}'s answer replayed, nothing run` });
      return first.result;
    }
    const id = `T-${next++}`;
    tickets.set(id, args.title);
    const r = result(`opened ticket ${id}`);
    if (key !== undefined) ledger.set(key, { ticket: id, result: r });
    log.push({ at, kind: 'created', ticket: id, text: key !== undefined ? `${id} created, kept under its operation_id` : `${id} created` });
    return r;
  }
  return { tickets, log, handle };
}

/**
 * One attempt over the modelled network: the server handles the request `COMMIT_AT_MS` into the attempt; the
 * first attempt's answer is then dropped (the connection resets after the request went out), later ones arrive.
 * Returns what the client sees: `{ outcome, answer?, lost }` (`outcome` as the engine takes it).
 */
export function sendOver(server, name, args, at, attempt) {
  const answer = server.handle(name, args, at + COMMIT_AT_MS);
  if (attempt === 1) return { lost: true, outcome: { kind: 'network', sent: 'maybe' } };
  return { lost: false, answer, outcome: { kind: 'result', isError: false } };
}

/** A plain retry loop (modelled): any error → wait `delayMs` → send the same request again, up to `attempts`. */
export const NAIVE = { attempts: 3, delayMs: 200 };

export function naiveRun(tool) {
  const server = ticketServer();
  const args = argumentsFor(tool); // no operation id: a generic retry library knows nothing of one
  const rows = [];
  let now = 0;
  let told;
  for (let attempt = 1; attempt <= NAIVE.attempts; attempt++) {
    const seen = sendOver(server, tool.name, args, now, attempt);
    const retry = seen.lost && attempt < NAIVE.attempts;
    rows.push({ at: now, lost: seen.lost, waitMs: retry ? NAIVE.delayMs : 0 });
    if (!seen.lost) {
      told = { ok: true, text: seen.answer.content[0].text };
      break;
    }
    if (!retry) {
      told = { ok: false, text: 'an error, after every attempt' };
      break;
    }
    now += ATTEMPT_MS + NAIVE.delayMs;
  }
  return { args, rows, told, server };
}
