import type { RouteInfo } from '../../api/app';

/**
 * Generates malformed requests for a route: wrong types, unknown and missing
 * fields, huge strings, deep nesting, invalid UTF-8, wrong content types,
 * junk query strings and ids, junk headers and methods the route does not
 * take. A seeded generator keeps every run reproducible.
 */
export interface MalformedRequest {
  label: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Sent over a raw socket, bytes as they are. */
  raw?: Buffer;
}

export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const junkValues: unknown[] = [
  null, true, false, 0, -1, 1.5, 1e308, -1e308, '', ' ', 'x'.repeat(5000), '\u0000', '💥', '<script>', "'; DROP TABLE x; --",
  [], [null], {}, { a: { b: { c: {} } } }, [1, 'a', null], '1.2.3.4.5', '::::', 'NaN', '-0', 9007199254740993,
];

/** Bearer values shaped like JWTs (what single sign-on reads as a person's token) that are none. */
const b64 = (text: string) => Buffer.from(text).toString('base64url');
const junkJwts = [
  'eyJ.eyJ.',
  `${b64('{"alg":"none"}')}.${b64('{}')}.`,
  `${b64('{"alg":"RS256"')}.${b64('{"sub":1}')}.c2ln`,
  `${b64('{"alg":"RS256","kid":{"a":1}}')}.${b64('[]')}.c2ln`,
  `${b64('{"alg":"HS256"}')}.${b64('{"sub":"x","exp":1e308}')}.c2ln`,
  `${b64('{"alg":"RS256","crit":["zip"]}')}.${b64('{"sub":"x"}')}.c2ln`,
  `eyJ${'A'.repeat(20_000)}.eyJ.x`,
  `${b64('{"alg":"ES256","kid":"k"}')}.${b64('"string"')}.${'A'.repeat(86)}`,
];

const badJsonTexts = ['{', '}', '[', '{"a":}', '{"a" 1}', "{'a':1}", 'undefined', 'NaN', '{"a":1,}', '[1,2,,]', '\u0000', 'nul', '{"a":"\\x"}', '"unterminated', '1 2'];

/** What every case builder draws from: the seeded generator, the key, and the routes' methods. */
interface Generator {
  rand: () => number;
  pick: <T>(items: readonly T[]) => T;
  auth: Record<string, string>;
  fill: (path: string) => string;
  allowedOn: Map<string, Set<string>>;
  opts: { key: string; acceptsNdjson: (path: string) => boolean };
}

function generator(routes: RouteInfo[], opts: { key: string; seed: number; acceptsNdjson: (path: string) => boolean }): Generator {
  const rand = seededRandom(opts.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
  const fill = (path: string) => path.replace(/:(\w+)/g, () => pick(['x', 'inc_0000000000', 'key_' + '0'.repeat(20), 'pol_1', 'rep_1']));
  const allowedOn = new Map<string, Set<string>>();
  for (const r of routes) {
    if (!allowedOn.has(r.path)) allowedOn.set(r.path, new Set());
    allowedOn.get(r.path)!.add(r.method);
  }
  return { rand, pick, auth: { authorization: `Bearer ${opts.key}` }, fill, allowedOn, opts };
}

export function malformedRequests(
  routes: RouteInfo[],
  opts: { key: string; count: number; seed: number; acceptsNdjson: (path: string) => boolean },
): MalformedRequest[] {
  const g = generator(routes, opts);
  const perRoute = routes.map((r) => [
    ...(r.method === 'GET' ? (r.authenticated ? queryCases(g, r) : []) : bodyCases(g, r)),
    ...idCases(g, r),
    ...headerCases(g, r),
  ]);
  const out: MalformedRequest[] = [];
  for (let i = 0; out.length < opts.count; i += 1) {
    const cases = perRoute[i % perRoute.length]!;
    if (cases.length) out.push(g.pick(cases)());
  }
  return out;
}

function bodyCases(g: Generator, r: RouteInfo): Array<() => MalformedRequest> {
  const path = g.fill(r.path);
  const json = (label: string, body: Buffer | string, contentType = 'application/json') => () => ({
    label,
    method: r.method,
    path,
    headers: { ...g.auth, 'content-type': contentType },
    body: Buffer.isBuffer(body) ? body : Buffer.from(body),
  });
  return [
    () => json('malformed JSON', g.pick(badJsonTexts))(),
    () => json('wrong top-level type', JSON.stringify(g.pick(junkValues.filter((v) => typeof v !== 'object' || v === null || Array.isArray(v)))))(),
    () => json('unknown field', JSON.stringify({ [`junk_${Math.floor(g.rand() * 1e6)}`]: g.pick(junkValues) }))(),
    () => json('known-looking fields of wrong types', JSON.stringify(wrongTypes(g.rand, g.pick)))(),
    () => json('huge string', JSON.stringify({ name: 'n'.repeat(1_000_000 + Math.floor(g.rand() * 1000)), service: 's'.repeat(300_000) }))(),
    () => {
      const depth = 1000 + Math.floor(g.rand() * 200_000);
      return json('deep nesting', '['.repeat(depth) + ']'.repeat(depth))();
    },
    () => json('deep object nesting', '{"a":'.repeat(5000) + '1' + '}'.repeat(5000))(),
    () => json('invalid UTF-8', Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xa0]), Buffer.from('"}')]))(),
    () => json('wrong content type', '{}', g.pick(['text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/octet-stream', 'image/png', 'application/json; charset=latin1', 'json']))(),
    () => json(g.opts.acceptsNdjson(r.path) ? 'NDJSON with a bad line' : 'NDJSON where it is refused', '{"a":1}\n{bad\n', 'application/x-ndjson')(),
    () => json('batch of junk', JSON.stringify(Array.from({ length: 1 + Math.floor(g.rand() * 50) }, () => g.pick(junkValues))))(),
    () => {
      const req = json('wrong or corrupt content encoding', '{}')();
      return { ...req, headers: { ...req.headers, 'content-encoding': g.pick(['br', 'compress', 'gzip', 'deflate', 'x-junk']) } };
    },
  ];
}

function queryCases(g: Generator, r: RouteInfo): Array<() => MalformedRequest> {
  const get = (label: string, query: string) => () => ({ label, method: r.method, path: `${g.fill(r.path)}?${query}`, headers: g.auth });
  return [
    () => get('unknown parameter', `junk${Math.floor(g.rand() * 1000)}=1`)(),
    () => get('limit out of range', `limit=${g.pick(['-1', '0', '1001', '1e9', 'abc', '1.5', '', '%00'])}`)(),
    () => get('forged cursor', `cursor=${g.pick(['junk', 'eyJ4IjoxfQ', '%FF%FE', 'a'.repeat(600), 'e30'])}`)(),
    () => get('repeated parameter', 'limit=1&limit=2')(),
    () => get('huge parameter', `junk=${'q'.repeat(5000)}`)(),
  ];
}

function idCases(g: Generator, r: RouteInfo): Array<() => MalformedRequest> {
  return (
  r.path.includes(':')
    ? [
        () => ({
          label: 'junk id',
          method: r.method,
          path: r.path.replace(/:(\w+)/g, () => g.pick(['%E0%A4%A', '..%2F..%2Fetc', '%00', 'x'.repeat(3000), '💥', "'or'1'='1", 'key_zz'])),
          headers: { ...g.auth, ...(r.method === 'GET' || r.method === 'DELETE' ? {} : { 'content-type': 'application/json' }) },
          body: r.method === 'GET' || r.method === 'DELETE' ? undefined : Buffer.from('{"junk":1}'),
        }),
      ]
    : []
  );
}

function headerCases(g: Generator, r: RouteInfo): Array<() => MalformedRequest> {
  const path = g.fill(r.path);
  const cases: Array<() => MalformedRequest> = [
    () => ({
      label: 'junk header bytes',
      method: r.method,
      path,
      headers: {},
      raw: Buffer.concat([Buffer.from(`${r.method} ${path} HTTP/1.1\r\nHost: x\r\nX-J`), Buffer.from([0x01, 0x7f]), Buffer.from(': y\r\nConnection: close\r\n\r\n')]),
    }),
  ];
  if (r.authenticated) {
    cases.push(() => ({
      label: 'junk authorization',
      method: r.method,
      path,
      headers: {
        authorization: g.pick(['Bearer', 'Basic dXNlcjpwYXNz', `Bearer ${'a'.repeat(4000)}`, 'Bearer ntk_zz_zz', `Bearer ${g.opts.key}x`, 'bearer  ', `Token ${g.opts.key}`, `Bearer ${g.opts.key} ${g.opts.key}`, ...junkJwts]),
      },
    }));
    cases.push(() => ({
      label: 'junk workspace header',
      method: r.method,
      path,
      headers: { authorization: `Bearer ${g.pick(junkJwts)}`, 'x-nettel-workspace': g.pick(['', ' ', '../../etc', 'a'.repeat(200), 'org;drop', 'caf\u00e9', '*']) },
    }));
    cases.push(() => ({
      label: 'non-ASCII authorization',
      method: r.method,
      path,
      headers: {},
      raw: Buffer.concat([Buffer.from(`${r.method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer `), Buffer.from([0xe9, 0xff, 0x80]), Buffer.from('\r\nConnection: close\r\n\r\n')]),
    }));
  }
  // The routes that read the console's session cookie when no Authorization header comes: junk ones are 4xx, never 500.
  if (r.authenticated || /^\/auth\/(session|workspace|logout|key-session)$/.test(r.path)) cases.push(() => ({
    label: 'junk session cookie',
    method: r.method,
    path,
    headers: {
      cookie: `__Host-nettel_session=${g.pick(['', 'x', 'A'.repeat(43), 'A'.repeat(44), '%00'.repeat(15), '../..', 'a=b=c', '"quoted"', 'ü'.repeat(43)])}`,
      origin: g.pick(['null', 'http://evil.example', '::', '']),
      'x-csrf-token': g.pick(['', 'x', 'A'.repeat(43), 'A'.repeat(5000)]),
      ...(r.method === 'GET' || r.method === 'DELETE' ? {} : { 'content-type': 'application/json' }),
    },
    ...(r.method === 'GET' || r.method === 'DELETE' ? {} : { body: Buffer.from('{}') }),
  }));
  const other = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => !g.allowedOn.get(r.path)!.has(m));
  if (other.length) cases.push(() => ({ label: 'method not allowed', method: g.pick(other), path, headers: g.auth }));
  return cases;
}function wrongTypes(rand: () => number, pick: <T>(items: readonly T[]) => T): Record<string, unknown> {
  const fields = ['src_ip', 'dst_ip', 'bytes', 'packets', 'protocol', 'telemetry', 'service', 'metric', 'value', 'region', 'asn',
    'dst_port', 'latency_ms', 'environment', 'name', 'requires_approval', 'incident_id', 'role', 'org_id', 'expires_in_seconds'];
  const out: Record<string, unknown> = {};
  for (const f of fields) if (rand() < 0.6) out[f] = pick([...junkValues, { nested: [1, 2] }, [[[[]]]], -12345678901234567890]);
  out[`surely_unknown_${Math.floor(rand() * 1e6)}`] = 1;
  return out;
}
