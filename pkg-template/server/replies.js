// The ledger's own replies (what it answers in place of a write's result): their status, reason and words
// come from the Rust (src/ledger/reply.rs, generated into `LEDGER_REPLIES`): both faces say the same. Here:
// filling a template in, in one pass, as the Rust `fill` does — what is filled in is never read again.
import { LEDGER_META_KEY, LEDGER_REPLIES } from '../generated/names.js';

const PLACEHOLDER = /\{(arg|id|why|problem)\}/g;

/**
 * The reply `kind` (a `LEDGER_REPLIES` name) for `operationId` (undefined: none is named), its words filled
 * from `fill` — `arg` (the operation-id argument's name), `why` (a cause, shown in parentheses), `problem`
 * (the validator's) — and `extra` added under the ledger's `_meta` key. `isError`: the call did not return
 * the tool's own result.
 */
export function ledgerReply(kind, operationId, fill = {}, extra = undefined) {
  const [status, reason, template] = LEDGER_REPLIES[kind];
  const text = template.replace(PLACEHOLDER, (_, k) => {
    if (k === 'id') return String(operationId);
    if (k === 'why') return fill.why ? ` (${fill.why})` : '';
    return String(fill[k] ?? '');
  });
  const meta = { status };
  if (operationId !== undefined) meta.operationId = operationId;
  if (reason !== undefined) meta.reason = reason;
  return { isError: true, content: [{ type: 'text', text }], _meta: { [LEDGER_META_KEY]: extra ? { ...meta, ...extra } : meta } };
}
