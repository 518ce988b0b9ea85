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
  let threw;
  try {
    await journal.begin({ tool: 'x' });
  } catch (e) {
    threw = e;
  }
  check('an entry without an operation id is a TypeError', threw instanceof TypeError && threw.code === 'invalid_type', threw);
  return checks;
}
