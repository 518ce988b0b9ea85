// The matrix as markdown: rows are the first attempt's fault point × proxy, columns tool safety × server;
// a cell counts the final statuses of its cases and marks violations.
const LETTER = { succeeded: 's', tool_error: 'e', failed: 'f', unknown: 'u', pending: 'p' };

function cell(rs) {
  if (!rs.length) return '–';
  const counts = {};
  for (const r of rs) {
    const k = r.error ? 'err' : LETTER[r.status] ?? r.status;
    counts[k] = (counts[k] ?? 0) + 1;
  }
  const parts = ['s', 'e', 'f', 'u', 'p', 'err'].filter((k) => counts[k]).map((k) => `${counts[k]}${k}`);
  const bad = rs.filter((r) => r.violations.length).length;
  const repeats = rs.filter((r) => r.effects > 1 && (r.safety === 'read_only' || r.safety === 'idempotent')).length;
  return parts.join(' ') + (repeats ? ` (${repeats}r)` : '') + (bad ? ` **✗${bad}**` : '');
}

export function renderTable(results, { servers, proxies, safeties, faults }) {
  const cols = [];
  for (const safety of safeties) for (const server of servers) cols.push({ safety, server });
  const used = cols.filter((c) => results.some((r) => r.safety === c.safety && r.server === c.server));
  const lines = [];
  lines.push(`| attempt 1 fault · proxy | ${used.map((c) => `${c.safety} · ${c.server}`).join(' | ')} |`);
  lines.push(`|---|${used.map(() => '---').join('|')}|`);
  for (const fault of faults) {
    for (const proxy of proxies) {
      const row = results.filter((r) => (r.schedule[0] ?? 'pass') === fault && r.proxy === proxy);
      if (!row.length) continue;
      lines.push(`| ${fault} · ${proxy} | ${used.map((c) => cell(row.filter((r) => r.safety === c.safety && r.server === c.server))).join(' | ')} |`);
    }
  }
  const total = results.length;
  const bad = results.filter((r) => r.violations.length).length;
  const errs = results.filter((r) => r.error).length;
  lines.push('');
  lines.push(`Cells count final statuses: s succeeded · e tool_error · f failed · u unknown · p pending · err the case broke; ` +
    `(Nr) cases where a read-only/idempotent effect ran more than once (harmless, counted); **✗N** cases violating an invariant. ` +
    `${total} cases, ${bad} with a violation, ${errs} broken.`);
  return lines.join('\n') + '\n';
}
