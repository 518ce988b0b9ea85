// The checker's report: each check's status (pass · fail · not_testable · skipped) and why, and the two ways it
// is shown — a table a person reads at a glance, and JSON for CI. A check that could not run is never `pass`.

export const PASS = 'pass';
export const FAIL = 'fail';
export const NOT_TESTABLE = 'not_testable';
export const SKIPPED = 'skipped';
export const STATUSES = Object.freeze([PASS, FAIL, NOT_TESTABLE, SKIPPED]);

/** One check's answer. */
export const result = (status, reason, evidence) => ({ status, reason, ...(evidence ? { evidence } : {}) });

/** The report of one run: { target, tool, checks: [{ n, key, title, status, reason, evidence? }], counts, ok }. */
export function buildReport({ target, tool, checks, startedAt, endedAt }) {
  const counts = Object.fromEntries(STATUSES.map((s) => [s, checks.filter((c) => c.status === s).length]));
  return { target, tool, startedAt, endedAt, checks, counts, ok: counts[FAIL] === 0 };
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
  lines.push('', `${counts[PASS]} pass · ${counts[FAIL]} fail · ${counts[NOT_TESTABLE]} not testable · ${counts[SKIPPED]} skipped` +
    (report.ok ? '' : '  → the server gets a failure window wrong; see the FAIL rows'));
  return `${lines.join('\n')}\n`;
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
export const formatJson = (report) => `${JSON.stringify(report, null, 2)}\n`;
