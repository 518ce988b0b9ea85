// What sits between the client and a server: nothing, nginx, HAProxy (both Debian packages, in the
// foreground, configs in the zoo's temp dir), or our own proxy answering upstream failures the way Envoy
// does (Envoy itself is not packaged for this machine; see envoy-like-proxy.mjs).
//
// Each proxy routes a request that carries `x-zoo-fault: upstream_down` to a port where nothing listens:
// the ordinary header-based routing of each (nginx `map` → upstream group, HAProxy `use_backend`), so the
// "proxy's upstream is down" fault is the proxy's own real answer to a refused upstream connection.
import fs from 'node:fs';
import path from 'node:path';
import { start, freePorts, until, killTree } from './procs.mjs';
import { startEnvoyLikeProxy } from './envoy-like-proxy.mjs';

export const PROXIES = {
  none: 'no proxy',
  nginx: 'nginx 1.22',
  'nginx-503': 'nginx 1.22 with a maintenance page (error_page 502 504 =503)',
  haproxy: 'HAProxy 2.6',
  'envoy-like': 'fault proxy (Envoy-like 503)',
};

async function listening(port) {
  try {
    await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
}

/**
 * nginx with one server block per MCP server. Timeouts shortened from nginx's 60 s defaults. `maintenance`
 * adds the common "show a maintenance page when the backend fails" idiom, which turns nginx's 502/504 into
 * a 503 — also for a request it had already forwarded.
 */
async function startNginx({ dir, servers, deadPort, readTimeoutMs }, maintenance = false) {
  const d = path.join(dir, maintenance ? 'nginx-503' : 'nginx');
  fs.mkdirSync(d, { recursive: true });
  const fronts = {};
  const blocks = [];
  const ports = await freePorts(servers.length);
  for (const s of servers) {
    const port = ports.shift();
    fronts[s.name] = port;
    const id = s.name.replace(/[^a-z0-9]/g, '_');
    blocks.push(`
  map $http_x_zoo_fault $backend_${id} { default up_${id}; upstream_down down; }
  upstream up_${id} { server 127.0.0.1:${s.port}; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://$backend_${id};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;  # the client's Host (MCP servers check it against DNS rebinding)
      proxy_buffering off;            # SSE answers go through as they come
      proxy_connect_timeout 1s;
      proxy_send_timeout ${readTimeoutMs}ms;
      proxy_read_timeout ${readTimeoutMs}ms;${maintenance ? `
      error_page 502 504 =503 @maintenance;
    }
    location @maintenance {
      return 503 "down for maintenance, back soon";` : ''}
    }
  }`);
  }
  const conf = `worker_processes 1;
pid ${d}/nginx.pid;
error_log ${d}/error.log warn;
events { worker_connections 512; }
http {
  access_log off;
  client_body_temp_path ${d}/client_body;
  proxy_temp_path ${d}/proxy;
  fastcgi_temp_path ${d}/fastcgi;
  uwsgi_temp_path ${d}/uwsgi;
  scgi_temp_path ${d}/scgi;
  upstream down { server 127.0.0.1:${deadPort}; }
${blocks.join('\n')}
}
`;
  fs.writeFileSync(path.join(d, 'nginx.conf'), conf);
  const child = start('nginx', ['-c', path.join(d, 'nginx.conf'), '-p', d, '-g', 'daemon off;'], { log: path.join(d, 'stdout.log') });
  for (const port of Object.values(fronts)) await until(() => listening(port), 10_000, `nginx on ${port} (see ${d}/error.log)`);
  return { fronts, stop: () => killTree(child.pid, 'SIGTERM') };
}

/** HAProxy with one frontend/backend per MCP server. `retries 3` (the default) on connection failures. */
async function startHaproxy({ dir, servers, deadPort, readTimeoutMs }) {
  const d = path.join(dir, 'haproxy');
  fs.mkdirSync(d, { recursive: true });
  const fronts = {};
  const sections = [];
  const ports = await freePorts(servers.length);
  for (const s of servers) {
    const port = ports.shift();
    fronts[s.name] = port;
    const id = s.name.replace(/[^a-z0-9]/g, '_');
    sections.push(`
frontend fe_${id}
  bind 127.0.0.1:${port}
  use_backend be_down if { req.hdr(x-zoo-fault) -m str upstream_down }
  default_backend be_${id}

backend be_${id}
  server app 127.0.0.1:${s.port}`);
  }
  const conf = `global
  maxconn 512

defaults
  mode http
  retries 3
  timeout connect 200ms
  timeout client 30s
  timeout server ${readTimeoutMs}ms
  timeout http-request 10s
${sections.join('\n')}

backend be_down
  server gone 127.0.0.1:${deadPort}
`;
  fs.writeFileSync(path.join(d, 'haproxy.cfg'), conf);
  const child = start('haproxy', ['-db', '-f', path.join(d, 'haproxy.cfg')], { log: path.join(d, 'haproxy.log') });
  for (const port of Object.values(fronts)) await until(() => listening(port), 10_000, `haproxy on ${port} (see ${d}/haproxy.log)`);
  return { fronts, stop: () => killTree(child.pid, 'SIGTERM') };
}

async function startEnvoyLike({ servers, deadPort, readTimeoutMs }) {
  const fronts = {};
  const proxies = [];
  for (const s of servers) {
    const p = await startEnvoyLikeProxy({ upstreamPort: s.port, deadPort, timeoutMs: readTimeoutMs });
    proxies.push(p);
    fronts[s.name] = p.port;
  }
  return { fronts, stop: () => Promise.all(proxies.map((p) => p.close())) };
}

/** Starts every proxy in `names` in front of every server; returns { name → { fronts: server → port, stop } }. */
export async function startProxies(names, opts) {
  const out = {};
  for (const n of names) {
    if (n === 'none') out.none = { fronts: Object.fromEntries(opts.servers.map((s) => [s.name, s.port])), stop: () => {} };
    if (n === 'nginx') out.nginx = await startNginx(opts);
    if (n === 'nginx-503') out['nginx-503'] = await startNginx(opts, true);
    if (n === 'haproxy') out.haproxy = await startHaproxy(opts);
    if (n === 'envoy-like') out['envoy-like'] = await startEnvoyLike(opts);
  }
  return out;
}
