// withRetry with every optional part built in: what the Node, Workers and edge entries export (bytes cost
// nothing there), so hedging, tasks, input rounds and `opentelemetry` work without a `parts` option. The
// browser entry exports the plain one (with-retry.js), which bundles only what a plain call needs.
import { withRetryOf } from './with-retry.js';
import { ALL_PARTS } from '../parts.js';

export const withRetry = withRetryOf(ALL_PARTS);
