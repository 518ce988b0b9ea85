// A real MCP server of the TypeScript SDK over stdio (`McpServer` + `StdioServerTransport`), started as a child
// process by tests/js/stdio-restart.test.mjs:
//
//     node stdio-server.mjs        env: DB (a SQLite file), BLOCK ('1': every tool blocks once it has done its
//                                  work, until the process ends)
//
// Three tools, one per safety: `lookup` (read-only), `open_ticket` (keyed: behind the real `withIdempotency` on a
// `SqliteLedgerStore` in DB, so the ledger outlives the process), `create_note` (unsafe). Each effect is a row in
// DB's `effects` table, written before the tool blocks: a count there is a count of executions across every
// process that served the file. With BLOCK=1 a tool writes `{"ev":"blocked","tool":…,"pid":…}` on stderr after
// its work and then waits for ever: the test kills or stops the process on that event, never on a timer.
import Database from 'better-sqlite3';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { OperationLedger, SqliteLedgerStore, registerStatusTool, withIdempotency } from '../../pkg/node.js';

const db = new Database(process.env.DB);
db.exec('CREATE TABLE IF NOT EXISTS effects (tool TEXT NOT NULL, pid INTEGER NOT NULL, arg TEXT)');
const effect = db.prepare('INSERT INTO effects (tool, pid, arg) VALUES (?, ?, ?)');
const ledger = new OperationLedger({ store: new SqliteLedgerStore(db) });
const tenant = () => 'local'; // stdio: one user, the one who started the process
const block = process.env.BLOCK === '1';

const text = (t) => ({ content: [{ type: 'text', text: t }] });
const never = new Promise(() => {});
/** After the tool's work: with BLOCK=1, say so on stderr and wait until the process ends. */
async function maybeBlock(tool) {
  if (!block) return;
  process.stderr.write(`${JSON.stringify({ ev: 'blocked', tool, pid: process.pid })}\n`);
  await never;
}

const server = new McpServer({ name: 'stdio-desk', version: '1.0.0' });
server.registerTool(
  'lookup',
  { description: 'Look a ticket up (read-only).', inputSchema: { q: z.string() }, annotations: { readOnlyHint: true } },
  async ({ q }) => {
    effect.run('lookup', process.pid, q);
    await maybeBlock('lookup');
    return { ...text(`found ${q} (pid ${process.pid})`), structuredContent: { q, pid: process.pid } };
  },
);
const openTicket = withIdempotency(ledger, async ({ title }) => {
  effect.run('open_ticket', process.pid, title);
  return { ...text(`opened ${title} (pid ${process.pid})`), structuredContent: { title, pid: process.pid } };
}, { action: 'open_ticket', tenant });
server.registerTool(
  'open_ticket',
  {
    description: 'Open a ticket; repeats with the same operation_id return the first ticket.',
    inputSchema: { title: z.string(), operation_id: z.string() },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  },
  // The ledger has recorded the ticket before the block: a kill then loses only the answer.
  async (args, extra) => {
    const result = await openTicket(args, extra);
    await maybeBlock('open_ticket');
    return result;
  },
);
server.registerTool(
  'create_note',
  {
    description: 'Create a note (a write; not safe to repeat).',
    inputSchema: { body: z.string() },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  },
  async ({ body }) => {
    effect.run('create_note', process.pid, body);
    await maybeBlock('create_note');
    return text(`noted ${body}`);
  },
);
registerStatusTool(server, ledger, { tenant, z });

await server.connect(new StdioServerTransport());
process.stderr.write(`${JSON.stringify({ ev: 'ready', pid: process.pid })}\n`);
