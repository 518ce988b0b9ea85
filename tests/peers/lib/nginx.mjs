// nginx 1.22 (Debian) in the foreground in front of one upstream, as tests/zoo/lib/proxies.mjs runs it: its own
// config, pid, logs and temp paths in a temp dir; stopped by pid. An upstream that resets the connection after
// reading the request is answered with nginx's own 502 page.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { start, freePort, until, killTree } from '../../zoo/lib/procs.mjs';

export async function startNginx(target) {
  const up = new URL(target);
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'peers-nginx-'));
  const port = await freePort();
  const conf = `worker_processes 1;
pid ${d}/nginx.pid;
error_log ${d}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${d}/client_body;
  proxy_temp_path ${d}/proxy;
  fastcgi_temp_path ${d}/fastcgi;
  uwsgi_temp_path ${d}/uwsgi;
  scgi_temp_path ${d}/scgi;
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://127.0.0.1:${up.port};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_buffering off;
      proxy_connect_timeout 1s;
      proxy_read_timeout 10s;
      proxy_next_upstream off;
    }
  }
}
`;
  fs.writeFileSync(path.join(d, 'nginx.conf'), conf);
  const child = start('nginx', ['-c', path.join(d, 'nginx.conf'), '-p', d, '-g', 'daemon off;'], { log: path.join(d, 'stdout.log') });
  await until(async () => {
    try {
      await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(500) });
      return true;
    } catch {
      return false;
    }
  }, 10_000, `nginx on ${port} (see ${d}/error.log)`);
  return {
    url: `http://127.0.0.1:${port}${up.pathname}`,
    stop: () => {
      killTree(child.pid, 'SIGTERM');
      fs.rmSync(d, { recursive: true, force: true });
    },
  };
}
