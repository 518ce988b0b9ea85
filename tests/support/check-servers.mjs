// The servers `mcp-retry-policy check` is tested against: real MCP SDK servers (support/mcp-server.mjs:
// stateful, "Authorization: Bearer <tenant>" names the tenant) with a booking tool whose operation-id handling
// is written by hand, each flag one way of getting a failure window right or wrong:
//   dedupe: false       — ignores the id (books again on every call);
//   onChanged: 'overwrite' — the same id with a changed input rewrites the booking;
//   tenantScoped: false — records keyed by id alone: tenant B gets tenant A's booking (tool and status tool);
//   atomic: false       — looks the id up, waits for the booking system, then records: concurrent calls all book;
//   statusTool: false   — no status tool;
//   readOnlyHint: true  — annotated read-only (it writes).
// `bookings` is the ground truth: what the booking system did.
import http from 'node:http';
import https from 'node:https';
import { z } from 'zod';
import { startMcpServer } from './mcp-server.mjs';

const text = (t) => ({ content: [{ type: 'text', text: t }] });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const tenantOf = (extra) => extra?.authInfo?.clientId ?? 'anonymous';

export const RIGHT = Object.freeze({ dedupe: true, onChanged: 'conflict', tenantScoped: true, atomic: true, statusTool: true, readOnlyHint: false });

/** Registers `book_room` (and `operation_status`) with the given handling; `bookings` collects what was booked. */
export function bookingTools(flags, bookings) {
  const f = { ...RIGHT, ...flags };
  const records = new Map(); // key → { state: 'running' | 'done', fp, result }
  const keyOf = (extra, id) => (f.tenantScoped ? `${tenantOf(extra)}\u0000${id}` : id);
  const resultOf = (b) => ({ ...text(`booked ${b.id} for ${b.guest}`), structuredContent: { booking: b.id, guest: b.guest, nights: b.nights } });
  return (server) => {
    server.registerTool('book_room', {
      description: 'Book a room. Repeats with the same operation_id return the first booking.',
      inputSchema: { guest: z.string(), nights: z.number(), operation_id: z.string() },
      annotations: { readOnlyHint: f.readOnlyHint, destructiveHint: false, idempotentHint: false },
    }, async ({ operation_id: id, ...input }, extra) => {
      const key = keyOf(extra, id);
      const fp = JSON.stringify([input.guest, input.nights]);
      const known = f.dedupe ? records.get(key) : undefined;
      if (known?.state === 'running') return { ...text(`booking ${id} is in progress`), isError: true };
      if (known && known.fp === fp) return known.result;
      if (known && f.onChanged === 'conflict') return { ...text(`operation_id ${id} was used for another booking; nothing was done`), isError: true };
      if (known) {
        // 'overwrite': the booking is rewritten with the new input.
        const b = bookings.find((x) => x.id === known.result.structuredContent.booking);
        Object.assign(b, input);
        Object.assign(known, { fp, result: resultOf(b) });
        return known.result;
      }
      if (f.dedupe && f.atomic) records.set(key, { state: 'running' });
      await sleep(40); // the booking system
      const b = { id: `B-${bookings.length + 1}`, ...input, tenant: tenantOf(extra), operationId: id };
      bookings.push(b);
      const result = resultOf(b);
      if (f.dedupe) records.set(key, { state: 'done', fp, result });
      return result;
    });
    if (!f.statusTool) return;
    server.registerTool('operation_status', {
      description: 'What happened to an earlier booking, by operation id.',
      inputSchema: { action: z.string(), operation_id: z.string() },
      annotations: { readOnlyHint: true },
    }, async ({ action, operation_id: id }, extra) => {
      const r = records.get(keyOf(extra, id));
      const status = !r ? 'not_found' : r.state === 'running' ? 'in_progress' : 'succeeded';
      return { ...text(status), structuredContent: { status, action, operation_id: id, ...(r?.result ? { result: r.result } : {}) } };
    });
  };
}

/**
 * A server with `book_room` handled by `flags`; resolves to { url, bookings, close() }. `flags.lostSession`:
 * what it answers to an unknown session id (support/mcp-server.mjs's option).
 */
export async function startBookingServer(flags = {}) {
  const bookings = [];
  const s = await startMcpServer({ extraTools: bookingTools(flags, bookings), lostSession: flags.lostSession });
  return { url: s.url, bookings, close: s.close };
}

/** An https front on 127.0.0.1 for an http server (TLS with `key`/`cert`), streaming both ways; resolves to { url, close() }. */
export async function startTlsFront(target, { key, cert }) {
  const up = new URL(target);
  const front = https.createServer({ key, cert }, (req, res) => {
    const out = http.request({ hostname: up.hostname, port: up.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    out.on('error', () => req.socket.destroy());
    req.pipe(out);
  });
  await new Promise((r) => front.listen(0, '127.0.0.1', r));
  return {
    url: `https://127.0.0.1:${front.address().port}${up.pathname}`,
    close: () => new Promise((r) => {
      front.closeAllConnections();
      front.close(() => r());
    }),
  };
}
