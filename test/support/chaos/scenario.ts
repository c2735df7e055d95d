import { randomBytes } from 'node:crypto';
import type { Page, ReplayRequested, ReplayView } from '../api-types';
import { connect } from 'nats';
import { waitFor, waitForTelemetryDrained } from '../wait';
import { LoadClient, type LoadReport } from './load-client';
import type { ServiceProcess } from './service-process';
import { countStored, type QueryRunner, type StoredCount } from './stored-flows';

/** What the API of a service under test is called with. */
export async function call<T>(url: string, method: string, route: string, key: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${url}${route}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

export interface Workspace {
  orgId: string;
  operator: string;
  approver: string;
  replayId: string;
}

/** A workspace with keys, a policy that asks for approval, and a replay waiting for it. */
export async function workspaceWithWaitingReplay(svc: ServiceProcess): Promise<Workspace> {
  const mint = async (role: string, orgId?: string) =>
    (await call<{ key: string; org_id: string }>(svc.url, 'POST', '/v1/api-keys', svc.adminKey, { role, owner: { subject: `chaos-${role}-${Math.random().toString(36).slice(2)}` }, ...(orgId ? { org_id: orgId } : {}) })).body;
  const operator = await mint('operator');
  const approver = await mint('approver', operator.org_id);
  await call(svc.url, 'POST', '/v1/policies', operator.key, { name: 'chaos gate', requires_approval: true, approval_timeout_minutes: 60 });
  await call(svc.url, 'POST', '/ingest', operator.key, { telemetry: 'bgp', service: 'chaos', environment: 'prod', region: 'eu', latency_ms: 5 });
  const incident = await waitFor(async () => (await call<Page<{ id: string }>>(svc.url, 'GET', '/v1/incidents', operator.key)).body.data[0], 30_000, 'an incident');
  const replayId = (await call<ReplayRequested>(svc.url, 'POST', '/v1/replay', operator.key, { incident_id: incident.id })).body.replay_id;
  await replayIn(svc, operator.key, replayId, 'awaiting_approval');
  return { orgId: operator.org_id, operator: operator.key, approver: approver.key, replayId };
}

export const replayIn = (svc: ServiceProcess, key: string, id: string, status: string) =>
  waitFor(async () => {
    const res = await call<ReplayView>(svc.url, 'GET', `/v1/replays/${id}`, key).catch(() => undefined);
    return res?.body.status === status ? res.body : undefined;
  }, 90_000, `replay ${id} ${status}`);

/** Approves the waiting replay (retried while the service recovers) and waits for it to complete. */
export async function approveAndComplete(svc: ServiceProcess, ws: Workspace): Promise<ReplayView> {
  await waitFor(async () => {
    const res = await call(svc.url, 'POST', `/v1/replays/${ws.replayId}/approve`, ws.approver, { comment: 'chaos' }).catch(() => undefined);
    return res?.status === 202 ? true : undefined;
  }, 90_000, 'the approval to be taken');
  return replayIn(svc, ws.operator, ws.replayId, 'completed');
}

/** Waits until the stream workers have written and acknowledged everything published, read from the service's NATS. */
export async function drained(svc: ServiceProcess): Promise<void> {
  const nc = await connect(svc.nats);
  try {
    await waitForTelemetryDrained(await nc.jetstreamManager(), 'nettel', 120_000);
  } finally {
    await nc.close();
  }
}

/** Runs the load until `count` more batches are acknowledged. */
export async function whileAcknowledging(load: LoadClient, count: number): Promise<void> {
  const target = load.acknowledged + count;
  await waitFor(() => Promise.resolve(load.acknowledged >= target ? true : undefined), 120_000, `${count} more acknowledged batches`);
}

export interface ScenarioResult {
  kills: number;
  load: LoadReport;
  stored: StoredCount;
  replay: ReplayView;
  /** The ledger's verdict, or the status and body it answered instead. */
  auditValid: boolean | string;
}

/**
 * One chaos scenario: a workspace with a waiting replay, a retrying load,
 * the chaos in the middle of it, then the checks: the load's report, what
 * ClickHouse holds against what was acknowledged, the audit chain, and the
 * replay approved to completion. Prints its one line.
 */
export interface Scenario {
  name: string;
  svc: ServiceProcess;
  /** Started after the service and stopped after it (a stream worker process of its own). */
  alongside?: { start: () => Promise<void>; stop: () => Promise<void> };
  /** The chaos, in the middle of the load; returns how many processes it killed. */
  chaos: (load: LoadClient) => Promise<number>;
  /** Where the stored rows are read, and whether the service must stop first (chDB). */
  storedBy: () => { run: QueryRunner; database: string; stopFirst: boolean };
}

/** Under the test's own timeout, so that a stuck scenario fails here and its service and load are stopped. */
const scenarioDeadlineMs = 240_000;

function withDeadline<T>(work: Promise<T>, ms: number, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`scenario ${name} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

export async function runScenario(scenario: Scenario): Promise<ScenarioResult> {
  const { svc, alongside } = scenario;
  let load: LoadClient | undefined;
  try {
    await svc.start();
    await alongside?.start();
    const ws = await workspaceWithWaitingReplay(svc);
    load = new LoadClient({ url: () => svc.url, key: ws.operator, scenario: `${scenario.name}-${randomBytes(3).toString('hex')}`, senders: 4, timestamp: Date.now() });
    return await withDeadline(loadThroughChaos(scenario, ws, load), scenarioDeadlineMs, scenario.name);
  } finally {
    load?.abort();
    await svc.stop();
    await alongside?.stop();
  }
}

/**
 * The workspace's audit verdict once the ledger answers: right after an
 * engine came back (JetStream re-enabled after a full disk, say) it may
 * answer 503 for a moment, which is its documented answer, not a verdict.
 * Any other answer is returned as its status and body, so a failure says
 * what came back.
 */
async function auditVerdict(svc: ServiceProcess, ws: Workspace): Promise<boolean | string> {
  let last = { status: 0, body: undefined as unknown };
  const verdict = await waitFor(async () => {
    last = await call<{ valid?: boolean }>(svc.url, 'GET', '/v1/audit/verify', ws.operator);
    return last.status === 503 ? undefined : true;
  }, 30_000, 'the audit ledger to answer').catch(() => undefined);
  if (verdict && last.status === 200) return (last.body as { valid: boolean }).valid;
  return `${last.status} ${JSON.stringify(last.body)}`;
}

async function loadThroughChaos({ name, svc, chaos, storedBy }: Scenario, ws: Workspace, load: LoadClient): Promise<ScenarioResult> {
  load.start();
  await whileAcknowledging(load, 20);
  const kills = await chaos(load);
  await whileAcknowledging(load, 20);
  const report = await load.stop();
  const replay = await approveAndComplete(svc, ws);
  const auditValid = await auditVerdict(svc, ws);
  await drained(svc);
  const { run, database, stopFirst } = storedBy();
  if (stopFirst) await svc.stop();
  const stored = await countStored(run, database, ws.orgId, report.acknowledgedBatches);
  const line = `chaos ${name}: kills ${kills}, acknowledged ${report.acknowledgedFlows}, stored ${stored.stored}, lost ${stored.lost}, doubled ${stored.doubled}`;
  process.stdout.write(`${line} (retries ${JSON.stringify(report.retries)}${stored.rollupsOff.length ? `; rollups off: ${stored.rollupsOff.join(', ')}` : ''})\n`);
  return { kills, load: report, stored, replay, auditValid };
}
