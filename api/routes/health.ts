import type Router from '@koa/router';
import type { ApiDeps, EngineProbe } from '../deps';

const probeTimeoutMs = 2_000;

async function probeOne(engine: EngineProbe) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${probeTimeoutMs} ms`)), probeTimeoutMs);
  });
  try {
    const result = await Promise.race([engine.probe(), timeout]);
    return { status: 'up' as const, ...result };
  } catch (err) {
    return { status: 'down' as const, error: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

/** Liveness and readiness without auth: each engine's state and version. */
export function registerHealthRoutes(router: Router, deps: ApiDeps): void {
  router.get('/healthz', async (ctx) => {
    const results = await Promise.all(deps.engines.map(async (e) => [e.name, await probeOne(e)] as const));
    const engines = Object.fromEntries(results);
    const ok = results.every(([, r]) => r.status === 'up');
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? 'ok' : 'degraded', engines };
  });

  router.get('/metrics', async (ctx) => {
    ctx.type = deps.metrics.registry.contentType;
    ctx.body = await deps.metrics.registry.metrics();
  });
}
