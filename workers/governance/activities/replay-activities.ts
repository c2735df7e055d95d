import { personBeforeOwners } from '../../../core/person';
import { ApplicationFailure } from '@temporalio/activity';
import type { DetectionRulesSource } from '../../../application/detection-rules-service';
import { correlate, type Incident } from '../../../core/correlation';
import { metricThresholdSignals, trafficVolumeDestination, trafficVolumeSignals, type DetectorRules } from '../../../core/detectors';
import { deniedMessage, evaluatePolicies } from '../../../core/policy';
import { compareIncidents, replayWindow, type ReplayWindow } from '../../../core/replay';
import type { SignalRow } from '../../../core/telemetry';
import { iso } from '../../../core/time';
import { replayEvents } from '../../../core/webhook-events';
import type { IncidentsRepo } from '../../../storage/incidents-repo';
import type { PoliciesRepo } from '../../../storage/policies-repo';
import type { ReplayHistory } from '../../../storage/replay-history';
import type { ReplayRecord, ReplaysRepo } from '../../../storage/replays-repo';
import type { EventOutbox } from '../../../streams/outbox';
import type { IncidentSummary, ReplayActivities, ReplayedPlaybook, ReplayInput, ReplayReport } from '../../../workflows/replay-contract';
import { matchingPlaybooks, type VersionedPlaybooks } from '../../../core/playbooks';
import { planActions, type ActionPlannerDeps } from './action-planner';
import { createApprovalActivities, type ApprovalActivityDeps } from './approval-activities';
import { replayRules } from './replay-rules';
import { detectRates } from '../../../core/detection/detect';
import type { RateRules } from '../../../core/detection/rules';
import { rateSignal } from '../../../core/detection/signals';
import { versionOfRule } from '../../../core/detection/version';
import { parseAddressRange } from '../../../core/flow-query';

export interface ReplayActivityDeps extends ApprovalActivityDeps {
  incidents: IncidentsRepo;
  policies: PoliciesRepo;
  replays: ReplaysRepo;
  history: ReplayHistory;
  /** The workspaces' detection rules: a replay re-runs under the version the incident recorded. Defaults only when absent. */
  rules?: DetectionRulesSource;
  /** Where the states that notify (awaiting approval, completed, denied, expired) are published; none: no notifications. */
  events?: EventOutbox;
  /** The playbooks in force and how their actions are planned: a replay reports what they would do; none: no such section. */
  playbooks?: ActionPlannerDeps & { inForce(orgId: string): Promise<VersionedPlaybooks> };
}

/** Every side effect of the replay workflow, built from its dependencies. */
export function createReplayActivities(deps: ReplayActivityDeps): ReplayActivities {
  const loadIncident = async (input: ReplayInput) => {
    const incident = await deps.incidents.get(input.orgId, input.incidentId);
    if (!incident) throw ApplicationFailure.nonRetryable(`incident ${input.incidentId} not found`, 'NOT_FOUND');
    return incident;
  };

  return {
    ...createApprovalActivities(deps),

    async recordReplayState({ input, state, version }) {
      const record = replayRecord(input, state, version);
      await deps.replays.put(record);
      // Before the activity completes: a crash here retries it, and the event's id makes the retry's copy a duplicate.
      await deps.events?.publish(replayEvents(input.orgId, record, record.updated_at));
    },

    async prepareReplay(input) {
      const incident = await loadIncident(input);
      const window = replayWindow(incident, (await replayRules(deps.rules, incident)).windowMs, input.windowMinutes);
      const decision = evaluatePolicies(await deps.policies.active(input.orgId), {
        environment: incident.environment,
        severity: incident.severity,
        window_minutes: window.window_minutes,
      });
      return { decision, deniedMessage: decision.decision === 'deny' ? deniedMessage(decision) : '', window };
    },

    /**
     * Re-runs detection and correlation on the incident's history and the
     * automation path (the mitigation it would propose), then judges parity
     * field by field against the recorded incident.
     */
    async runReplay({ input, window }) {
      const started = Date.now();
      const recorded = await loadIncident(input);
      // Every transition of the key: a resolved earlier incident bounds this one.
      const [transitions, others] = await Promise.all([
        deps.incidents.transitionsOfKeys(input.orgId, [recorded]),
        deps.incidents.ofKeys(input.orgId, [recorded], window.from),
      ]);
      const rules = await replayRules(deps.rules, recorded, others);
      const { signals, posted } = await replaySignals(deps, recorded, window, rules.detectors);
      signals.push(...(await replayedRateSignals(deps, recorded, window, rules.rates)));
      const replayed = correlate(signals, transitions, rules.ofIncidents).find((i) => i.id === recorded.id);
      const [automation, playbooks] = await Promise.all([automationPath(deps, recorded, posted, window), replayedPlaybooks(deps, recorded, window)]);
      return { ...parityOf(recorded, replayed), automation: { ...automation, playbooks, signals_examined: signals.length }, duration_ms: Date.now() - started };
    },
  };
}

/** The stored record of a state the workflow reached. */
function replayRecord(input: ReplayInput, state: Parameters<ReplayActivities['recordReplayState']>[0]['state'], version: number): ReplayRecord {
  return {
    org_id: input.orgId,
    replay_id: input.replayId,
    incident_id: input.incidentId,
    status: state.status,
    requested_by: input.requestedBy,
    requested_by_person: input.requestedByPerson !== undefined ? input.requestedByPerson : personBeforeOwners(input.requestedBy),
    requested_at: input.requestedAt,
    updated_at: Date.now(),
    window_minutes: state.window_minutes,
    approvals: state.approvals,
    report: state.report,
    error: state.error,
    decision_deadline: state.decision_deadline ?? null,
    approval_policies: state.approval_policies ?? [],
    version,
  };
}

/** The incident's key's signals within the window, as the detectors and posted signals gave them. */
async function replaySignals(deps: ReplayActivityDeps, recorded: Incident, window: ReplayWindow, rules: DetectorRules) {
  const destination = trafficVolumeDestination(recorded);
  const [posted, metrics, trafficMinutes, exporterMinutes] = await Promise.all([
    deps.history.postedSignals(recorded.org_id, recorded, window.from, window.to),
    deps.history.metricsOverThresholds(recorded.org_id, recorded, rules.metricThresholds, window.from, window.to),
    destination ? deps.history.destinationMinutes(recorded.org_id, destination, rules.bytesPerMinute, window.from, window.to) : Promise.resolve([]),
    destination ? deps.history.exporterDestinationMinutes(recorded.org_id, destination, rules.bytesPerMinuteByExporter, window.from, window.to) : Promise.resolve([]),
  ]);
  const minutes = [...trafficMinutes, ...exporterMinutes];
  const signals: SignalRow[] = [...posted, ...metricThresholdSignals(metrics, rules), ...trafficVolumeSignals(minutes, rules)];
  return { signals, posted };
}

/** The most stored flows a replay of a rate incident reads: past it, the replay fails rather than judge part of the attack. */
export const maxRateReplayFlows = 2_000_000;

/**
 * A rate incident's signals as its detector version decides them again on
 * the stored flows towards its target (the host, or the carpet's prefix),
 * under the rules version it recorded, every window closed at the end
 * (core/detection/detect.ts detectRates). None for another incident.
 */
async function replayedRateSignals(deps: ReplayActivityDeps, recorded: Incident, window: ReplayWindow, rates: RateRules): Promise<SignalRow[]> {
  const version = versionOfRule(recorded.rule);
  if (version === undefined) return [];
  const range = parseAddressRange(recorded.service);
  if (!range) return [];
  const flows = await deps.history.rateFlows(recorded.org_id, range, window.from, window.to, maxRateReplayFlows);
  if (flows.length > maxRateReplayFlows) {
    throw ApplicationFailure.nonRetryable(`the replay window holds more than ${maxRateReplayFlows} flows towards ${recorded.service}: narrow it`, 'REPLAY_TOO_LARGE');
  }
  const decisions = detectRates(version, flows, rates);
  if (!decisions) throw ApplicationFailure.nonRetryable(`the rate detector version ${version} of the incident's rule is no longer runnable`, 'NOT_FOUND');
  return decisions.filter((d) => d.target === recorded.service).map((d) => rateSignal(recorded.org_id, d, window.to));
}

/** What the automation would do: rate-limit the top sources towards the incident's destinations. */
async function automationPath(deps: ReplayActivityDeps, recorded: Incident, posted: SignalRow[], window: ReplayWindow) {
  const destination = trafficVolumeDestination(recorded);
  const destinations = [...new Set([...posted.map((s) => s.dst_ip).filter(Boolean), ...(destination ? [destination] : [])])];
  const examined = await deps.history.topSources(recorded.org_id, destinations, window.from, window.to, 10);
  return {
    window: { from: iso(window.from), to: iso(window.to), minutes: window.window_minutes },
    flows_examined: examined.flows,
    bytes_examined: examined.bytes,
    actions: examined.top.map((t) => ({ action: 'rate_limit' as const, src_ip: t.src_ip, dst_ip: t.dst_ip, bytes: t.bytes, flows: t.flows })),
  };
}

/** What each playbook in force whose match holds would do for the incident, previewed on the replay's window. */
async function replayedPlaybooks(deps: ReplayActivityDeps, recorded: Incident, window: ReplayWindow): Promise<ReplayedPlaybook[]> {
  if (!deps.playbooks) return [];
  const planner = deps.playbooks;
  const doc = await planner.inForce(recorded.org_id);
  return Promise.all(
    matchingPlaybooks(doc.playbooks, recorded).map(async (p) => {
      const planned = await planActions(planner, `replay-${p.id}`, recorded, p.actions, { from: window.from, to: window.to }, { preview: true });
      const refused = typeof planned === 'string' ? planned : null;
      const actions = typeof planned === 'string' ? [] : planned.map(({ type, destination, duration_minutes, preview }) => ({ type, destination, duration_minutes, preview }));
      return { playbook_id: p.id, playbook_version: doc.version, actions, refused };
    }),
  );
}

function parityOf(recorded: Incident, replayed: Incident | undefined): Pick<ReplayReport, 'parity' | 'differences' | 'recorded' | 'replayed'> {
  const compared = compareIncidents(recorded, replayed);
  const asTime = (field: string, v: unknown) => ((field === 'first_seen' || field === 'last_seen') && typeof v === 'number' ? iso(v) : v);
  return {
    parity: compared.parity,
    differences: compared.differences.map((d) => ({ ...d, recorded: asTime(d.field, d.recorded), replayed: asTime(d.field, d.replayed) })),
    recorded: summary(recorded),
    replayed: replayed ? summary(replayed) : null,
  };
}

function summary(i: Incident): IncidentSummary {
  return {
    id: i.id,
    severity: i.severity,
    state: i.state,
    signal_count: i.signal_count,
    first_seen: iso(i.first_seen),
    last_seen: iso(i.last_seen),
    kinds: i.kinds,
    rule: i.rule,
    escalations: i.escalations,
  };
}
