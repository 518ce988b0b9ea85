// An Agent whose MCP tool calls are safe to retry (examples/agents/wrangler.toml).
//
// The Agent adds the tickets MCP server to its own MCP client manager (`this.addMcpServer`) and calls it
// three ways, all through mcp-retry-policy, with the operation-id journal in the Agent's storage:
//   POST /agents/ticket-agent/<name>/call  { tool, arguments, intent? }  → retryingMcp(this, 'tickets').call(…)
//   POST /agents/ticket-agent/<name>/tool  { tool, arguments, toolCallId, via }  → an AI SDK tool's execute, as
//        generateText/streamText would run it: via 'agents' = this.mcp.getAITools() after installRetry(this);
//        via 'ai-sdk' = aiSdkTools(retryingMcp(this, 'tickets')), where the model's tool-call id is the intent
//        (a repeated tool call reuses its operation id).
//   GET  /agents/ticket-agent/<name>/unresolved  → the journal's operations that ended `unknown`/`pending`.
// Hand either tool set to `generateText({ model, tools, … })` in your chat agent; nothing else changes.
import { Agent, routeAgentRequest } from 'agents';
import { installRetry, retryingMcp } from 'mcp-retry-policy/agents';
import { aiSdkTools } from 'mcp-retry-policy/ai-sdk';

const SERVER = 'tickets';

export class TicketAgent extends Agent {
  /** The policy for this Agent's MCP calls (withRetry's options). `trusted`: we believe our server's annotations;
   * `idFromIntent`: a keyed tool's operation id comes from the intent (the model's tool-call id), never the model. */
  policy() {
    return { trusted: true, idFromIntent: true, policy: { attemptTimeoutMs: Number(this.env.ATTEMPT_TIMEOUT_MS ?? 10_000) } };
  }

  /** Connect once; agents restores the connection after the Agent wakes from hibernation (let it finish). */
  async tickets() {
    await this.mcp.waitForConnections({ timeout: 10_000 });
    if (this.mcp.mcpConnections[SERVER]?.connectionState !== 'ready') {
      await this.addMcpServer(SERVER, this.env.TICKETS_MCP_URL, { id: SERVER, transport: { type: 'streamable-http' } });
    }
    this.undoRetry ??= installRetry(this, this.policy()); // this.mcp.callTool and getAITools() through the policy
    return retryingMcp(this, SERVER, this.policy());
  }

  async onRequest(request) {
    const op = new URL(request.url).pathname.split('/').at(-1);
    const body = request.method === 'POST' ? await request.json() : {};
    const mcp = await this.tickets();
    if (op === 'call') {
      const out = await mcp.call({ name: body.tool, arguments: body.arguments ?? {} }, { intent: body.intent });
      return Response.json({
        status: out.status, // succeeded | tool_error | failed | unknown | pending — never collapsed
        reason: out.reason,
        message: out.message,
        operationId: out.operationId,
        attempts: out.attempts.map((a) => ({ outcome: a.outcome, action: a.decision?.action, recover: a.decision?.recover })),
        text: out.result?.content?.[0]?.text,
        session: this.mcp.mcpConnections[SERVER].client.transport?.sessionId,
        state: this.mcp.mcpConnections[SERVER].connectionState,
      });
    }
    if (op === 'tool') {
      const tools = body.via === 'ai-sdk' ? await aiSdkTools(mcp) : this.mcp.getAITools();
      const key = body.via === 'ai-sdk' ? body.tool : `tool_${SERVER}_${body.tool}`;
      try {
        const output = await tools[key].execute(body.arguments ?? {}, { toolCallId: body.toolCallId, messages: [] });
        return Response.json({ ok: true, output });
      } catch (e) {
        return Response.json({ ok: false, error: String(e?.message ?? e) }); // what the model would read
      }
    }
    if (op === 'unresolved') return Response.json(await mcp.pendingOperations());
    return new Response('not found', { status: 404 });
  }
}

export default {
  async fetch(request, env) {
    return (await routeAgentRequest(request, env)) ?? new Response('not found', { status: 404 });
  },
};
