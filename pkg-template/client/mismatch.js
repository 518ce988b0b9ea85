// The check a -32020 or -32022 needs before it proves anything (2026-07-28). A server's transport sends them before
// dispatch — but a handler can send them too (a tool that calls another MCP server relays the peer's code after it
// acted), so the code alone does not prove "not processed". What the client can check, it checks here and hands
// the engine as `mismatchConfirmed`; the engine decides what it means. Decides nothing.
import { CODE_HEADER_MISMATCH, CODE_UNSUPPORTED_PROTOCOL_VERSION } from '../generated/names.js';
import { bodyError } from './attempt.js';
import { declarationsOf } from './param-headers.js';

/** A tool's `x-mcp-header` declarations as one comparable string ('' for none). */
const declared = (tool) => declarationsOf(tool).map((d) => `${d.path.join('/')}=${String(d.header).toLowerCase()}`).sort().join('\n');

/** The -32020/-32022 an outcome carries (as a JSON-RPC error, or in an HTTP error's body), or undefined. */
export function mismatchCode(outcome) {
  const code = outcome.kind === 'jsonrpc_error' ? outcome.code : outcome.kind === 'http' ? outcome.jsonrpcCode : undefined;
  return code === CODE_HEADER_MISMATCH || code === CODE_UNSUPPORTED_PROTOCOL_VERSION ? code : undefined;
}

/**
 * Whether the mismatch `code` names is real for this request:
 * - -32020: the tool list fetched now (the client SHOULD call tools/list, then retry once) changed this tool's
 *   `x-mcp-header` declarations from the ones of the list the attempt was sent under (`sentTool`). The fresh list
 *   is kept: the recovery step does not fetch it again (`run.toolsFresh`).
 * - -32022: the error's `supported` versions (its data, or the data of the error in the HTTP body) are a list of
 *   strings that excludes the protocol version this client's transport sent.
 * Anything that cannot be checked is not confirmed.
 */
export async function mismatchConfirmed(ctx, run, error, code, sentTool) {
  if (code === CODE_HEADER_MISMATCH) {
    let fresh;
    try {
      fresh = (await ctx.refreshTools()).get(run.params.name);
      run.toolsFresh = true;
    } catch {
      return false;
    }
    return declared(sentTool) !== declared(fresh);
  }
  // The SDKs' JSON-RPC errors carry the data; their HTTP errors quote the body (v1 in the message, v2 in data.text).
  const supported = Array.isArray(error?.data?.supported) ? error.data.supported
    : (bodyError(error?.message) ?? bodyError(error?.data?.text))?.data?.supported;
  const carried = ctx.client.transport?.protocolVersion;
  return typeof carried === 'string' && Array.isArray(supported) && supported.length > 0
    && supported.every((v) => typeof v === 'string') && !supported.includes(carried);
}
