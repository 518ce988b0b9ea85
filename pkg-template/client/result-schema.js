// The result schema `client.request` validates with: any object, as the SDK's exported `ResultSchema` (a loose
// object) accepts (tests/js/with-retry-steps.test.mjs compares the two). Not imported from the SDK: it is an
// optional peer (a static import would make it mandatory for RetryEngine users), and a dynamic import of a bare
// specifier does not load in unbundled module graphs (workerd via miniflare). Not `CallToolResultSchema`, on
// purpose: it refuses results a tool really returned (a content block of a type it does not know, from a newer
// revision or an extension; `isError` that is not a boolean), and a refused result would surface as an error
// after the tool ran (what the TS SDK's server does with such a result before it is sent: with-retry.test.mjs).
//
// Both SDK generations: v1 (`@modelcontextprotocol/sdk`) calls `safeParse`; v2 (`@modelcontextprotocol/client`,
// the client inside Cloudflare `agents` ≥ 0.20) takes only a Standard Schema (`~standard`) as the result schema
// and would read anything else as the *options* argument, dropping the attempt's timeout and signal.
const isResultObject = (data) => data !== null && typeof data === 'object' && !Array.isArray(data);
const NOT_A_RESULT = 'tools/call result is not an object';
export const RESULT_SCHEMA = {
  safeParse: (data) => (isResultObject(data) ? { success: true, data } : { success: false, error: new TypeError(NOT_A_RESULT) }),
  '~standard': {
    version: 1,
    vendor: 'mcp-retry-policy',
    validate: (data) => (isResultObject(data) ? { value: data } : { issues: [{ message: NOT_A_RESULT }] }),
  },
};
