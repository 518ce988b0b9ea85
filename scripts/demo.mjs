// The demo: a real MCP server (TypeScript SDK, Streamable HTTP on 127.0.0.1) behind a flaky network (our
// fault proxy). The connection drops after the server created the ticket, before the answer arrives.
// A naive client retries blindly; withRetry does what is safe and says plainly what it does not know.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { withRetry, observeFetch, OperationLedger, MemoryLedgerStore } from '../pkg/node.js';
import { startMcpServer } from '../tests/support/mcp-server.mjs';
import { startFaultProxy } from '../tests/support/fault-proxy.mjs';

const tty = process.stdout.isTTY;
const c = (code, s) => (tty ? `\x1b[${code}m${s}\x1b[0m` : s);
const bold = (s) => c(1, s);
const dim = (s) => c(2, s);
const statusColour = { succeeded: 32, tool_error: 33, failed: 31, unknown: 35, pending: 36 };
const paint = (s) => c(statusColour[s] ?? 0, s);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The server's write tools sit behind an operation ledger (withIdempotency), keyed by tenant + operation_id.
const server = await startMcpServer({ ledger: new OperationLedger({ store: new MemoryLedgerStore() }) });
const proxy = await startFaultProxy(server.url);
const connect = async () => {
  const client = new Client({ name: 'demo-agent', version: '1.0.0' });
  const headers = { authorization: 'Bearer acme' }; // the tenant, as the server's auth sees it
  await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url), { fetch: observeFetch(), requestInit: { headers } }));
  return client;
};
const tickets = () => server.effects.tickets.map((t) => t.id).join(', ') || 'none';
const reset = () => {
  server.effects.tickets.length = 0;
  server.effects.keyed.clear();
  proxy.log.length = 0;
};
const trace = (e) => {
  if (e.type === 'attempt') {
    const o = e.outcome;
    const seen = o.kind === 'result' ? (o.isError ? 'a tool error' : 'a result') : o.kind === 'http' ? `HTTP ${o.status}` : o.kind === 'network' ? `a network failure (sent: ${o.sent})` : o.kind;
    console.log(`    attempt ${e.attempt}: ${seen} → delivery ${e.classification.delivery} (${e.classification.cause})`);
  } else if (e.type === 'retry') {
    console.log(`    ${dim(`retry in ${e.delayMs} ms (${e.reason})`)}`);
  } else if (e.type === 'resolve') {
    console.log(`    asked the server's status tool about ${e.operationId.slice(0, 8)}…: ${e.answer}`);
  }
};

console.log(bold('\nA real MCP server creates tickets. The network drops the answer after the ticket was created.\n'));

// 1. The naive client: retry any error, up to 3 times.
reset();
{
  console.log(bold('1. A naive client retries blindly'));
  const client = await connect();
  proxy.faults.push('cut');
  for (let i = 1; i <= 3; i++) {
    try {
      const r = await client.callTool({ name: 'create_ticket', arguments: { title: 'Printer on fire' } });
      console.log(`    try ${i}: ${r.content[0].text}`);
      break;
    } catch (e) {
      console.log(`    try ${i}: ${e.message.split('\n')[0]} — retrying`);
      await sleep(200);
    }
  }
  console.log(`    tickets on the server: ${c(31, tickets())}  ← a duplicate\n`);
  await client.close();
}

// 2. withRetry, the same unsafe tool.
reset();
{
  console.log(bold('2. withRetry, the same tool (no operation id: not safe to send twice)'));
  const mcp = withRetry(await connect(), { trusted: true, onEvent: trace });
  proxy.faults.push('cut');
  const out = await mcp.call({ name: 'create_ticket', arguments: { title: 'Printer on fire' } });
  console.log(`    status: ${paint(out.status)}  (${out.reason})`);
  console.log(`    told to the model: "${out.message}"`);
  console.log(`    tickets on the server: ${c(32, tickets())}  ← one, and nobody claims it failed\n`);
}

// 3. withRetry, a keyed tool behind the server's operation ledger.
reset();
{
  console.log(bold('3. withRetry, open_ticket: it takes an operation_id, and the server keeps an operation ledger'));
  const mcp = withRetry(await connect(), { trusted: true, onEvent: trace, policy: { baseDelayMs: 100 } });
  proxy.faults.push('cut');
  const out = await mcp.call({ name: 'open_ticket', arguments: { title: 'Printer on fire' } });
  console.log(`    operation_id ${out.operationId}: created once, persisted before the first send, sent on both attempts`);
  console.log(`    status: ${paint(out.status)}  → ${out.result.content[0].text} (the ledger replayed the first outcome)`);
  console.log(`    tickets on the server: ${c(32, tickets())}  ← one ticket, and the agent knows which\n`);
}

// 4. A refusal before processing is safe to retry for any tool.
reset();
{
  console.log(bold('4. withRetry, 503 with Retry-After: refused before processing, so even the unsafe tool is retried'));
  const mcp = withRetry(await connect(), { trusted: true, onEvent: trace });
  proxy.faults.push({ status: 503, retryAfter: 1 });
  const out = await mcp.call({ name: 'create_ticket', arguments: { title: 'Printer on fire' } });
  console.log(`    status: ${paint(out.status)}  → ${out.result.content[0].text}`);
  console.log(`    tickets on the server: ${c(32, tickets())}\n`);
}

// 5. A gateway's 503 without Retry-After proves nothing: it may have forwarded the request first.
reset();
{
  console.log(bold('5. withRetry, a gateway answers 503 after forwarding (no Retry-After): the unsafe tool is not re-sent'));
  const mcp = withRetry(await connect(), { trusted: true, onEvent: trace });
  proxy.faults.push({ status: 503, afterForward: true });
  const out = await mcp.call({ name: 'create_ticket', arguments: { title: 'Printer on fire' } });
  console.log(`    status: ${paint(out.status)}  (${out.reason})`);
  console.log(`    message for the model: ${out.message}`);
  console.log(`    tickets on the server: ${c(32, tickets())}  ← the server did act; a blind retry would have made two\n`);
}

// 6. Every answer lost: the ledger still knows, and the status tool says so without sending the write again.
reset();
{
  console.log(bold('6. withRetry, open_ticket, and every answer is lost: the server\'s status tool closes the unknown'));
  const mcp = withRetry(await connect(), { trusted: true, onEvent: trace, policy: { baseDelayMs: 50 } });
  proxy.faults.push('cut', 'cut', 'cut'); // all three attempts; the status query gets through
  const out = await mcp.call({ name: 'open_ticket', arguments: { title: 'Printer on fire' } });
  console.log(`    status: ${paint(out.status)}  (${out.reason})  → ${out.result?.content?.[0]?.text}`);
  console.log(`    tickets on the server: ${c(32, tickets())}  ← one ticket; without the status tool this call would be unknown\n`);
}

await proxy.close();
await server.close();
process.exit(0);
