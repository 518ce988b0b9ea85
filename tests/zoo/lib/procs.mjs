// Every process the zoo starts goes through here: it is written to a pid file (scripts/zoo.sh kills what is
// listed there if the zoo itself dies), and killed with its whole tree, by pid, when the zoo ends — on
// success, on a thrown error, on SIGINT/SIGTERM.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';

const started = new Set();
let pidFile;

export function usePidFile(file) {
  pidFile = file;
}

/** The pids under `pid` (children, grandchildren, ...), from /proc. */
function descendants(pid) {
  const out = [];
  let tasks = [];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const t of tasks) {
    let kids = '';
    try {
      kids = fs.readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const k of kids.split(/\s+/).filter(Boolean).map(Number)) out.push(k, ...descendants(k));
  }
  return out;
}

/** Kills a process and everything under it, by pid. Synchronous: usable from an 'exit' handler. */
export function killTree(pid, signal = 'SIGKILL') {
  for (const p of [...descendants(pid).reverse(), pid]) {
    try {
      process.kill(p, signal);
    } catch {
      // already gone
    }
  }
}

/**
 * Starts a process with stdin as a pipe the child can watch (it closes when the zoo goes away), stdout
 * and stderr to a log file. Returns the ChildProcess; `onLine` sees each stdout line.
 */
export function start(cmd, args, { log, onLine, env } = {}) {
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  started.add(child);
  if (pidFile) fs.appendFileSync(pidFile, `${child.pid}\n`);
  const logStream = log ? fs.createWriteStream(log, { flags: 'a' }) : undefined;
  let buf = '';
  child.stdout.on('data', (d) => {
    logStream?.write(d);
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      onLine?.(line);
    }
  });
  child.stderr.on('data', (d) => logStream?.write(d));
  child.stdin.on('error', () => {});
  child.on('exit', () => started.delete(child));
  return child;
}

export function stopAll() {
  for (const c of started) {
    if (c.exitCode === null && c.signalCode === null) killTree(c.pid);
  }
  started.clear();
}

process.on('exit', stopAll);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    stopAll();
    process.exit(130);
  });
}

/** `n` distinct ports on 127.0.0.1 that were free a moment ago (all held at once, then let go). */
export async function freePorts(n) {
  const held = [];
  for (let i = 0; i < n; i++) {
    const s = net.createServer();
    await new Promise((r) => s.listen(0, '127.0.0.1', r));
    held.push(s);
  }
  const ports = held.map((s) => s.address().port);
  await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

export const freePort = async () => (await freePorts(1))[0];

/**
 * A port where nothing listens, for "connection refused": below the kernel's ephemeral range, so that no
 * port 0 listener (ours, or anything else on the machine) is handed it while the zoo runs.
 */
export async function deadPortNumber() {
  const [low] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  for (let i = 0; i < 50; i++) {
    const port = 20_000 + Math.floor(Math.random() * Math.max(1, Math.min(low, 32_768) - 20_000));
    const refused = await new Promise((r) => {
      const s = net.connect(port, '127.0.0.1');
      s.on('connect', () => (s.destroy(), r(false)));
      s.on('error', (e) => r(e.code === 'ECONNREFUSED'));
    });
    if (refused) return port;
  }
  throw new Error('no port refusing connections found');
}

/** Whether a process is still there. */
export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns true or `ms` pass; throws `what` on timeout. */
export async function until(check, ms, what) {
  const t0 = Date.now();
  for (;;) {
    if (await check()) return;
    if (Date.now() - t0 > ms) throw new Error(`timed out after ${ms} ms: ${what}`);
    await sleep(15);
  }
}
