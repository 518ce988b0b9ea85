// A reference JCS (RFC 8785) canonicalizer in plain JS, written from the RFC for the tests and the
// benchmark: keys sorted by UTF-16 code units (JS string comparison), strings and numbers as JSON.stringify.
export function canonicalize(v) {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalize).join(',')}]`;
  const keys = Object.keys(v).filter((k) => v[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalize(v[k])}`).join(',')}}`;
}
