// A throwaway PostgreSQL cluster for a test run or a benchmark: `initdb` into a temp dir, `pg_ctl start` on
// 127.0.0.1 with a free port (and a unix socket in the temp dir), stopped and deleted by `stop()` — and, as a
// backstop, when the process exits or is interrupted. PostgreSQL refuses to run as root: as root, every
// command runs as the `postgres` user (`runuser`) on a directory chowned to it.
//
//   const pg = await startPostgres();        // throws, saying why, when PostgreSQL is not installed
//   new Pool(pg.connection) … pg.stop();
//
// `fsync: false` (tests) turns off fsync and full-page writes: fast, and nothing here must survive a crash.
// Benchmarks keep the server's defaults (fsync on), so commits cost what they cost in production.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The newest installed server's bin directory (`PG_BIN` wins), or undefined. */
export function postgresBin() {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb')) && existsSync(join(root, v, 'bin', 'pg_ctl')));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions[0] && join(root, versions[0], 'bin');
}

/** A port nobody listens on right now (127.0.0.1). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const asRoot = () => process.getuid?.() === 0;

/** Runs a server command, as `postgres` when we are root. Throws with the command's output on failure. */
function run(bin, command, args) {
  const file = join(bin, command);
  const [exe, argv] = asRoot() ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
  try {
    return execFileSync(exe, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
  } catch (e) {
    throw new Error(`${command} ${args.join(' ')} failed: ${e.stderr || e.stdout || e.message}`);
  }
}

function chownTo(path, user) {
  const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }));
  const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }));
  chownSync(path, uid, gid);
}

/**
 * Starts a cluster. Resolves to `{ connection, socketDir, port, dir, stop() }`; `connection` is the `pg`
 * Pool configuration over TCP (`{ ...connection, host: socketDir }` goes through the unix socket).
 */
export async function startPostgres({ fsync = false } = {}) {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb; PG_BIN unset): `bash scripts/setup.sh` installs it');
  const dir = mkdtempSync(join(tmpdir(), 'mcp-ledger-pg-'));
  const data = join(dir, 'data');
  const socketDir = join(dir, 'run');
  mkdirSync(socketDir);
  if (asRoot()) {
    for (const p of [dir, socketDir]) chownTo(p, 'postgres');
  }
  let stopped = false;
  const stopSync = () => {
    if (stopped) return;
    stopped = true;
    process.off('exit', stopSync);
    for (const s of ['SIGINT', 'SIGTERM']) process.off(s, onSignal);
    try {
      if (existsSync(join(data, 'postmaster.pid'))) run(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  function onSignal(signal) {
    stopSync();
    process.kill(process.pid, signal);
  }
  process.on('exit', stopSync);
  for (const s of ['SIGINT', 'SIGTERM']) process.once(s, onSignal);
  try {
    run(bin, 'initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']);
    const settings = ['-c listen_addresses=127.0.0.1', `-k ${socketDir}`, ...(fsync ? [] : ['-c fsync=off', '-c full_page_writes=off'])];
    let port;
    for (let tries = 0; ; tries++) {
      port = await freePort();
      try {
        run(bin, 'pg_ctl', ['-D', data, '-l', join(socketDir, 'postgres.log'), '-w', '-t', '30', '-o', `-p ${port} ${settings.join(' ')}`, 'start']);
        break;
      } catch (e) {
        // Someone took the port between our look and the server's bind: another port. Anything else: give up.
        const log = existsSync(join(socketDir, 'postgres.log')) ? readFileSync(join(socketDir, 'postgres.log'), 'utf8') : '';
        if (tries >= 2 || !/could not bind|Address already in use/i.test(log)) throw new Error(`${e.message}\n${log.slice(-2000)}`);
      }
    }
    return {
      connection: { host: '127.0.0.1', port, user: 'postgres', database: 'postgres' },
      socketDir,
      port,
      dir,
      /** Stops the server (immediate mode) and deletes the cluster. Idempotent. */
      stop: stopSync,
    };
  } catch (e) {
    stopSync();
    throw e;
  }
}
