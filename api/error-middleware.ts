import type { Context, Next } from 'koa';
import { AppError, queryLimitOfEngineCode, queryTooExpensive, unavailable, type ErrorCode } from '../core/errors';
import { ClickHouseError } from '../storage/clickhouse';
import { limitBound, type QueryLimits } from '../storage/query-limits';
import type { Logger } from '../observability/logger';
import type { HttpMetrics } from './http-metrics';

/**
 * The one place where errors become HTTP answers. Typed AppErrors keep their
 * code and message; client errors raised by Koa or its helpers (status < 500
 * with `expose`) are mapped by status; a query ClickHouse stopped at one of
 * its limits is 422 QUERY_TOO_EXPENSIVE, naming the limit; anything else is a
 * 500 INTERNAL whose message and stack stay in the log.
 */
const codeOfStatus: Record<number, ErrorCode> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  503: 'UNAVAILABLE',
};

function toAppError(err: unknown, queryLimits?: QueryLimits): AppError {
  if (err instanceof AppError) return err;
  // A ClickHouse error without a server code is a transport failure: the engine is unreachable.
  if (err instanceof ClickHouseError && err.code === undefined) return unavailable('ClickHouse', err);
  const limit = err instanceof ClickHouseError && err.code !== undefined ? queryLimitOfEngineCode[err.code] : undefined;
  if (limit) return queryTooExpensive(limit, queryLimits && limitBound(limit, queryLimits), err);
  const e = err as { status?: unknown; statusCode?: unknown; expose?: unknown; message?: unknown; type?: unknown };
  const status = Number(e?.status ?? e?.statusCode);
  const code = codeOfStatus[status];
  if (code && status < 500) {
    const message = e.expose && typeof e.message === 'string' ? e.message : code.toLowerCase().replace(/_/g, ' ');
    return new AppError(code, message, { cause: err });
  }
  return new AppError('INTERNAL', 'internal error', { cause: err });
}

/** `queryLimits`: those analysts' queries run under, named in the 422 that reports one. */
export function errorMiddleware(deps: { log: Logger; metrics: HttpMetrics; queryLimits?: QueryLimits }) {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 404) throw new AppError('NOT_FOUND', `no route for ${ctx.method} ${ctx.path}`);
        if (ctx.status === 405 || ctx.status === 501) {
          throw new AppError('METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on ${ctx.path}`);
        }
      }
    } catch (err) {
      const appError = toAppError(err, deps.queryLimits);
      deps.metrics.errors.inc({ code: appError.code });
      if (appError.code === 'INTERNAL' || appError.code === 'UNAVAILABLE') {
        deps.log.error({ err: appError.cause ?? appError, method: ctx.method, path: ctx.path }, 'request failed');
      } else if (appError.code === 'QUERY_TOO_EXPENSIVE') {
        // The engine's own words (which rows, how much memory) are for operators only.
        deps.log.warn({ err: appError.cause, method: ctx.method, path: ctx.path }, 'query stopped at its limit');
      }
      ctx.status = appError.status;
      if (appError.retryAfterSeconds) ctx.set('Retry-After', String(appError.retryAfterSeconds));
      if (appError.code === 'UNAUTHORIZED') ctx.set('WWW-Authenticate', 'Bearer');
      ctx.body = {
        error: {
          code: appError.code,
          message: appError.message,
          ...(appError.details ? { details: appError.details } : {}),
        },
      };
    }
  };
}
