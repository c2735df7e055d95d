import Router from '@koa/router';
import Koa from 'koa';
import { authenticate } from './auth';
import type { ApiDeps } from './deps';
import { errorMiddleware } from './error-middleware';
import { registerAuditRoutes } from './routes/audit';
import { registerHealthRoutes } from './routes/health';
import { registerIncidentRoutes } from './routes/incidents';
import { registerIngestRoutes } from './routes/ingest';
import { registerPolicyRoutes } from './routes/policies';
import { registerReplayRoutes } from './routes/replays';
import { registerTelemetryRoutes } from './routes/telemetry';
import { registerKeyRoutes } from './routes/keys';

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

  const publicRouter = new Router();
  registerHealthRoutes(publicRouter, deps);

  const tenantRouter = new Router();
  tenantRouter.use(authenticate(deps.keys));
  registerKeyRoutes(tenantRouter, deps);
  registerAuditRoutes(tenantRouter, deps);
  registerIngestRoutes(tenantRouter, deps);
  registerIncidentRoutes(tenantRouter, deps);
  registerTelemetryRoutes(tenantRouter, deps);
  registerPolicyRoutes(tenantRouter, deps);
  registerReplayRoutes(tenantRouter, deps);

  app.use(async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      deps.metrics.httpRequests.inc({ method: ctx.method, route, status: String(ctx.status) });
      deps.metrics.httpDuration.observe({ route }, Number(process.hrtime.bigint() - started) / 1e9);
    }
  });
  app.use(errorMiddleware(deps));
  for (const router of [publicRouter, tenantRouter]) {
    app.use(router.routes());
    // Sets 405/501 with an Allow header; the error middleware gives it the error body.
    app.use(router.allowedMethods());
  }

  const routes: RouteInfo[] = [];
  for (const [router, authenticated] of [[publicRouter, false], [tenantRouter, true]] as const) {
    for (const layer of router.stack) {
      for (const method of layer.methods.filter((m) => m !== 'HEAD')) {
        routes.push({ method, path: layer.path as string, authenticated });
      }
    }
  }
  return { app, routes };
}
