import type { paths } from './schema';

/**
 * The one door to the API. The console keeps no secret: its session is an
 * HttpOnly cookie the browser sends by itself (no script reads it), and the
 * session's CSRF token, useless without that cookie, lives in this module's
 * memory only, never in storage. Every call that changes something sends it.
 */
let csrfToken: string | null = null;
let onEnded: () => void = () => undefined;
export const session = {
  /** The CSRF token of the session GET /auth/session (or the sign-in) answered. */
  adopt: (token: string) => {
    csrfToken = token;
  },
  forget: () => {
    csrfToken = null;
  },
  /** What to do when the service says the session ended (timed out, or signed out elsewhere): a 401 while signed in. */
  whenEnded: (listener: () => void) => {
    onEnded = listener;
  },
};

type Method = 'get' | 'post' | 'delete';
type Op<P extends keyof paths, M extends Method> = M extends keyof paths[P] ? paths[P][M] : never;
type Query<O> = O extends { parameters: { query?: infer Q } } ? Q : never;
type Body<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** The success answer only: error statuses become ApiError. */
type Answer<O> = O extends { responses: infer R }
  ? { [S in keyof R]: S extends 200 | 201 | 202 ? (R[S] extends { content: { 'application/json': infer A } } ? A : never) : never }[keyof R]
  : never;
export type PathsWith<M extends Method> = { [P in keyof paths]: M extends keyof paths[P] ? P : never }[keyof paths];

/** An answer that is not 2xx, with the API's error code and message; `retryable` for 503 and network failures. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
  get retryable(): boolean {
    return this.status === 503 || this.status === 0 || this.status === 429;
  }
}

export interface CallOptions<O> {
  params?: Record<string, string>;
  query?: Query<O>;
  body?: Body<O>;
}

function urlOf(path: string, params: Record<string, string> = {}, query: object = {}): string {
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '' && v !== null) search.set(k, String(v));
  const text = search.toString();
  return text ? `${filled}?${text}` : filled;
}

async function errorOf(res: Response): Promise<ApiError> {
  const body = (await res.json().catch(() => undefined)) as { error?: { code?: string; message?: string } } | undefined;
  return new ApiError(res.status, body?.error?.code ?? `HTTP_${res.status}`, body?.error?.message ?? res.statusText);
}

/**
 * One request with the session's CSRF token on a change, JSON in and out
 * (or `accept`'s representation): a network failure, a 401 that ends the
 * session and any other refusal thrown as an ApiError.
 */
async function send(method: string, url: string, body: unknown, accept: string): Promise<Response> {
  const headers: Record<string, string> = { accept };
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store', credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'NETWORK', 'the service could not be reached');
  }
  if (res.status === 401 && csrfToken) {
    session.forget();
    onEnded();
  }
  if (!res.ok) throw await errorOf(res);
  return res;
}

export async function call<M extends Method, P extends PathsWith<M>>(method: M, path: P, opts: CallOptions<Op<P, M>> = {}): Promise<Answer<Op<P, M>>> {
  const res = await send(method.toUpperCase(), urlOf(path, opts.params, opts.query ?? {}), opts.body, 'application/json');
  return (await res.json()) as Answer<Op<P, M>>;
}

/**
 * A call typed by its caller rather than by the generated types (the
 * visualize page's completion, saved views and CSV answers); `accept` asks
 * for another representation (`text/csv`), answered as text.
 */
export async function request<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, accept = 'application/json'): Promise<T> {
  const res = await send(method, url, body, accept);
  if (res.status === 204) return undefined as T;
  return (accept === 'application/json' ? await res.json() : await res.text()) as T;
}

export const get = <P extends PathsWith<'get'>>(path: P, opts?: CallOptions<Op<P, 'get'>>) => call('get', path, opts);
export const post = <P extends PathsWith<'post'>>(path: P, opts?: CallOptions<Op<P, 'post'>>) => call('post', path, opts);
export const del = <P extends PathsWith<'delete'>>(path: P, opts?: CallOptions<Op<P, 'delete'>>) => call('delete', path, opts);
