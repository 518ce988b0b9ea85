// The typed error for a failure a numbers-only export returned (either face): `-(1 + kind +
// ERROR_KINDS.length · field)`, with the offending value and the bound from the module's `errorDetail`
// (src/wasm/fail.rs). The tables are generated from src/vocab.rs.
import { rangeError, typeError } from './errors.js';
import { BOUNDARY_FIELDS, ERROR_KINDS } from './generated/names.js';

/** The `RangeError`/`TypeError` (with `code` and `field`) that failure `r` stands for; `what` names a freed handle's class. */
export function wasmFailure(r, errorDetail, what) {
  const n = -1 - r;
  const kind = ERROR_KINDS[n % ERROR_KINDS.length];
  const field = BOUNDARY_FIELDS[Math.floor(n / ERROR_KINDS.length)] ?? '';
  const value = errorDetail(0);
  const bound = errorDetail(1);
  switch (kind) {
    case 'not_finite': return rangeError(field, `${field} must be a finite number, got ${value}`, kind);
    case 'negative': return rangeError(field, `${field} must not be negative, got ${value}`, kind);
    case 'not_integer': return rangeError(field, `${field} must be a ${bound ? 'safe integer' : 'whole number'}, got ${value}`, kind);
    case 'too_small': return rangeError(field, `${field} must be at least ${bound}, got ${value}`, kind);
    case 'too_large': return rangeError(field, `${field} must be at most ${bound}, got ${value}`, kind);
    case 'base_exceeds_cap': return rangeError(field, `${field} (${value}) must not exceed maxDelayMs (${bound})`, kind);
    case 'freed': return typeError(field, `${field} is a ${field === 'call' ? 'RetryCall' : what} that was freed`, kind);
    case 'too_many': return rangeError(field, 'over a million live engines or calls: free() the ones no longer needed', kind);
    default: return rangeError(field, `${field} must be a known code, got ${value}`, 'invalid_value');
  }
}
