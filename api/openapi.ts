import { z } from 'zod';
import { errorAnswer } from './contracts/answers';
import type { AnswerContract, BodyContract, RouteContract } from './contracts/contract';
import { eventContracts, type EventContract } from './contracts/events';
import { dataContracts } from './contracts/routes-data';
import { automationContracts } from './contracts/routes-automation';
import { enrichmentContracts } from './contracts/routes-enrichment';
import { governanceContracts } from './contracts/routes-governance';
import { identityContracts } from './contracts/routes-identity';
import { guardrailContracts } from './contracts/routes-guardrails';
import { metaContracts } from './contracts/routes-meta';
import { authContracts } from './contracts/routes-auth';
import { sessionCookie } from './cookies';
import { playbookContracts } from './contracts/routes-playbooks';
import { networkContracts } from './contracts/routes-networks';
import { viewContracts } from './contracts/routes-views';

/**
 * The OpenAPI 3.1 document, generated from the route contracts: the request
 * schemas are the ones the routes validate with, the answers those of
 * api/contracts/answers.ts. A route gets into the document by its contract
 * in api/contracts/routes-*.ts; test/unit/openapi.test.ts fails for a route
 * of the app without one.
 */
export const routeContracts: readonly RouteContract[] = [
  ...metaContracts,
  ...authContracts,
  ...dataContracts,
  ...governanceContracts,
  ...enrichmentContracts,
  ...playbookContracts,
  ...networkContracts,
  ...viewContracts,
  ...automationContracts,
  ...identityContracts,
  ...guardrailContracts,
];

type Json = Record<string, unknown>;

/** JSON Schema 2020-12, which OpenAPI 3.1 uses as is. Transforms and refinements have no JSON form: they become `{}`. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const out = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Json;
  delete out.$schema;
  return out;
}

const errorRef = { $ref: '#/components/schemas/Error' };
const retryAfter = { 'Retry-After': { description: 'seconds until a retry may succeed', schema: { type: 'integer' } } };
const errorText: Record<number, string> = {
  400: 'VALIDATION_ERROR: a bad field, parameter, cursor or body (`details` names each)',
  401: "UNAUTHORIZED: a missing, invalid, expired or revoked key, or a person's token that does not verify",
  403: 'FORBIDDEN: the key lacks the permission (or POLICY_DENIED: a policy blocks the replay; SSO_REQUIRED: a personal key in a workspace that requires single sign-on)',
  404: 'NOT_FOUND: an id the workspace does not have',
  409: "CONFLICT: the change conflicts with the object's state",
  413: 'PAYLOAD_TOO_LARGE: the body, inflated, is over BODY_LIMIT_BYTES',
  415: 'UNSUPPORTED_MEDIA_TYPE: a content type, charset or encoding the route does not take',
  422: 'QUERY_TOO_EXPENSIVE: ClickHouse stopped the query at one of its limits (time, memory, rows read), named in the message: narrow the range, add filters or group by fewer dimensions',
  429:
    'RATE_LIMITED: this client address failed authentication too often (AUTH_FAILURES_PER_MINUTE), or, on ingestion, the workspace is over its records ' +
    "per second, or, on analysts' queries and audit verification, the key spent its query budget; Retry-After says when to retry",
  500: 'INTERNAL: a bug; the cause is logged',
  503: 'UNAVAILABLE: an engine is down or the telemetry backlog is full',
};

/** Every error status a route can answer, from its shape: auth, inputs, engines, and what its contract adds. */
export function errorStatuses(c: RouteContract): number[] {
  const statuses = new Set<number>([500, ...(c.errors ?? [])]);
  if (c.access !== 'public') [401, 403, 429, 503].forEach((s) => statuses.add(s));
  if (c.query || c.body || c.extraQuery) statuses.add(400);
  if (c.params) statuses.add(404);
  if (c.body) [413, 415].forEach((s) => statuses.add(s));
  if (c.rateLimited) statuses.add(429);
  return [...statuses].filter((s) => !(s in c.responses)).sort();
}

function errorResponse(status: number): Json {
  const headers = status === 429 || status === 503 ? { headers: retryAfter } : {};
  return { description: errorText[status] ?? 'an error', ...headers, content: { 'application/json': { schema: errorRef } } };
}

/** Keywords whose value is data, not a schema: a `title` inside them names nothing. */
const literalKeywords = new Set(['example', 'examples', 'default', 'const', 'enum']);

/**
 * Every titled schema of an answer or an event (the `.meta({ title })` of
 * api/contracts/) becomes a named schema of `components.schemas`, referenced
 * where it appears: clients generate one type per answer shape
 * (scripts/console-types.mjs names them `components['schemas'][title]`).
 */
class NamedSchemas {
  readonly byTitle: Record<string, Json> = {};

  /** The schema with each titled part, itself included, replaced by a reference to its component. */
  refer(schema: Json): Json {
    const title = schema.title;
    const walked = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, literalKeywords.has(k) ? v : this.walk(v)]));
    if (typeof title !== 'string') return walked;
    const known = this.byTitle[title];
    if (known && JSON.stringify(known) !== JSON.stringify(walked)) throw new Error(`two different answer schemas are titled ${title}`);
    this.byTitle[title] = walked;
    return { $ref: `#/components/schemas/${title}` };
  }

  private walk(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => this.walk(v));
    return typeof value === 'object' && value !== null ? this.refer(value as Json) : value;
  }
}

const csvHeaders = { 'Content-Disposition': 'with text/csv: `attachment; filename="….csv"`' };
const csvContent = (rows: string) => ({ 'text/csv': { schema: { type: 'string', description: `RFC 4180 with a header row and CRLF line ends, UTF-8: ${rows}` } } });

function answerResponse(a: AnswerContract, named: NamedSchemas): Json {
  const described = { ...a.headers, ...(a.csv ? csvHeaders : {}) };
  const headers = Object.keys(described).length
    ? { headers: Object.fromEntries(Object.entries(described).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }])) }
    : {};
  const schema = a.schema ? { [a.contentType ?? 'application/json']: { schema: named.refer(jsonSchema(a.schema, 'output')) } } : undefined;
  const content = schema ? { content: { ...schema, ...(a.csv ? csvContent(a.csv) : {}) } } : {};
  return { description: a.description, ...headers, ...content };
}

function parameters(c: RouteContract): Json[] {
  const out: Json[] = [];
  for (const [name, schema] of Object.entries(c.params ?? {})) {
    out.push({ name, in: 'path', required: true, schema: jsonSchema(schema, 'input') });
  }
  if (c.query) {
    const q = jsonSchema(c.query, 'input') as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, schema] of Object.entries(q.properties ?? {})) {
      out.push({ name, in: 'query', required: q.required?.includes(name) ?? false, schema });
    }
  }
  for (const [name, p] of Object.entries(c.extraQuery ?? {})) {
    out.push({ name, in: 'query', required: false, description: p.description, schema: { type: 'string' } });
  }
  if (c.rateLimited) {
    out.push({ name: 'Idempotency-Key', in: 'header', required: false, description: 'names a batch: a retry gets the same event ids', schema: { type: 'string', maxLength: 200 } });
  }
  return out;
}

function requestBody(b: BodyContract): Json {
  const content: Json = { 'application/json': { schema: jsonSchema(b.schema, 'input'), example: b.example } };
  if (b.ndjson) {
    const line = JSON.stringify(Array.isArray(b.example) ? b.example[0] : b.example);
    content['application/x-ndjson'] = { schema: { type: 'string', description: 'one JSON record per line' }, example: `${line}\n${line}\n` };
  }
  return { required: !b.optional, content };
}

/** What the document says of how people sign in: the OpenID provider's issuer, when single sign-on is on. */
export interface DocumentAuth {
  oidcIssuer?: string;
}

// The console's session cookie stands in for the key it was opened with (or the person's roles); a
// person's access token from the OpenID provider opens what a workspace key opens.
function securityOf(access: RouteContract['access'], auth: DocumentAuth): Json[] {
  const workspace = auth.oidcIssuer ? [{ apiKey: [] }, { openId: [] }] : [{ apiKey: [] }];
  const byAccess: Record<RouteContract['access'], Json[]> = {
    public: [],
    workspace: [...workspace, { consoleSession: [] }],
    'platform-admin': [{ platformAdmin: [] }, { consoleSession: [] }],
    'admin-or-workspace': [...workspace, { platformAdmin: [] }, { consoleSession: [] }],
    session: [{ consoleSession: [] }],
  };
  return byAccess[access];
}

/** OpenID Connect Discovery: the provider's metadata is at this path under its issuer. */
export const discoveryUrl = (issuer: string) => `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;

/** getV1PoliciesById: a stable operation id from the method and path. */
const operationId = (c: RouteContract) =>
  c.method +
  c.path
    .split(/[/.{}-]+/)
    .filter(Boolean)
    .map((s, i, all) => (all[i - 1] !== undefined && c.path.includes(`{${s}}`) ? `By${s[0]!.toUpperCase()}${s.slice(1)}` : s[0]!.toUpperCase() + s.slice(1)))
    .join('');

function operation(c: RouteContract, named: NamedSchemas, auth: DocumentAuth): Json {
  const responses: Json = {};
  for (const [status, answer] of Object.entries(c.responses)) responses[status] = answerResponse(answer, named);
  for (const status of errorStatuses(c)) responses[String(status)] = errorResponse(status);
  const params = parameters(c);
  return {
    operationId: operationId(c),
    summary: c.summary,
    tags: [c.tag],
    ...(c.permission ? { 'x-permission': c.permission, description: `Permission: \`${c.permission}\`.` } : {}),
    security: securityOf(c.access, auth),
    ...(params.length ? { parameters: params } : {}),
    ...(c.body ? { requestBody: requestBody(c.body) } : {}),
    responses,
  };
}

const signatureHeaders: Json[] = [
  { name: 'webhook-id', in: 'header', required: true, description: "the event's id", schema: { type: 'string' } },
  { name: 'webhook-timestamp', in: 'header', required: true, description: 'seconds since the epoch when this attempt was signed', schema: { type: 'string' } },
  { name: 'webhook-signature', in: 'header', required: true, description: '`v1,<base64 HMAC-SHA256 of id.timestamp.body under the decoded whsec_ secret>` (Standard Webhooks)', schema: { type: 'string' } },
];

/** A webhook event as OpenAPI 3.1 `webhooks` describes it: the POST the service makes to a subscriber. */
function webhook(e: EventContract, named: NamedSchemas): Json {
  return {
    post: {
      operationId: `event${e.type.split(/[._]/).map((s) => s[0]!.toUpperCase() + s.slice(1)).join('')}`,
      summary: e.summary,
      tags: ['Webhooks'],
      parameters: signatureHeaders,
      requestBody: { required: true, content: { 'application/cloudevents+json': { schema: named.refer(jsonSchema(e.schema, 'output')) } } },
      responses: {
        '2XX': { description: 'delivered' },
        default: { description: 'a failed attempt (so is a 3xx: redirects are not followed), retried with backoff for up to 24 h' },
      },
    },
  };
}

// The token is sent as a bearer token, as a key is: the API tells the two apart by their form.
const openIdScheme = (issuer: string): Json => ({
  type: 'openIdConnect',
  openIdConnectUrl: discoveryUrl(issuer),
  description:
    "A person's access token from the workspace's OpenID provider, sent as `Authorization: Bearer <JWT>`: the roles the workspace's group mappings give the person's groups; a person holding roles in several workspaces names one in the X-Nettel-Workspace header.",
});

const description = `Multi-tenant network telemetry: ingestion, incidents, analyst queries, governance (policies, replays, approvals), exporters, the prefixes a workspace may act on, detection rules, playbooks and webhooks.

Every error is \`{"error":{"code","message","details?"}}\`. Lists take \`limit\` (1–1000) and the opaque \`cursor\` of the previous page's \`next_cursor\`. Unknown query parameters and body fields are refused with 400.`;

/** The whole document; `servers` is left to the client (same origin). */
export function buildOpenApiDocument(contracts: readonly RouteContract[] = routeContracts, auth: DocumentAuth = {}): Json {
  const named = new NamedSchemas();
  const paths: Record<string, Json> = {};
  for (const c of contracts) (paths[c.path] ??= {})[c.method] = operation(c, named, auth);
  const webhooks = Object.fromEntries(eventContracts.map((e) => [e.type, webhook(e, named)]));
  return {
    openapi: '3.1.0',
    info: { title: 'nettel API', version: '1', description, license: { name: 'Apache-2.0', identifier: 'Apache-2.0' } },
    tags: [...new Set(contracts.map((c) => c.tag))].map((name) => ({ name })),
    security: securityOf('workspace', auth).filter((r) => !('consoleSession' in r)),
    paths,
    webhooks,
    components: {
      schemas: { Error: jsonSchema(errorAnswer, 'output'), ...named.byTitle },
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'ntk_<id>_<secret>',
          description: "A workspace key: its role's permissions on its workspace.",
        },
        ...(auth.oidcIssuer ? { openId: openIdScheme(auth.oidcIssuer) } : {}),
        platformAdmin: { type: 'http', scheme: 'bearer', description: 'The platform admin key (ADMIN_API_KEY): manages keys, reads any ledger by org_id, lists unknown exporters, approves exporters and prefixes; holds no workspace.' },
        consoleSession: {
          type: 'apiKey',
          in: 'cookie',
          name: sessionCookie,
          description: "The browser console's session (GET /auth/login, or POST /auth/key-session): POST, PUT, PATCH and DELETE made with it need the X-CSRF-Token header and the service's own Origin.",
        },
      },
    },
  };
}

const cached = new Map<string, Json>();
/** The document, built once per process (and provider). */
export function openApiDocument(auth: DocumentAuth = {}): Json {
  const key = auth.oidcIssuer ?? '';
  const doc = cached.get(key) ?? buildOpenApiDocument(routeContracts, auth);
  cached.set(key, doc);
  return doc;
}
