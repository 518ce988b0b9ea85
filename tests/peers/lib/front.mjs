// A pass-through HTTP proxy of the peer matrix, on 127.0.0.1, streaming both ways (SSE answers go through as
// they come). Two jobs:
//  - the truth for a server whose tools we cannot change (server-everything): every tools/call its transport
//    accepted (answered 2xx: the tool ran, or runs) is appended to the effects file as one effect of its intent;
//  - a captive portal: a tools/call that meets the fault 'captive' is answered 200 text/html by the proxy
//    itself, never forwarded (a hotel or corporate login page in front of the server).
import http from 'node:http';
import fs from 'node:fs';

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
      { hostname: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, host: upstream.host }, agent },
      (upRes) => {
        if (isCall && effectsFile && upRes.statusCode >= 200 && upRes.statusCode < 300) {
          const a = message.params?.arguments ?? {};
          fs.appendFileSync(effectsFile, `${JSON.stringify({ srv: 'front', intent: a.intent, tool: message.params?.name, id: `delivery-${message.id}` })}\n`);
        }
        res.writeHead(upRes.statusCode, upRes.headers);
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
