import type { Transition } from '../core/correlation';
import { incidentAttack, type IncidentAttack } from '../core/detection/incident-attack';
import { trafficVolumeDestination } from '../core/detectors';
import type { AttackWindowsRepo } from '../storage/attack-windows-repo';
import { conflict, notFound } from '../core/errors';
import type { SignalRow } from '../core/telemetry';
import type { IncidentSignals, SignalCursor } from '../storage/incident-signals';
import type { IncidentCursor, IncidentFilters, IncidentsRepo, StoredIncident } from '../storage/incidents-repo';
import type { AuditLedger } from './audit-ledger';
import type { Correlator } from './correlator';

export type IncidentAction = 'acknowledge' | 'resolve';
const stateAfter = { acknowledge: 'acknowledged', resolve: 'resolved' } as const;

/**
 * Reads incidents and applies people's transitions: a transition is stored,
 * the key's incidents are recomputed with it (the engine decides what it
 * covers), and the change is audited.
 */
export class IncidentService {
  constructor(
    private readonly deps: {
      incidents: IncidentsRepo;
      signals: IncidentSignals;
      correlator: Correlator;
      audit: AuditLedger;
      /** The rate detectors' judged windows; none: incidents carry no attack. */
      attacks?: Pick<AttackWindowsRepo, 'ofTarget'>;
      now?: () => number;
    },
  ) {}

  list(orgId: string, filters: IncidentFilters, limit: number, after?: IncidentCursor): Promise<StoredIncident[]> {
    return this.deps.incidents.list(orgId, filters, limit, after);
  }

  async get(orgId: string, id: string): Promise<StoredIncident> {
    const incident = await this.deps.incidents.get(orgId, id);
    if (!incident) throw notFound('incident');
    return incident;
  }

  /**
   * The attack a rate detector saw on the incident's key (service = the
   * target, environment `network`, region `global`: core/detectors.ts) over
   * its span; undefined for an incident no rate decision joined.
   */
  async attack(orgId: string, incident: StoredIncident): Promise<IncidentAttack | undefined> {
    const onTrafficKey = trafficVolumeDestination(incident) !== undefined || (incident.environment === 'network' && incident.region === 'global');
    if (!this.deps.attacks || !onTrafficKey) return undefined;
    // A signal's event time is its window's last millisecond (core/detection/signals.ts).
    return incidentAttack(await this.deps.attacks.ofTarget(orgId, incident.service, incident.first_seen + 1, incident.last_seen + 1));
  }

  /** The incident's signals in event-time order, a page at a time. */
  async signals(orgId: string, id: string, limit: number, after?: SignalCursor): Promise<SignalRow[]> {
    return this.deps.signals.page(orgId, await this.get(orgId, id), limit, after);
  }

  async transition(orgId: string, actor: string, id: string, action: IncidentAction): Promise<StoredIncident> {
    const incident = await this.get(orgId, id);
    const state = stateAfter[action];
    if (incident.state === 'resolved') throw conflict('the incident is already resolved');
    if (incident.state === state) throw conflict(`the incident is already ${state}`);
    const transition: Transition = {
      incident_id: id,
      org_id: orgId,
      service: incident.service,
      environment: incident.environment,
      region: incident.region,
      state,
      at: (this.deps.now ?? Date.now)(),
      through_ts: incident.last_seen,
    };
    await this.deps.incidents.addTransition(orgId, transition, actor);
    await this.deps.correlator.recompute(orgId, [{ ...incident, since: incident.first_seen }]);
    await this.deps.audit.append({ orgId, actor, action: `incident.${action}`, target: id, details: { from: incident.state, to: state } });
    return (await this.deps.incidents.get(orgId, id)) ?? incident;
  }
}
