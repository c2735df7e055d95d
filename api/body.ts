import type { Context } from 'koa';
import getRawBody from 'raw-body';
import zlib from 'node:zlib';
import { Transform, type Readable } from 'node:stream';
import { AppError, validationError } from '../core/errors';

/**
 * Reads a request body under a size limit and parses it as JSON or NDJSON.
 * Every way a body can be wrong ends as a 4xx AppError: too large (413), a
 * content type or encoding the endpoint does not take (415), invalid UTF-8 or
 * malformed JSON (400).
 */
export type BodyFormat = 'json' | 'ndjson';

export interface ReadBodyOptions {
  limitBytes: number;
  accept: readonly BodyFormat[];
  /** A request without a body is allowed and reads as undefined. */
  optional?: boolean;
}

export interface ParsedBody {
  format: BodyFormat;
  /** JSON: the parsed value. NDJSON: an array with one value per non-empty line. */
  value: unknown;
}

const formatOfType: Record<string, BodyFormat> = {
  'application/json': 'json',
  'application/x-ndjson': 'ndjson',
  'application/ndjson': 'ndjson',
  'application/jsonl': 'ndjson',
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

export async function readBody(ctx: Context, opts: ReadBodyOptions): Promise<ParsedBody | undefined> {
  const declaredLength = ctx.request.length;
  const chunked = ctx.get('transfer-encoding') !== '';
  if (!chunked && !declaredLength) {
    if (opts.optional) return undefined;
    throw validationError('request body is required');
  }
  const format = formatOfType[ctx.request.type];
  if (!format || !opts.accept.includes(format)) {
    const accepted = Object.entries(formatOfType)
      .filter(([, f]) => opts.accept.includes(f))
      .map(([t]) => t);
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', `content type must be one of ${accepted.join(', ')}`);
  }
  const charset = ctx.request.charset;
  if (charset && !/^utf-?8$/i.test(charset)) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'charset must be utf-8');
  }
  const text = decodeUtf8(await readLimited(ctx, opts.limitBytes));
  const value = format === 'json' ? parseJson(text) : parseNdjson(text);
  // Valid UTF-8 cannot carry a lone surrogate, but a \uD800 escape can, and
  // ClickHouse refuses such a string: only bodies with such escapes are walked.
  if (surrogateEscape.test(text) && holdsLoneSurrogate(value)) {
    throw validationError('a string holds an unpaired UTF-16 surrogate escape');
  }
  return { format, value };
}

const surrogateEscape = /\\u[dD][89a-fA-F]/;
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function holdsLoneSurrogate(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length) {
    const v = pending.pop();
    if (typeof v === 'string') {
      if (loneSurrogate.test(v)) return true;
    } else if (v && typeof v === 'object') {
      for (const [k, inner] of Object.entries(v)) {
        if (loneSurrogate.test(k)) return true;
        pending.push(inner);
      }
    }
  }
  return false;
}

/** Passes compressed bytes on until there are more than `limit`, then fails `inflate` as a body over the limit. */
function compressedLimit(limit: number, inflate: Readable): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen <= limit) return done(null, chunk);
      inflate.destroy(Object.assign(new Error(`compressed request body exceeds ${limit} bytes`), { type: 'entity.too.large' }));
      done();
    },
  });
}

async function readLimited(ctx: Context, limit: number): Promise<Buffer> {
  const encoding = (ctx.get('content-encoding') || 'identity').toLowerCase();
  let stream: Readable = ctx.req;
  let length: number | undefined = ctx.request.length;
  if (encoding === 'gzip' || encoding === 'deflate') {
    // The limit applies to the inflated bytes, so a small bomb cannot expand past it, and to the
    // compressed ones too: endless empty deflate blocks inflate to nothing and would stream until the time-out.
    if (length !== undefined && length > limit) throw new AppError('PAYLOAD_TOO_LARGE', `request body exceeds ${limit} bytes`);
    const inflate = encoding === 'gzip' ? zlib.createGunzip() : zlib.createInflate();
    ctx.req.pipe(compressedLimit(limit, inflate)).pipe(inflate);
    stream = inflate;
    length = undefined;
  } else if (encoding !== 'identity') {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'content encoding must be identity, gzip or deflate');
  }
  try {
    return await getRawBody(stream, { limit, length });
  } catch (err) {
    const e = err as { type?: string; code?: string };
    if (e.type === 'entity.too.large') {
      throw new AppError('PAYLOAD_TOO_LARGE', `request body exceeds ${limit} bytes`, { cause: err });
    }
    if (e.code === 'Z_DATA_ERROR' || e.code === 'Z_BUF_ERROR') {
      throw validationError(`request body is not valid ${encoding} data`);
    }
    throw validationError('request body could not be read', undefined);
  }
}

function decodeUtf8(buffer: Buffer): string {
  try {
    return utf8.decode(buffer);
  } catch {
    throw validationError('request body is not valid UTF-8');
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw validationError(`malformed JSON: ${(err as Error).message}`);
  }
}

function parseNdjson(text: string): unknown[] {
  const values: unknown[] = [];
  const details: { index: number; message: string }[] = [];
  let index = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      values.push(JSON.parse(line));
    } catch (err) {
      details.push({ index, message: `malformed JSON: ${(err as Error).message}` });
    }
    index += 1;
  }
  if (details.length > 0) throw validationError(`${details.length} malformed NDJSON line(s)`, details.slice(0, 100));
  return values;
}

/**
 * A JSON body the request may leave out, which then reads as `{}`. Only a
 * missing body does: a JSON `null` (or any other value) is the request's own,
 * for its schema to judge.
 */
export async function readOptionalJson(ctx: Context, limitBytes: number): Promise<unknown> {
  const body = await readBody(ctx, { limitBytes, accept: ['json'], optional: true });
  return body === undefined ? {} : body.value;
}
