// Types of the server checker ('mcp-retry-policy/check', Node only; the `mcp-retry-policy check` command).
// It calls the checked tool for real, writes included: point it at a staging server, never at production.

/** How one check ended. `not_testable`: cannot be told from outside; `skipped`: not asked for (or does not apply). */
export type CheckStatus = 'pass' | 'fail' | 'not_testable' | 'skipped';

/** Which check: the six failure windows (`same_id_twice` … `downstream_timeout`) and what a client depends on (`id_argument` … `retry_after`). */
export type CheckKey =
  | 'same_id_twice' | 'same_id_changed_input' | 'concurrent_calls' | 'cut_response' | 'other_tenant' | 'downstream_timeout'
  | 'id_argument' | 'annotations' | 'status_tool' | 'status_tenant_scoped' | 'lost_session' | 'retry_after';

/** How one check ended, and why. */
export interface CheckResult {
  /** Its row number in the table, a count from 1 (1–6: the six failure windows). */
  n: number;
  /** Which check. */
  key: CheckKey;
  /** Its title in the table. */
  title: string;
  /** `pass`, `fail`, `not_testable` or `skipped`. */
  status: CheckStatus;
  /** Why, in a sentence (what was sent, what came back). */
  reason: string;
  /** What was seen, for a person reading the JSON (answers described in one line each). */
  evidence?: Record<string, unknown>;
}

/** What `checkServer` found: every check's result, counted. */
export interface Report {
  /** The URL checked, its userinfo and query values shown as `***`. */
  target: string;
  /** The tool checked. */
  tool: string;
  /** When the run started (ISO 8601). */
  startedAt: string;
  /** When the run ended (ISO 8601). */
  endedAt: string;
  /** Every check, in table order. */
  checks: CheckResult[];
  /** How many checks ended with each status (a count per status). */
  counts: Record<CheckStatus, number>;
  /** No check failed. */
  ok: boolean;
  /** A check failed, or one of the failure windows (checks 1–5) passed; false: nothing could be tested. */
  tested: boolean;
  /** Answers cut at 1 MiB (the most the checker reads of one). */
  cuts: { method: string; status: number; bytes: number }[];
}

/**
 * The options of `checkServer(url, options)` (the CLI's flags); an unknown key or a bad value is a
 * `TypeError`/`RangeError` with `code` and `field`.
 */
export interface CheckOptions {
  /** The write tool to check (one that takes an operation id). Required. */
  tool: string;
  /**
   * Its arguments, without the operation id.
   * @default {}
   */
  args?: Record<string, unknown>;
  /**
   * The changed input for check 2 (same id, other input: must not replay).
   * @default the arguments with their first string, number or boolean value altered
   */
  changedArgs?: Record<string, unknown>;
  /**
   * The operation-id argument's name.
   * @default 'operation_id'
   */
  idArg?: string;
  /**
   * Headers for every request: tenant A's credentials.
   * @default {} (none)
   */
  headers?: Record<string, string>;
  /**
   * Tenant B's headers, replacing A's of the same name; without them the cross-tenant checks are skipped.
   * @default undefined (the cross-tenant checks are skipped)
   */
  otherTenantHeaders?: Record<string, string>;
  /**
   * The status tool's name.
   * @default 'operation_status'
   */
  statusTool?: string;
  /**
   * The longest wait for one request, in milliseconds (a whole number, 1 – 600,000).
   * @default 10000 (10 seconds)
   */
  timeoutMs?: number;
  /**
   * How long check 3 waits between looks at an operation still in progress, in milliseconds (1 – 60,000).
   * @default 300
   */
  settleMs?: number;
  /**
   * How many looks check 3 takes at an operation still in progress: a count, 1 – 100.
   * @default 10
   */
  settleTries?: number;
}

/** A failure of the run itself: `unreachable` (no MCP session could be initialized) or `tool_not_found`. */
export declare class CheckRunError extends Error {
  /** Why the run could not start. */
  readonly code: 'unreachable' | 'tool_not_found';
}

/**
 * Runs the six failure-window checks and the client-dependence checks against the MCP server at `url`
 * (Streamable HTTP), through a fault proxy on 127.0.0.1. Bad options throw a TypeError/RangeError with `code`
 * and `field`; a run that cannot start rejects with a `CheckRunError`; otherwise the report (`ok`: no `fail`).
 */
export declare function checkServer(url: string | URL, options: CheckOptions): Promise<Report>;

/** The report as the table a person reads: one row per check, its reason wrapped below it. */
export declare function formatTable(report: Report, options?: {
  /**
   * The table's width, in characters (reasons wrap at it less 6, at least 40).
   * @default 100
   */
  width?: number;
}): string;
/** The report as JSON text. */
export declare function formatJson(report: Report): string;
/** Every `CheckStatus`, in the order the counts are shown: `pass`, `fail`, `not_testable`, `skipped`. */
export declare const STATUSES: readonly CheckStatus[];
