import type Router from '@koa/router';
import type { ApiDeps, HealthProbe } from '../deps';

const probeTimeoutMs = 2_000;

async function probeOne(probe: HealthProbe) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${probeTimeoutMs} ms`)), probeTimeoutMs);
  });
  try {
    const result = await Promise.race([probe.probe(), timeout]);
    return { status: 'up' as const, ...result };
  } catch (err) {
    return { status: 'down' as const, error: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

async function probeAll(probes: HealthProbe[]) {
  const results = await Promise.all(probes.map(async (p) => [p.name, await probeOne(p)] as const));
  return { ok: results.every(([, r]) => r.status === 'up'), byName: Object.fromEntries(results) };
}

/**
 * Liveness and readiness without auth: each engine's state and version, and
 * each long-running loop of this process's roles (a stream worker that
 * cannot consume makes the service `degraded`).
 */
export function registerHealthRoutes(router: Router, deps: ApiDeps): void {
  router.get('/healthz', async (ctx) => {
    const [engines, loops] = await Promise.all([probeAll(deps.engines), probeAll(deps.loops)]);
    const ok = engines.ok && loops.ok;
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? 'ok' : 'degraded', engines: engines.byName, loops: loops.byName };
  });

  router.get('/metrics', async (ctx) => {
    ctx.type = deps.registry.contentType;
    ctx.body = await deps.registry.metrics();
  });
}
