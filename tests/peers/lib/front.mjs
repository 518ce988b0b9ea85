// A pass-through HTTP proxy of the peer matrix, on 127.0.0.1, streaming both ways (SSE answers go through as
// they come). Two jobs:
//  - the truth for a server whose tools we cannot change (server-everything): every tools/call its transport
//    accepted (answered 2xx: the tool ran, or runs) is appended to the effects file as one effect of its intent;
//  - a captive portal: a tools/call that meets the fault 'captive' is answered 200 text/html by the proxy
//    itself, never forwarded (a hotel or corporate login page in front of the server).
import http from 'node:http';
import fs from 'node:fs';

// Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and are not forwarded. Forwarding the
// `Connection: close` the fault proxy sends (its agent does not keep connections alive) onto this front's kept-alive
// connection to the server made Node's parser answer the next request on it with a bare 400 ("Data after
// `Connection: close`"): server-everything's 502-after cell broke with "Error POSTing to endpoint" and an empty body.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);
const endToEnd = (headers) => Object.fromEntries(Object.entries(headers).filter(([k]) => !HOP_BY_HOP.has(k.toLowerCase())));

const PORTAL = '<!doctype html><html><head><title>Sign in to the network</title></head><body><form action="/login">Wi-Fi login</form></body></html>';

export async function startFront(target, effectsFile) {
  const upstream = new URL(target);
  const faults = [];
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer(async (req, res) => {
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
    if (fault === 'captive') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(PORTAL);
    }
    const up = http.request(
      { hostname: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...endToEnd(req.headers), host: upstream.host }, agent },
      (upRes) => {
        if (isCall && effectsFile && upRes.statusCode >= 200 && upRes.statusCode < 300) {
          const a = message.params?.arguments ?? {};
          fs.appendFileSync(effectsFile, `${JSON.stringify({ srv: 'front', intent: a.intent, tool: message.params?.name, id: `delivery-${message.id}` })}\n`);
        }
        res.writeHead(upRes.statusCode, endToEnd(upRes.headers));
        upRes.pipe(res);
        upRes.on('error', () => req.socket.destroy());
        upRes.on('close', () => !upRes.complete && req.socket.destroy());
      },
    );
    up.on('error', () => req.socket.destroy());
    res.on('close', () => up.destroy());
    up.end(body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}/mcp`,
    faults,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections?.();
        agent.destroy();
        server.close(() => r());
      }),
  };
}
