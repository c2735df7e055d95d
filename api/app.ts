import Router from '@koa/router';
import Koa from 'koa';
import { authenticate, type AuthGuard } from './auth';
import { registerConsoleRoutes, serveConsole } from './console';
import type { ApiDeps } from './deps';
import { registerDocsRoutes } from './docs';
import { errorMiddleware } from './error-middleware';
import { httpMetrics, type HttpMetrics } from './http-metrics';
import { securityHeaders } from './security-headers';
import { registerAuditRoutes } from './routes/audit';
import { registerAuthRoutes } from './routes/auth';
import { registerDetectionRuleRoutes } from './routes/detection-rules';
import { registerEnrichmentRoutes } from './routes/enrichment';
import { registerExporterRoutes } from './routes/exporters';
import { registerHealthRoutes } from './routes/health';
import { registerIncidentRoutes } from './routes/incidents';
import { registerIngestRoutes } from './routes/ingest';
import { registerPlaybookRoutes } from './routes/playbooks';
import { registerNetworkRoutes } from './routes/networks';
import { registerViewRoutes } from './routes/views';
import { registerPolicyRoutes } from './routes/policies';
import { registerPrefixRoutes } from './routes/prefixes';
import { registerReplayRoutes } from './routes/replays';
import { registerSsoRoutes } from './routes/sso';
import { registerGuardrailRoutes } from './routes/guardrails';
import { registerAutomationRoutes } from './routes/automations';
import { registerTelemetryRoutes } from './routes/telemetry';
import { registerKeyRoutes } from './routes/keys';
import { registerWebhookRoutes } from './routes/webhooks';
import { registerWhoamiRoutes } from './routes/whoami';

export interface RouteInfo {
  method: string;
  path: string;
  authenticated: boolean;
}

/**
 * The HTTP API as a Koa app that opens no port: the entry point listens,
 * tests drive `app.callback()`. Public routes (health, metrics) and
 * authenticated routes live on two routers so that the key check runs for
 * every route of the second and none of the first.
 */
export function createApp(deps: ApiDeps): { app: Koa; routes: RouteInfo[] } {
  const app = new Koa({ proxy: false });
  app.silent = true;
  const metrics = httpMetrics(deps.registry);

  const publicRouter = new Router();
  registerHealthRoutes(publicRouter, deps);
  registerDocsRoutes(publicRouter, { oidcIssuer: deps.people?.issuer });
  if (deps.console) registerConsoleRoutes(publicRouter, deps.console);

  const guard: AuthGuard = {
    keys: deps.keys,
    throttle: deps.authThrottle,
    trustedProxies: deps.trustedProxies,
    people: deps.people,
    ssoRequired: (orgId) => deps.ssoRequirements.isRequired(orgId),
    console: deps.consoleAuth,
  };
  // The console's sign-in and session: each route checks what it needs (nothing, the session, or a key given once).
  const authRouter = new Router();
  registerAuthRoutes(authRouter, { console: deps.consoleAuth, guard, bodyLimitBytes: deps.bodyLimitBytes });

  const tenantRouter = new Router();
  tenantRouter.use(authenticate(guard));
  registerKeyRoutes(tenantRouter, deps);
  registerWhoamiRoutes(tenantRouter);
  registerAuditRoutes(tenantRouter, deps);
  registerIngestRoutes(tenantRouter, deps);
  registerIncidentRoutes(tenantRouter, deps);
  registerTelemetryRoutes(tenantRouter, deps);
  registerPolicyRoutes(tenantRouter, deps);
  registerReplayRoutes(tenantRouter, deps);
  registerAutomationRoutes(tenantRouter, deps);
  registerExporterRoutes(tenantRouter, deps);
  registerEnrichmentRoutes(tenantRouter, deps);
  registerPrefixRoutes(tenantRouter, deps);
  registerDetectionRuleRoutes(tenantRouter, deps);
  registerPlaybookRoutes(tenantRouter, deps);
  registerNetworkRoutes(tenantRouter, deps);
  registerViewRoutes(tenantRouter, deps);
  registerWebhookRoutes(tenantRouter, deps);
  registerSsoRoutes(tenantRouter, deps);
  registerGuardrailRoutes(tenantRouter, deps);

  const routes = routesOf([[publicRouter, false], [authRouter, false], [tenantRouter, true]]);
  app.use(countRequests(metrics, new Set(routes.map((r) => r.path))));
  app.use(securityHeaders());
  app.use(errorMiddleware({ log: deps.log, metrics, queryLimits: deps.analyticsLimits.limits }));
  // The console's files at `/` and `/assets/*` only; every other path reaches the routers.
  if (deps.console) app.use(serveConsole(deps.console));
  for (const router of [publicRouter, authRouter, tenantRouter]) {
    app.use(router.routes());
    // Sets 405/501 with an Allow header; the error middleware gives it the error body.
    app.use(router.allowedMethods());
  }
  return { app, routes };
}

/**
 * Counts every request under its route's path. The router also records the
 * path of a matched `use()` layer (a pattern, not a route): a request that
 * matched no route is labelled `unmatched`, so unknown paths cannot grow the
 * label set.
 */
function countRequests(metrics: HttpMetrics, routePaths: ReadonlySet<string>): Koa.Middleware {
  return async function countRequest(ctx, next) {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      const route = typeof matched === 'string' && routePaths.has(matched) ? matched : 'unmatched';
      metrics.requests.inc({ method: ctx.method, route, status: String(ctx.status) });
      metrics.duration.observe({ route }, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };
}

function routesOf(routers: ReadonlyArray<readonly [Router, boolean]>): RouteInfo[] {
  const routes: RouteInfo[] = [];
  for (const [router, authenticated] of routers) {
    for (const layer of router.stack) {
      // A use() layer has no methods: it is middleware, not a route.
      for (const method of layer.methods.filter((m) => m !== 'HEAD')) {
        routes.push({ method, path: layer.path as string, authenticated });
      }
    }
  }
  return routes;
}
