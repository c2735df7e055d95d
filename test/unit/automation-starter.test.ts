import type { JsMsg } from 'nats';
import { Registry } from 'prom-client';
import type { Incident } from '../../core/correlation';
import { noPlaybooks, playbooksSchema, type VersionedPlaybooks } from '../../core/playbooks';
import { createLogger } from '../../observability/logger';
import type { StoredIncident } from '../../storage/incidents-repo';
import { automationNames } from '../../streams/names';
import { automationStarter, type AutomationStarterDeps } from '../../workers/governance/automation-starter';
import type { AutomationInput } from '../../workflows/automation-contract';

/**
 * The automation starter's handler on plain messages and plain reads: what it
 * reads of ClickHouse for a trigger, and what it does with the message. The
 * whole path (correlator, triggers stream, Temporal) runs in the automation
 * integration tests.
 */
const org = 'org_0123456789abcdef0123';
const incidentId = 'inc_0123456789abcdef0123';
const prefix = 'nt';

function trigger(type: string, redeliveryCount = 1) {
  const events: string[] = [];
  const m = {
    subject: automationNames(prefix).triggerSubject(org),
    seq: 1,
    info: { redeliveryCount },
    string: () => JSON.stringify({ type, workspace: org, data: { id: incidentId } }),
    ack: () => events.push('ack'),
    nak: (delay?: number) => events.push(`nak ${delay}`),
    term: () => events.push('term'),
  };
  return { m: m as unknown as JsMsg, events };
}

const incident = (state: Incident['state']): StoredIncident => ({
  id: incidentId,
  org_id: org,
  service: '198.18.0.10',
  environment: 'network',
  region: 'global',
  severity: 'high',
  state,
  source: 'deterministic_engine',
  rule: 'rate.v2:host:udp_flood',
  escalations: [],
  first_seen: 1_000,
  last_seen: 2_000,
  signal_count: 2,
  kinds: ['flow'],
  max_latency_ms: 0,
  total_bytes: 0,
  version: 2,
  rules_version: 1,
  updated_at: 2_000,
  superseded: false,
});

const playbooks = (enabled: boolean): VersionedPlaybooks => ({
  ...playbooksSchema.parse({ playbooks: [{ id: 'discard', name: 'Discard', enabled, actions: [{ type: 'flowspec_fingerprint', duration_minutes: 1 }] }] }),
  version: 1,
  created_at: 1,
  actor: 'key_author',
  actor_person: null,
});

function starter(opts: { doc: VersionedPlaybooks; stored?: StoredIncident; runningRuns?: number }) {
  const reads: string[] = [];
  const started: AutomationInput[] = [];
  const deps: AutomationStarterDeps = {
    prefix,
    incidents: { get: (_org, id) => (reads.push(`incident ${id}`), Promise.resolve(opts.stored)) },
    playbooks: () => (reads.push('playbooks'), Promise.resolve(opts.doc)),
    authorOf: () => Promise.resolve(undefined),
    start: (input) => (started.push(input), Promise.resolve(true)),
    attackEnded: () => Promise.resolve(opts.runningRuns ?? 0),
    registry: new Registry(),
    log: createLogger('silent', 'test'),
  };
  return { handle: automationStarter(deps), reads, started };
}

describe('the automation starter', () => {
  it.each([
    ['no playbook', noPlaybooks],
    ['only disabled playbooks', playbooks(false)],
  ])('acknowledges an opened incident of a workspace with %s without reading the incident', async (_, doc) => {
    const s = starter({ doc, stored: undefined });
    const t = trigger('incident.opened');
    await s.handle(t.m);
    expect(s.reads).toEqual(['playbooks']);
    expect(t.events).toEqual(['ack']);
  });

  it('offers again soon a trigger whose incident is not stored yet, where a playbook is enabled', async () => {
    const s = starter({ doc: playbooks(true), stored: undefined });
    const t = trigger('incident.opened');
    await s.handle(t.m);
    expect(s.reads).toEqual(['playbooks', `incident ${incidentId}`]);
    expect(t.events).toEqual(['nak 50']);
    expect(s.started).toEqual([]);
  });

  it('starts a run of the enabled playbook that matches a stored incident', async () => {
    const s = starter({ doc: playbooks(true), stored: incident('open') });
    const t = trigger('incident.opened');
    await s.handle(t.m);
    expect(s.started.map((r) => [r.incidentId, r.playbookId, r.playbookVersion, r.requestedBy])).toEqual([[incidentId, 'discard', 1, 'key_author']]);
    expect(t.events).toEqual(['ack']);
  });

  it('tells the runs of a resolved incident that its attack ended, reading no playbooks', async () => {
    const s = starter({ doc: playbooks(true), stored: incident('resolved'), runningRuns: 1 });
    const t = trigger('incident.resolved');
    await s.handle(t.m);
    expect(s.reads).toEqual([`incident ${incidentId}`]);
    expect(t.events).toEqual(['ack']);
  });

  it('offers again an incident.resolved whose incident is stored open, and refuses it at last', async () => {
    const s = starter({ doc: playbooks(true), stored: incident('open') });
    const early = trigger('incident.resolved', 1);
    const last = trigger('incident.resolved', 10);
    await s.handle(early.m);
    await s.handle(last.m);
    expect(early.events).toEqual(['nak 50']);
    expect(last.events).toEqual(['term']);
  });
});
