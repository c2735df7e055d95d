import { z } from 'zod';
import { validationError, type ErrorDetail } from '../core/errors';

/** Parses with a zod schema; a failure becomes 400 VALIDATION_ERROR naming each bad field. */
export function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw validationError(`invalid ${what}`, issuesToDetails(result.error));
}

export function issuesToDetails(error: z.ZodError, index?: number): ErrorDetail[] {
  return error.issues.slice(0, 20).map((issue) => ({
    ...(index !== undefined ? { index } : {}),
    path: issue.path.map(String).join('.') || '(root)',
    message: issue.message,
  }));
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

/** Epoch milliseconds as the API shows times. */
export const iso = (ms: number) => new Date(ms).toISOString();
