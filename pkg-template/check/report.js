// The checker's report: each check's status (pass · fail · not_testable · skipped) and why, and the two ways it
// is shown — a table a person reads at a glance, and JSON for CI. A check that could not run is never `pass`.
// Both print text the server wrote (its errors, its results): control characters are shown as `\uXXXX`.
import { printable } from './redact.js';
import { MAX_ANSWER_BYTES } from './proxy.js';

export const PASS = 'pass';
export const FAIL = 'fail';
export const NOT_TESTABLE = 'not_testable';
export const SKIPPED = 'skipped';
export const STATUSES = Object.freeze([PASS, FAIL, NOT_TESTABLE, SKIPPED]);

/** One check's answer. */
export const result = (status, reason, evidence) => ({ status, reason, ...(evidence ? { evidence } : {}) });

/** The failure windows (the seed's checks 1–5): a run that could test none of them tested nothing that matters. */
const WINDOWS = ['same_id_twice', 'same_id_changed_input', 'concurrent_calls', 'cut_response', 'other_tenant'];

/**
 * The report of one run: { target, tool, checks: [{ n, key, title, status, reason, evidence? }], counts, ok,
 * tested, cuts }. `ok`: no check failed; `tested`: a check failed, or a failure window passed (else nothing could be
 * tested); `cuts`: the answers cut at MAX_ANSWER_BYTES ({ method, status, bytes }).
 */
export function buildReport({ target, tool, checks, cuts = [], startedAt, endedAt }) {
  const counts = Object.fromEntries(STATUSES.map((s) => [s, checks.filter((c) => c.status === s).length]));
  const tested = counts[FAIL] > 0 || checks.some((c) => WINDOWS.includes(c.key) && c.status === PASS);
  return { target, tool, startedAt, endedAt, checks, counts, ok: counts[FAIL] === 0, tested, cuts: [...cuts] };
}

const MARK = { [PASS]: 'pass', [FAIL]: 'FAIL', [NOT_TESTABLE]: 'not testable', [SKIPPED]: 'skipped' };

/** The table: one row per check (number, check, result), its reason wrapped beneath; then the totals. */
export function formatTable(report, { width = 100 } = {}) {
  const titleWidth = Math.max(...report.checks.map((c) => c.title.length), 5);
  const markWidth = Math.max(...report.checks.map((c) => MARK[c.status].length));
  const lines = [
    `mcp-retry-policy check  ${report.target}  tool ${report.tool}`,
    '',
    `${'#'.padEnd(3)} ${'check'.padEnd(titleWidth)}  result`,
    `${'-'.repeat(3)} ${'-'.repeat(titleWidth)}  ${'-'.repeat(markWidth)}`,
  ];
  for (const c of report.checks) {
    lines.push(`${String(c.n).padEnd(3)} ${c.title.padEnd(titleWidth)}  ${MARK[c.status]}`);
    for (const l of wrap(c.reason, Math.max(40, width - 6))) lines.push(`      ${l}`);
  }
  const { counts } = report;
  const cuts = report.cuts ?? [];
  if (cuts.length) {
    lines.push('', `${cuts.length} answer${cuts.length === 1 ? '' : 's'} over ${MAX_ANSWER_BYTES / 1024 / 1024} MiB cut there (${cuts.map((c) => c.method).join(', ')}): the checker reads no more of one answer`);
  }
  lines.push('', `${counts[PASS]} pass · ${counts[FAIL]} fail · ${counts[NOT_TESTABLE]} not testable · ${counts[SKIPPED]} skipped` +
    (report.ok ? (report.tested === false ? '  → nothing could be tested: no failure window could be checked' : '') : '  → the server gets a failure window wrong; see the FAIL rows'));
  return printable(`${lines.join('\n')}\n`);
}

function wrap(text, width) {
  const out = [];
  let line = '';
  for (const word of String(text).split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) out.push(line);
  return out;
}

/** The JSON form (`--json`): the report as is. */
export const formatJson = (report) => printable(`${JSON.stringify(report, null, 2)}\n`);
