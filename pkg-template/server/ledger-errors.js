// The ledger's two errors: the store failed (`LedgerStoreError`), and a handler's word that its downstream
// outcome is not known (`OutcomeUnknown`). ledger.js re-exports both.
/**
 * A ledger store failed (threw) during `during` (get, insert, replace, transaction): `code` is
 * `store_unavailable`, `cause` the store's own error. What the caller (and the model) is told never includes
 * the store's message; the `store_error` event carries it for operators.
 */
export class LedgerStoreError extends Error {
  constructor(during, cause) {
    super(`the ledger store failed during ${during}`, { cause });
    this.name = 'LedgerStoreError';
    this.code = 'store_unavailable';
    this.during = during;
  }
}

/**
 * Thrown by a handler that submitted work downstream and cannot tell whether it committed (a timeout after
 * the request left). The ledger records `unknown` — never success, never a clean failure. Its message is
 * yours and is shown to the model (any other error's message is not).
 */
export class OutcomeUnknown extends Error {
  constructor(message = 'the downstream outcome is unknown', options) {
    super(message, options);
    this.name = 'OutcomeUnknown';
  }
}
