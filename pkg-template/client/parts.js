// withRetry's optional parts. Each lives in its own module and reaches withRetry only when handed in
// (`withRetry(client, { parts: [hedging, tasks] })`, from 'mcp-retry-policy/parts'), so a browser app bundles
// just the parts it uses. The Node, Workers and edge entries hand in every part: there bytes cost nothing. An
// option that needs a part that was not handed in is refused by name (`part_missing`) before anything is sent.
import { typeError, typeName } from '../errors.js';

/** The optional parts, by the name each part object carries in its `part` field. */
export const PART_NAMES = Object.freeze(['hedging', 'tasks', 'inputRounds', 'telemetry', 'stdio']);

/** Without the stdio part: no transport is a process. One that is (the SDKs' StdioClientTransport has a `pid`) is
 *  refused by name when withRetry is made, rather than left without its restart. */
export const NO_STDIO = Object.freeze({
  watchProcess(transport) {
    let process = false;
    try {
      process = transport !== null && typeof transport === 'object' && 'pid' in transport;
    } catch {
      // A transport that hides what it is (a revoked Proxy) is a network transport, as with the part.
    }
    if (process) throw partMissing('transport', 'stdio');
    return undefined;
  },
  foundUnresponsive: () => false,
  letGo: async () => {},
});

const NONE = Object.freeze({});

/**
 * The parts a wrapper uses: `builtIn` (the entry's own) and `given` (the `parts` option), keyed by name. A part
 * given twice is the same part; something that is not one of this package's parts is refused.
 */
export function partsOf(given, builtIn = []) {
  if (given === undefined && builtIn.length === 0) return NONE;
  if (given !== undefined && !Array.isArray(given)) {
    throw typeError('parts', `parts must be an array of parts (import { hedging } from 'mcp-retry-policy/parts'), got ${typeName(given)}`);
  }
  const parts = {};
  for (const [i, p] of [...builtIn, ...(given ?? [])].entries()) {
    const name = p !== null && typeof p === 'object' ? p.part : undefined;
    if (!PART_NAMES.includes(name)) {
      throw typeError(`parts[${i - builtIn.length}]`, `parts[${i - builtIn.length}] is not a part of this package (one of ${PART_NAMES.join(', ')}, from 'mcp-retry-policy/parts')`);
    }
    parts[name] = p;
  }
  return Object.freeze(parts);
}

/** The error for `field`, set, whose `part` was not handed in: it says what to import. */
export function partMissing(field, part) {
  return typeError(
    field,
    `${field} needs the ${part} part, which this entry does not include: import { ${part} } from 'mcp-retry-policy/parts' and pass withRetry(client, { parts: [${part}] })`,
    'part_missing',
  );
}
