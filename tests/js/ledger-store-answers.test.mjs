// A custom ledger store that answers outside its contract, and a write without a fingerprint: refused by name
// (a typed error, a `store_error` event for the store's part), and nothing lost — a record the ledger cannot
// read is never taken for an absent one (that would run the write again), and a key stays readable.
import test from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { OperationLedger, MemoryLedgerStore, SqliteLedgerStore, LedgerStoreError } from '../../pkg/node.js';

const key = (id) => ({ tenant: 't', action: 'create_ticket', operationId: id });

/** A memory store whose `method` answers `answer` (after doing its work, for the writes). */
function bent(method, answer) {
  const inner = new MemoryLedgerStore();
  const store = {
    get: (k) => inner.get(k),
    insert: (k, r) => inner.insert(k, r),
    replace: (k, v, r, t) => inner.replace(k, v, r, t),
  };
  store[method] = async (...args) => {
    await inner[method](...args);
    return answer;
  };
  return { store, inner };
}

test('a write without a fingerprint is refused before anything is read or written; the key stays readable', async () => {
  const store = new SqliteLedgerStore(new Database(':memory:'));
  const ledger = new OperationLedger({ store });
  let ran = 0;
  for (const bad of [undefined, null, 42, {}, ['a']]) {
    await assert.rejects(ledger.begin(key('op-1'), bad), (e) => e instanceof TypeError && e.field === 'fingerprint', `begin, fingerprint ${String(bad)}`);
    await assert.rejects(ledger.executeAtomically(key('op-1'), bad, async () => { ran++; return {}; }),
      (e) => e instanceof TypeError && e.field === 'fingerprint', `executeAtomically, fingerprint ${String(bad)}`);
  }
  assert.equal(ran, 0, 'no handler ran');
  assert.equal(await store.get(key('op-1')), undefined, 'nothing claimed');
  assert.deepEqual(await ledger.status(key('op-1')), { status: 'not_found' });
  const first = await ledger.begin(key('op-1'), 'fp');
  assert.equal(first.action, 'execute', 'the key still works');
});

test("a store's get answering null is no record (the write executes once)", async () => {
  const { store } = bent('get', null);
  store.get = async () => null;
  const ledger = new OperationLedger({ store });
  assert.equal((await ledger.begin(key('op-2'), 'fp')).action, 'execute');
  assert.deepEqual(await ledger.status(key('op-2')), { status: 'not_found' });
});

for (const answer of [42, 'yes', [], {}, { record: null }]) {
  test(`a store's get answering ${JSON.stringify(answer)} is a LedgerStoreError, never an absent record`, async () => {
    const events = [];
    const store = { get: async () => answer, insert: async () => assert.fail('inserted'), replace: async () => assert.fail('replaced') };
    const ledger = new OperationLedger({ store, onEvent: (e) => events.push(e) });
    await assert.rejects(ledger.begin(key('op-3'), 'fp'), (e) => e instanceof LedgerStoreError && e.cause?.field === 'store' && /get must resolve/.test(e.cause.message));
    await assert.rejects(ledger.status(key('op-3')), LedgerStoreError);
    assert.ok(events.some((e) => e.type === 'store_error' && e.during === 'get'), 'store_error told');
  });
}

for (const method of ['insert', 'replace']) {
  for (const answer of [undefined, null, 1, 'ok', {}]) {
    test(`a store's ${method} answering ${JSON.stringify(answer) ?? 'undefined'} is a LedgerStoreError, and its claim is not lost`, async () => {
      const events = [];
      const { store, inner } = bent(method, answer);
      const ledger = new OperationLedger({ store, onEvent: (e) => events.push(e) });
      if (method === 'replace') {
        // A record to replace: a claim finished as unknown (its lease given up), which a new look reconciles.
        const first = await new OperationLedger({ store: inner }).begin(key('op-4'), 'fp');
        await new OperationLedger({ store: inner }).finish(key('op-4'), first.claim, 'unknown');
        const before = await inner.get(key('op-4'));
        const noHook = await ledger.begin(key('op-4'), 'fp');
        assert.equal(noHook.action, 'unknown', 'unknown without a reconcile hook: nothing written');
        const hooked = new OperationLedger({ store, onEvent: (e) => events.push(e), reconcile: async () => ({ status: 'not_done' }) });
        await assert.rejects(hooked.begin(key('op-4'), 'fp'), (e) => e instanceof LedgerStoreError && e.cause?.field === 'store' && /replace must resolve/.test(e.cause.message));
        assert.notDeepEqual((await inner.get(key('op-4'))).record, undefined);
        assert.ok(before, 'a record was there');
      } else {
        await assert.rejects(ledger.begin(key('op-4'), 'fp'), (e) => e instanceof LedgerStoreError && e.cause?.field === 'store' && /insert must resolve/.test(e.cause.message));
        // The insert did write: the claim is the key's, pending — never executed a second time.
        const stored = await inner.get(key('op-4'));
        assert.equal(stored.record.state, 'pending');
        const again = await new OperationLedger({ store: inner }).begin(key('op-4'), 'fp');
        assert.notEqual(again.action, 'execute', 'the claim written before the bad answer holds the key');
      }
      assert.ok(events.some((e) => e.type === 'store_error' && e.during === method), 'store_error told');
    });
  }
}
