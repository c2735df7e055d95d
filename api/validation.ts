import { z } from 'zod';
import { notFound, validationError, zodIssueDetails, type ErrorDetail } from '../core/errors';
import { hasIdForm, type IdPrefix } from '../core/ids';

/** Parses with a zod schema; a failure becomes 400 VALIDATION_ERROR naming each bad field. */
export function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw validationError(`invalid ${what}`, zodIssueDetails(result.error));
}

/**
 * An id taken from a path or a body: any string names an object, and one the
 * workspace does not have (whatever its form) is 404, never 400.
 */
export function knownIdForm(prefix: IdPrefix, id: string, what: string): string {
  if (!hasIdForm(prefix, id)) throw notFound(what);
  return id;
}

/** A path parameter as the router parsed it (always a string for a matched route). */
export function pathParam(ctx: object, name: string): string {
  const value = (ctx as { params?: Record<string, unknown> }).params?.[name];
  return typeof value === 'string' ? value : '';
}

/** Query strings arrive as string | string[]; a repeated parameter is an error, not a silent pick. */
export function singleQuery(query: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  const details: ErrorDetail[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (Array.isArray(value)) details.push({ path: name, message: 'parameter given more than once' });
    else if (value !== undefined) out[name] = value;
  }
  if (details.length) throw validationError('invalid query parameters', details);
  return out;
}

/** A time in a query string: epoch milliseconds or ISO 8601 with an offset. */
export const timeParam = z.union([z.coerce.number().int().min(0), z.iso.datetime({ offset: true }).transform((v) => Date.parse(v))]);

/** The query of a route that takes no parameters: an unknown one is refused (also what the route contracts declare). */
export const noQuery = z.object({}).strict();

/** For routes that take no query parameters: an unknown or repeated one is refused, as on every other route. */
export function refuseQuery(query: Record<string, string | string[] | undefined>): void {
  parseOrThrow(noQuery, singleQuery(query), 'query');
}
