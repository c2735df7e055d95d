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
  | 'POLICY_DENIED'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'REQUEST_TIMEOUT'
  | 'CONFLICT'
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
  POLICY_DENIED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
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
export const policyDenied = (message: string) => new AppError('POLICY_DENIED', message);

/** An engine (NATS, ClickHouse, Temporal) could not serve the request; the client may retry. */
export const unavailable = (engine: string, cause?: unknown) =>
  new AppError('UNAVAILABLE', `${engine} is unavailable, retry later`, { cause, retryAfterSeconds: 2 });

/** A zod failure as error details: each bad field's path and message, at most 20. */
export function zodIssueDetails(error: z.ZodError, index?: number): ErrorDetail[] {
  return error.issues.slice(0, 20).map((issue) => ({
    ...(index !== undefined ? { index } : {}),
    path: issue.path.map(String).join('.') || '(root)',
    message: issue.message,
  }));
}
