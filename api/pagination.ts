import { z } from 'zod';
import { validationError } from '../core/errors';

/**
 * Cursor pagination: `limit` (1..1000, default 100) and an opaque `cursor`
 * that encodes where the previous page ended. A cursor is base64url JSON;
 * clients must not build one themselves.
 */
export const limitSchema = z.coerce.number().int().min(1).max(1000).default(100);

export function encodeCursor(position: unknown): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

export function decodeCursor<T>(cursor: string | undefined, schema: z.ZodType<T>): T | undefined {
  if (cursor === undefined) return undefined;
  try {
    return schema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch {
    throw validationError('invalid cursor', [{ path: 'cursor', message: 'not a cursor this endpoint issued' }]);
  }
}

/** Builds `{data, next_cursor}` from a page fetched with limit + 1 rows. */
export function pageOf<T, R>(rows: T[], limit: number, position: (last: T) => unknown, shape: (row: T) => R) {
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  return { data: page.map(shape), next_cursor: hasMore && last !== undefined ? encodeCursor(position(last)) : null };
}
