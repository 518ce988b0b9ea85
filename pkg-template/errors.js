// Errors for bad input, shaped like the wasm's: a TypeError (wrong kind of value) or a RangeError (a value
// out of range), with a stable `code` and the offending `field`.
export function typeError(field, message, code = 'invalid_type') {
  const e = new TypeError(message);
  e.code = code;
  e.field = field;
  return e;
}

/** `field must be expected`: a TypeError for an option or argument of the wrong kind. */
export function optionError(field, expected) {
  return typeError(field, `${field} must be ${expected}`);
}

export function rangeError(field, message, code = 'invalid_value') {
  const e = new RangeError(message);
  e.code = code;
  e.field = field;
  return e;
}

/** A value's kind for an error message, without running its code (a revoked Proxy is named, not thrown). */
export function typeName(v) {
  if (v === null) return 'null';
  try {
    return Array.isArray(v) ? 'array' : typeof v;
  } catch {
    return 'a revoked Proxy';
  }
}
