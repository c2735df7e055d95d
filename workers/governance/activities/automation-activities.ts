import { personBeforeOwners } from '../../../core/person';
import { ApplicationFailure } from '@temporalio/activity';
import type { AuditLedger } from '../../../application/audit-ledger';
import type { ActionSpec, PlannedAction } from '../../../core/automation-plan';
import { evaluateMitigation, type MitigationAction, type MitigationPolicy } from '../../../core/mitigation-policy';
import { deniedMessage, evaluatePolicies, type PolicyDecision } from '../../../core/policy';
import { automationEvents } from '../../../core/webhook-events';
import { counter } from '../../../observability/metrics';
import type { AutomationRecord, AutomationsRepo } from '../../../storage/automations-repo';
import type { IncidentsRepo, StoredIncident } from '../../../storage/incidents-repo';
import { isActive, type MitigationLedger } from '../../../streams/mitigation-ledger';
import type { EventOutbox } from '../../../streams/outbox';
import type { AutomationActivities, AutomationInput, AutomationState, ChangeInput } from '../../../workflows/automation-contract';
import { planActions, previewPlanned, type ActionPlannerDeps } from './action-planner';
import { approverFacts, approverVerdict, claimsOf, createApprovalActivities, type ApprovalActivityDeps } from './approval-activities';
import { auditOnce, extendedEnds } from './run-audit';
import { approverFrom } from '../../../core/principal';

export interface AutomationActivityDeps extends ApprovalActivityDeps, ActionPlannerDeps {
  incidents: IncidentsRepo;
  policies: { active(orgId: string): Promise<MitigationPolicy[]> };
  automations: AutomationsRepo;
  /** The actions of a playbook version; undefined when the workspace has no such playbook in that version. */
  playbookActions(orgId: string, playbookId: string, version: number): Promise<ActionSpec[] | undefined>;
  /** The prefixes the platform admin approved for the workspace (CIDR). */
  approvedPrefixes(orgId: string): Promise<string[]>;
  /** The mitigations the service decided on, and a way to have the speaker match them now; absent when no BGP speaker is configured. */
  mitigations?: { ledger: MitigationLedger; reconcileNow(): Promise<void> };
  /** Runs `work` under a lock shared by every worker: one workspace's runs count and write their mitigations one at a time. */
  withLock<T>(name: string, work: () => Promise<T>): Promise<T>;
  /** How many minutes of stored flows a preview reads. */
  previewMinutes: number;
  audit: AuditLedger;
  events?: EventOutbox;
}

function record(input: AutomationInput, state: AutomationState, version: number, now: number): AutomationRecord {
  return {
    org_id: input.orgId,
    automation_id: input.automationId,
    incident_id: input.incidentId,
    playbook_id: input.playbookId,
    playbook_version: input.playbookVersion,
    status: state.status,
    requested_by: input.requestedBy,
    requested_by_person: input.requestedByPerson !== undefined ? input.requestedByPerson : personBeforeOwners(input.requestedBy),
    requested_at: input.requestedAt,
    updated_at: now,
    approvals: state.approvals,
    actions: state.actions,
    error: state.error,
    decision_deadline: state.decision_deadline ?? null,
    approval_policies: state.approval_policies ?? [],
    version,
  };
}

/** The first denial among the actions' decisions, else approval when any asks for it (the shortest timeout), else allow. */
function combined(decisions: PolicyDecision[]): PolicyDecision {
  const denial = decisions.find((d) => d.decision === 'deny');
  if (denial) return denial;
  const waiting = decisions.filter((d): d is Extract<PolicyDecision, { decision: 'approval_required' }> => d.decision === 'approval_required');
  if (waiting.length) {
    return { decision: 'approval_required', policies: [...new Set(waiting.flatMap((d) => d.policies))].sort(), timeout_minutes: Math.min(...waiting.map((d) => d.timeout_minutes)) };
  }
  return { decision: 'allow', policies: [...new Set(decisions.flatMap((d) => (d.decision === 'allow' ? d.policies : [])))].sort() };
}

const loadIncident = async (deps: AutomationActivityDeps, input: AutomationInput): Promise<StoredIncident> => {
  const incident = await deps.incidents.get(input.orgId, input.incidentId);
  if (!incident) throw ApplicationFailure.nonRetryable(`incident ${input.incidentId} not found`, 'NOT_FOUND');
  return incident;
};

/** The workspace's mitigations active now, the run's own left out. */
async function activeCount(deps: AutomationActivityDeps, orgId: string, excluding: string, at: number): Promise<number> {
  if (!deps.mitigations) return 0;
  const { records } = await deps.mitigations.ledger.all();
  return records.filter((r) => r.org_id === orgId && !r.id.startsWith(`${excluding}-`) && isActive(r, at)).length;
}

/** What a run's policy check reads from the store: the incident, the workspace's policies and approved prefixes. */
interface RunFacts {
  incident: StoredIncident;
  policies: MitigationPolicy[];
  approved: string[];
}

/** The facts read side by side (reads in a row would each wait for the one before; chDB runs reads in two sessions at once); the incident may be read already. */
async function readFacts(deps: AutomationActivityDeps, input: AutomationInput, incident: StoredIncident | Promise<StoredIncident>): Promise<RunFacts> {
  const [i, policies, approved] = await Promise.all([incident, deps.policies.active(input.orgId), deps.approvedPrefixes(input.orgId)]);
  return { incident: i, policies, approved };
}

/** The policies' decision on every network action of the run, as they are now; the active count is read here, the facts may be read before. */
async function evaluate(
  deps: AutomationActivityDeps,
  input: AutomationInput,
  factsRead: RunFacts | Promise<RunFacts>,
  actions: PlannedAction[],
  durationOf = (a: PlannedAction) => a.duration_minutes,
) {
  const now = (deps.now ?? Date.now)();
  const [{ incident, policies, approved }, active] = await Promise.all([factsRead, activeCount(deps, input.orgId, input.automationId, now)]);
  // The policies' own fields hold for every run, a webhook-only one included; each network action adds its bounds.
  const base = evaluatePolicies(policies, { environment: incident.environment, severity: incident.severity, window_minutes: 0 });
  const decisions = actions
    .filter((a) => a.destination !== null)
    .map((a, i) =>
      evaluateMitigation(
        policies,
        { action: a.type as MitigationAction, destination: a.destination!, duration_minutes: durationOf(a), environment: incident.environment, severity: incident.severity },
        // The run's own earlier actions count towards the workspace's active mitigations.
        { approved_prefixes: approved, active: active + i },
      ),
    );
  return combined([base, ...decisions]);
}

/** The playbook version's actions the run follows. */
async function playbookActions(deps: AutomationActivityDeps, input: AutomationInput): Promise<ActionSpec[]> {
  const specs = await deps.playbookActions(input.orgId, input.playbookId, input.playbookVersion);
  if (!specs) throw ApplicationFailure.nonRetryable(`playbook ${input.playbookId} version ${input.playbookVersion} not found`, 'NOT_FOUND');
  return specs;
}

/** The stored flows of the last minutes, what a run's preview reads. */
function previewWindow(deps: AutomationActivityDeps): { from: number; to: number } {
  const to = (deps.now ?? Date.now)();
  return { from: to - deps.previewMinutes * 60_000, to };
}

/**
 * Evaluates the policies again, then writes the mitigations to the ledger and
 * has the speaker announce them. When an active policy bounds the workspace's
 * active mitigations, the count and the ledger's write are made under the
 * workspace's lock, so two runs at once cannot both pass the bound; nothing
 * else is (the store's reads come before, the speaker's pass and the audit
 * entry after), and a workspace with no such bound takes no lock. Runs of one
 * workspace held the lock across all of it and waited in a row, each for a
 * whole reconciliation under load (the bench's automation scenario,
 * 2026-11-30: a run's request to its execution 29.6 s at the p50, 129 s at
 * the p99).
 */
async function execute(deps: AutomationActivityDeps, input: AutomationInput, actions: PlannedAction[], startsAt: number): Promise<{ actions: PlannedAction[] } | { denied: string }> {
  const facts = await readFacts(deps, input, loadIncident(deps, input));
  const bounded = facts.policies.some((p) => (p.max_active_mitigations ?? 0) > 0);
  const decide = () => decideAndWrite(deps, input, facts, actions, startsAt);
  const written = bounded ? await deps.withLock(`mitigations-${input.orgId}`, decide) : await decide();
  if ('denied' in written) {
    // A retry of this activity may follow an attempt that wrote the ledger: what it wrote is withdrawn.
    if (deps.mitigations) for (const a of actions) await deps.mitigations.ledger.withdraw(input.orgId, a.id, (deps.now ?? Date.now)());
    await auditOnce(deps, input, { actor: 'automation', action: 'automation.denied', details: { reason: written.denied } });
    return written;
  }
  // The reconciler would announce within its interval; asked now, the routes reach the routers at once.
  await deps.mitigations?.reconcileNow();
  const summary = written.actions.map((a) => ({ id: a.id, type: a.type, destination: a.destination, ends_at: a.ends_at ?? null }));
  const details = { playbook_id: input.playbookId, playbook_version: input.playbookVersion, actions: summary };
  await auditOnce(deps, input, { actor: 'automation', action: 'automation.executed', details });
  return written;
}

/** The policies' decision with the active count as it is now, and the allowed mitigations written. */
async function decideAndWrite(deps: AutomationActivityDeps, input: AutomationInput, facts: RunFacts, actions: PlannedAction[], startsAt: number) {
  const decision = await evaluate(deps, input, facts, actions);
  if (decision.decision === 'deny') return { denied: deniedMessage(decision) };
  if (actions.some((a) => a.mitigation !== null) && !deps.mitigations) {
    throw ApplicationFailure.nonRetryable('no BGP speaker is configured (BGP_SPEAKER_ADDRESS=off): the mitigations cannot be announced', 'NO_SPEAKER');
  }
  // A mitigation's duration counts from this attempt's write: an attempt retried after NATS or ClickHouse failed for
  // a while must not write a mitigation whose end has already passed (announced never, yet the run would complete).
  const start = Math.max(startsAt, (deps.now ?? Date.now)());
  const placed = actions.map((a) => (a.mitigation ? { ...a, starts_at: start, ends_at: start + a.duration_minutes * 60_000 } : a));
  for (const a of placed) {
    if (a.mitigation) await deps.mitigations!.ledger.put({ id: a.id, org_id: input.orgId, mitigation: a.mitigation, starts_at: a.starts_at!, ends_at: a.ends_at! });
  }
  return { actions: placed };
}

/** Holds the active mitigations longer when the policies allow the whole duration, counted from the start. */
async function extend(deps: AutomationActivityDeps, args: Parameters<AutomationActivities['extendMitigations']>[0]): Promise<{ actions: PlannedAction[] } | { denied: string }> {
  const { input, actions, minutes, by, byPerson, comment } = args;
  const total = (a: PlannedAction) => Math.ceil((a.ends_at! + minutes * 60_000 - a.starts_at!) / 60_000);
  const decision = await evaluate(deps, input, readFacts(deps, input, loadIncident(deps, input)), actions, total);
  if (decision.decision === 'deny') return { denied: deniedMessage(decision) };
  const extended = actions.map((a) => ({ ...a, ends_at: a.ends_at! + minutes * 60_000 }));
  for (const a of extended) {
    if (a.mitigation && deps.mitigations) await deps.mitigations.ledger.put({ id: a.id, org_id: input.orgId, mitigation: a.mitigation, starts_at: a.starts_at!, ends_at: a.ends_at });
  }
  const details = { minutes, mitigations: extended.map((a) => ({ id: a.id, ends_at: a.ends_at })), ...(comment ? { comment } : {}) };
  // An extension follows the mitigations' start: a retried attempt's entry is after it.
  const since = Math.min(...actions.map((a) => a.starts_at ?? Number.MAX_SAFE_INTEGER));
  await auditOnce(deps, input, { actor: by, action: 'automation.extend', details, person: byPerson }, { since, ends: extendedEnds(details) });
  return { actions: extended };
}

/** The states a run ends in: each is recorded once (a retried record counts again, as counters may). */
const endedStatuses: readonly string[] = ['completed', 'withdrawn', 'denied', 'expired', 'failed'];

/** Every side effect of the automation workflow, built from its dependencies. */
export function createAutomationActivities(deps: AutomationActivityDeps): AutomationActivities {
  const now = deps.now ?? Date.now;
  const outcomes = counter(deps.registry, {
    name: 'nettel_automation_runs_total',
    help: 'Automation runs that ended, by outcome: completed (every mitigation reached its end), withdrawn, denied, expired, failed',
    labelNames: ['outcome'] as const,
  });
  return {
    ...createApprovalActivities(deps),

    async recordAutomationState({ input, state, version }) {
      const r = record(input, state, version, now());
      await deps.automations.put(r);
      // Before the activity completes: a crash here retries it, and the event's id makes the retry's copy a duplicate.
      await deps.events?.publish(automationEvents(input.orgId, r, r.updated_at));
      if (endedStatuses.includes(state.status)) outcomes.inc({ outcome: state.status });
    },

    async prepareAutomation(input) {
      const [incident, specs] = await Promise.all([loadIncident(deps, input), playbookActions(deps, input)]);
      // Planned once, without previews: the policies decide whether anyone will read one before the announcement.
      // A fingerprint reads the attack in the same last minutes the previews read.
      const planned = await planActions(deps, input.automationId, incident, specs, previewWindow(deps), { preview: false });
      if (typeof planned === 'string') {
        const denial: PolicyDecision = { decision: 'deny', policy_id: 'playbook', policy_name: input.playbookId, reason: planned };
        return { decision: denial, deniedMessage: deniedMessage(denial), actions: [] };
      }
      const decision = await evaluate(deps, input, readFacts(deps, input, incident), planned);
      if (decision.decision !== 'approval_required') return { decision, deniedMessage: decision.decision === 'deny' ? deniedMessage(decision) : '', actions: planned };
      // Approvers decide on the preview of the rules that will be announced: those planned, previewed before they are asked
      // (planned again, a fingerprint would read later flows and might find another rule than the one approved).
      return { decision, deniedMessage: '', actions: await previewPlanned(deps, input.orgId, planned, previewWindow(deps)) };
    },

    // The preview of the mitigations the run announced, as they are: no playbook read again, no fingerprint taken again.
    previewAutomation: ({ input, actions }) => previewPlanned(deps, input.orgId, actions, previewWindow(deps)),

    executeAutomation: ({ input, actions, startsAt }) => execute(deps, input, actions, startsAt),

    async withdrawMitigations({ input, ids, at, reason, by, byPerson, comment }) {
      if (deps.mitigations) {
        for (const id of ids) await deps.mitigations.ledger.withdraw(input.orgId, id, at);
        await deps.mitigations.reconcileNow();
      }
      const action = { withdrawn: 'automation.withdraw', expired: 'automation.expired', failed: 'automation.failed', attack_ended: 'automation.attack_ended' }[reason];
      await auditOnce(deps, input, { actor: by ?? 'automation', action, details: { mitigations: ids, ...(comment ? { comment } : {}) }, person: byPerson });
    },

    extendMitigations: (args) => extend(deps, args),

    checkChange: ({ input, workflowId, change, request }) => changeVerdict(deps, input, workflowId, change, request),
  };
}

/** A withdraw or extend request's proof (an extension's minutes included) and key, checked as a decision's. */
async function changeVerdict(deps: AutomationActivityDeps, input: AutomationInput, workflowId: string, change: 'withdraw' | 'extend', request: ChangeInput) {
  const now = (deps.now ?? Date.now)();
  // Ending a mitigation early only makes things safer: the playbook's author may withdraw (every other check holds).
  const requestedBy = change === 'withdraw' ? '' : input.requestedBy;
  // The author's person, as the run carries it: an author who signed in (a session or bearer id) is no key to look up.
  const requester = change === 'withdraw' || input.requestedByPerson === undefined ? {} : { requesterPerson: input.requestedByPerson };
  const subject = { kind: 'automation' as const, orgId: input.orgId, id: input.automationId, requestedBy, ...requester };
  const approver = approverFrom(request);
  const proof = deps.decisionTokens.verify(request.decisionToken, claimsOf(subject, workflowId, approver, change, change === 'extend' ? String(request.minutes) : undefined), now);
  if (!proof.ok) return { ok: false as const, message: proof.message };
  const verdict = approverVerdict(subject, await approverFacts(deps, subject, approver, change, now), now);
  return verdict.ok ? { ok: true as const } : { ok: false as const, message: verdict.message };
}
