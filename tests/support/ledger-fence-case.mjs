// Two servers (two OperationLedgers on one store, as two processes would have) and one operation whose first
// run cannot know that it lost its claim: server A's clock runs `skewMs` behind (−1,100 ms on a 1.5 s lease:
// past the documented bound of a third of the lease), so on server B's clock A's lease ends early. A's handler
// starts, then waits until a retry that reached B has been answered — B's reconcile hook found nothing
// downstream (`not_done`) and ran it — and only then commits its effect, through its claim's fenced
// transaction (`claimOf(extra).transaction`). Store-agnostic: the caller gives the ledgers and the effect's
// write and read on its store (SQLite, Postgres).
const META = 'dev.mcp-retry-policy/ledger';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (r) => r?.content?.[0]?.text;

/**
 * `make({ a, b })` → [ledger A, ledger B] built with those options; `write(tx, op, by)` writes the effect
 * through the store's transaction handle, `direct(op, by)` on its own; `read(op)` → who wrote it, or undefined. Resolves to
 * `{ effects, a, b, rounds, events }`: the effects written, what each caller was answered (its text and
 * ledger status), how many calls B took to get in, and A's ledger events by type.
 */
export async function runSkewCase(pkg, { make, write, direct, read, count, leaseMs = 1500, skewMs = -1100, fenced = true }) {
  const { claimOf, withIdempotency } = pkg;
  const reconcile = async ({ operationId }) => {
    const by = await read(operationId);
    return by ? { status: 'succeeded', result: { content: [{ type: 'text', text: by }] } } : { status: 'not_done' };
  };
  const events = {};
  const onEvent = (e) => { events[e.type] = (events[e.type] ?? 0) + 1; };
  const [a, b] = await make({
    a: { leaseMs, reconcile, onEvent, now: () => Date.now() + skewMs },
    b: { leaseMs, reconcile },
  });
  let bAnswered;
  const answeredB = new Promise((r) => { bAnswered = r; });
  let aRunning;
  const runningA = new Promise((r) => { aRunning = r; });
  const tool = (ledger, by, commit) => withIdempotency(ledger, async ({ operation_id: op }, extra) => {
    await commit(op, extra);
    return { content: [{ type: 'text', text: by }] };
  }, { action: 'transfer', tenant: () => 'org-1' });
  const toolA = tool(a, 'A', async (op, extra) => {
    aRunning();
    await answeredB;
    // `fenced: false` (how the "before" was measured): A commits downstream as it may without the fence.
    if (fenced) await claimOf(extra).transaction((tx) => write(tx, op, 'A'));
    else await direct(op, 'A');
  });
  const toolB = tool(b, 'B', (op) => direct(op, 'B')); // B is the live owner: its write needs nothing more
  const op = `op-${crypto.randomUUID()}`;
  const first = toolA({ operation_id: op }, {});
  await runningA;
  // The caller's retry reaches server B: in progress while A's lease lives on B's clock, then B runs it.
  let answerB;
  let rounds = 0;
  for (; rounds < 100; rounds++) {
    answerB = await toolB({ operation_id: op }, {});
    const meta = answerB?._meta?.[META];
    if (meta?.status !== 'in_progress') break;
    await sleep(Math.max(1, meta.retryAfterMs));
  }
  bAnswered();
  const answerA = await first;
  return {
    effects: await count(op),
    a: { text: text(answerA), status: answerA?._meta?.[META]?.status },
    b: { text: text(answerB), status: answerB?._meta?.[META]?.status },
    rounds,
    events,
  };
}
