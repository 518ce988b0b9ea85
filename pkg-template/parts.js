// The optional parts of withRetry, each handed in where it is used: `withRetry(client, { parts: [hedging] })`.
// The browser entry ('mcp-retry-policy/client' in a bundler) includes none of them, so an app bundles only
// the parts it imports from here; the Node, Workers and edge entries include them all already.
import { hedging } from './client/hedge.js';
import { inputRounds } from './client/input-rounds.js';
import { tasks } from './client/tasks.js';
import { telemetry } from './client/telemetry.js';
import { stdio } from './client/stdio.js';

export { hedging, inputRounds, stdio, tasks, telemetry };

/** Every part: what the Node, Workers and edge entries build in. */
export const ALL_PARTS = /* @__PURE__ */ Object.freeze([hedging, tasks, inputRounds, telemetry, stdio]);
