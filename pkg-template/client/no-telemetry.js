// No telemetry: every hook a no-op. What withRetry uses without `opentelemetry` (and without the telemetry part).
const NO_ATTEMPT = Object.freeze({ meta: undefined, run: (f) => f(), end() {} });
const NO_CALL = Object.freeze({ attempt: () => NO_ATTEMPT, retry() {}, end() {}, fail() {} });

export const NO_TELEMETRY = Object.freeze({ call: () => NO_CALL });
