// Randomness the client needs and the wasm never draws: a jitter seed, and fresh operation ids.

/** 53 random bits for a jitter seed, drawn only inside a call (Workers refuse randomness at module load). */
export function freshSeed() {
  const c = globalThis.crypto;
  if (typeof c?.getRandomValues !== 'function') {
    const e = new Error('no secure randomness available here (crypto.getRandomValues); pass options.seed');
    e.code = 'no_randomness';
    throw e;
  }
  const [hi, lo] = c.getRandomValues(new Uint32Array(2));
  return hi * 2 ** 21 + (lo >>> 11);
}

/** A fresh operation id: a UUID v4 from secure randomness (`crypto.randomUUID` where the platform has it). */
export function newOperationId() {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  if (typeof c?.getRandomValues !== 'function') {
    const e = new Error('no secure randomness available here (crypto.getRandomValues)');
    e.code = 'no_randomness';
    throw e;
  }
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
