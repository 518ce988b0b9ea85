// A small fault-injecting HTTP proxy of our own, between a real MCP client and a real MCP server, on
// 127.0.0.1. Each `tools/call` takes the next fault from the queue (default: pass); everything else passes.
//
// Faults: 'pass' · 'cut' (forward, let the server commit, then break the connection mid-answer) ·
// 'drop' (forward, let the server commit, then close the connection before any byte of the answer) ·
// 'reset' (drop the connection before forwarding) · { status, retryAfter?, jsonrpcBody?, delayMs? } (answer without
// forwarding, after `delayMs`; `jsonrpcBody`: a JSON-RPC error code to put in the body, `jsonrpcData` its data) · { status, afterForward: true } (forward,
// let the server commit, then answer `status` like a gateway whose upstream failed after it forwarded) ·
// { hold: ms } (forward, then delay the answer) · { jsonrpcError: code } (answer with a JSON-RPC error).
import http from 'node:http';
import { listenLocal } from './listen.mjs';

export async function startFaultProxy(target) {
  const upstream = new URL(target);
  const faults = [];
  const log = [];
  const agent = new http.Agent({ keepAlive: false });
  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => req.socket.destroy()); // a peer that went away mid-request
  });
  async function handle(req, res) {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    let message;
    try {
      message = body.length ? JSON.parse(body.toString('utf8')) : undefined;
    } catch {
      message = undefined;
    }
    const isCall = message?.method === 'tools/call';
    const fault = isCall ? (faults.shift() ?? 'pass') : 'pass';
    log.push({ method: message?.method ?? req.method, tool: message?.params?.name, fault, at: Date.now() });
    if (fault === 'reset') return req.socket.destroy();
    if (typeof fault === 'object' && fault.status && !fault.afterForward) {
      if (fault.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs)); // a slow refusal
      const headers = fault.retryAfter !== undefined ? { 'retry-after': String(fault.retryAfter) } : {};
      if (fault.jsonrpcBody !== undefined) {
        res.writeHead(fault.status, { ...headers, 'content-type': 'application/json' });
        const error = { code: fault.jsonrpcBody, message: 'injected', ...(fault.jsonrpcData !== undefined ? { data: fault.jsonrpcData } : {}) };
        return res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error }));
      }
      res.writeHead(fault.status, headers);
      return res.end(`injected ${fault.status}`);
    }
    if (typeof fault === 'object' && fault.jsonrpcError !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: fault.jsonrpcError, message: 'injected' } }));
    }
    const headers = { ...req.headers, host: upstream.host };
    const up = http.request(
      { hostname: upstream.hostname, port: upstream.port, path: upstream.pathname, method: req.method, headers, agent },
      (upRes) => relay(upRes).catch(() => req.socket.destroy()),
    );
    async function relay(upRes) {
        if (fault === 'pass') {
          // Stream through (SSE streams stay open for as long as the server keeps them).
          res.writeHead(upRes.statusCode, upRes.headers);
          upRes.pipe(res);
          upRes.on('close', () => !upRes.complete && req.socket.destroy());
          return;
        }
        const parts = [];
        for await (const c of upRes) parts.push(c);
        const payload = Buffer.concat(parts);
        if (fault === 'drop') return req.socket.destroy(); // the server committed; not one byte of the answer came back
        if (typeof fault === 'object' && fault.afterForward) {
          // The server committed; the "gateway" answers with an error status of its own (no Retry-After).
          res.writeHead(fault.status, { 'content-type': 'text/plain' });
          return res.end(`upstream connect error or disconnect/reset before headers (injected ${fault.status})`);
        }
        if (fault === 'cut') {
          // The server committed; the answer starts, then the connection dies mid-body.
          // An SSE answer is cut after its first event (the priming event id); JSON in the middle.
          const sse = String(upRes.headers['content-type']).startsWith('text/event-stream');
          const end = sse ? payload.indexOf('\n\n') + 2 : Math.floor(payload.length / 2);
          const h = { 'content-type': upRes.headers['content-type'] };
          if (upRes.headers['mcp-session-id']) h['mcp-session-id'] = upRes.headers['mcp-session-id'];
          if (!sse) h['content-length'] = String(payload.length);
          res.writeHead(upRes.statusCode, h);
          res.write(payload.subarray(0, end));
          return setTimeout(() => req.socket.destroy(), 20);
        }
        if (typeof fault === 'object' && fault.hold) await new Promise((r) => setTimeout(r, fault.hold));
        if (res.destroyed) return;
        const h = { ...upRes.headers };
        delete h['transfer-encoding'];
        h['content-length'] = String(payload.length);
        res.writeHead(upRes.statusCode, h);
        res.end(payload);
    }
    up.on('error', () => req.socket.destroy());
    up.end(body);
  }
  const { url, close } = await listenLocal(server);
  return {
    url,
    faults,
    log,
    calls: () => log.filter((l) => l.method === 'tools/call'),
    close,
  };
}
