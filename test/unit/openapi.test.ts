import { Registry } from 'prom-client';
import { z } from 'zod';
import { createApp } from '../../api/app';
import { limitsSettings } from '../../api/limits.config';
import type { ApiDeps } from '../../api/deps';
import { buildOpenApiDocument, errorStatuses, routeContracts } from '../../api/openapi';
import { routerPath } from '../../api/contracts/contract';
import { defaultsOf } from '../../core/settings';
import { testEventType, webhookEventTypes } from '../../core/webhook-events';
import { createLogger } from '../../observability/logger';

type Operation = { responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, unknown> }>; requestBody?: { content: Record<string, { example?: unknown }> } };
type Doc = {
  paths: Record<string, Record<string, Operation & { security?: unknown[] }>>;
  webhooks: Record<string, unknown>;
  security: unknown[];
  components: { schemas: Record<string, Record<string, unknown>>; securitySchemes: Record<string, Record<string, unknown>> };
};

/** The routes the app registers, as `METHOD /path` in the router's form. Registering needs no engine. */
function appRoutes(): string[] {
  const deps = {
    registry: new Registry(), log: createLogger('silent'), bodyLimitBytes: 1024, console: { dir: '/nonexistent' },
    analyticsLimits: defaultsOf(limitsSettings).analytics,
  };
  return createApp(deps as unknown as ApiDeps).routes.map((r) => `${r.method} ${r.path}`);
}

/** The titles of the schemas written out in place (not as a reference) anywhere under `value`. */
function inlineTitles(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(inlineTitles);
  if (typeof value !== 'object' || value === null) return [];
  const own = 'title' in value && typeof value.title === 'string' ? [value.title] : [];
  return [...own, ...Object.entries(value).flatMap(([k, v]) => (k === 'example' ? [] : inlineTitles(v)))];
}

const documented = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${routerPath(path)}`));

describe('the OpenAPI document', () => {
  const doc = buildOpenApiDocument() as unknown as Doc;

  it('describes every webhook event type, and the test event', () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...webhookEventTypes, testEventType].sort());
  });

  it('describes every route the app registers', () => {
    const missing = appRoutes().filter((r) => !documented(doc).includes(r));
    expect(missing).toEqual([]);
  });

  it('describes no route the app does not register', () => {
    const routes = appRoutes();
    expect(documented(doc).filter((r) => !routes.includes(r))).toEqual([]);
  });

  it('fails a route list with a route that has no contract', () => {
    const partial = buildOpenApiDocument(routeContracts.filter((c) => c.path !== '/v1/policies')) as unknown as Doc;
    expect(appRoutes().filter((r) => !documented(partial).includes(r))).toEqual(['POST /v1/policies', 'GET /v1/policies']);
  });

  it('gives every error status the shared error schema', () => {
    for (const c of routeContracts) {
      const op = doc.paths[c.path]![c.method]!;
      for (const status of errorStatuses(c)) {
        expect(op.responses[String(status)]?.content).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/Error' } } });
      }
    }
  });

  it('answers 429 with Retry-After on the ingestion routes', () => {
    for (const path of ['/flow', '/ingest', '/v1/ingest/events']) {
      expect(doc.paths[path]!.post!.responses['429']!.headers).toHaveProperty('Retry-After');
    }
  });

  it('answers 429 with Retry-After on every route that takes a key (failed authentication is throttled)', () => {
    const without = routeContracts.filter((c) => c.access !== 'public' && !doc.paths[c.path]![c.method]!.responses['429']?.headers?.['Retry-After']);
    expect(without.map((c) => `${c.method} ${c.path}`)).toEqual([]);
  });

  it('names each titled answer in components.schemas and refers to it where it appears', () => {
    const incidents = doc.paths['/v1/incidents']!.get!.responses['200']!.content!['application/json'];
    expect(incidents).toMatchObject({ schema: { properties: { data: { items: { $ref: '#/components/schemas/Incident' } } } } });
    expect(doc.components.schemas.Incident).toMatchObject({ title: 'Incident', type: 'object' });
    expect(doc.components.schemas.Replay).toMatchObject({ properties: { report: { anyOf: [{ $ref: '#/components/schemas/ReplayReport' }, { type: 'null' }] } } });
  });

  it('leaves no titled schema written out in the paths or the webhooks', () => {
    expect(inlineTitles(doc.paths)).toEqual([]);
    expect(inlineTitles(doc.webhooks)).toEqual([]);
  });

  it('refuses two different answers under one title', () => {
    const answer = (schema: z.ZodType) => ({ method: 'get' as const, path: '/a', summary: 'a', tag: 'A', access: 'public' as const, responses: { 200: { description: 'a', schema } } });
    const one = answer(z.object({ a: z.string() }).meta({ title: 'Same' }));
    const other = { ...answer(z.object({ b: z.string() }).meta({ title: 'Same' })), path: '/b' };
    expect(() => buildOpenApiDocument([one, other])).toThrow('two different answer schemas are titled Same');
  });

  it('carries an example for every request body', () => {
    for (const ops of Object.values(doc.paths)) {
      for (const op of Object.values(ops)) {
        for (const media of Object.values(op.requestBody?.content ?? {})) expect(media.example).toBeDefined();
      }
    }
  });

  it('offers the top-N and series answers as text/csv too, with their attachment name', () => {
    for (const path of ['/v1/telemetry/flows/top', '/v1/telemetry/flows/series', '/v1/telemetry/metrics/series']) {
      const ok = doc.paths[path]!.get!.responses['200']!;
      expect(Object.keys(ok.content!)).toEqual(['application/json', 'text/csv']);
      expect(ok.headers).toHaveProperty('Content-Disposition');
    }
    expect(doc.paths['/v1/telemetry/flows']!.get!.responses['200']!.content).not.toHaveProperty('text/csv');
  });

  it('declares the OpenID provider as an openIdConnect scheme beside the key, when single sign-on is on', () => {
    const withSso = buildOpenApiDocument(routeContracts, { oidcIssuer: 'https://id.example.org/realms/a/' }) as unknown as Doc;
    expect(withSso.components.securitySchemes.openId).toMatchObject({ type: 'openIdConnect', openIdConnectUrl: 'https://id.example.org/realms/a/.well-known/openid-configuration' });
    expect(withSso.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(withSso.security).toEqual([{ apiKey: [] }, { openId: [] }]);
    expect(withSso.paths['/v1/incidents']!.get!.security).toEqual([{ apiKey: [] }, { openId: [] }, { consoleSession: [] }]);
    expect(withSso.paths['/v1/mitigations/all']!.get!.security).not.toContainEqual({ openId: [] });
  });

  it('declares no OpenID scheme when single sign-on is off', () => {
    expect(doc.components.securitySchemes).not.toHaveProperty('openId');
    expect(doc.security).toEqual([{ apiKey: [] }]);
  });
});
