// What the checker prints never carries a credential nor drives the terminal. The URL's userinfo and query values
// and the `--header` values are secrets: the URL is shown with them as `***`, and any text that reached the
// report or an error (a server echoing a key, an error quoting the URL) has them replaced. Text from the server
// may hold control characters (terminal escapes, bidi overrides): they are printed as `\uXXXX`, which is also a
// valid JSON escape, so the same pass serves the table and `--json`.

const HIDDEN = '***';
const MIN_SECRET = 4; // shorter values (`?v=2`) are hidden in the URL, not hunted through the text

/** The URL as printed: userinfo and each query value as `***` (the names stay: they say what was sent). */
export function redactUrl(url) {
  let u;
  try {
    u = new URL(url);
  } catch {
    return HIDDEN;
  }
  if (u.username) u.username = HIDDEN;
  if (u.password) u.password = HIDDEN;
  const query = [...u.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=${HIDDEN}`).join('&');
  u.search = query ? `?${query}` : '';
  u.hash = '';
  return u.href.replace(/%2A%2A%2A/g, HIDDEN);
}

/** The secrets of a run: the URL's userinfo and query values, every header value (raw and URL-decoded forms). */
export function secretsOf(url, ...headerSets) {
  const out = new Set();
  const add = (v) => {
    if (typeof v !== 'string') return;
    for (const form of [v, safeDecode(v), encodeURIComponent(v)]) if (form.length >= MIN_SECRET) out.add(form);
  };
  try {
    const u = new URL(url);
    add(u.username);
    add(u.password);
    for (const v of u.searchParams.values()) add(v);
    for (const part of u.search.slice(1).split('&')) add(part.split('=').slice(1).join('='));
  } catch {
    // not a URL: nothing of it is printed
  }
  for (const headers of headerSets) {
    for (const v of Object.values(headers ?? {})) {
      add(v);
      add(String(v).replace(/^\S+\s+/, '')); // `Bearer TOKEN`: the token alone too
    }
  }
  return [...out].sort((a, b) => b.length - a.length); // longest first: a secret inside another goes with it
}

function safeDecode(v) {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

/** A function hiding every one of `secrets` in a text. */
export function redactor(secrets) {
  return (text) => {
    let s = String(text);
    for (const secret of secrets) if (s.includes(secret)) s = s.split(secret).join(HIDDEN);
    return s;
  };
}

// C0 controls but the newline, DEL, C1 controls, and the invisible direction marks and overrides.
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** A text safe for a terminal: each control character as `\uXXXX` (newlines stay). */
export const printable = (text) => String(text).replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** `value` with every string in it (keys too) passed through `f`: a report made safe as a whole. */
export function mapStrings(value, f) {
  if (typeof value === 'string') return f(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [f(k), mapStrings(v, f)]));
  return value;
}
