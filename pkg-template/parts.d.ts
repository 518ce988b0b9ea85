// Public types of 'mcp-retry-policy/parts': withRetry's optional parts, handed in as `parts`.
import type { Part } from './client/index.js';

/** Hedged reads: needed for `policy.hedgeAfterMs` from the browser entry. */
export declare const hedging: Part & { readonly part: 'hedging' };
/** Tasks: the `task` call option, tools that run only as a task, and following a task the server created. */
export declare const tasks: Part & { readonly part: 'tasks' };
/** 2026-07-28 input rounds answered through the client's own handlers (elicitation, sampling, roots). */
export declare const inputRounds: Part & { readonly part: 'inputRounds' };
/** OpenTelemetry: needed for `opentelemetry` from the browser entry. */
export declare const telemetry: Part & { readonly part: 'telemetry' };
/** A stdio server's process watched and restarted when lost (the Node entry builds it in). */
export declare const stdio: Part & { readonly part: 'stdio' };
/** Every part (what the Node, Workers and edge entries build in). */
export declare const ALL_PARTS: readonly Part[];
