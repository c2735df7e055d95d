import type { z } from 'zod';

/**
 * Typed errors of the domain. The API maps each to its HTTP status and
 * `{error:{code,message}}` body in one middleware; anything that is not an
 * AppError becomes 500 INTERNAL without its message reaching the client.
 */
export type ErrorCode =
  | 'VALIDATION_ERROR'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'SSO_REQUIRED'
  | 'POLICY_DENIED'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'REQUEST_TIMEOUT'
  | 'CONFLICT'
  | 'QUERY_TOO_EXPENSIVE'
  | 'PAYLOAD_TOO_LARGE'
  | 'HEADERS_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'RATE_LIMITED'
  | 'UNAVAILABLE'
  | 'INTERNAL';

const statusOfCode: Record<ErrorCode, number> = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  SSO_REQUIRED: 403,
  POLICY_DENIED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  QUERY_TOO_EXPENSIVE: 422,
  PAYLOAD_TOO_LARGE: 413,
  HEADERS_TOO_LARGE: 431,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
  INTERNAL: 500,
};

export interface ErrorDetail {
  index?: number;
  path?: string;
  message: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details?: ErrorDetail[];
  /** Seconds a client should wait before retrying (503, 429). */
  readonly retryAfterSeconds?: number;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: ErrorDetail[]; cause?: unknown; retryAfterSeconds?: number } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  get status(): number {
    return statusOfCode[this.code];
  }
}

export const validationError = (message: string, details?: ErrorDetail[]) =>
  new AppError('VALIDATION_ERROR', message, { details });
export const unauthorized = (message = 'missing or invalid API key') => new AppError('UNAUTHORIZED', message);
export const forbidden = (message: string) => new AppError('FORBIDDEN', message);
export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} not found`);
export const conflict = (message: string) => new AppError('CONFLICT', message);
/** A person's API key in a workspace that requires single sign-on of its people. */
export const ssoRequired = (orgId: string) =>
  new AppError('SSO_REQUIRED', `workspace ${orgId} requires single sign-on of its people: sign in with single sign-on (a bearer token of the OpenID provider, or the console) instead of a personal API key`);
export const policyDenied = (message: string) => new AppError('POLICY_DENIED', message);

/** An engine (NATS, ClickHouse, Temporal) could not serve the request; the client may retry. */
export const unavailable = (engine: string, cause?: unknown) =>
  new AppError('UNAVAILABLE', `${engine} is unavailable, retry later`, { cause, retryAfterSeconds: 2 });

/** The engine limits an analyst query runs under, by the ClickHouse setting that sets each. */
export type QueryLimit = 'max_execution_time' | 'max_rows_to_read' | 'max_memory_usage' | 'max_bytes_to_read';

/**
 * The limit a ClickHouse error code reports: 158 TOO_MANY_ROWS, 159
 * TIMEOUT_EXCEEDED, 160 TOO_SLOW (the estimated time is over the limit),
 * 241 MEMORY_LIMIT_EXCEEDED, 307 TOO_MANY_BYTES.
 */
export const queryLimitOfEngineCode: Readonly<Record<number, QueryLimit>> = {
  158: 'max_rows_to_read',
  159: 'max_execution_time',
  160: 'max_execution_time',
  241: 'max_memory_usage',
  307: 'max_bytes_to_read',
};

const overLimit: Record<QueryLimit, string> = {
  max_execution_time: 'would run longer than',
  max_rows_to_read: 'would read more rows than',
  max_memory_usage: 'would need more memory than',
  max_bytes_to_read: 'would read more bytes than',
};

/**
 * 422: a query the engine stopped at one of its limits. Not the client's
 * mistake nor the engine's failure: the same query fails again, a narrower
 * one may not. `bound` is the limit's value as people read it ("30 seconds").
 */
export const queryTooExpensive = (limit: QueryLimit, bound: string | undefined, cause?: unknown) =>
  new AppError(
    'QUERY_TOO_EXPENSIVE',
    `the query ${overLimit[limit]} its limit (${limit}${bound ? `: ${bound}` : ''}): narrow the time range, filter on more ` +
      'dimensions, or group by fewer (or by dimensions a rollup keeps, so the raw flows are not read)',
    { cause },
  );

/** A zod failure as error details: each bad field's path and message, at most 20. */
export function zodIssueDetails(error: z.ZodError, index?: number): ErrorDetail[] {
  return error.issues.slice(0, 20).map((issue) => ({
    ...(index !== undefined ? { index } : {}),
    path: issue.path.map(String).join('.') || '(root)',
    message: issue.message,
  }));
}
