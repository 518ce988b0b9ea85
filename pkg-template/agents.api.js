// The Cloudflare Agents adapter (`mcp-retry-policy/agents`): the retry policy on the MCP calls an Agent makes
// through its own MCP client manager (`this.mcp`), with the operation-id journal in the Agent's Durable Object
// storage. Written and tested against agents 0.32 (its connections hold a `@modelcontextprotocol/client` v2
// `Client`; withRetry reads both SDK generations, but agents ≤ 0.19 with its v1 client is not tested).
//
//   import { Agent } from 'agents';
//   import { retryingMcp, installRetry } from 'mcp-retry-policy/agents';
//
//   class Desk extends Agent {
//     async onRequest(req) {
//       await this.addMcpServer('tickets', this.env.TICKETS_URL, { id: 'tickets' });
//       const out = await retryingMcp(this, 'tickets').call({ name: 'create_ticket', arguments: { … } }, { intent });
//       // or, once per instance: this.undo ??= installRetry(this) — then this.mcp.callTool and
//       // this.mcp.getAITools() go through the policy
//     }
//   }
//
// Why a face and not `withRetry(conn.client)`: agents REPLACES `mcpConnections[id].client` on every
// (re)connect, so the adapter never holds a client — it reads the connection's current one on each use — and
// a lost session is re-initialized through the manager (`connectToServer` + `discoverIfConnected`), so the
// manager's connection state, stored session and tool list stay the truth. agents has no call hook of its own:
// `installRetry` replaces `agent.mcp.callTool` on the instance (what `getAITools()`'s tools call).
import { withRetry } from './client/with-retry-all.js';
import { DurableObjectJournal } from './client/journal.js';
import { typeError } from './errors.js';

/** The prefix of the journal's keys in the Agent's storage (which agents itself also uses). */
export const JOURNAL_PREFIX = 'mcp-retry-policy:';

const INSTALLED = Symbol('mcp-retry-policy/agents installed');
/** The code of the error the adapter throws instead of calling an unconnected client (attempt.js: not sent). */
const NOT_CONNECTED = 'ERR_MCP_RETRY_NOT_CONNECTED';
// Weak per agent; each Map bounded by the server ids the app asks for (one wrapper per server, as withRetry wants).
const wrappers = new WeakMap(); // agent → Map(serverId → what withRetry returned)

function checkAgent(agent) {
  const mcp = agent?.mcp;
  if (!mcp || typeof mcp !== 'object' || typeof mcp.connectToServer !== 'function' || !mcp.mcpConnections) {
    throw typeError('agent', 'needs an agents Agent (an object whose `mcp` is its MCPClientManager)');
  }
  if (typeof agent.ctx?.storage?.get !== 'function') {
    throw typeError('agent', 'needs an agents Agent with its Durable Object storage (`agent.ctx.storage`)');
  }
}

function checkServerId(serverId) {
  if (typeof serverId !== 'string' || serverId === '' || serverId.length > 256) {
    throw typeError('serverId', 'serverId must be the id the MCP server was added under (a non-empty string)');
  }
}

/** Reconnecting is the agent's MCP manager's: withRetry's own `transport` / `reconnect` are refused by name. */
function refuseOwnReconnect(options) {
  for (const field of ['transport', 'reconnect']) {
    if (options[field] !== undefined) {
      throw typeError(field, 'the Agents adapter re-initializes through the agent\'s MCP manager: pass neither transport nor reconnect', 'conflicting_options');
    }
  }
}

function connection(agent, serverId) {
  const conn = agent.mcp.mcpConnections[serverId];
  if (!conn?.client) throw typeError('serverId', `no MCP connection "${serverId.slice(0, 80)}" on this agent (add it with addMcpServer first)`, 'no_connection');
  return conn;
}

/** How long a send waits for agents' own (re)connection of the server (its restore after a wake). */
const CONNECT_WAIT_MS = 5_000;

/**
 * One Agent's connection to one server, as withRetry sees it: a client-shaped face over the connection's
 * *current* client object, and the re-initialization of a lost session through the manager. (withRetry itself
 * makes concurrent calls share one re-initialization, after the requests in flight on the lost session came
 * back: client/session.js.) A client without a transport — a re-initialization that failed left an unconnected
 * one in place; agents' restore after a wake is still running — is waited for, then connected once; if it still
 * is not, the request is refused before any client has it, with a code attempt.js reads as not sent.
 */
class Link {
  #agent;
  #serverId;
  #reinit; // the re-initialization in flight
  #onerror; // withRetry's stream-break observer, re-applied to each new client object
  #hooked;

  constructor(agent, serverId) {
    this.#agent = agent;
    this.#serverId = serverId;
    const link = this;
    this.face = {
      request: (req, schema, options) => link.#send((c) => c.request(req, schema, options)),
      listTools: (params) => link.#send((c) => c.listTools(params)),
      get transport() {
        return link.#peek()?.transport;
      },
      getServerVersion: () => link.#peek()?.getServerVersion?.(),
      get onerror() {
        return link.#onerror;
      },
      set onerror(f) {
        link.#onerror = f;
        link.#hooked = undefined;
        if (link.#peek()) link.#current();
      },
    };
  }

  #peek() {
    return this.#agent.mcp.mcpConnections[this.#serverId]?.client;
  }

  #current() {
    const client = connection(this.#agent, this.#serverId).client;
    if (this.#hooked !== client && this.#onerror) {
      const previous = client.onerror;
      const link = this;
      client.onerror = (err) => {
        try {
          link.#onerror?.(err);
        } finally {
          previous?.call(client, err);
        }
      };
      this.#hooked = client;
    }
    return client;
  }

  async #send(use) {
    for (let round = 0; round < 4; round++) {
      if (this.#reinit) await this.#reinit.catch(() => {});
      else if (this.#peek()?.transport) break;
      else if (round === 0 && typeof this.#agent.mcp.waitForConnections === 'function') {
        await this.#agent.mcp.waitForConnections({ timeout: CONNECT_WAIT_MS });
      } else if (round <= 1) {
        await this.reinitialize().catch(() => {}); // still not connected: connect before sending, once
      } else break;
    }
    const client = this.#current();
    if (!client.transport) {
      throw Object.assign(new Error(`MCP server "${this.#serverId.slice(0, 80)}" is not connected on this agent; nothing was sent`), { code: NOT_CONNECTED });
    }
    return use(client);
  }

  /** withRetry's `reconnect`: through the manager, one at a time. */
  reinitialize() {
    this.#reinit ??= this.#reinitializeOnce().finally(() => (this.#reinit = undefined));
    return this.#reinit;
  }

  async #reinitializeOnce() {
    const agent = this.#agent;
    const id = this.#serverId;
    // agents may be connecting this server itself (its restore after a wake): let that finish first.
    await agent.mcp.waitForConnections?.({ timeout: CONNECT_WAIT_MS });
    connection(agent, id).clearResumedSession?.();
    const r = await agent.mcp.connectToServer(id);
    if (r?.state !== undefined && r.state !== 'connected') {
      throw new Error(`re-initializing MCP server "${id}" ended ${r.state}${r.error ? `: ${r.error}` : ''}`);
    }
    const d = await agent.mcp.discoverIfConnected?.(id);
    if (d && d.success === false) throw new Error(`re-discovering MCP server "${id}" failed: ${d.error}`);
  }
}

/**
 * `withRetry` over one of the Agent's MCP connections, its journal in the Agent's storage (keys under
 * `JOURNAL_PREFIX`), lost sessions re-initialized through the manager. One per (agent, server) — the retry
 * budget and the breaker are per server — so the first call's `options` configure it; later calls get the
 * same object. `options` are withRetry's (default `journal`: a `DurableObjectJournal` in `agent.ctx.storage`).
 */
export function retryingMcp(agent, serverId, options = {}) {
  checkAgent(agent);
  checkServerId(serverId);
  if (options === null || typeof options !== 'object') throw typeError('options', 'options must be an object (withRetry\'s options)');
  refuseOwnReconnect(options);
  let m = wrappers.get(agent);
  if (!m) wrappers.set(agent, (m = new Map()));
  let mcp = m.get(serverId);
  if (!mcp) {
    const link = new Link(agent, serverId);
    const inner = withRetry(link.face, {
      journal: new DurableObjectJournal(agent.ctx.storage, { prefix: JOURNAL_PREFIX }),
      // One journal per agent holds every connection's entries: each is bound to its connection.
      server: `agents:${serverId}`,
      reconnect: () => link.reinitialize(),
      ...options,
    });
    // A server that was never added (or was removed) is the caller's mistake, refused before anything is sent —
    // not an attempt that failed, which withRetry would have to call "maybe sent".
    const added = async () => connection(agent, serverId);
    mcp = {
      ...inner,
      call: async (params, callOptions) => (await added(), inner.call(params, callOptions)),
      callTool: async (params, callOptions) => (await added(), inner.callTool(params, callOptions)),
    };
    m.set(serverId, mcp);
  }
  return mcp;
}

/**
 * Routes `agent.mcp.callTool` — and so the tools of `agent.mcp.getAITools()`, which call it — through
 * `retryingMcp(agent, serverId, options)` for every server (or only `options.servers`); a server that already
 * has its retrying client keeps it (and the options it was made with). A call that did not
 * simply succeed answers an `isError` result whose text says what happened and what to do next (agents'
 * AI tools throw it as the tool's error, which the model reads). Returns a function that undoes it.
 * agents' AI tools pass no tool-call id and no abort signal: for the model's tool-call id as the intent, build
 * the tools with `aiSdkTools(retryingMcp(agent, serverId))` from `mcp-retry-policy/ai-sdk` instead.
 */
export function installRetry(agent, options = {}) {
  checkAgent(agent);
  if (options === null || typeof options !== 'object') throw typeError('options', 'options must be an object');
  const { servers, ...retryOptions } = options;
  if (servers !== undefined && (!Array.isArray(servers) || !servers.every((s) => typeof s === 'string'))) {
    throw typeError('servers', 'servers must be an array of server ids');
  }
  refuseOwnReconnect(retryOptions);
  const manager = agent.mcp;
  const original = manager.callTool;
  if (original?.[INSTALLED]) throw typeError('agent', 'installRetry was already called on this agent (call the function it returned to undo it first)', 'already_installed');
  const callTool = async function callTool(params, schemaOrOptions, requestOptions) {
    const serverId = params?.serverId;
    if (typeof serverId !== 'string' || (servers && !servers.includes(serverId))) {
      return original.call(this, params, schemaOrOptions, requestOptions);
    }
    const { serverId: _, ...p } = params;
    // agents' overloads (its invoker): (params, legacyResultSchema, options) or (params, options) — and it reads
    // the options as `schemaOrOptions ?? options`. Of the SDK's request options the call takes the signal and
    // onprogress; timeouts are the policy's (attemptTimeoutMs, the call's deadline).
    const legacy = typeof schemaOrOptions?.parse === 'function' ? schemaOrOptions : undefined;
    const opts = legacy ? requestOptions : (schemaOrOptions ?? requestOptions);
    const name = typeof p.name === 'string' ? p.name.replace(`${serverId}.`, '') : p.name;
    const callOptions = {
      ...(opts?.signal ? { signal: opts.signal } : {}),
      ...(typeof opts?.onprogress === 'function' ? { onprogress: opts.onprogress } : {}),
    };
    const result = await retryingMcp(agent, serverId, retryOptions).callTool({ ...p, name }, callOptions);
    // A legacy result schema is applied as agents would (its parse throws on a result it refuses).
    return legacy ? legacy.parse(result) : result;
  };
  callTool[INSTALLED] = true;
  manager.callTool = callTool;
  return () => {
    if (manager.callTool === callTool) manager.callTool = original;
  };
}
