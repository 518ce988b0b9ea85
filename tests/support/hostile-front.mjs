// A hostile server for `mcp-retry-policy check` (tests/js/check-hostile.test.mjs): a raw node:http front on
// 127.0.0.1 for a real MCP server, forwarding every request, except those `misbehave(request)` takes over — then
// it answers them itself, the way a broken or malicious server would (a raw status line, a redirect elsewhere, an
// endless stream). `request`: { method (the JSON-RPC method, or the HTTP one), headers, message, lostSession: it
// carries a session id the server never issued }. Also a sink: an origin of its own that records what reached it
// (what a redirect would carry there).
import http from 'node:http';

/** Starts the front for `target`; resolves to { url, close() }. `misbehave(request, req, res)` → true when it answered. */
export async function startHostileFront(target, misbehave) {
  const up = new URL(target);
  const sockets = new Set();
  const issued = new Set(); // the session ids the server gave in the answers forwarded
  const front = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    let message;
    try {
      message = JSON.parse(body.toString('utf8'));
    } catch {
      message = undefined;
    }
    const sid = req.headers['mcp-session-id'];
    const request = { method: message?.method ?? req.method, headers: req.headers, message, lostSession: sid !== undefined && !issued.has(sid) };
    if (await misbehave(request, req, res)) return;
    const out = http.request({ hostname: up.hostname, port: up.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      if (r.headers['mcp-session-id']) issued.add(r.headers['mcp-session-id']);
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    out.on('error', () => req.socket.destroy());
    out.end(body);
  });
  front.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((r) => front.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${front.address().port}${up.pathname}`,
    close: () => new Promise((r) => {
      for (const s of sockets) s.destroy();
      front.close(() => r());
    }),
  };
}

/** An origin that records every request reaching it (method, path, headers); resolves to { url, seen, close() }. */
export async function startSink() {
  const seen = [];
  const sink = http.createServer((req, res) => {
    seen.push({ method: req.method, path: req.url, headers: req.headers });
    req.resume();
    res.writeHead(404, { 'content-type': 'text/plain' }).end('nothing here');
  });
  await new Promise((r) => sink.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${sink.address().port}`, seen, close: () => new Promise((r) => sink.close(() => r())) };
}

/** Answers with a raw status line and body (node:http refuses to write a status outside 100–999 itself). */
export function rawAnswer(res, statusLine, body = '') {
  res.socket.end(`HTTP/1.1 ${statusLine}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

/**
 * An SSE answer that never ends: one event whose data line never closes, written as fast as the reader takes it
 * (each write after the last drained). `stats.written`: the bytes it got out before the reader went away.
 */
export function endlessStream(req, res, stats) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write('event: message\ndata: ');
  const chunk = 'x'.repeat(64 * 1024);
  const more = () => {
    while (!res.destroyed && res.write(chunk)) stats.written += chunk.length;
    if (!res.destroyed) stats.written += chunk.length;
  };
  res.on('drain', more);
  res.on('close', () => (stats.closed = true));
  more();
}
