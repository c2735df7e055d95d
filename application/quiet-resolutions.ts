import type { Transition } from '../core/correlation';
import type { CrossedTarget, RateQuiet } from '../core/detection/quiet';
import { versionOfRule } from '../core/detection/version';
import { trafficVolumeKey } from '../core/detectors';
import type { IncidentsRepo, StoredIncident } from '../storage/incidents-repo';
import type { AuditEvent, AuditLedger } from './audit-ledger';
import type { KeyChange } from './correlator';

/** What became of a quiet report. */
export type QuietOutcome = 'resolved' | 'no_incident' | 'already_resolved' | 'later_signal';

/** The actor of the resolutions the rate detectors make, in the incident's transitions and the audit ledger. */
export const quietActor = 'rate-detector';

/** Rate incidents kept open at most, of each open state, that a new holder of the detectors takes as still crossing. */
const maxCrossings = 1_000;

/**
 * An incident a rate detector opened resolves by itself when its target has
 * been quiet (core/detection/quiet.ts): below every bound for the rules'
 * quiet time of event time after its last crossing. The resolution is a
 * person's resolution in every way but the actor (`rate-detector`): a
 * transition through the incident's last signal, the key recomputed (the
 * correlator sends `incident.resolved`), and `incident.resolve` in the
 * workspace's ledger with the quiet's details. Audited first, once (a report
 * made again after a crash finds the entry): a resolution is never
 * unaudited.
 *
 * The incident is the one on the target's key (service = the target,
 * environment `network`, region `global`) whose span holds the last crossing's
 * signal; one that another signal joined after it (the one-minute traffic
 * detector shares the key) is left open: its attack may not be over.
 */
export class QuietResolutions {
  constructor(
    private readonly deps: {
      incidents: Pick<IncidentsRepo, 'list' | 'addTransition'>;
      correlator: { recompute(orgId: string, changes: KeyChange[]): Promise<unknown> };
      audit: { append(event: AuditEvent): Promise<unknown>; recorded: AuditLedger['recorded'] };
      now?: () => number;
    },
  ) {}

  async resolve(orgId: string, quiet: RateQuiet): Promise<QuietOutcome> {
    // A signal's event time is its window's last millisecond (core/detection/signals.ts).
    const lastSignal = quiet.last_crossed_end - 1;
    const candidates = await this.deps.incidents.list(orgId, { service: quiet.target, environment: trafficVolumeKey.environment, since: lastSignal }, 20);
    const incident = candidates.find((i) => i.region === trafficVolumeKey.region && i.first_seen <= lastSignal);
    if (!incident) return 'no_incident';
    if (incident.state === 'resolved') return 'already_resolved';
    if (incident.last_seen > lastSignal) return 'later_signal';
    if (!(await this.deps.audit.recorded(orgId, 'incident.resolve', incident.id))) {
      await this.deps.audit.append({ orgId, actor: quietActor, action: 'incident.resolve', target: incident.id, details: detailsOf(incident, quiet) });
    }
    const transition: Transition = {
      incident_id: incident.id,
      org_id: orgId,
      service: incident.service,
      environment: incident.environment,
      region: incident.region,
      state: 'resolved',
      at: (this.deps.now ?? Date.now)(),
      through_ts: incident.last_seen,
    };
    await this.deps.incidents.addTransition(orgId, transition, quietActor);
    await this.deps.correlator.recompute(orgId, [{ service: incident.service, environment: incident.environment, region: incident.region, since: incident.first_seen }]);
    return 'resolved';
  }

  /**
   * The targets of the workspace's rate incidents not yet resolved, as a
   * detector that starts (a new holder, a restart) takes them: still
   * crossing as of their last signal, so a quiet that began before it started
   * still resolves them.
   */
  async crossings(orgId: string): Promise<CrossedTarget[]> {
    const states = ['open', 'acknowledged'] as const;
    const lists = await Promise.all(states.map((state) => this.deps.incidents.list(orgId, { state, environment: trafficVolumeKey.environment }, maxCrossings)));
    return lists.flat().flatMap((i) => {
      const scope = scopeOfRule(i.rule);
      return scope && i.region === trafficVolumeKey.region ? [{ scope, target: i.service, host_group: '', last_crossed_end: i.last_seen + 1 }] : [];
    });
  }
}

/** The scope a rate rule names (`rate.v1:<scope>:…`, `rate.v2:<scope>`), or undefined for another detector's rule. */
function scopeOfRule(rule: string): 'host' | 'prefix' | undefined {
  if (versionOfRule(rule) === undefined) return undefined;
  const scope = rule.split(':')[1];
  return scope === 'host' || scope === 'prefix' ? scope : undefined;
}

function detailsOf(incident: StoredIncident, quiet: RateQuiet) {
  return {
    from: incident.state,
    to: 'resolved',
    reason: 'quiet',
    quiet_seconds: quiet.quiet_seconds,
    last_crossed_end: quiet.last_crossed_end,
    quiet_end: quiet.quiet_end,
  };
}
