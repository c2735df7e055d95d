import type { JsMsg } from 'nats';
import { z } from 'zod';
import { automationIdOf } from '../../application/automation-runs';
import { backoffDelayMs, type Backoff } from '../../core/backoff';
import { matchingPlaybooks, type VersionedPlaybooks } from '../../core/playbooks';
import type { Logger } from '../../observability/logger';
import type { Counter } from 'prom-client';
import { counter, type Registry } from '../../observability/metrics';
import type { IncidentsRepo } from '../../storage/incidents-repo';
import { triggerEventTypes } from '../../streams/automation-triggers';
import { automationNames } from '../../streams/names';
import type { AutomationInput } from '../../workflows/automation-contract';

/** The automation starter's durable consumer: a start answers within seconds, so a minute covers one handling. */
export function automationStarterConsumer(prefix: string) {
  const n = automationNames(prefix);
  return { stream: n.triggers, durable: n.starter, ackWaitMs: 60_000, concurrency: 8 };
}

/**
 * A trigger as it must be: an incident event of the workspace its subject
 * names. Messages come from NATS, so from outside the process: anything else
 * is terminated (never redelivered) and counted, and nothing is started.
 */
const triggerSchema = z.object({
  type: z.string().refine((t) => triggerEventTypes.includes(t)),
  workspace: z.string().regex(/^org_[0-9a-f]{20}$/),
  data: z.object({ id: z.string().regex(/^inc_[0-9a-f]{20}$/) }),
});
type Trigger = z.infer<typeof triggerSchema>;

/**
 * A trigger whose incident is not stored yet (the correlator publishes before
 * it writes, usually a few milliseconds before) is offered again soon, then
 * less often: 50 ms doubling to 1 s, up to 40 times (about half a minute).
 */
const incidentWaits = 40;
const incidentWait: Backoff = { firstMs: 50, maxMs: 1_000 };
/** The same waits for an `incident.resolved` whose incident is stored open: 10 (about 6 s), then it is refused as forged. */
const resolvedWaits = 10;

export interface AutomationStarterDeps {
  prefix: string;
  incidents: Pick<IncidentsRepo, 'get'>;
  /** The workspace's playbooks in force. */
  playbooks(orgId: string): Promise<VersionedPlaybooks>;
  /** Who wrote a playbook as it stands in a version (the key, and its person): the four-eyes rule's other person for its runs. */
  authorOf(orgId: string, playbookId: string, version: number): Promise<Pick<VersionedPlaybooks, 'actor' | 'actor_person'> | undefined>;
  /** Starts a run's workflow; false when that run was started before. */
  start(input: AutomationInput): Promise<boolean>;
  /** Tells the runs of a resolved incident that its attack ended; how many were still running. */
  attackEnded(orgId: string, incidentId: string): Promise<number>;
  registry: Registry;
  log: Logger;
  now?: () => number;
}

/**
 * The automation starter's handler: for an incident opened or escalated, one
 * run of every enabled playbook in force whose match holds, its id derived
 * from the incident and the playbook version (a trigger seen again starts
 * nothing new). The incident is read from ClickHouse, never from the message.
 */
export function automationStarter(deps: AutomationStarterDeps) {
  const triggers = counter(deps.registry, {
    name: 'nettel_automation_triggers_total',
    help: 'Automation triggers handled, by outcome: runs started, none matching, already started, refused (malformed), incident never stored; for a resolved incident, runs told its attack ended or none running',
    labelNames: ['outcome'] as const,
  });
  const n = automationNames(deps.prefix);
  return async (m: JsMsg): Promise<void> => {
    const trigger = parse(m);
    if (!trigger || n.triggerSubject(trigger.workspace) !== m.subject) {
      triggers.inc({ outcome: 'refused' });
      deps.log.warn({ subject: m.subject, seq: m.seq }, 'an automation trigger that is not an incident event of its workspace was refused');
      m.term();
      return;
    }
    if (trigger.type === 'incident.resolved') return endAttack(m, trigger, deps, triggers);
    // The playbooks first: where none is enabled nothing starts, so the incident is not read, nor waited for while
    // the correlator's write trails its event (a collector run of 256 attacked hosts read incidents and playbooks
    // 7,000 times this way, half the time of chDB's reads' sessions).
    const doc = await deps.playbooks(trigger.workspace);
    if (!doc.playbooks.some((p) => p.enabled)) {
      triggers.inc({ outcome: 'no_playbook' });
      m.ack();
      return;
    }
    const incident = await deps.incidents.get(trigger.workspace, trigger.data.id);
    if (!incident) return waitForIncident(m, triggers);
    const matching = matchingPlaybooks(doc.playbooks, incident);
    if (!matching.length) triggers.inc({ outcome: 'no_playbook' });
    for (const playbook of matching) {
      const author = (await deps.authorOf(trigger.workspace, playbook.id, doc.version)) ?? doc;
      const started = await deps.start({
        orgId: trigger.workspace,
        automationId: automationIdOf(trigger.workspace, incident.id, playbook.id, doc.version),
        incidentId: incident.id,
        playbookId: playbook.id,
        playbookVersion: doc.version,
        requestedBy: author.actor,
        requestedByPerson: author.actor_person,
        requestedAt: (deps.now ?? Date.now)(),
      });
      triggers.inc({ outcome: started ? 'started' : 'already_started' });
    }
    m.ack();
  };
}

/** The incident of the trigger is not stored yet: offered again soon (the correlator publishes before it writes), at last counted and terminated. */
function waitForIncident(m: JsMsg, triggers: Counter<'outcome'>): void {
  if (m.info.redeliveryCount < incidentWaits) return m.nak(backoffDelayMs(incidentWait, m.info.redeliveryCount));
  triggers.inc({ outcome: 'incident_missing' });
  m.term();
}

/**
 * An `incident.resolved`: the runs of its incident are told the attack ended.
 * The stored incident decides, not the message: a forged `incident.resolved`
 * of an open incident withdraws nothing. The correlator publishes before it
 * writes, so a true one may find the incident open for a moment: offered
 * again first.
 */
async function endAttack(m: JsMsg, trigger: Trigger, deps: AutomationStarterDeps, triggers: Counter<'outcome'>): Promise<void> {
  const incident = await deps.incidents.get(trigger.workspace, trigger.data.id);
  if (!incident) return waitForIncident(m, triggers);
  if (incident.state !== 'resolved') {
    if (m.info.redeliveryCount < resolvedWaits) return m.nak(backoffDelayMs(incidentWait, m.info.redeliveryCount));
    triggers.inc({ outcome: 'refused' });
    deps.log.warn({ subject: m.subject, incident: incident.id }, 'an incident.resolved trigger of an incident that is not resolved was refused');
    m.term();
    return;
  }
  const told = await deps.attackEnded(trigger.workspace, incident.id);
  triggers.inc({ outcome: told > 0 ? 'attack_ended' : 'no_run' });
  m.ack();
}

function parse(m: JsMsg): Trigger | undefined {
  try {
    const parsed = triggerSchema.safeParse(JSON.parse(m.string()));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
