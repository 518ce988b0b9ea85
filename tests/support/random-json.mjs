// Seeded random JSON values for the fingerprint differentials (Node against a reference JCS, Chromium against
// Node): awkward numbers, escapes, surrogate pairs, nesting up to depth 4. Same seed, same values.

const NUMBERS = [0, -0, 1, -1, 0.1, 1e21, 1e-7, 123456.789, 2 ** 53, -5e-324, 1.7976931348623157e308];

/** `count` values from `seed`, strings and keys drawn from `strings`. */
export function randomJsonValues(seed, count, strings) {
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
  const gen = (depth) => {
    const r = rnd();
    if (depth > 3 || r < 0.3) {
      const p = rnd();
      if (p < 0.2) return null;
      if (p < 0.35) return rnd() < 0.5;
      if (p < 0.7) return [...NUMBERS, rnd() * 1e6][Math.floor(rnd() * 12)];
      return pick(strings) + pick(strings);
    }
    if (r < 0.6) return Array.from({ length: Math.floor(rnd() * 4) }, () => gen(depth + 1));
    const o = {};
    for (let i = Math.floor(rnd() * 5); i > 0; i--) o[pick(strings) + i] = gen(depth + 1);
    return o;
  };
  return Array.from({ length: count }, () => gen(0));
}
