import { defaultWindowSettings } from '../core/detection/rate-window';
import { expectStatus, type RunView } from './automation';
import { backlogSampler } from './backlog';
import { birdRouteEvents, type BirdRouteEvent } from './bird';
import { chdbSessionUse } from './chdb-session';
import { call, mintKey, settle } from './client';
import { elapsedMs, percentile, spread, timeOf } from './data';
import { storedProbe } from './flood-probe';
import { floodShape, floodTraffic, type FloodRecord, type FloodSizes } from './flood-traffic';
import { backgroundFlows, type LoadOutcome } from './scenarios';
import type { BenchStack } from './stack';
import { incidentOpenings, type IncidentOpening } from './webhooks';

/**
 * Scenario 14, flood: under scenario 3's flow load (half of scenario 1's rate
 * into another workspace, its answers counted: a load that fell short voids
 * the figures), a workspace is flooded on one destination after another
 * (bench/flood-traffic.ts) while its ordinary flows go on. Its rate rules
 * cross on each flood within its first second of event time; its playbook
 * asks for the fingerprint's Flowspec rule and no policy asks a person, so
 * each flood should end as a `flowspec_discard` in BIRD's `flowtab4`.
 *
 * Each flood is timed from the first of its flows stored: the moment the
 * bench read the earliest `201` of a post holding its flows (a `201` is the
 * flows durably in JetStream, the service's promise; ClickHouse's
 * `received_at` is stamped by the API before that, so it would start the
 * clock before the flows were safe). To the incident opened: the time of its
 * `incident.opened` event (the correlator's clock as it wrote the incident's
 * first version, not the delivery's). To the rule in BIRD: BIRD's log line
 * adding the Flowspec route (its clock, same machine), as scenario 13 reads
 * it. The stages between come from what the service stores: the first
 * crossing window's end (event time) and the signal's `received_at` (the
 * detectors' clock as they judged it), the run's `requested_at` and its
 * action's `starts_at`.
 */
const approvedPrefix = '198.18.0.0/16';
/**
 * FastNetMon's per-host defaults, and UDP at 2,000 packets a second, a
 * twelfth of a flood's 25,000: a window's rates are its 5 one-second
 * buckets' sums over 5 seconds, so the flood's first second crosses alone
 * once it holds 0.4 s of the flood. The ordinary flows stay far below.
 */
const rates = { thresholds: { total: { pps: 20_000, bps: 1_000_000_000, fps: 3_500 }, udp: { pps: 2_000 } } };
/** The fingerprint's rule for a minute (a playbook's shortest duration), and no policy: no run waits for a person. */
const playbooks = [{ id: 'bench-fingerprint', name: "Discard the attack's fingerprint for a minute", match: {}, actions: [{ type: 'flowspec_fingerprint', duration_minutes: 1 }] }];
/** The detectors' allowed lateness: a window closes once event time is this far past its end. */
const { latenessMs } = defaultWindowSettings;

async function floodWorkspace(stack: BenchStack): Promise<string> {
  const admin = await mintKey(stack.url, stack.adminKey, { role: 'admin' });
  const declared = await call<{ id: string }>(stack.url, 'POST', '/v1/prefixes', admin.key, { prefix: approvedPrefix });
  expectStatus(declared, 201, 'POST /v1/prefixes');
  expectStatus(await call(stack.url, 'POST', `/v1/prefixes/${declared.body.id}/approve`, stack.adminKey), 200, 'the prefix approval');
  expectStatus(await call(stack.url, 'PUT', '/v1/detection-rules', admin.key, { rates }), 200, 'PUT /v1/detection-rules');
  expectStatus(await call(stack.url, 'PUT', '/v1/playbooks', admin.key, { playbooks }), 200, 'PUT /v1/playbooks');
  return admin.key;
}

/** The first Flowspec route BIRD added for the flood's destination since it started, if any. */
function ruleInBird(events: BirdRouteEvent[], flood: FloodRecord): BirdRouteEvent | undefined {
  const since = (flood.startedAt ?? Infinity) - 1_000;
  return events.find((e) => e.change === 'added' && e.at >= since && e.prefix.startsWith('flow4 {') && e.prefix.includes(`dst ${flood.destination}/32;`));
}

/** What the service stored of each flood: its incident's first signal and attack type, and its run. */
async function storedFacts(stack: BenchStack, key: string, opened: Map<string, IncidentOpening>) {
  const runs = new Map<string, RunView>();
  const page = await call<{ data: RunView[] }>(stack.url, 'GET', '/v1/automations?limit=1000', key);
  for (const r of page.body.data ?? []) runs.set(r.incident_id, r);
  const incidents = new Map<string, { windowEnd?: number; judgedAt?: number; pace?: number; rule?: string; type?: string }>();
  for (const [service, { id }] of opened) {
    // Oldest first: the first crossing window, then one a second while the flood lasts.
    const signals = await call<{ data: Array<{ timestamp: string; received_at: string; rule: string | null }> }>(stack.url, 'GET', `/v1/incidents/${id}/signals?limit=30`, key);
    const incident = await call<{ attack: { type: string } | null }>(stack.url, 'GET', `/v1/incidents/${id}`, key);
    const list = signals.body.data ?? [];
    const [first, last] = [list[0], list[list.length - 1]];
    // A signal's event time is its window's last millisecond.
    const ts = timeOf(first?.timestamp);
    incidents.set(service, { windowEnd: ts === undefined ? undefined : ts + 1, judgedAt: timeOf(first?.received_at), pace: judgingPace(first, last), rule: first?.rule ?? undefined, type: incident.body.attack?.type });
  }
  return { runs, incidents };
}

/**
 * Wall time the detectors took per second of event time between an incident's
 * first and last windows: above 1, they judged its windows more slowly than
 * the flood made them, and fell further behind with each one.
 */
function judgingPace(first?: { timestamp: string; received_at: string }, last?: { timestamp: string; received_at: string }): number | undefined {
  if (!first || !last || first === last) return undefined;
  const pace = (Date.parse(last.received_at) - Date.parse(first.received_at)) / (Date.parse(last.timestamp) - Date.parse(first.timestamp));
  return Math.round(pace * 100) / 100;
}

/** Scenario 14: see the file's comment. `flowsPerSecond` is scenario 3's load (half of scenario 1's rate). */
export async function floodLatency(stack: BenchStack, flowsPerSecond: number, sizes: FloodSizes, log: (msg: string) => void) {
  if (!stack.router) throw new Error('the flood scenario needs the stack started with its router');
  const birdDir = stack.router.birdDir;
  await stack.router.established(60_000);
  const key = await floodWorkspace(stack);
  const openings = await incidentOpenings(stack.url, key);
  const session = await chdbSessionUse(stack);
  const load = await backgroundFlows(stack, flowsPerSecond, 20);
  const backlog = await backlogSampler(stack.natsUrl, stack.natsPrefix);
  const traffic = floodTraffic(stack.url, key, sizes);
  const probe = storedProbe(stack.url, key, Date.now() - 60_000);
  let stopped: Promise<[LoadOutcome, Record<number, number>, Awaited<ReturnType<typeof backlog.stop>>, Awaited<ReturnType<typeof probe.stop>>]> | undefined;
  const stop = () => (stopped ??= Promise.all([load.stop(), traffic.stop(), backlog.stop(), probe.stop()]));
  try {
    log(`flood: the last flood ends at ${new Date(traffic.endsAt).toISOString()}`);
    await new Promise((r) => setTimeout(r, Math.max(0, traffic.endsAt - Date.now())));
    // The ordinary flows and the load go on meanwhile: event time moves on and closes the floods' last windows, as it would.
    const inBird = () => traffic.floods.every((f) => ruleInBird(birdRouteEvents(birdDir), f));
    await settle(inBird, 240_000);
    await settle(() => openings.opened.size >= sizes.floods, 30_000);
    const [outcome, statuses, backlogs, probed] = await stop();
    const chdbSession = await session.stop();
    const stored = await storedFacts(stack, key, openings.opened);
    const events = birdRouteEvents(birdDir);
    const rows = traffic.floods.map((f) => rowOf(f, openings.opened.get(f.destination), stored, ruleInBird(events, f), probe.seen.get(f.destination)));
    return summary(rows, { sizes, flowsPerSecond, load: outcome, statuses, backlogs: { ...backlogs, stored_probe: probed }, chdbSession });
  } finally {
    await stop();
    await openings.close();
  }
}

type Stored = Awaited<ReturnType<typeof storedFacts>>;

/** One flood's times, in ms from its first flow stored, and what it became. */
function rowOf(f: FloodRecord, opening: IncidentOpening | undefined, stored: Stored, rule: BirdRouteEvent | undefined, inClickHouse: number | undefined) {
  const incident = stored.incidents.get(f.destination);
  const run = opening && stored.runs.get(opening.id);
  const from = f.storedAt;
  const closable = incident?.windowEnd === undefined ? undefined : incident.windowEnd + latenessMs;
  return {
    destination: f.destination,
    stored_at: from === undefined ? null : new Date(from).toISOString(),
    posts: f.posts,
    refused_posts: f.refusedPosts,
    in_clickhouse_ms: elapsedMs(inClickHouse, from),
    // How far event time had to go past the first flood flow before the first crossing window could close.
    event_time_to_close_ms: elapsedMs(closable, f.firstFlowTs),
    // From when the flows that could close it were made (their event time, stamped within 100 ms of their post) to its judgement.
    closing_flows_to_judged_ms: elapsedMs(incident?.judgedAt, closable),
    judged_ms: elapsedMs(incident?.judgedAt, from),
    judging_pace: incident?.pace ?? null,
    incident_opened_ms: elapsedMs(opening?.openedAt, from),
    run_requested_ms: elapsedMs(timeOf(run?.requested_at), from),
    execute_started_ms: elapsedMs(timeOf(run?.actions[0]?.starts_at), from),
    rule_in_bird_ms: elapsedMs(rule?.at, from),
    attack_type: incident?.type ?? null,
    signal_rule: incident?.rule ?? null,
    run_status: run?.status ?? null,
    flowspec: rule?.prefix ?? null,
  };
}

type Row = ReturnType<typeof rowOf>;

function summary(rows: Row[], settings: { sizes: FloodSizes; flowsPerSecond: number; load: LoadOutcome; statuses: Record<number, number>; backlogs: unknown; chdbSession: unknown }) {
  const of = (key: keyof Row) => rows.map((r) => r[key] as number);
  // A stage whose start is missing is left out (its flood counts in `missing`); one whose end is missing is Infinity.
  const stage = (to: number[], from: number[]) => spread(to.map((v, i) => v - from[i]!).filter((v) => !Number.isNaN(v)));
  const toIncident = spread(of('incident_opened_ms'));
  const toRule = spread(of('rule_in_bird_ms'));
  const valid = settings.load.short === undefined;
  const invalid = { p50_ms: NaN, p99_ms: NaN };
  const half = Math.ceil(rows.length / 2);
  const halves = [rows.slice(0, half), rows.slice(half)].map((part) => ({
    incident_p99_ms: percentile(part.map((r) => r.incident_opened_ms), 99),
    rule_p99_ms: percentile(part.map((r) => r.rule_in_bird_ms), 99),
  }));
  const paces = rows.flatMap((r) => (r.judging_pace === null ? [] : [r.judging_pace]));
  const count = (values: Array<string | null>) => values.reduce<Record<string, number>>((n, v) => ({ ...n, [v ?? 'none']: (n[v ?? 'none'] ?? 0) + 1 }), {});
  return {
    incident: valid ? toIncident : invalid,
    rule: valid ? toRule : invalid,
    details: {
      settings: { ...settings.sizes, load_flows_per_s: Math.round(settings.flowsPerSecond), rates, flood: floodShape },
      background_load: settings.load,
      flood_posts: settings.statuses,
      // Messages waiting for the writers and for the detectors, sampled every second from the load's start.
      backlogs: settings.backlogs,
      // chDB's sessions from the load's start to the last rule in BIRD: the writes' busy share near 1 is a run past saturation.
      chdb_session: settings.chdbSession,
      stored_to_incident: toIncident,
      stored_to_rule: toRule,
      halves,
      missing: { incident: rows.filter((r) => r.incident_opened_ms === Infinity).length, rule: rows.filter((r) => r.rule_in_bird_ms === Infinity).length },
      attack_types: count(rows.map((r) => r.attack_type)),
      judging_pace: { p50: percentile(paces, 50), max: Math.max(...paces) },
      run_statuses: count(rows.map((r) => r.run_status)),
      stages: {
        stored_to_in_clickhouse: spread(of('in_clickhouse_ms')),
        first_flow_to_window_closable_event_time: spread(of('event_time_to_close_ms')),
        closing_flows_made_to_window_judged: spread(of('closing_flows_to_judged_ms')),
        stored_to_window_judged: spread(of('judged_ms')),
        judged_to_incident_opened: stage(of('incident_opened_ms'), of('judged_ms')),
        incident_opened_to_run_requested: stage(of('run_requested_ms'), of('incident_opened_ms')),
        run_requested_to_execute: stage(of('execute_started_ms'), of('run_requested_ms')),
        execute_to_rule_in_bird: stage(of('rule_in_bird_ms'), of('execute_started_ms')),
      },
      floods: rows,
    },
  };
}
