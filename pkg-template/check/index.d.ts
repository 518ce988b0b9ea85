// Types of the server checker ('mcp-retry-policy/check', Node only; the `mcp-retry-policy check` command).
// It calls the checked tool for real, writes included: point it at a staging server, never at production.

/** How one check ended. `not_testable`: cannot be told from outside; `skipped`: not asked for (or does not apply). */
export type CheckStatus = 'pass' | 'fail' | 'not_testable' | 'skipped';

export type CheckKey =
  | 'same_id_twice' | 'same_id_changed_input' | 'concurrent_calls' | 'cut_response' | 'other_tenant' | 'downstream_timeout'
  | 'id_argument' | 'annotations' | 'status_tool' | 'status_tenant_scoped' | 'lost_session' | 'retry_after';

export interface CheckResult {
  /** Its row number in the table (1–6: the six failure windows). */
  n: number;
  key: CheckKey;
  title: string;
  status: CheckStatus;
  /** Why, in a sentence (what was sent, what came back). */
  reason: string;
  /** What was seen, for a person reading the JSON (answers described in one line each). */
  evidence?: Record<string, unknown>;
}

export interface Report {
  /** The URL checked, its userinfo and query values shown as `***`. */
  target: string;
  tool: string;
  startedAt: string;
  endedAt: string;
  checks: CheckResult[];
  counts: Record<CheckStatus, number>;
  /** No check failed. */
  ok: boolean;
  /** A check failed, or one of the failure windows (checks 1–5) passed; false: nothing could be tested. */
  tested: boolean;
  /** Answers cut at 1 MiB (the most the checker reads of one). */
  cuts: { method: string; status: number; bytes: number }[];
}

export interface CheckOptions {
  /** The write tool to check (one that takes an operation id). */
  tool: string;
  /** Its arguments, without the operation id (default `{}`). */
  args?: Record<string, unknown>;
  /** The changed input for check 2 (default: the first string, number or boolean argument altered). */
  changedArgs?: Record<string, unknown>;
  /** The operation-id argument's name (default `operation_id`). */
  idArg?: string;
  /** Headers for every request: tenant A's credentials. */
  headers?: Record<string, string>;
  /** Tenant B's headers, replacing A's of the same name; without them the cross-tenant checks are skipped. */
  otherTenantHeaders?: Record<string, string>;
  /** The status tool's name (default `operation_status`). */
  statusTool?: string;
  /** Per request, ms (default 10000). */
  timeoutMs?: number;
  /** How long check 3 waits between looks at an operation still in progress (default 300 ms)… */
  settleMs?: number;
  /** …and how many looks (default 10). */
  settleTries?: number;
}

/** A failure of the run itself: `unreachable` (no MCP session could be initialized) or `tool_not_found`. */
export declare class CheckRunError extends Error {
  readonly code: 'unreachable' | 'tool_not_found';
}

/**
 * Runs the six failure-window checks and the client-dependence checks against the MCP server at `url`
 * (Streamable HTTP), through a fault proxy on 127.0.0.1. Bad options throw a TypeError/RangeError with `code`
 * and `field`; a run that cannot start rejects with a `CheckRunError`; otherwise the report (`ok`: no `fail`).
 */
export declare function checkServer(url: string | URL, options: CheckOptions): Promise<Report>;

/** The table a person reads. */
export declare function formatTable(report: Report, options?: { width?: number }): string;
/** The report as JSON text. */
export declare function formatJson(report: Report): string;
export declare const STATUSES: readonly CheckStatus[];
