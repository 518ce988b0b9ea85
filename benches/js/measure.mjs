// Timing helpers shared by the JS benchmarks (run.mjs and the sections it calls). Nothing here asserts a time.

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
export const fmt = (n, d = 2) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** ns per op: the median of `rounds` timed loops of `n` ops, after a warm-up. */
export function measure(fn, n, rounds = 7) {
  for (let i = 0; i < Math.min(n, 2000); i++) fn(i);
  const times = [];
  for (let r = 0; r < rounds; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn(i);
    times.push(Number(process.hrtime.bigint() - t) / n);
  }
  return median(times);
}

/** The same for an async `fn`. */
export async function measureAsync(fn, n, rounds = 5) {
  for (let i = 0; i < Math.min(n, 3); i++) await fn(i);
  const times = [];
  for (let r = 0; r < rounds; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await fn(i);
    times.push(Number(process.hrtime.bigint() - t) / n);
  }
  return median(times);
}
