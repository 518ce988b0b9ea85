// One contract for every ledger store (memory, SQLite, Durable Object, D1). Runs in Node and in workerd
// and returns its checks, so each host asserts them its own way.
export async function runLedgerStoreContract(store) {
  const checks = [];
  const check = (name, ok, detail = '') => checks.push({ name, ok: !!ok, detail: typeof detail === 'string' ? detail : JSON.stringify(detail) });
  const key = { tenant: 'acme', action: 'open_ticket', operationId: `op-${Math.random().toString(36).slice(2)}` };
  const rec = (version, state = 'pending') => ({ state, fingerprint: 'f'.repeat(64), leaseUntilMs: 1000, createdMs: 0, expiresMs: 86_400_000, version });

  check('an absent key reads as undefined', (await store.get(key)) === undefined);
  check('the first insert wins', (await store.insert(key, rec(1))) === true);
  check('a second insert loses', (await store.insert(key, rec(1))) === false);
  const got = await store.get(key);
  check('get returns the record', got?.record?.version === 1 && got.record.state === 'pending' && got.record.fingerprint === 'f'.repeat(64), got);
  check('replace with a stale version loses', (await store.replace(key, 7, rec(8, 'succeeded'), { ok: 1 })) === false);
  check('replace with the current version wins', (await store.replace(key, 1, rec(2, 'succeeded'), { content: [{ type: 'text', text: 'T-1' }] })) === true);
  const after = await store.get(key);
  check('the result is kept beside the record', after?.record?.state === 'succeeded' && after?.result?.content?.[0]?.text === 'T-1', after);
  check('a replace without a result keeps the old one', (await store.replace(key, 2, rec(3, 'succeeded'))) === true && (await store.get(key))?.result?.content?.[0]?.text === 'T-1');
  const other = { ...key, tenant: 'globex' };
  check('tenants are separate keys', (await store.get(other)) === undefined && (await store.insert(other, rec(1))) === true);
  const otherAction = { ...key, action: 'close_ticket' };
  check('actions are separate keys', (await store.get(otherAction)) === undefined);
  // Concurrent claims of one fresh key: exactly one wins.
  const race = { ...key, operationId: `${key.operationId}-race` };
  const wins = (await Promise.all(Array.from({ length: 8 }, () => store.insert(race, rec(1))))).filter(Boolean).length;
  check('eight concurrent inserts: exactly one wins', wins === 1, `${wins} won`);
  const cas = (await Promise.all(Array.from({ length: 8 }, (_, i) => store.replace(race, 1, rec(2, i % 2 ? 'succeeded' : 'failed'))))).filter(Boolean).length;
  check('eight concurrent replaces of one version: exactly one wins', cas === 1, `${cas} won`);
  let threw;
  try {
    await store.get({ tenant: 'acme' });
  } catch (e) {
    threw = e;
  }
  check('a malformed key is a TypeError', threw instanceof TypeError && threw.code === 'invalid_type');
  return checks;
}
