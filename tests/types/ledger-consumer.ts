// tsc over the ledger's operator API and its answers (issue #6): release, the rejected/result_not_stored
// meta, text results in stores, the released record state.
import {
  OperationLedger,
  MemoryLedgerStore,
  LEDGER_META_KEY,
  type LedgerStore,
  type LedgerReleased,
  type LedgerReleaseRefusal,
  type LedgerMeta,
  type LedgerRejectReason,
  type RecordState,
} from '../../pkg/server.js';

const ledger = new OperationLedger({ store: new MemoryLedgerStore(), ttlMs: 86_400_000, leaseMs: 60_000 });

async function operator(): Promise<void> {
  const key = { tenant: 'acme', action: 'submit_payment', operationId: 'pay-0001-abcd' };
  try {
    const out: LedgerReleased = await ledger.release(key, { reason: 'the bank has no such payment (OPS-42)' });
    const before: 'pending' | 'unknown' = out.previousState;
    const now: RecordState = out.record.state;
    void [before, now];
  } catch (e) {
    const code = (e as RangeError & { code: LedgerReleaseRefusal }).code;
    if (code === 'lease_live' || code === 'resolved' || code === 'not_found' || code === 'already_released' || code === 'contended') void code;
  }
  // @ts-expect-error a reason is required
  await ledger.release(key, {});
}
void operator;

// A store of one's own keeps results as text.
const textStore: LedgerStore = {
  get: async () => ({ record: { state: 'released', fingerprint: 'f', leaseUntilMs: 0, createdMs: 0, expiresMs: 0, version: 2 }, result: '{"released":{}}' }),
  insert: async () => true,
  replace: async (_k, _v, _r, result?: string) => result === undefined || typeof result === 'string',
};
void textStore;

function readMeta(result: { _meta?: Record<string, unknown> }): LedgerRejectReason | undefined {
  const meta = result._meta?.[LEDGER_META_KEY] as LedgerMeta | undefined;
  if (meta?.status === 'rejected') return meta.reason;
  if (meta?.status === 'result_not_stored') void meta.state;
  return undefined;
}
void readMeta;

// Purge (issue #8): every store of the package has it; the ledger's clock is the default.
import { SqliteLedgerStore, DurableObjectLedgerStore, PostgresLedgerStore, type SqliteDurability } from '../../pkg/server.js';
import { Pool } from 'pg';

declare const db: { prepare(sql: string): any; exec(sql: string): unknown };
declare const storage: ConstructorParameters<typeof DurableObjectLedgerStore>[0];

async function purging(): Promise<number> {
  const purged: number = await ledger.purge();
  const at: number = await ledger.purge(Date.now());
  const durability: SqliteDurability = 'normal';
  const sqlite = new SqliteLedgerStore(db, { durability });
  // A real pg Pool is what the Postgres store takes (exported by the node entries only).
  const postgres = new PostgresLedgerStore(new Pool({ host: '127.0.0.1' }));
  await postgres.ready;
  const object = new DurableObjectLedgerStore(storage);
  const next: number = await object.scheduleAlarm(3_600_000);
  const byAlarm: number = await object.purgeOnAlarm(3_600_000);
  return purged + at + (await sqlite.purge(0)) + (await postgres.purge(0)) + next + byAlarm;
}
void purging;
