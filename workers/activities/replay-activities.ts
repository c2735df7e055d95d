import { ApplicationFailure } from '@temporalio/activity';
import { correlate, defaultRules, type Incident } from '../../core/correlation';
import { defaultDetectorRules, metricThresholdSignals, trafficVolumeSignals } from '../../core/detectors';
import { deniedMessage, evaluatePolicies, type PolicyDecision } from '../../core/policy';
import { compareIncidents, replayWindow, type ReplayWindow } from '../../core/replay';
import type { IncidentsRepo } from '../../storage/incidents-repo';
import type { PoliciesRepo } from '../../storage/policies-repo';
import type { ReplayHistory } from '../../storage/replay-history';
import type { ReplaysRepo } from '../../storage/replays-repo';
import type { ReplayInput, ReplayState } from '../../workflows/replay';

export interface ReplayActivityDeps {
  incidents: IncidentsRepo;
  policies: PoliciesRepo;
  replays: ReplaysRepo;
  history: ReplayHistory;
}

const isIp = (s: string) => /^[0-9.]+$|:/.test(s);

/** Every side effect of the replay workflow, built from its dependencies. */
export function createReplayActivities(deps: ReplayActivityDeps) {
  async function loadIncident(input: ReplayInput) {
    const incident = await deps.incidents.get(input.orgId, input.incidentId);
    if (!incident) throw ApplicationFailure.nonRetryable(`incident ${input.incidentId} not found`, 'NOT_FOUND');
    return incident;
  }

  return {
    /** Writes the workflow's state; the version is the workflow's step, so a late retry never overwrites a newer state. */
    async recordReplayState(args: { input: ReplayInput; state: ReplayState; version: number }): Promise<void> {
      const { input, state } = args;
      await deps.replays.put({
        org_id: input.orgId,
        replay_id: input.replayId,
        incident_id: input.incidentId,
        status: state.status,
        requested_by: input.requestedBy,
        requested_at: input.requestedAt,
        updated_at: Date.now(),
        window_minutes: state.window_minutes,
        approvals: state.approvals,
        report: state.report,
        error: state.error,
        version: args.version,
      });
    },

    /** Loads the incident and evaluates the workspace's active policies as they are now. */
    async prepareReplay(input: ReplayInput): Promise<{ decision: PolicyDecision; deniedMessage: string; window: ReplayWindow }> {
      const incident = await loadIncident(input);
      const window = replayWindow(incident, defaultRules.windowMs, input.windowMinutes);
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
    async runReplay(args: { input: ReplayInput; window: ReplayWindow }) {
      const started = Date.now();
      const { input, window } = args;
      const recorded = await loadIncident(input);
      const key = { service: recorded.service, environment: recorded.environment, region: recorded.region };
      const rules = defaultDetectorRules;
      const [posted, metrics, trafficMinutes] = await Promise.all([
        deps.history.postedSignals(input.orgId, key, window.from, window.to),
        deps.history.metricsOverThresholds(input.orgId, key, rules.metricThresholds, window.from, window.to),
        key.environment === 'network' && isIp(key.service)
          ? deps.history.destinationMinutes(input.orgId, key.service, rules.bytesPerMinute, window.from, window.to)
          : Promise.resolve([]),
      ]);
      const signals = [...posted, ...metricThresholdSignals(metrics, rules), ...trafficVolumeSignals(trafficMinutes, rules)];
      // Every transition of the key: a resolved earlier incident bounds this one.
      const transitions = await deps.incidents.transitionsOfKeys(input.orgId, [key]);
      const replayed = correlate(signals, transitions).find((i) => i.id === recorded.id);

      const destinations = [...new Set([...posted.map((s) => s.dst_ip).filter(Boolean), ...(isIp(key.service) ? [key.service] : [])])];
      const examined = await deps.history.topSources(input.orgId, destinations, window.from, window.to, 10);
      const compared = compareIncidents(recorded, replayed);
      const asTime = (field: string, v: unknown) => ((field === 'first_seen' || field === 'last_seen') && typeof v === 'number' ? iso(v) : v);
      const differences = compared.differences.map((d) => ({ ...d, recorded: asTime(d.field, d.recorded), replayed: asTime(d.field, d.replayed) }));
      const parity = compared.parity;
      return {
        parity,
        differences,
        recorded: summary(recorded),
        replayed: replayed ? summary(replayed) : null,
        automation: {
          window: { from: new Date(window.from).toISOString(), to: new Date(window.to).toISOString(), minutes: window.window_minutes },
          flows_examined: examined.flows,
          bytes_examined: examined.bytes,
          signals_examined: signals.length,
          actions: examined.top.map((t) => ({ action: 'rate_limit', src_ip: t.src_ip, dst_ip: t.dst_ip, bytes: t.bytes, flows: t.flows })),
        },
        duration_ms: Date.now() - started,
      };
    },
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

function summary(i: Incident) {
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

export type ReplayActivities = ReturnType<typeof createReplayActivities>;
