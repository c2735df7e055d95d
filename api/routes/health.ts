import type Router from '@koa/router';
import type { Context } from 'koa';
import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError, forbidden, unauthorized } from '../../core/errors';
import { principalFromRequest, type AuthGuard } from '../auth';
import { iso } from '../../core/time';
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

type ProbeResult = Awaited<ReturnType<typeof probeOne>>;

/** Up or down only: versions and errors tell an attacker what runs inside and how it fails. */
const statusOnly = (byName: Record<string, ProbeResult>) =>
  Object.fromEntries(Object.entries(byName).map(([name, r]) => [name, { status: r.status }]));

/**
 * Whether the caller presented the platform admin key. A credential given
 * must be valid (401, or 429 past the throttle); a workspace key that cannot
 * be looked up because ClickHouse is down still gets the plain answer, which
 * is the one to say so.
 */
async function askedByPlatformAdmin(ctx: Context, guard: AuthGuard): Promise<boolean> {
  if (!ctx.get('authorization')) return false;
  try {
    return (await principalFromRequest(ctx, guard)).kind === 'platform_admin';
  } catch (err) {
    if (err instanceof AppError && (err.code === 'UNAUTHORIZED' || err.code === 'RATE_LIMITED')) throw err;
    return false;
  }
}

/**
 * /metrics counts requests by route and by workspace: they are for the
 * operator's scraper (METRICS_TOKEN) or the platform admin, no one else. A
 * wrong token is a failed authentication like any other (401, throttled).
 */
async function requireMetricsReader(ctx: Context, guard: AuthGuard, metricsToken: string | undefined): Promise<void> {
  const given = /^Bearer (.+)$/i.exec(ctx.get('authorization'))?.[1];
  if (!given) throw unauthorized('/metrics needs METRICS_TOKEN or the platform admin key as a bearer');
  if (metricsToken && sameSecret(given, metricsToken)) return;
  if ((await principalFromRequest(ctx, guard)).kind !== 'platform_admin') throw forbidden('/metrics is for the metrics token or the platform admin key');
}

/** Constant-time equality of two secrets of any length (digests have one length). */
const sameSecret = (a: string, b: string) => timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());

/**
 * SNMP agents that stopped answering, when any did: how many (their exporters keep their
 * last known interface names, so the service is not degraded by them), and
 * for the platform admin which ones and why. Nothing when it cannot be read.
 */
async function snmpAgents(deps: ApiDeps, detailed: boolean) {
  if (!deps.failingAgents) return {};
  let timer: NodeJS.Timeout | undefined;
  // ClickHouse down must not hold /healthz up: its own probe says so.
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('no answer')), probeTimeoutMs);
  });
  try {
    const failing = await Promise.race([deps.failingAgents(100), late]);
    const agents = failing.map((a) => ({ org_id: a.org_id, exporter_id: a.exporter_id, address: a.address, failing_since: iso(a.failing_since), error: a.error }));
    // Said only when there is something to say (or to the platform admin): an all-well answer keeps its shape.
    if (!detailed && failing.length === 0) return {};
    return { snmp_agents: { failing: failing.length, ...(detailed ? { agents } : {}) } };
  } catch {
    return {};
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What the platform admin should know of the workspaces' guardrails: those
 * whose enabled playbooks act with no policy gating them (nobody decides
 * their runs). A failed read says so rather than failing the probe.
 */
async function governanceDetail(deps: ApiDeps): Promise<{ ungated_workspaces: string[] } | { error: string }> {
  try {
    return { ungated_workspaces: await deps.guardrails.ungatedWorkspaces() };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/**
 * Liveness and readiness without auth: each engine up or down, and each
 * long-running loop of this process's roles (a stream worker that cannot
 * consume makes the service `degraded`). With the platform admin key, each
 * also says its version, transport and, when down, why, and which workspaces
 * act with no policy gating their playbooks.
 */
export function registerHealthRoutes(router: Router, deps: ApiDeps): void {
  const guard: AuthGuard = { keys: deps.keys, throttle: deps.authThrottle, trustedProxies: deps.trustedProxies };
  router.get('/healthz', async (ctx) => {
    const detailed = await askedByPlatformAdmin(ctx, guard);
    const [engines, loops] = await Promise.all([probeAll(deps.engines), probeAll(deps.loops)]);
    const ok = engines.ok && loops.ok;
    const view = detailed ? (byName: Record<string, ProbeResult>) => byName : statusOnly;
    ctx.status = ok ? 200 : 503;
    // Like every 503 of the API (and as the OpenAPI document says): when to look again.
    if (!ok) ctx.set('Retry-After', '5');
    const body = { status: ok ? 'ok' : 'degraded', engines: view(engines.byName), loops: view(loops.byName), ...(await snmpAgents(deps, detailed)) };
    ctx.body = detailed ? { ...body, governance: await governanceDetail(deps) } : body;
  });

  router.get('/metrics', async (ctx) => {
    await requireMetricsReader(ctx, guard, deps.metricsToken);
    ctx.type = deps.registry.contentType;
    ctx.body = await deps.registry.metrics();
  });
}
