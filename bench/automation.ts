import { connect } from 'nats';
import { automationNames } from '../streams/names';
import { birdRouteEvents, type BirdRouteEvent } from './bird';
import { call, mintKey, settle } from './client';
import { elapsedMs, percentile, spread, timeOf } from './data';
import { backgroundFlows, type LoadOutcome } from './scenarios';
import type { BenchStack } from './stack';

/**
 * Scenario 13, automation: incidents open one after another under scenario
 * 3's flow load, each on its own destination; a playbook blackholes the
 * destination for a minute and no policy asks for approval. Each run is
 * timed from the moment the bench sent the signal that opens its incident
 * (before the request, as scenario 3 times its incidents) to the moment BIRD
 * put the route in its table, and from the run's `ends_at` to the moment BIRD
 * removed it; both ends of each route are BIRD's own log lines, stamped to
 * the millisecond by its clock (the bench's and BIRD's are the same machine's).
 * 200 runs, so the p99 is a percentile (the third slowest) rather than the
 * slowest; the two halves' own p99s are printed as the spread within the run.
 * Under a background load that fell short (LoadOutcome) nothing is reported.
 */
export interface AutomationSizes {
  incidents: number;
  /** Between two signals. */
  spacingMs: number;
  /** Whether to wait out each mitigation's minute and time its withdrawal. */
  withdraw: boolean;
}

export const automationSizes: { full: AutomationSizes; quick: AutomationSizes } = {
  full: { incidents: 200, spacingMs: 250, withdraw: true },
  quick: { incidents: 20, spacingMs: 250, withdraw: false },
};

const approvedPrefix = '198.51.100.0/24';
const addressOf = (n: number) => `198.51.100.${10 + n}`;
/** The playbook's shortest duration (core/playbooks.ts: 1 to 10,080 minutes). */
const playbooks = [{ id: 'bench-rtbh', name: 'Blackhole the destination for a minute', match: {}, actions: [{ type: 'blackhole', duration_minutes: 1 }] }];

export interface RunView {
  automation_id: string;
  incident_id: string;
  status: string;
  requested_at: string;
  actions: Array<{ starts_at: string | null; ends_at: string | null }>;
}

export function expectStatus(res: { status: number; body: unknown }, status: number, what: string): void {
  if (res.status !== status) throw new Error(`${what} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
}

/**
 * A workspace with an approved /24, the playbook, and a policy that asks no
 * one to decide but bounds the active mitigations (far above the scenario's
 * 200), as operators bound them: each run's execution counts and writes its
 * mitigation under the workspace's lock, the path a bounded workspace takes.
 */
async function automationWorkspace(stack: BenchStack) {
  const admin = await mintKey(stack.url, stack.adminKey, { role: 'admin' });
  const operator = await mintKey(stack.url, stack.adminKey, { role: 'operator', org_id: admin.org_id });
  const declared = await call<{ id: string }>(stack.url, 'POST', '/v1/prefixes', admin.key, { prefix: approvedPrefix });
  expectStatus(declared, 201, 'POST /v1/prefixes');
  expectStatus(await call(stack.url, 'POST', `/v1/prefixes/${declared.body.id}/approve`, stack.adminKey), 200, 'the prefix approval');
  const bound = { name: 'bounded', requires_approval: false, max_active_mitigations: 10_000 };
  expectStatus(await call(stack.url, 'POST', '/v1/policies', operator.key, bound), 201, 'POST /v1/policies');
  expectStatus(await call(stack.url, 'PUT', '/v1/playbooks', operator.key, { playbooks }), 200, 'PUT /v1/playbooks');
  return { admin, operator };
}

/** One BGP signal per destination, `spacingMs` apart; when each was sent (its clock starts before the request), by destination. */
async function openIncidents(stack: BenchStack, key: string, sizes: AutomationSizes): Promise<Map<string, number>> {
  const accepted = new Map<string, number>();
  const started = Date.now();
  for (let n = 0; n < sizes.incidents; n += 1) {
    const due = started + n * sizes.spacingMs;
    if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    const service = addressOf(n);
    const sent = Date.now();
    const res = await call(stack.url, 'POST', '/ingest', key, { telemetry: 'bgp', service, environment: 'prod', region: 'eu', asn: 64500, latency_ms: 40 });
    accepted.set(service, sent);
    expectStatus(res, 202, 'POST /ingest');
  }
  return accepted;
}

/** Each route's first addition after `since` and the last removal after that, from BIRD's log. */
function routeTimes(events: BirdRouteEvent[], address: string, since: number) {
  const mine = events.filter((e) => e.prefix === `${address}/32` && e.at >= since - 1_000);
  const added = mine.find((e) => e.change === 'added');
  const removed = added && mine.filter((e) => e.change === 'removed' && e.at >= added.at).pop();
  const readded = removed ? mine.some((e) => e.change === 'added' && e.at > removed.at) : false;
  return { added: added?.at, removed: readded ? undefined : removed?.at, flaps: mine.filter((e) => e.change === 'added').length - 1 };
}

/** The workspace's incidents by service and its runs by incident, once every run has put its mitigation in place. */
async function runsOf(stack: BenchStack, key: string, since: number, count: number) {
  const incidents = new Map<string, { id: string; updated_at: string }>();
  const runs = new Map<string, RunView>();
  await settle(async () => {
    const listed = await call<{ data: Array<{ id: string; service: string; updated_at: string }> }>(stack.url, 'GET', `/v1/incidents?limit=1000&since=${since - 60_000}`, key);
    for (const i of listed.body.data ?? []) incidents.set(i.service, i);
    const page = await call<{ data: RunView[] }>(stack.url, 'GET', '/v1/automations?limit=1000', key);
    for (const r of page.body.data ?? []) runs.set(r.incident_id, r);
    return [...runs.values()].filter((r) => r.actions[0]?.starts_at).length >= count;
  }, 60_000);
  return { incidents, runs };
}

/**
 * Deliveries of the automation starter's consumer so far, and the triggers
 * among them: a trigger whose incident is not stored yet when the starter
 * reads it is offered again a second later (the correlator publishes before
 * it writes), and each such offer is a delivery more.
 */
async function starterDeliveries(stack: BenchStack) {
  const nc = await connect({ servers: stack.natsUrl });
  try {
    const n = automationNames(stack.natsPrefix);
    const info = await (await nc.jetstreamManager()).consumers.info(n.triggers, n.starter);
    return { deliveries: info.delivered.consumer_seq, triggers: info.delivered.stream_seq };
  } finally {
    await nc.close();
  }
}

/** When the workflow recorded each run's expiry (its `automation.expired` audit entry), by run. */
async function expiries(stack: BenchStack, adminKey: string): Promise<Map<string, number>> {
  const page = await call<{ data: Array<{ action: string; target: string; at: string }> }>(stack.url, 'GET', '/v1/audit?limit=1000', adminKey);
  return new Map((page.body.data ?? []).filter((e) => e.action === 'automation.expired').map((e) => [e.target, Date.parse(e.at)]));
}


/** Scenario 13: see the file's comment. `flowsPerSecond` is scenario 3's load (half of scenario 1's rate). */
export async function automationLatency(stack: BenchStack, flowsPerSecond: number, sizes: AutomationSizes, log: (msg: string) => void) {
  if (!stack.router) throw new Error('the automation scenario needs the stack started with its router');
  const birdDir = stack.router.birdDir;
  await stack.router.established(60_000);
  const { admin, operator } = await automationWorkspace(stack);
  const load = await backgroundFlows(stack, flowsPerSecond, 20);
  let stopped: Promise<LoadOutcome> | undefined;
  const stopLoad = () => (stopped ??= load.stop());
  const since = Date.now();
  const before = await starterDeliveries(stack);
  try {
    const accepted = await openIncidents(stack, operator.key, sizes);
    const routes = () => new Map([...accepted].map(([address, t]) => [address, routeTimes(birdRouteEvents(birdDir), address, t)]));
    await settle(() => [...routes().values()].every((r) => r.added !== undefined), 120_000);
    const { incidents, runs } = await runsOf(stack, operator.key, since, accepted.size);
    const after = await starterDeliveries(stack);
    const starter = { triggers: after.triggers - before.triggers, deliveries: after.deliveries - before.deliveries };
    if (sizes.withdraw) {
      const lastEnd = Math.max(...[...runs.values()].map((r) => timeOf(r.actions[0]?.ends_at) ?? 0));
      log(`automation: every route announced; the last mitigation ends at ${new Date(lastEnd).toISOString()}`);
      await settle(() => [...routes().values()].every((r) => r.removed !== undefined), Math.max(0, lastEnd - Date.now()) + 60_000);
    }
    // The reconciler's pass often withdraws a route before the run's own timer records its expiry.
    let expired = new Map<string, number>();
    if (sizes.withdraw) await settle(async () => (expired = await expiries(stack, admin.key)).size >= runs.size, 60_000);
    const load = await stopLoad();
    return summary(accepted, routes(), incidents, runs, expired, { sizes, flowsPerSecond, load, starter });
  } finally {
    await stopLoad();
  }
}

/** Each run's times, from its signal's acceptance (announce) and from its end (withdrawal), and the figures over all of them. */
function summary(
  accepted: Map<string, number>,
  routes: Map<string, ReturnType<typeof routeTimes>>,
  incidents: Map<string, { id: string; updated_at: string }>,
  runs: Map<string, RunView>,
  expired: Map<string, number>,
  settings: { sizes: AutomationSizes; flowsPerSecond: number; load: LoadOutcome; starter: { triggers: number; deliveries: number } },
) {
  const rows = [...accepted].map(([address, t]) => {
    const route = routes.get(address)!;
    const incident = incidents.get(address);
    const run = incident && runs.get(incident.id);
    const endsAt = timeOf(run?.actions[0]?.ends_at);
    return {
      address,
      accepted_at: new Date(t).toISOString(),
      // The correlator's time for the version it opened, taken before it publishes the trigger and writes the incident.
      incident_opened_ms: elapsedMs(timeOf(incident?.updated_at), t),
      run_requested_ms: elapsedMs(timeOf(run?.requested_at), t),
      execute_started_ms: elapsedMs(timeOf(run?.actions[0]?.starts_at), t),
      announced_ms: elapsedMs(route.added, t),
      withdraw_lag_ms: settings.sizes.withdraw ? elapsedMs(route.removed, endsAt) : NaN,
      expiry_recorded_ms: settings.sizes.withdraw ? elapsedMs(run && expired.get(run.automation_id), endsAt) : NaN,
      route_flaps: route.flaps,
    };
  });
  const of = (key: keyof (typeof rows)[number]) => rows.map((r) => r[key] as number);
  const stage = (to: number[], from: number[]) => spread(to.map((v, i) => v - from[i]!));
  const measured = spread(of('announced_ms'));
  const withdrawn = settings.sizes.withdraw ? spread(of('withdraw_lag_ms')) : { p50_ms: NaN, p99_ms: NaN };
  const invalid = { p50_ms: NaN, p99_ms: NaN };
  const valid = settings.load.short === undefined;
  const half = Math.ceil(rows.length / 2);
  const halves = [rows.slice(0, half), rows.slice(half)].map((part) => ({
    announce_p99_ms: percentile(part.map((r) => r.announced_ms), 99),
    withdraw_lag_p99_ms: settings.sizes.withdraw ? percentile(part.map((r) => r.withdraw_lag_ms), 99) : NaN,
  }));
  return {
    announce: valid ? measured : invalid,
    withdraw: valid ? withdrawn : invalid,
    details: {
      settings: { incidents: settings.sizes.incidents, spacing_ms: settings.sizes.spacingMs, load_flows_per_s: Math.round(settings.flowsPerSecond) },
      background_load: settings.load,
      detect_to_announce: measured,
      withdraw_lag: withdrawn,
      halves,
      starter_deliveries: settings.starter,
      missing: { announced: rows.filter((r) => r.announced_ms === Infinity).length, withdrawn: rows.filter((r) => r.withdraw_lag_ms === Infinity).length },
      stages: {
        signal_to_incident_opened: spread(of('incident_opened_ms')),
        incident_opened_to_run_requested: stage(of('run_requested_ms'), of('incident_opened_ms')),
        run_requested_to_execute: stage(of('execute_started_ms'), of('run_requested_ms')),
        execute_to_route_in_bird: stage(of('announced_ms'), of('execute_started_ms')),
        end_to_expiry_recorded: settings.sizes.withdraw ? spread(of('expiry_recorded_ms')) : null,
      },
      runs: rows,
    },
  };
}
