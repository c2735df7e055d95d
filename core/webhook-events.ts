import { fingerprintView, type PlannedAction } from './automation-plan';
import { z } from 'zod';
import type { Person } from './person';
import type { Incident } from './correlation';
import { derivedId, orgIdSchema } from './ids';
import type { Approval, ReplayStatus } from './replay';
import { iso } from './time';

/**
 * Outbound notifications as CloudEvents 1.0 (structured mode), derived from
 * state changes: a pure function of the state before and after a write, so a
 * recomputation that changes nothing yields nothing. An event's id comes from
 * what changed (workspace, object, type), never from when it was computed:
 * two workers that derive the same change derive the same id, which the
 * outbox's duplicate window and receivers de-duplicate on.
 */
export const incidentEventTypes = ['incident.opened', 'incident.escalated', 'incident.acknowledged', 'incident.resolved'] as const;
export const replayEventTypes = ['replay.awaiting_approval', 'replay.completed', 'replay.denied', 'replay.expired'] as const;
export const automationEventTypes = ['automation.awaiting_approval', 'automation.executed', 'automation.withdrawn', 'automation.failed'] as const;
export const webhookEventTypes = [...incidentEventTypes, ...replayEventTypes, ...automationEventTypes] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];
/** The event `POST /v1/webhooks/{id}/test` sends; never subscribed to, sent only to the subscription tested. */
export const testEventType = 'webhook.test';

export interface CloudEvent<T = unknown> {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  subject: string;
  time: string;
  datacontenttype: 'application/json';
  /** Extension attribute: the workspace the event belongs to. */
  workspace: string;
  data: T;
}

export const isWebhookEventType = (value: string): value is WebhookEventType => (webhookEventTypes as readonly string[]).includes(value);

/** The collection of each event type's source (`/orgs/<org>/<collection>`), as cloudEvent() writes it. */
const collectionOf = (type: string) => (type === testEventType ? 'webhooks' : `${type.slice(0, type.indexOf('.'))}s`);

/**
 * A CloudEvent read back from NATS (the outbox, a delivery task): whoever may
 * publish there is not trusted, so an event is the service's shape or is
 * refused. Its source names its workspace, and its id is the one its change
 * derives (a test event's carries a nonce: only its form is checked).
 */
export const cloudEventSchema = z
  .object({
    specversion: z.literal('1.0'),
    id: z.string().regex(/^whe_[0-9a-f]{20}$/),
    source: z.string().max(256),
    type: z.enum([...webhookEventTypes, testEventType]),
    subject: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/),
    time: z.iso.datetime(),
    datacontenttype: z.literal('application/json'),
    workspace: orgIdSchema,
    data: z.record(z.string(), z.unknown()),
  })
  .strict()
  .refine((e) => e.source === `/orgs/${e.workspace}/${collectionOf(e.type)}`, 'its source does not name its workspace')
  .refine((e) => e.type === testEventType || e.id === eventId(e.workspace, e.subject, e.type), 'its id is not the one its change derives');

/** One event to deliver to one subscription: a message of `<PREFIX>_WEBHOOK_DELIVERIES` (streams/webhook-queue.ts). */
export interface DeliveryTask {
  webhook_id: string;
  event: CloudEvent;
}

export const deliveryTaskSchema = z.object({ webhook_id: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/), event: cloudEventSchema }).strict();

export const eventId = (orgId: string, subject: string, type: string) => derivedId('whe', orgId, subject, type);

function cloudEvent<T>(orgId: string, collection: string, subject: string, type: string, at: number, data: T): CloudEvent<T> {
  return {
    specversion: '1.0',
    id: eventId(orgId, subject, type),
    source: `/orgs/${orgId}/${collection}`,
    type,
    subject,
    time: iso(at),
    datacontenttype: 'application/json',
    workspace: orgId,
    data,
  };
}

/** An incident as clients see it (the API and events alike; `state` and `status` carry the same value), plus the id it had before it moved, if it moved. */
export function incidentPayload(i: Incident, previousId?: string) {
  return {
    id: i.id,
    severity: i.severity,
    state: i.state,
    status: i.state,
    source: i.source,
    service: i.service,
    environment: i.environment,
    region: i.region,
    rule: i.rule,
    escalations: i.escalations,
    signal_count: i.signal_count,
    kinds: i.kinds,
    first_seen: iso(i.first_seen),
    last_seen: iso(i.last_seen),
    max_latency_ms: i.max_latency_ms,
    total_bytes: i.total_bytes,
    rules_version: i.rules_version,
    ...(previousId ? { previous_id: previousId } : {}),
  };
}

type IncidentFacts = Pick<Incident, 'state' | 'severity'>;

/**
 * The incident events one write makes: `before` is the stored incident (or
 * the one it replaces under a new id), `after` what is written. Opened when
 * there was none; escalated when the severity becomes critical; acknowledged
 * and resolved when the state becomes so. States only move forward, so each
 * type happens at most once per incident id.
 */
export function incidentEventTypesOf(before: IncidentFacts | undefined, after: IncidentFacts): WebhookEventType[] {
  const types: WebhookEventType[] = [];
  if (!before) types.push('incident.opened');
  if (after.severity === 'critical' && before?.severity !== 'critical') types.push('incident.escalated');
  if (after.state === 'acknowledged' && before?.state !== 'acknowledged' && before?.state !== 'resolved') types.push('incident.acknowledged');
  if (after.state === 'resolved' && before?.state !== 'resolved') types.push('incident.resolved');
  return types;
}

/** What an incident event says of the attack a rate detector saw (core/detection/incident-attack.ts): its type and peak total rates. */
export interface EventAttack {
  type: string;
  peak: { pps: number; bps: number; fps: number };
}

export function incidentEvents(before: Incident | undefined, after: Incident, at: number, previousId?: string, attack?: EventAttack): CloudEvent[] {
  const data = { ...incidentPayload(after, previousId), ...(attack ? { attack } : {}) };
  return incidentEventTypesOf(before, after).map((type) => cloudEvent(after.org_id, 'incidents', after.id, type, at, data));
}

/** One incident write of a recomputation: the computed incident, or a tombstone (`superseded`). */
export interface IncidentWrite {
  incident: Incident;
  superseded: boolean;
}

/**
 * The events of a recomputation's writes. An incident written under a new id
 * because a late, earlier signal moved its start replaces the incident
 * tombstoned in the same write whose start it now covers: that one is its
 * `before`, so moving an incident notifies nobody of an opening again.
 */
export function recomputeEvents(
  writes: readonly IncidentWrite[],
  stored: ReadonlyMap<string, Incident>,
  at: number,
  /** By incident id: the attack of an incident a rate detector opened or joined. */
  attacks: ReadonlyMap<string, EventAttack> = new Map(),
): CloudEvent[] {
  const tombstoned = writes.filter((w) => w.superseded).map((w) => w.incident);
  const events: CloudEvent[] = [];
  for (const { incident, superseded } of writes) {
    if (superseded) continue;
    const existing = stored.get(incident.id);
    const replaced = existing
      ? undefined
      : tombstoned.find(
          (t) => t.service === incident.service && t.environment === incident.environment && t.region === incident.region &&
            t.first_seen >= incident.first_seen && t.first_seen <= incident.last_seen,
        );
    events.push(...incidentEvents(existing ?? replaced, incident, at, replaced?.id, attacks.get(incident.id)));
  }
  return events;
}

/** A decision as clients see it: the person beside the key (null for decisions taken before persons were recorded). */
const approvalPayload = (a: Approval) => ({ ...a, person: a.person ?? null, at: iso(a.at) });

/** A replay's stored facts (epoch ms times) that clients see. */
export interface ReplayFacts {
  replay_id: string;
  incident_id: string;
  status: ReplayStatus;
  requested_by: string;
  requested_by_person: Person | null;
  requested_at: number;
  updated_at: number;
  window_minutes: number;
  approvals: Approval[];
  error: { code: string; message: string } | null;
  report: unknown;
  /** When the approval gate closes (epoch ms); null before it opens. */
  decision_deadline: number | null;
  approval_policies: string[];
}

/** A replay as clients see it, in `GET /v1/replays/{id}` and in `replay.*` events alike: times as ISO 8601, nothing internal. */
export function replayPayload(r: ReplayFacts) {
  return {
    replay_id: r.replay_id,
    incident_id: r.incident_id,
    status: r.status,
    requested_by: r.requested_by,
    requested_by_person: r.requested_by_person,
    requested_at: iso(r.requested_at),
    updated_at: iso(r.updated_at),
    window_minutes: r.window_minutes,
    decision_deadline: r.decision_deadline ? iso(r.decision_deadline) : null,
    approval_policies: r.approval_policies,
    approvals: r.approvals.map(approvalPayload),
    error: r.error,
    report: r.report,
  };
}

const replayEventOfStatus: Partial<Record<ReplayStatus, WebhookEventType>> = {
  awaiting_approval: 'replay.awaiting_approval',
  completed: 'replay.completed',
  denied: 'replay.denied',
  expired: 'replay.expired',
};

/** The event a replay's new state makes, if any: each state is reached once per replay. */
export function replayEvents(orgId: string, replay: ReplayFacts, at: number): CloudEvent[] {
  const type = replayEventOfStatus[replay.status];
  if (!type) return [];
  return [cloudEvent(orgId, 'replays', replay.replay_id, type, at, replayPayload(replay))];
}

/** The test event of one subscription: a fresh id each time, so every test is delivered. */
export function testEvent(orgId: string, webhookId: string, nonce: string, at: number): CloudEvent {
  return { ...cloudEvent(orgId, 'webhooks', webhookId, testEventType, at, { webhook_id: webhookId, message: 'a test event' }), id: eventId(orgId, webhookId, `${testEventType}:${nonce}`) };
}

/** An automation run as the API and its events show it (workflows/automation-contract.ts's state, stored). */
export interface AutomationFacts {
  automation_id: string;
  incident_id: string;
  playbook_id: string;
  playbook_version: number;
  status: string;
  requested_by: string;
  requested_by_person: Person | null;
  /** Epoch ms. */
  requested_at: number; updated_at: number; decision_deadline: number | null;
  approval_policies: string[];
  approvals: Approval[];
  error: { code: string; message: string } | null;
  actions: ReadonlyArray<Omit<PlannedAction, 'type'> & { type: string }>;
}

const isoOrNull = (ms: number | undefined) => (ms === undefined ? null : iso(ms));

/** An automation run as clients see it, in `GET /v1/automations/{id}` and in `automation.*` events alike. */
export function automationPayload(a: AutomationFacts) {
  return {
    automation_id: a.automation_id,
    incident_id: a.incident_id,
    playbook_id: a.playbook_id,
    playbook_version: a.playbook_version,
    status: a.status,
    requested_by: a.requested_by,
    requested_by_person: a.requested_by_person,
    requested_at: iso(a.requested_at),
    updated_at: iso(a.updated_at),
    decision_deadline: a.decision_deadline ? iso(a.decision_deadline) : null,
    approval_policies: a.approval_policies,
    approvals: a.approvals.map(approvalPayload),
    error: a.error,
    actions: a.actions.map((x) => ({
      id: x.id,
      type: x.type,
      destination: x.destination,
      duration_minutes: x.duration_minutes,
      preview: x.preview,
      starts_at: isoOrNull(x.starts_at),
      ends_at: isoOrNull(x.ends_at),
      withdrawn_at: isoOrNull(x.withdrawn_at),
      ...(x.fingerprint ? { fingerprint: fingerprintView(x) } : {}),
    })),
  };
}

/** Each run reaches each of these once (completed and withdrawn both end in the withdrawal of its mitigations). */
const automationEventOfStatus: Partial<Record<string, WebhookEventType>> = {
  awaiting_approval: 'automation.awaiting_approval',
  active: 'automation.executed',
  withdrawn: 'automation.withdrawn',
  completed: 'automation.withdrawn',
  failed: 'automation.failed',
};

/** The event an automation run's new state makes, if any; a state recorded again (an action ended, one extended) makes the same event id. */
export function automationEvents(orgId: string, a: AutomationFacts, at: number): CloudEvent[] {
  const type = automationEventOfStatus[a.status];
  if (!type) return [];
  return [cloudEvent(orgId, 'automations', a.automation_id, type, at, automationPayload(a))];
}
