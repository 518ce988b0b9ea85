// A reverse proxy that answers upstream failures the way Envoy does, extended from tests/support/fault-proxy.mjs.
// Envoy is not packaged for Debian and cannot be downloaded here, so this stands in for it (and for Istio,
// and for every gateway that says 503 for "the upstream went away"):
//   - upstream connection refused        → 503 "upstream connect error or disconnect/reset before headers.
//                                           reset reason: connection failure" (nothing was forwarded)
//   - upstream reset/closed before headers → 503 "... reset reason: connection termination" (it WAS forwarded:
//                                           envoyproxy/envoy#14981, istio/istio#9906)
//   - no response headers within the route timeout → 504 "upstream request timeout"
//   - upstream dies after the headers     → the downstream connection is reset mid-body
// Routing: `x-zoo-fault: upstream_down` goes to a port where nothing listens, like nginx and HAProxy here.
import http from 'node:http';

export async function startEnvoyLikeProxy({ upstreamPort, deadPort, timeoutMs }) {
  const agent = new http.Agent({ keepAlive: false });
  const server = http.createServer((req, res) => {
    const port = req.headers['x-zoo-fault'] === 'upstream_down' ? deadPort : upstreamPort;
    let answered = false;
    const fail = (status, text) => {
      if (answered) return;
      answered = true;
      if (res.headersSent) return req.socket.destroy();
      res.writeHead(status, { 'content-type': 'text/plain', 'x-envoy-like': '1' });
      res.end(text);
    };
    const up = http.request({ hostname: '127.0.0.1', port, path: req.url, method: req.method, headers: req.headers, agent }, (upRes) => {
      clearTimeout(timer);
      answered = true;
      res.writeHead(upRes.statusCode, upRes.headers);
      upRes.pipe(res);
      upRes.on('error', () => req.socket.destroy());
      upRes.on('close', () => {
        if (!upRes.complete) req.socket.destroy();
      });
    });
    const timer = setTimeout(() => {
      fail(504, 'upstream request timeout');
      up.destroy();
    }, timeoutMs);
    up.on('error', (e) => {
      clearTimeout(timer);
      if (e.code === 'ECONNREFUSED') fail(503, 'upstream connect error or disconnect/reset before headers. reset reason: connection failure');
      else fail(503, 'upstream connect error or disconnect/reset before headers. reset reason: connection termination');
    });
    req.on('error', () => up.destroy());
    res.on('close', () => {
      if (!res.writableFinished) up.destroy(); // the client went away: so does the upstream request
    });
    req.pipe(up);
  });
  server.on('clientError', (_e, socket) => socket.destroy());
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: server.address().port,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections?.();
        server.close(() => r());
      }),
  };
}
