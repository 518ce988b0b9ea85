// One contract for every operation-id journal (memory, IndexedDB, Durable Object). Runs anywhere — Node,
// a browser page, a Worker — and returns its checks, so each host can assert them its own way.
export async function runJournalContract(journal) {
  const checks = [];
  const check = (name, ok, detail = '') => checks.push({ name, ok: !!ok, detail: String(detail) });
  const id = (n) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

  const a = await journal.begin({ tool: 'create_ticket', operationId: id(1), intent: 'call-1', arguments: { title: 't' }, createdAt: 1 });
  check('begin returns the entry, pending', a.operationId === id(1) && a.state === 'pending' && a.tool === 'create_ticket', JSON.stringify(a));
  const again = await journal.begin({ tool: 'create_ticket', operationId: id(2), intent: 'call-1', createdAt: 2 });
  check('the same intent keeps its first operation id', again.operationId === id(1), again.operationId);
  const b = await journal.begin({ tool: 'create_ticket', operationId: id(3), createdAt: 3 });
  check('no intent: a new entry', b.operationId === id(3));
  const dup = await journal.begin({ tool: 'create_ticket', operationId: id(3), createdAt: 4 });
  check('the same operation id is not entered twice', dup.createdAt === 3, dup.createdAt);
  let pending = (await journal.pending()).map((e) => e.operationId).sort();
  check('both are pending', JSON.stringify(pending) === JSON.stringify([id(1), id(3)]), pending);
  const s = await journal.settle(id(1), 'succeeded', 10);
  check('settle marks the state', s?.state === 'succeeded' && s.settledAt === 10, JSON.stringify(s));
  await journal.settle(id(3), 'unknown', 11);
  pending = (await journal.pending()).map((e) => [e.operationId, e.state]);
  check('unknown stays listed, succeeded does not', JSON.stringify(pending) === JSON.stringify([[id(3), 'unknown']]), JSON.stringify(pending));
  const settledIntent = await journal.begin({ tool: 'create_ticket', operationId: id(4), intent: 'call-1' });
  check('a settled intent still keeps its id (never replaced)', settledIntent.operationId === id(1), settledIntent.operationId);
  check('settling an unknown id changes nothing', (await journal.settle(id(99), 'failed')) === undefined);
  if (journal.get) {
    const got = await journal.get(id(1));
    check('get reads an entry back', got?.state === 'succeeded' && got?.arguments?.title === 't', JSON.stringify(got));
  }
  if (journal.purge) {
    // Retention: resolved entries settled at or before the time go, with their intent; unresolved ones never.
    await journal.begin({ tool: 'create_ticket', operationId: id(5), intent: 'call-5', createdAt: 5 });
    await journal.settle(id(5), 'failed', 30);
    await journal.begin({ tool: 'create_ticket', operationId: id(6), createdAt: 6 });
    await journal.settle(id(6), 'tool_error', 500);
    await journal.begin({ tool: 'create_ticket', operationId: id(7), createdAt: 7 });
    await journal.settle(id(7), 'pending', 8);
    const n = await journal.purge(100);
    check('purge removes the resolved entries settled before the time, and says how many', n === 2, n);
    const left = (await journal.pending()).map((e) => e.operationId).sort();
    check('purge never removes a pending or unknown entry, however old', JSON.stringify(left) === JSON.stringify([id(3), id(7)]), left);
    if (journal.get) {
      check('a later resolved entry stays', (await journal.get(id(6)))?.state === 'tool_error');
      check('a purged entry is gone', (await journal.get(id(1))) === undefined && (await journal.get(id(5))) === undefined);
    }
    const fresh = await journal.begin({ tool: 'create_ticket', operationId: id(8), intent: 'call-5', createdAt: 40 });
    check('a purged intent is forgotten: a new entry', fresh.operationId === id(8) && fresh.state === 'pending', fresh.operationId);
    check('purging again removes nothing', (await journal.purge(100)) === 0);
    let bad;
    try {
      await journal.purge('yesterday');
    } catch (e) {
      bad = e;
    }
    check('purge refuses a time that is not a number', bad instanceof TypeError && bad.field === 'settledBeforeMs', bad);
    // Leave the journal as the hosts expect it after the contract: one unknown entry.
    await journal.settle(id(7), 'succeeded', 41);
    await journal.settle(id(8), 'succeeded', 42);
  }
  let threw;
  try {
    await journal.begin({ tool: 'x' });
  } catch (e) {
    threw = e;
  }
  check('an entry without an operation id is a TypeError', threw instanceof TypeError && threw.code === 'invalid_type', threw);
  return checks;
}
