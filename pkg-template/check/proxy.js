// The checker's own fault proxy: on 127.0.0.1, between the checker's MCP clients and the server under test
// (http or https). Everything passes, except the `tools/call` a check armed a fault for:
//   'drop' — forward, wait for the server's whole answer, then close the connection before any byte of it;
//   'cut'  — forward, wait for the server's whole answer, send its first part, then break the connection.
// Either way the server acted and the client never read the answer; the proxy keeps what the server said
// (`captured`), so a check can compare the retry's answer with the original outcome. Every response's status
// and `Retry-After` is logged (the throttling check reads them).
// The server under test may be hostile: an answer over MAX_ANSWER_BYTES is cut there (both connections closed,
// the cut logged in `cuts`), and a status node:http cannot pass on (outside 100–599, e.g. `099`) is answered 502
// with INVALID_STATUS_HEADER naming it. The proxy never follows a redirect: a 3xx goes back as it came; the
// checker's own requests follow none, the SDK sessions only within the proxy's origin (session.js), so no header
// of the user's reaches another origin.
import http from 'node:http';
import https from 'node:https';

/** The most the checker reads of one answer (1 MiB): past it, the answer is cut and the cut reported. */
export const MAX_ANSWER_BYTES = 1024 * 1024;
/** The proxy's header on the 502 it answers for a status the server should never have sent. */
export const INVALID_STATUS_HEADER = 'x-mcp-retry-policy-check-invalid-status';

/** Starts the proxy in front of `target` (a URL); resolves to { url, arm(fault) → Promise<capture>, responses, close() }. */
export async function startCheckProxy(target) {
  const upstream = new URL(target);
  const client = upstream.protocol === 'https:' ? https : http;
  const agent = new client.Agent({ keepAlive: false });
  const armed = []; // { fault, resolve }: the next tools/call takes the first
  const open = new Set(); // armed entries not yet resolved
  const responses = []; // { method, status, retryAfter }
  const cuts = []; // { method, status, bytes }: answers cut at MAX_ANSWER_BYTES
  const sockets = new Set();

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => req.socket.destroy());
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  async function handle(req, res) {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    const message = parseJson(body.toString('utf8'));
    const method = message?.method ?? req.method;
    const pending = message?.method === 'tools/call' ? armed.shift() : undefined;
    const headers = { ...req.headers, host: upstream.host };
    delete headers.connection;
    const up = client.request(
      { protocol: upstream.protocol, hostname: upstream.hostname, port: upstream.port, path: upstream.pathname + upstream.search, method: req.method, headers, agent },
      (upRes) => {
        try {
          responses.push({ method, status: upRes.statusCode, retryAfter: upRes.headers['retry-after'] });
          if (!(upRes.statusCode >= 100 && upRes.statusCode <= 599)) {
            upRes.destroy();
            const said = String(upRes.statusCode).padStart(3, '0');
            if (pending) pending.resolve({ forwarded: true, status: upRes.statusCode, error: `the server answered with an invalid HTTP status ${said}` });
            res.writeHead(502, { 'content-type': 'text/plain', [INVALID_STATUS_HEADER]: said });
            res.end(`the server answered with an invalid HTTP status ${said}`);
            return;
          }
          if (!pending) return relay(method, upRes, req, res);
          breakAnswer(upRes, req, res, message, pending).catch(() => req.socket.destroy());
        } catch {
          upRes.destroy();
          req.socket.destroy();
        }
      },
    );
    up.on('error', (error) => {
      if (pending) pending.resolve({ forwarded: false, error: error.message });
      req.socket.destroy();
    });
    up.end(body);
  }

  /** Passes an answer on as it streams, up to MAX_ANSWER_BYTES; past that both connections are closed. */
  function relay(method, upRes, req, res) {
    res.writeHead(upRes.statusCode, upRes.headers);
    let bytes = 0;
    upRes.on('data', (c) => {
      bytes += c.length;
      if (bytes > MAX_ANSWER_BYTES) {
        cuts.push({ method, status: upRes.statusCode, bytes: MAX_ANSWER_BYTES });
        upRes.destroy();
        req.socket.destroy();
        return;
      }
      if (!res.write(c)) {
        upRes.pause();
        res.once('drain', () => upRes.resume());
      }
    });
    upRes.on('end', () => res.end());
    upRes.on('close', () => !upRes.complete && req.socket.destroy());
  }

  async function breakAnswer(upRes, req, res, message, { fault, resolve }) {
    const parts = [];
    let bytes = 0;
    for await (const c of upRes) {
      bytes += c.length;
      if (bytes > MAX_ANSWER_BYTES) {
        cuts.push({ method: message.method, status: upRes.statusCode, bytes: MAX_ANSWER_BYTES });
        upRes.destroy();
        resolve({ forwarded: true, status: upRes.statusCode, error: `the answer was over ${MAX_ANSWER_BYTES} bytes: cut there` });
        return req.socket.destroy();
      }
      parts.push(c);
    }
    const payload = Buffer.concat(parts);
    const type = String(upRes.headers['content-type'] ?? '');
    resolve({ forwarded: true, status: upRes.statusCode, answer: answerIn(payload.toString('utf8'), type, message.id) });
    if (fault === 'drop') return req.socket.destroy();
    // 'cut': the answer starts (status line, headers, part of the body), then the connection dies.
    const h = { 'content-type': type, 'content-length': String(payload.length) };
    if (upRes.headers['mcp-session-id']) h['mcp-session-id'] = upRes.headers['mcp-session-id'];
    if (type.startsWith('text/event-stream')) delete h['content-length'];
    res.writeHead(upRes.statusCode, h);
    res.write(payload.subarray(0, Math.floor(payload.length / 2)));
    setTimeout(() => req.socket.destroy(), 20);
  }

  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}${upstream.search}`,
    /** The next `tools/call` meets `fault`; resolves with what the server answered it (or that it was not forwarded). */
    arm: (fault) => new Promise((resolve) => {
      const entry = { fault, resolve: (v) => (open.delete(entry), resolve(v)) };
      open.add(entry);
      armed.push(entry);
    }),
    /** Gives up on every armed fault still unanswered (the call never came, or the server never answered it). */
    disarm: () => {
      armed.splice(0);
      for (const { resolve } of open) resolve({ forwarded: false, error: 'no answer from the server within the timeout' });
    },
    responses,
    cuts,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        agent.destroy();
        server.close(() => r());
      }),
  };
}

function parseJson(text) {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** The JSON-RPC response to request `id` in a body: plain JSON (one message or a batch) or an SSE stream. */
export function answerIn(text, contentType, id) {
  const messages = [];
  if (contentType.startsWith('text/event-stream')) {
    for (const event of text.split(/\r?\n\r?\n/)) {
      const data = event.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n');
      const m = parseJson(data);
      if (m) messages.push(m);
    }
  } else {
    const m = parseJson(text);
    if (Array.isArray(m)) messages.push(...m);
    else if (m) messages.push(m);
  }
  return messages.find((m) => m && m.id === id && ('result' in m || 'error' in m));
}
