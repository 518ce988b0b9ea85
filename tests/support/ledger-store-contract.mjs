// One contract for every ledger store (memory, SQLite, Durable Object, D1). Runs in Node and in workerd
// and returns its checks, so each host asserts them its own way.
//
// Part 1 is the store's own contract: atomic insert, versioned replace, results kept as opaque text, and
// purge (only expired resolved rows go; unresolved rows stay however old).
// Part 2 (when the host passes the package's `{ OperationLedger, MemoryLedgerStore }`) runs the ledger over
// the store: one encoding and one replay for every store (each replay deep-equals the Memory store's and the
// documented form), unencodable results still recorded, unresolved records never expiring into a second
// execution, the operator's release, and the ledger's purge.
export async function runLedgerStoreContract(store, lib) {
  const checks = [];
  const check = (name, ok, detail = '') => checks.push({ name, ok: !!ok, detail: typeof detail === 'string' ? detail : safeJson(detail) });
  const id = Math.random().toString(36).slice(2);
  const key = { tenant: 'acme', action: 'open_ticket', operationId: `op-${id}` };
  const rec = (version, state = 'pending') => ({ state, fingerprint: 'f'.repeat(64), leaseUntilMs: 1000, createdMs: 0, expiresMs: 86_400_000, version });
  const T1 = JSON.stringify({ content: [{ type: 'text', text: 'T-1' }] });

  check('an absent key reads as undefined', (await store.get(key)) === undefined);
  check('the first insert wins', (await store.insert(key, rec(1))) === true);
  check('a second insert loses', (await store.insert(key, rec(1))) === false);
  const got = await store.get(key);
  check('get returns the record, without a result', got?.record?.version === 1 && got.record.state === 'pending' && got.record.fingerprint === 'f'.repeat(64) && got.result === undefined, got);
  check('replace with a stale version loses', (await store.replace(key, 7, rec(8, 'succeeded'), T1)) === false);
  check('replace with the current version wins', (await store.replace(key, 1, rec(2, 'succeeded'), T1)) === true);
  const after = await store.get(key);
  check('the result text is kept beside the record, unchanged', after?.record?.state === 'succeeded' && after?.result === T1, after);
  check('a replace without a result leaves none', (await store.replace(key, 2, rec(3, 'succeeded'))) === true && (await store.get(key))?.result === undefined);
  // The texts the ledger writes (JSON.stringify output: lone surrogates and control characters escaped).
  const texts = ['""', 'null', JSON.stringify({ t: 'é😀\u2028\u2029 \ud800 \u0000 "\\' }), JSON.stringify('x'.repeat(60_000))];
  let version = 3;
  const kept = [];
  for (const t of texts) {
    const ok = await store.replace(key, version, rec(version + 1, 'succeeded'), t);
    version++;
    kept.push(ok && (await store.get(key))?.result === t);
  }
  check('every text comes back exactly as written (unicode, escapes, 60 kB)', kept.every(Boolean), kept);
  let badResult;
  try {
    await store.replace(key, version, rec(version + 1, 'succeeded'), { content: [] });
  } catch (e) {
    badResult = e;
  }
  check('a result that is not text is a TypeError (stores never encode)', badResult instanceof TypeError && badResult.field === 'result', String(badResult));
  // The store keeps its own copy: a caller that changes its record object afterwards (or the one it read) changes nothing stored.
  const alias = { ...key, operationId: `${key.operationId}-alias` };
  const written = rec(1);
  await store.insert(alias, written);
  written.version = 99;
  (await store.get(alias)).record.state = 'succeeded';
  const stored = (await store.get(alias))?.record;
  check('the stored record is the store\'s own copy (changing the written or the read object changes nothing)', stored?.version === 1 && stored?.state === 'pending', stored);
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
  await purgeContract(store, id, check);
  if (typeof store.transaction === 'function') await transactionContract(store, id, check);
  if (lib) await ledgerOverStore(store, lib, id, check);
  return checks;
}

// ── Purge ────────────────────────────────────────────────────────────────────────────────────────────────
// Times here are small (before 86_400_000, the rows above), so a purge at 6_000 touches only these rows and
// the count is exact; other runs' rows (part 2's clock starts at 1_000_000) are later still.
async function purgeContract(store, id, check) {
  const p = (name) => ({ tenant: 'acme', action: 'purge', operationId: `${name}-${id}` });
  const at = (state, expiresMs, version = 1) => ({ state, fingerprint: 'f'.repeat(64), leaseUntilMs: 0, createdMs: 0, expiresMs, version });
  const rows = {
    succeededOld: at('succeeded', 5_000),
    failedOld: at('failed', 5_000),
    succeededAtNow: at('succeeded', 6_000),
    pendingAncient: at('pending', 1),
    unknownAncient: at('unknown', 1),
    releasedAncient: at('released', 1),
    succeededLater: at('succeeded', 6_001),
    failedLater: at('failed', 1e15),
  };
  for (const [name, record] of Object.entries(rows)) await store.insert(p(name), record);
  // Resolved through replace; and resolved, then made pending again (a fresh claim after expiry).
  await store.insert(p('replacedResolved'), at('pending', 1));
  await store.replace(p('replacedResolved'), 1, at('failed', 4_000, 2), '"x"');
  await store.insert(p('reclaimed'), at('succeeded', 3_000));
  await store.replace(p('reclaimed'), 1, at('pending', 2, 2));
  const present = async (name) => (await store.get(p(name))) !== undefined;
  const removed = await store.purge(6_000);
  check('purge(now) deletes the resolved rows with expiresMs <= now and counts them', removed === 4, `${removed} removed`);
  check('purge deleted succeeded and failed rows that expired, also at exactly now, also resolved by replace',
    !(await present('succeededOld')) && !(await present('failedOld')) && !(await present('succeededAtNow')) && !(await present('replacedResolved')));
  check('purge keeps resolved rows that have not expired', (await present('succeededLater')) && (await present('failedLater')));
  check('purge keeps pending and unknown rows however long expired',
    (await present('pendingAncient')) && (await present('unknownAncient')) && (await present('reclaimed')));
  check('purge keeps released rows (the operator\'s reason)', await present('releasedAncient'));
  check('a second purge at the same time finds nothing', (await store.purge(6_000)) === 0);
  const late = await store.purge(2e15);
  check('a purge far later takes the rest of the resolved rows, and still no unresolved one',
    late >= 2 && !(await present('succeededLater')) && !(await present('failedLater')) &&
      (await store.get(p('pendingAncient')))?.record?.state === 'pending' && (await store.get(p('unknownAncient')))?.record?.state === 'unknown' &&
      (await store.get(p('reclaimed')))?.record?.state === 'pending', `${late} removed`);
  const refusals = [];
  for (const [bad, want] of [[NaN, 'RangeError not_finite'], [-1, 'RangeError negative'], [1.5, 'RangeError not_integer'], [2 ** 53, 'RangeError too_large'], ['1000', 'TypeError invalid_type'], [undefined, 'TypeError invalid_type']]) {
    try {
      await store.purge(bad);
      refusals.push(`${String(bad)}: no error`);
    } catch (e) {
      const got = `${e?.name} ${e?.code}`;
      if (got !== want || e.field !== 'nowMs') refusals.push(`${String(bad)}: ${got} (${e?.field})`);
    }
  }
  check('purge refuses a bad nowMs with a typed error naming nowMs', refusals.length === 0, refusals.join('; '));
}

// ── The ledger over the store ────────────────────────────────────────────────────────────────────────────

/** Awkward results and the replay the documented encoding (the MCP wire form, JSON.stringify) gives. */
export function awkwardResults() {
  const text = (t) => [{ type: 'text', text: t }];
  let deep = { leaf: 'bottom' };
  for (let i = 0; i < 40; i++) deep = { level: i, next: deep, list: [i, { i }] };
  const big = Array.from({ length: 5_000 }, (_, i) => (i % 3 ? i * 1.5 : { i, s: `row ${i}` }));
  return [
    ['NaN and ±Infinity → null', { content: text('n'), structuredContent: { n: NaN, p: Infinity, m: -Infinity, list: [NaN] } },
      { content: text('n'), structuredContent: { n: null, p: null, m: null, list: [null] } }],
    ['-0 → 0', { content: text('z'), structuredContent: { z: -0, list: [-0, 0] } }, { content: text('z'), structuredContent: { z: 0, list: [0, 0] } }],
    ['a Date → its ISO string', { content: text('d'), structuredContent: { at: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)) } },
      { content: text('d'), structuredContent: { at: '2026-01-02T03:04:05.006Z' } }],
    ['nested 40 deep', { content: text('deep'), structuredContent: deep }, { content: text('deep'), structuredContent: JSON.parse(JSON.stringify(deep)) }],
    ['unicode, escapes and a lone surrogate', { content: text('é😀\u2028\u2029\u0000"\\\ud800 end'), structuredContent: { 'ключ😀': '\u00a0\ufeff' } },
      { content: text('é😀\u2028\u2029\u0000"\\\ud800 end'), structuredContent: { 'ключ😀': '\u00a0\ufeff' } }],
    ['a 5 000-element array', { content: text('big'), structuredContent: { big } }, { content: text('big'), structuredContent: { big: JSON.parse(JSON.stringify(big)) } }],
    ['undefined members left out; undefined in an array → null', { content: text('u'), structuredContent: { a: undefined, b: [undefined, 1], c: 1 }, _meta: undefined },
      { content: text('u'), structuredContent: { b: [null, 1], c: 1 } }],
    ['toJSON is honoured', { content: text('j'), structuredContent: { v: { secret: 1, toJSON: () => ({ shown: true }) }, w: { toJSON: () => 'w' } } },
      { content: text('j'), structuredContent: { v: { shown: true }, w: 'w' } }],
    ['a Map, a Set and a class instance → their JSON form', { content: text('m'), structuredContent: { m: new Map([[1, 2]]), s: new Set([1]), e: new (class { constructor() { this.x = 1; } })() } },
      { content: text('m'), structuredContent: { m: {}, s: {}, e: { x: 1 } } }],
    ['an error result', { isError: true, content: text('no such user') }, { isError: true, content: text('no such user') }],
  ];
}

/** Results that have no JSON form, and what the stored note must name. */
export function unencodableResults() {
  const cyclic = { content: [{ type: 'text', text: 'c' }] };
  cyclic.structuredContent = { self: cyclic };
  return [
    ['a BigInt', { content: [{ type: 'text', text: 'b' }], structuredContent: { n: 10n } }, /a BigInt at "n"/],
    ['a function', { content: [{ type: 'text', text: 'f' }], structuredContent: { cb() {} } }, /a function at "cb"/],
    ['a Symbol', { content: [{ type: 'text', text: 's' }], structuredContent: { s: Symbol('s') } }, /a Symbol at "s"/],
    ['a cycle', cyclic, /cycle/],
    ['a toJSON that throws', { content: [], structuredContent: { toJSON() { throw new Error('boom'); } } }, /threw Error(?!: boom)/], // the error named, its message not shown
    ['nothing (undefined)', undefined, /no result/],
  ];
}

/**
 * The optional `transaction(key, expectedVersion, claim, work)`: the claim, the work's writes and the record
 * commit together; a lost claim never calls `work`; a throw rolls everything back; the claim alone is never
 * seen. (The business writes through `tx` are store-specific: each host tests its own.)
 */
async function transactionContract(store, id, check) {
  const key = { tenant: 'acme', action: 'tx_contract', operationId: `op-${id}-tx` };
  const rec = (version, state) => ({ state, fingerprint: 't'.repeat(64), leaseUntilMs: 1000, createdMs: 0, expiresMs: 86_400_000, version });
  const T = (n) => JSON.stringify({ content: [{ type: 'text', text: `tx-${n}` }] });
  let calls = 0;
  let peek;
  let gotTx;
  const first = await store.transaction(key, null, rec(1, 'pending'), async (tx) => {
    calls++;
    gotTx = tx !== undefined && tx !== null;
    peek = store.get(key); // from outside the transaction, while it is open
    return { record: rec(2, 'succeeded'), result: T(1) };
  });
  const seen = await peek;
  const row = await store.get(key);
  check('transaction: a fresh key commits the work\'s record with its result', first === true && calls === 1 && gotTx && row?.record.version === 2 && row.record.state === 'succeeded' && row.result === T(1), { first, calls, row });
  check('transaction: the claim alone is never seen from outside', seen === undefined || (seen.record.version === 2 && seen.record.state === 'succeeded'), seen);
  const lostInsert = await store.transaction(key, null, rec(1, 'pending'), async () => {
    calls++;
    return { record: rec(2, 'failed'), result: T(9) };
  });
  check('transaction: claiming an existing key as new loses, and the row is unchanged', lostInsert === false && (await store.get(key))?.result === T(1), lostInsert);
  const lostVersion = await store.transaction(key, 7, rec(8, 'pending'), async () => {
    calls++;
    return { record: rec(9, 'failed'), result: T(9) };
  });
  check('transaction: a stale version loses', lostVersion === false && (await store.get(key))?.record.version === 2, lostVersion);
  const again = await store.transaction(key, 2, rec(3, 'pending'), async () => ({ record: rec(4, 'failed'), result: T(4) }));
  const replaced = await store.get(key);
  check('transaction: the current version is replaced (claim, then record)', again === true && replaced?.record.version === 4 && replaced.record.state === 'failed' && replaced.result === T(4), replaced);
  const boom = new Error('handler failed');
  let thrown;
  const fresh = { ...key, operationId: `${key.operationId}-throw` };
  try {
    await store.transaction(fresh, null, rec(1, 'pending'), async () => {
      throw boom;
    });
  } catch (e) {
    thrown = e;
  }
  check('transaction: a throwing work rolls back its claim and rethrows the error', thrown === boom && (await store.get(fresh)) === undefined, String(thrown));
  try {
    await store.transaction(key, 4, rec(5, 'pending'), async () => {
      throw boom;
    });
  } catch (e) {
    thrown = e;
  }
  check('transaction: a throw over an existing row leaves it as it was', (await store.get(key))?.record.version === 4, await store.get(key));
  const race = { ...key, operationId: `${key.operationId}-race` };
  const results = await Promise.all(Array.from({ length: 4 }, (_, i) => store.transaction(race, null, rec(1, 'pending'), async () => ({ record: rec(2, 'succeeded'), result: T(`race-${i}`) }))));
  const winners = results.flatMap((r, i) => (r ? [i] : []));
  check('transaction: four concurrent first claims of one key: exactly one commits', winners.length === 1 && (await store.get(race))?.result === T(`race-${winners[0]}`), results);
  check('transaction: a lost claim never calls the work (stores that run work before the claim excepted)', calls === 1 || store.constructor?.name === 'D1LedgerStore', calls);
}

async function ledgerOverStore(store, { OperationLedger, MemoryLedgerStore }, id, check) {
  let now = 1_000_000;
  const clock = () => now;
  const ledger = new OperationLedger({ store, ttlMs: 10_000, leaseMs: 2_000, now: clock });
  const memory = new OperationLedger({ store: new MemoryLedgerStore(), ttlMs: 10_000, leaseMs: 2_000, now: clock });
  const k = (name) => ({ tenant: 'acme', action: 'contract', operationId: `${name}-${id}` });
  const run = async (l, key, state, result) => {
    const b = await l.begin(key, 'fp');
    if (b.action !== 'execute') return { begin: b };
    const finished = await l.finish(key, b.claim, state, result);
    return { finished, replay: await l.begin(key, 'fp') };
  };

  // One encoding, one replay.
  let i = 0;
  for (const [name, result, expected] of awkwardResults()) {
    i++;
    const state = result.isError ? 'failed' : 'succeeded';
    const here = await run(ledger, k(`awkward${i}`), state, result);
    const there = await run(memory, k(`awkward${i}`), state, result);
    check(`replay of ${name}: recorded as ${state}`, here.finished === true && here.replay?.action === 'replay' && here.replay.state === state, here.replay?.action);
    check(`replay of ${name}: deep-equals the Memory store's replay`, same(here.replay?.result, there.replay?.result), diff(here.replay?.result, there.replay?.result));
    check(`replay of ${name}: is the documented JSON form`, same(here.replay?.result, expected), diff(here.replay?.result, expected));
  }

  // A result with no JSON form: the operation is recorded as succeeded (or failed) with a note, never left pending.
  i = 0;
  for (const [name, result, why] of unencodableResults()) {
    i++;
    const r = await run(ledger, k(`unencodable${i}`), 'succeeded', result);
    const note = r.replay?.result;
    const meta = note?._meta?.['dev.mcp-retry-policy/ledger'];
    check(`${name}: recorded as succeeded, replayed (not in progress, not unknown)`, r.finished === true && r.replay?.action === 'replay' && r.replay.state === 'succeeded', r.replay?.action);
    check(`${name}: the replay says plainly that it succeeded and why the result is missing`,
      note?.isError === false && /succeeded; its result could not be stored/.test(note?.content?.[0]?.text) && why.test(note.content[0].text) &&
        meta?.status === 'result_not_stored' && meta.state === 'succeeded' && why.test(meta.reason), note);
  }
  const failedBig = await run(ledger, k('unencodable-failed'), 'failed', { isError: true, content: [], structuredContent: { n: 1n } });
  check('an unencodable error result: recorded as failed, its note an error too',
    failedBig.replay?.state === 'failed' && failedBig.replay.result?.isError === true && /reported an error; its result could not be stored/.test(failedBig.replay.result.content[0].text), failedBig.replay);

  // TTL applies to resolved records only: an unresolved one is reconciled (here: no hook → unknown), never executed.
  const pendingKey = k('ttl-pending');
  await ledger.begin(pendingKey, 'fp');
  now += 50_000; // past the lease and five TTLs
  const stale = await ledger.begin(pendingKey, 'fp');
  check('a pending record past its TTL is not executed again (reconciled: unknown without a hook)', stale.action === 'unknown', stale);
  const unknownKey = k('ttl-unknown');
  const u = await ledger.begin(unknownKey, 'fp');
  await ledger.finish(unknownKey, u.claim, 'unknown');
  now += 50_000;
  const staleUnknown = await ledger.begin(unknownKey, 'fp');
  check('an unknown record past its TTL is not executed again', staleUnknown.action === 'unknown', staleUnknown);
  const doneKey = k('ttl-done');
  await run(ledger, doneKey, 'succeeded', { content: [] });
  now += 10_000;
  check('a succeeded record past its TTL starts fresh', (await ledger.begin(doneKey, 'fp')).action === 'execute');

  // An outcome the hook finds after the TTL is replayed for a TTL from then.
  const found = new OperationLedger({
    store, ttlMs: 10_000, leaseMs: 2_000, now: clock,
    reconcile: () => ({ status: 'succeeded', result: { content: [{ type: 'text', text: 'found' }], structuredContent: { at: new Date(0) } } }),
  });
  const lateKey = k('late-reconcile');
  await found.begin(lateKey, 'fp');
  now += 50_000;
  const first = await found.begin(lateKey, 'fp');
  now += 9_000;
  const again = await found.begin(lateKey, 'fp');
  check('a late reconcile is replayed, the same way the first time and after',
    first.action === 'replay' && again.action === 'replay' && same(first.result, again.result) && first.result.structuredContent.at === '1970-01-01T00:00:00.000Z', { first, again });

  // The operator's release.
  const relKey = k('release');
  const claimed = await ledger.begin(relKey, 'fp');
  const refused = async (fn) => {
    try {
      await fn();
      return 'no error';
    } catch (e) {
      return e instanceof RangeError && e.field === 'key' ? e.code : `${e?.name}: ${e?.message}`;
    }
  };
  check('release of a live claim is refused (lease_live)', (await refused(() => ledger.release(relKey, { reason: 'checked' }))) === 'lease_live');
  now += 2_000;
  const released = await ledger.release(relKey, { reason: 'the bank has no such payment (ticket OPS-1)' });
  check('release of a pending claim past its lease', released.released === true && released.previousState === 'pending' && released.record.state === 'released', released);
  const stored = await store.get(relKey);
  check('the release and its reason are in the store', stored?.record?.state === 'released' && JSON.parse(stored.result).released.reason === 'the bank has no such payment (ticket OPS-1)', stored);
  check('a second release is refused (already_released)', (await refused(() => ledger.release(relKey, { reason: 'again' }))) === 'already_released');
  const next = await ledger.begin(relKey, 'fp');
  check('after a release the next call executes', next.action === 'execute' && next.claim.version > claimed.claim.version, next);
  check('a late finish of the released claim cannot overwrite the new claim', (await ledger.finish(relKey, claimed.claim, 'succeeded', { content: [] })) === false);
  await ledger.finish(relKey, next.claim, 'succeeded', { content: [{ type: 'text', text: 'second run' }] });
  check('release of a succeeded record is refused (resolved), and it still replays',
    (await refused(() => ledger.release(relKey, { reason: 'oops' }))) === 'resolved' && (await ledger.begin(relKey, 'fp')).result?.content?.[0]?.text === 'second run');
  const unk = k('release-unknown');
  const uc = await ledger.begin(unk, 'fp');
  await ledger.finish(unk, uc.claim, 'unknown');
  const ru = await ledger.release(unk, { reason: 'checked downstream' });
  check('release of an unknown record; the next call executes', ru.previousState === 'unknown' && (await ledger.begin(unk, 'fp')).action === 'execute');
  check('release of an absent record is refused (not_found)', (await refused(() => ledger.release(k('absent'), { reason: 'x' }))) === 'not_found');
  let noReason;
  try {
    await ledger.release(unk, {});
  } catch (e) {
    noReason = e;
  }
  check('release without a reason is a TypeError naming reason', noReason instanceof TypeError && noReason.field === 'reason', String(noReason));

  // The ledger's purge on its own clock: resolved records past their TTL go; the unresolved ones stay and
  // are still reconciled, never executed.
  const purged = await ledger.purge();
  check('ledger.purge() on its clock removes the expired resolved records', purged >= awkwardResults().length && (await store.get(k('awkward1'))) === undefined, `${purged} removed`);
  check('ledger.purge() keeps the unresolved records, which still answer unknown, not execute',
    (await store.get(pendingKey))?.record?.state === 'pending' && (await store.get(unknownKey))?.record?.state === 'unknown' &&
      (await ledger.begin(pendingKey, 'fp')).action === 'unknown' && (await ledger.begin(unknownKey, 'fp')).action === 'unknown');
  const fresh = await run(ledger, k('purge-fresh'), 'succeeded', { content: [] });
  check('ledger.purge() keeps a record inside its TTL, still replayed', (await ledger.purge()) === 0 && fresh.replay?.action === 'replay' && (await ledger.begin(k('purge-fresh'), 'fp')).action === 'replay');
  let badNow;
  try {
    await ledger.purge(-5);
  } catch (e) {
    badNow = e;
  }
  check('ledger.purge(-5) is a RangeError naming nowMs', badNow instanceof RangeError && badNow.field === 'nowMs' && badNow.code === 'negative', String(badNow));
}

/** Deep equality of decoded JSON-ish values (Object.is on leaves: -0 and NaN count). */
function same(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same(a[k], b[k]));
}

function diff(a, b) {
  return same(a, b) ? '' : `${safeJson(a).slice(0, 300)} ≠ ${safeJson(b).slice(0, 300)}`;
}

function safeJson(v) {
  try {
    return JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}n` : x)) ?? String(v);
  } catch {
    return String(v);
  }
}
