import { derivedId } from './ids';
import { computedVersion } from './incident-version';
import type { SignalRow, TelemetryKind } from './telemetry';

/**
 * The deterministic correlation engine: a pure function of a key's signals
 * (ordered by event time, then event id; duplicates by event id dropped) and
 * the people's transitions of its incidents. The same inputs give the same
 * incidents, ids included, whatever order they arrived in.
 *
 * | rule | effect |
 * |---|---|
 * | correlation key | (org, service, environment, region) |
 * | attach | a signal joins the key's current incident when that incident is not resolved and the key's previous signal is at most `windowMs` (5 min) earlier in event time |
 * | open | otherwise the signal opens a new incident: severity `high`, state `open`, id derived from the key and the signal's event time |
 * | escalate: latency | a signal with latency_ms ≥ 1000 makes the incident `critical` |
 * | escalate: breadth | three distinct telemetry kinds in one incident make it `critical` |
 * | resolve | a resolved incident takes no signal later than its last signal at resolution; such a signal opens a new incident |
 *
 * A transition names its key and the incident's last signal time when it was
 * made (`through_ts`), and applies to the key's incident whose span holds
 * that time: it follows the incident even when a late, earlier signal gives
 * the incident a new id. Versions rank computations (core/incident-version).
 *
 * The rules are an input, chosen per incident when it opens (a function of
 * its id): the correlator passes the version each stored incident opened
 * under and the workspace's rules in force for a new one, so a rule change
 * reaches new incidents only (core/detection-rules). An incident's window
 * decides which signals it takes, its escalation rules its severity, and it
 * records the version as `rules_version`.
 */
export type IncidentState = 'open' | 'acknowledged' | 'resolved';
export type Severity = 'high' | 'critical';

export interface CorrelationRules {
  windowMs: number;
  criticalLatencyMs: number;
  criticalDistinctKinds: number;
  /** The workspace's detection-rules version these come from; 0 (the defaults) when absent. */
  version?: number;
}

export const defaultRules: CorrelationRules = { windowMs: 5 * 60_000, criticalLatencyMs: 1000, criticalDistinctKinds: 3 };

/** The rules an incident is computed under, by the id it opens with and the event time of its first signal. */
export type RulesOfIncident = (incidentId: string, openedAt: number) => CorrelationRules;

export interface Transition {
  /** The incident it was made on; informational: it applies by key and time. */
  incident_id: string;
  org_id: string;
  service: string;
  environment: string;
  region: string;
  state: 'acknowledged' | 'resolved';
  /** Wall-clock time of the change (epoch ms). */
  at: number;
  /** The incident's last_seen when the change was made: a resolution covers signals up to it. */
  through_ts: number;
}

export interface Incident {
  id: string;
  org_id: string;
  service: string;
  environment: string;
  region: string;
  severity: Severity;
  state: IncidentState;
  source: 'deterministic_engine';
  /** The rule that opened the incident: `signal`, or the detector rule of its first signal. */
  rule: string;
  /** Escalation rules that fired, in the order they fired. */
  escalations: string[];
  first_seen: number;
  last_seen: number;
  signal_count: number;
  kinds: TelemetryKind[];
  max_latency_ms: number;
  total_bytes: number;
  /** Grows with every new signal or transition, so the newest computation of an incident wins. */
  version: number;
  /** The detection-rules version the incident opened, and is computed, under. */
  rules_version: number;
}


export const correlationKey = (s: Pick<SignalRow, 'org_id' | 'service' | 'environment' | 'region'>) =>
  `${s.org_id}\u0000${s.service}\u0000${s.environment}\u0000${s.region}`;

function orderSignals(signals: readonly SignalRow[]): SignalRow[] {
  const unique = new Map<string, SignalRow>();
  for (const s of signals) if (!unique.has(s.event_id)) unique.set(s.event_id, s);
  return [...unique.values()].sort((a, b) => a.ts - b.ts || (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0));
}

export function correlate(
  signals: readonly SignalRow[],
  transitions: readonly Transition[] = [],
  rules: CorrelationRules | RulesOfIncident = defaultRules,
): Incident[] {
  const rulesOf = typeof rules === 'function' ? rules : () => rules;
  const byKey = groupTransitions(transitions);
  const current = new Map<string, { incident: Incident; rules: CorrelationRules }>();
  const incidents: Incident[] = [];
  for (const signal of orderSignals(signals)) {
    const key = correlationKey(signal);
    const active = current.get(key);
    if (active && accepts(active.incident, signal, byKey.get(key) ?? [], active.rules)) {
      attach(active.incident, signal, active.rules);
    } else {
      const opened = open(signal, rulesOf);
      current.set(key, opened);
      incidents.push(opened.incident);
    }
  }
  for (const incident of incidents) applyTransitions(incident, (byKey.get(correlationKey(incident)) ?? []).filter((t) => covers(incident, t)));
  return incidents;
}

function groupTransitions(transitions: readonly Transition[]): Map<string, Transition[]> {
  const out = new Map<string, Transition[]>();
  const sorted = [...transitions].sort((a, b) => a.at - b.at || a.state.localeCompare(b.state));
  for (const t of sorted) {
    const key = correlationKey(t);
    out.set(key, [...(out.get(key) ?? []), t]);
  }
  return out;
}

/** Whether a transition was made on this incident: its span holds the transition's through_ts. */
const covers = (incident: Incident, t: Transition) => t.through_ts >= incident.first_seen && t.through_ts <= incident.last_seen;

function accepts(incident: Incident, signal: SignalRow, transitions: Transition[], rules: CorrelationRules): boolean {
  if (signal.ts - incident.last_seen > rules.windowMs) return false;
  const resolution = transitions.find((t) => t.state === 'resolved' && covers(incident, t));
  return !resolution || signal.ts <= resolution.through_ts;
}

function open(signal: SignalRow, rulesOf: RulesOfIncident): { incident: Incident; rules: CorrelationRules } {
  const id = derivedId('inc', signal.org_id, signal.service, signal.environment, signal.region, signal.ts);
  const rules = rulesOf(id, signal.ts);
  const incident: Incident = {
    id,
    org_id: signal.org_id,
    service: signal.service,
    environment: signal.environment,
    region: signal.region,
    severity: 'high',
    state: 'open',
    source: 'deterministic_engine',
    rule: signal.rule || 'signal',
    escalations: [],
    first_seen: signal.ts,
    last_seen: signal.ts,
    signal_count: 0,
    kinds: [],
    max_latency_ms: 0,
    total_bytes: 0,
    version: 0,
    rules_version: rules.version ?? 0,
  };
  attach(incident, signal, rules);
  return { incident, rules };
}

function attach(incident: Incident, signal: SignalRow, rules: CorrelationRules): void {
  incident.last_seen = Math.max(incident.last_seen, signal.ts);
  incident.signal_count += 1;
  incident.version = computedVersion(incident.signal_count, 0);
  incident.max_latency_ms = Math.max(incident.max_latency_ms, signal.latency_ms);
  incident.total_bytes += signal.bytes;
  if (!incident.kinds.includes(signal.telemetry)) incident.kinds = [...incident.kinds, signal.telemetry].sort();
  escalate(incident, rules);
}

function escalate(incident: Incident, rules: CorrelationRules): void {
  const fired = (rule: string) => {
    if (!incident.escalations.includes(rule)) incident.escalations.push(rule);
    incident.severity = 'critical';
  };
  if (incident.max_latency_ms >= rules.criticalLatencyMs) fired(`latency_ms >= ${rules.criticalLatencyMs}`);
  if (incident.kinds.length >= rules.criticalDistinctKinds) fired(`${rules.criticalDistinctKinds} distinct telemetry kinds`);
}

function applyTransitions(incident: Incident, transitions: Transition[]): void {
  let applied = 0;
  for (const t of transitions) {
    if (incident.state === 'resolved') break;
    incident.state = t.state;
    applied += 1;
  }
  incident.version = computedVersion(incident.signal_count, applied);
}
