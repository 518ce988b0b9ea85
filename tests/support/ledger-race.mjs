// Several Node processes racing one operation id through OperationLedger + withIdempotency (each runs
// tests/support/ledger-racer.mjs with its own store over one shared database), round after round; and the
// check that each id executed exactly once, counted in the database itself.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const racer = fileURLToPath(new URL('./ledger-racer.mjs', import.meta.url));

/** A child's stdout as lines, each awaited with a time limit (its stderr in the error). */
function lines(child) {
  const queue = [];
  const waiting = [];
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  createInterface({ input: child.stdout }).on('line', (l) => (waiting.length ? waiting.shift()(l) : queue.push(l)));
  return (ms = 15_000) => (queue.length ? Promise.resolve(queue.shift()) : new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`racer ${child.pid}: no answer in ${ms} ms; stderr: ${stderr.slice(-2000)}`)), ms);
    waiting.push((l) => {
      clearTimeout(t);
      resolve(l);
    });
  }));
}

/**
 * Starts `processes` racers over `config` (see ledger-racer.mjs), waits until all are ready, then for each
 * `{ id, holdMs }` in `rounds` sends it to all of them at once. Resolves to `[{ id, answers }]`.
 */
export async function raceThroughProcesses(config, rounds, processes = 3) {
  const children = Array.from({ length: processes }, () => spawn(process.execPath, [racer, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] }));
  try {
    const next = children.map(lines);
    for (const line of await Promise.all(next.map((n) => n()))) assert.equal(line, 'ready');
    const out = [];
    for (const round of rounds) {
      for (const c of children) c.stdin.write(`${JSON.stringify(round)}\n`);
      out.push({ id: round.id, answers: (await Promise.all(next.map((n) => n()))).map((l) => JSON.parse(l)) });
    }
    for (const c of children) c.stdin.end(`${JSON.stringify({ exit: true })}\n`);
    await Promise.all(children.map((c) => (c.exitCode !== null ? c.exitCode : new Promise((resolve) => c.once('exit', resolve)))));
    return out;
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }
}

/**
 * Each round: exactly one process ran the handler, the database holds exactly one effect for the id, and
 * every other process was told `in_progress` or got the replay of the one result.
 */
export async function assertEachRanOnce(results, effectsFor) {
  const seen = { in_progress: 0, replay: 0 };
  for (const { id, answers } of results) {
    const ran = answers.filter((a) => a.ran);
    assert.equal(ran.length, 1, `${id}: ${ran.length} processes ran the handler: ${JSON.stringify(answers)}`);
    assert.equal(await effectsFor(id), 1, `${id}: effects in the database`);
    for (const a of answers.filter((x) => !x.ran)) {
      if (a.status === 'in_progress') seen.in_progress++;
      else {
        assert.equal(a.status, null, `${id}: ${JSON.stringify(a)}`);
        assert.equal(a.text, ran[0].text, `${id}: a replay of the one result`);
        seen.replay++;
      }
    }
  }
  return seen;
}

/**
 * One racer process over `config` writes the effect of `id` and is killed (SIGKILL) before the ledger
 * records anything: between the business write and the record. Resolves once the process is gone.
 */
export async function killBetweenWriteAndRecord(config, id) {
  const child = spawn(process.execPath, [racer, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] });
  try {
    const next = lines(child);
    assert.equal(await next(), 'ready');
    child.stdin.write(`${JSON.stringify({ id, crashAfterWrite: true })}\n`);
    assert.equal(await next(), 'written');
    const gone = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal)));
    child.kill('SIGKILL');
    assert.equal(await gone, 'SIGKILL');
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
