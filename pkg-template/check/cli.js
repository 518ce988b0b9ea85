// The `mcp-retry-policy` command. `mcp-retry-policy check <url> --tool NAME …` runs checkServer and prints the
// table (or `--json`). Exit codes: 0 no check failed and a failure window was tested · 1 a check failed · 2 bad
// command line · 3 nothing could be tested (the run could not start — server unreachable, tool not listed — or
// no failure window could be checked) · 4 the checker's own error. Everything it prints passes one gate: the
// run's secrets hidden (the URL's userinfo and query values, the header values), control characters escaped.
import { parseArgs } from 'node:util';
import { CheckRunError, checkServer, formatJson, formatTable } from './index.js';
import { printable, redactUrl, redactor, secretsOf } from './redact.js';

export const EXIT = Object.freeze({ ok: 0, failed: 1, usage: 2, run: 3, untested: 3, internal: 4 });

const USAGE = `Usage: mcp-retry-policy check <url> --tool NAME [options]

Runs the failure-window checks against a live MCP server (Streamable HTTP), through a fault proxy
it starts on 127.0.0.1. It CALLS THE TOOL FOR REAL, about 20 times: point it at a staging server, never
at production.

  --tool NAME                  the write tool to check (required)
  --args JSON                  its arguments, without the operation id (default {})
  --changed-args JSON          the changed input for check 2 (default: the first string/number/boolean altered)
  --id-arg NAME                the operation-id argument (default operation_id)
  --header 'K: V'              a header for every request (repeatable): tenant A's credentials
  --other-tenant-header 'K: V' tenant B's headers, replacing A's of the same name (repeatable)
  --status-tool NAME           the status tool (default operation_status)
  --timeout MS                 per request (default 10000)
  --json                       the report as JSON (for CI)
  -h, --help                   this text

It prints no credential: the URL's userinfo and query values and the header values show as ***.
It follows no redirect to another origin (your headers never go there), escapes control
characters in what the server wrote, and reads at most 1 MiB of one answer (a longer one is
cut, and the cut reported).

Exit: 0 no check failed, and a failure window was tested · 1 a check found a violation
      2 bad command line · 3 nothing could be tested (the run could not start, or no failure
      window could be checked) · 4 the checker's own error (a bug: please report it)
`;

class UsageError extends Error {}

function header(flag, text) {
  const at = text.indexOf(':');
  const name = at > 0 ? text.slice(0, at).trim() : '';
  // The value is not echoed: it is a credential more often than not.
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new UsageError(`${flag} must be 'Name: value' (got ${text.length} characters without a header name before a colon)`);
  return [name.toLowerCase(), text.slice(at + 1).trim()];
}

function json(flag, text) {
  let v;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${flag} must be JSON (${e.message})`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new UsageError(`${flag} must be a JSON object of arguments`);
  return v;
}

/** The command line → { help } or { url, options, json }; a UsageError naming the flag for anything wrong. */
export function parseCommandLine(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        tool: { type: 'string' }, args: { type: 'string' }, 'changed-args': { type: 'string' }, 'id-arg': { type: 'string' },
        header: { type: 'string', multiple: true }, 'other-tenant-header': { type: 'string', multiple: true },
        'status-tool': { type: 'string' }, timeout: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    throw new UsageError(e.message);
  }
  const { values: v, positionals } = parsed;
  if (v.help) return { help: true };
  const [command, url, ...rest] = positionals;
  if (command !== 'check') throw new UsageError(command ? `unknown command ${JSON.stringify(command)} (the one command is check)` : 'no command (the one command is check)');
  if (!url) throw new UsageError('check needs the server\'s URL: mcp-retry-policy check <url> --tool NAME');
  if (rest.length) throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}`);
  if (!v.tool) throw new UsageError('--tool is required: the name of the write tool to check');
  const options = { tool: v.tool, headers: Object.fromEntries((v.header ?? []).map((h) => header('--header', h))) };
  if (v.args !== undefined) options.args = json('--args', v.args);
  if (v['changed-args'] !== undefined) options.changedArgs = json('--changed-args', v['changed-args']);
  if (v['id-arg'] !== undefined) options.idArg = v['id-arg'];
  if (v['status-tool'] !== undefined) options.statusTool = v['status-tool'];
  if (v['other-tenant-header']) options.otherTenantHeaders = Object.fromEntries(v['other-tenant-header'].map((h) => header('--other-tenant-header', h)));
  if (v.timeout !== undefined) {
    const ms = Number(v.timeout);
    if (!/^\d+$/.test(v.timeout) || ms < 1 || ms > 600_000) throw new UsageError(`--timeout must be milliseconds from 1 to 600000 (got ${JSON.stringify(v.timeout)})`);
    options.timeoutMs = ms;
  }
  return { url, options, json: v.json === true };
}

const FLAG = { url: '<url>', tool: '--tool', args: '--args', changedArgs: '--changed-args', idArg: '--id-arg', headers: '--header',
  otherTenantHeaders: '--other-tenant-header', statusTool: '--status-tool', timeoutMs: '--timeout' };

// What the run's output is passed through: secrets hidden (once the command line is read), controls escaped.
let hide = (t) => t;
const safe = (write) => (t) => write(printable(hide(String(t))));

/** The checker's own failure (an exception nothing caught): said on `err`, without a secret; resolves to exit 4. */
export function internalError(e, err = (t) => process.stderr.write(t)) {
  safe(err)(`mcp-retry-policy: internal error (a bug of the checker, not a finding about the server): ${e?.message ?? e}\n`);
  return EXIT.internal;
}

/** Runs the command; resolves to the exit code. `out`/`err` write text (default: the process's streams). */
export async function main(argv, { out: rawOut = (t) => process.stdout.write(t), err: rawErr = (t) => process.stderr.write(t) } = {}) {
  const out = safe(rawOut);
  const err = safe(rawErr);
  try {
    return await command(argv, out, err);
  } catch (e) {
    return internalError(e, rawErr);
  }
}

async function command(argv, out, err) {
  let cmd;
  try {
    cmd = parseCommandLine(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err(`mcp-retry-policy: ${e.message}\n\n${USAGE}`);
    return EXIT.usage;
  }
  if (cmd.url) {
    const secrets = secretsOf(cmd.url, cmd.options.headers, cmd.options.otherTenantHeaders);
    const url = cmd.url;
    const hideSecrets = redactor(secrets);
    hide = (t) => hideSecrets(t.split(url).join(redactUrl(url)));
  }
  if (cmd.help) {
    out(USAGE);
    return EXIT.ok;
  }
  let report;
  try {
    if (!cmd.json) err('mcp-retry-policy check: calling the tool for real (staging only, never production)…\n');
    report = await checkServer(cmd.url, cmd.options);
  } catch (e) {
    if (e instanceof CheckRunError) {
      err(`mcp-retry-policy: ${e.message}\n`);
      return EXIT.run;
    }
    if (e?.field && (e instanceof TypeError || e instanceof RangeError)) {
      err(`mcp-retry-policy: ${FLAG[e.field] ?? e.field}: ${e.message}\n`);
      return EXIT.usage;
    }
    throw e;
  }
  out(cmd.json ? formatJson(report) : formatTable(report, { width: process.stdout.columns || 100 }));
  if (!report.ok) return EXIT.failed;
  if (!report.tested) {
    err('mcp-retry-policy: nothing could be tested: no failure window (checks 1–5) could be checked; see the not testable rows\n');
    return EXIT.untested;
  }
  return EXIT.ok;
}

