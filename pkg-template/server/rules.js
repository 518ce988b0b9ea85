// LedgerRules, guarded in place (../guard.js): a freed, cloned or foreign LedgerRules, or a `nowMs` that is
// not a number, is a typed error before anything enters wasm. OperationLedger (./ledger.js) uses the same
// generated class, so it is guarded there too once this module has run. The exported class adds the stack
// backstop to construction; `isValidOperationId` gets it too.
import { LedgerRules as WasmLedgerRules, __adopt, initSync, isValidOperationId as rawIsValidOperationId } from '../mcp_retry_policy_server.js';
import { ANY, NUMBER, guardClass, guardFunction, stackGuard } from '../guard.js';

export const STACK = stackGuard(() => initSync()); // initialized by then: initSync() returns the exports

guardClass(WasmLedgerRules, {
  name: 'LedgerRules',
  tag: 3, // src/wasm/brand.rs
  adopt: __adopt,
  stack: STACK,
  methods: {
    admit: [['record', ANY], ['fingerprint', ANY], ['nowMs', NUMBER]],
    claim: [['record', ANY], ['fingerprint', ANY], ['nowMs', NUMBER]],
    finish: [['record', ANY], ['state', ANY], ['nowMs', NUMBER]],
    release: [['record', ANY], ['nowMs', NUMBER]],
    lookup: [['record', ANY], ['nowMs', NUMBER]],
  },
  getters: ['ttlMs', 'leaseMs'],
});

/** The ledger's transitions with validated settings (`ttlMs`, `leaseMs`). */
export class LedgerRules extends WasmLedgerRules {
  constructor(options) {
    const sp = STACK.enter();
    try {
      super(options);
    } catch (e) {
      STACK.escaped(sp);
      throw e;
    }
  }
}

/** Whether an operation id has the accepted form: 8–128 characters of `A–Z a–z 0–9 - _ . :`. */
export const isValidOperationId = guardFunction(STACK, rawIsValidOperationId);
