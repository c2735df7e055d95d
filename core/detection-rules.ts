import { z } from 'zod';
import { defaultRules, type CorrelationRules, type RulesOfIncident } from './correlation';
import { defaultDetectorRules, type DetectorRules, type MetricThreshold } from './detectors';
import { defaultRateRules, rateRulesSchema, type RateRules } from './detection/rules';
import { normalizeAddress } from './exporter';
import { isAddressText, labelSchema } from './telemetry';

/**
 * A workspace's detection rules: what the correlation engine and the
 * detectors take as input, in the form the API shows. Every field has a
 * default, today's built-in value, so version 0 (nothing set) is the
 * defaults. Versions are immutable: a change writes the next version, and
 * each incident records the version it opened under (see
 * application/detection-rules-service for how they are looked up).
 *
 * | field | bounds | default |
 * |---|---|---|
 * | correlation_window_seconds | 10–86400 | 300 |
 * | escalation_latency_ms | 1–86400000 | 1000 |
 * | escalation_distinct_kinds | 1–4 | 3 |
 * | metric_thresholds | up to 256 metric names, each `{at_least?, at_most?}` | latency_ms ≥ 1000, error_rate ≥ 0.05, packet_loss ≥ 0.02, cpu_utilization ≥ 0.95 |
 * | traffic_bytes_per_minute | 1–2^53-1 | 1000000000 |
 * | traffic_bytes_per_minute_by_exporter | up to 1000 exporter addresses, each 1–2^53-1 | none |
 * | rates | the rate detectors' rules (core/detection/rules.ts: thresholds, host groups, whitelists, carpet) | FastNetMon's defaults |
 */
export interface MetricBound {
  at_least?: number;
  at_most?: number;
}

export interface DetectionRules {
  correlation_window_seconds: number;
  escalation_latency_ms: number;
  escalation_distinct_kinds: number;
  metric_thresholds: Record<string, MetricBound>;
  traffic_bytes_per_minute: number;
  traffic_bytes_per_minute_by_exporter: Record<string, number>;
  rates: RateRules;
}

/** One version of a workspace's rules; version 0 is the defaults, never stored. */
export interface VersionedRules {
  version: number;
  rules: DetectionRules;
  /** When it was set (epoch ms); 0 for the defaults. */
  created_at: number;
  /** The key that set it; empty for the defaults. */
  actor: string;
}

/** Every version a workspace has had, oldest first: version 0 first, the last one in force. */
export interface RulesHistory {
  versions: readonly VersionedRules[];
}

const boundsOfMetric = (t: MetricThreshold): MetricBound => ({
  ...(t.atLeast !== undefined ? { at_least: t.atLeast } : {}),
  ...(t.atMost !== undefined ? { at_most: t.atMost } : {}),
});

export const defaultDetectionRules: DetectionRules = {
  correlation_window_seconds: defaultRules.windowMs / 1000,
  escalation_latency_ms: defaultRules.criticalLatencyMs,
  escalation_distinct_kinds: defaultRules.criticalDistinctKinds,
  metric_thresholds: Object.fromEntries(Object.entries(defaultDetectorRules.metricThresholds).map(([m, t]) => [m, boundsOfMetric(t)])),
  traffic_bytes_per_minute: defaultDetectorRules.bytesPerMinute,
  traffic_bytes_per_minute_by_exporter: {},
  rates: defaultRateRules,
};

export const defaultVersion: VersionedRules = { version: 0, rules: defaultDetectionRules, created_at: 0, actor: '' };

const finite = z.number().refine(Number.isFinite, 'must be a finite number');
const bytesPerMinute = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

const metricBound = z
  .object({ at_least: finite.optional(), at_most: finite.optional() })
  .strict()
  .refine((b) => b.at_least !== undefined || b.at_most !== undefined, 'set at_least, at_most or both')
  .refine((b) => b.at_least === undefined || b.at_most === undefined || b.at_most < b.at_least, 'at_most must be below at_least (values between them are normal)');

// A metric name follows the metric event's rule; `__proto__` could not be a plain object's key.
const metricName = labelSchema.refine((name) => name !== '__proto__', 'not a usable metric name');

const metricThresholds = z
  .record(z.string(), metricBound)
  .superRefine((record, ctx) => {
    const names = Object.keys(record);
    if (names.length > 256) ctx.addIssue({ code: 'custom', message: 'at most 256 metrics' });
    for (const name of names) {
      if (!metricName.safeParse(name).success || name !== name.trim()) ctx.addIssue({ code: 'custom', path: [name], message: 'a metric name is 1-128 characters, not padded' });
    }
  });

/** Exporter thresholds by address; addresses are normalized (core/exporter), so two spellings of one address collide. */
const byExporter = z
  .record(z.string(), bytesPerMinute)
  .superRefine((record, ctx) => {
    const seen = new Set<string>();
    const addresses = Object.keys(record);
    if (addresses.length > 1000) ctx.addIssue({ code: 'custom', message: 'at most 1000 exporters' });
    for (const address of addresses) {
      if (!isAddressText(address)) ctx.addIssue({ code: 'custom', path: [address], message: 'must be an IPv4 or IPv6 address' });
      else if (seen.has(normalizeAddress(address))) ctx.addIssue({ code: 'custom', path: [address], message: 'the same exporter is given twice' });
      else seen.add(normalizeAddress(address));
    }
  })
  .transform((record) => Object.fromEntries(Object.entries(record).map(([a, b]) => [normalizeAddress(a), b])));

/**
 * The rules as a client sends them (PUT): the whole set. A field left out
 * takes its default, not the previous version's value, so the result depends
 * on the body alone; `metric_thresholds` replaces the whole map (`{}`: none).
 */
export const detectionRulesSchema = z
  .object({
    correlation_window_seconds: z.number().int().min(10).max(86_400).default(defaultDetectionRules.correlation_window_seconds),
    escalation_latency_ms: z.number().int().min(1).max(86_400_000).default(defaultDetectionRules.escalation_latency_ms),
    escalation_distinct_kinds: z.number().int().min(1).max(4).default(defaultDetectionRules.escalation_distinct_kinds),
    metric_thresholds: metricThresholds.default(() => ({ ...defaultDetectionRules.metric_thresholds })),
    traffic_bytes_per_minute: bytesPerMinute.default(defaultDetectionRules.traffic_bytes_per_minute),
    traffic_bytes_per_minute_by_exporter: byExporter.default(() => ({})),
    // A version stored before the rate rules existed reads back with their defaults.
    rates: rateRulesSchema.default(() => rateRulesSchema.parse({})),
  })
  .strict();

/** Rules read back from storage: parsed by the same schema, so a field added later takes its default in older versions. */
export function parseStoredRules(json: string): DetectionRules {
  return detectionRulesSchema.parse(JSON.parse(json));
}

/** What the correlation engine takes of one version. */
export function correlationRulesOf(v: VersionedRules): CorrelationRules {
  return {
    windowMs: v.rules.correlation_window_seconds * 1000,
    criticalLatencyMs: v.rules.escalation_latency_ms,
    criticalDistinctKinds: v.rules.escalation_distinct_kinds,
    version: v.version,
  };
}

/** What the detectors take of one version. */
export function detectorRulesOf(v: VersionedRules): DetectorRules {
  return {
    metricThresholds: Object.fromEntries(
      Object.entries(v.rules.metric_thresholds).map(([m, b]) => [m, { atLeast: b.at_least, atMost: b.at_most }]),
    ),
    bytesPerMinute: v.rules.traffic_bytes_per_minute,
    bytesPerMinuteByExporter: v.rules.traffic_bytes_per_minute_by_exporter,
  };
}

/** A history from the stored versions (any order); version 0, the defaults, always comes first. */
export function historyOf(stored: readonly VersionedRules[]): RulesHistory {
  const versions = [...stored].filter((v) => v.version > 0).sort((a, b) => a.version - b.version);
  return { versions: [defaultVersion, ...versions] };
}

export const inForce = (h: RulesHistory): VersionedRules => h.versions[h.versions.length - 1] ?? defaultVersion;

export const atVersion = (h: RulesHistory, version: number): VersionedRules | undefined => h.versions.find((v) => v.version === version);

/** The correlation window of one version (a replay's history starts one window before the incident); the default one when the version is unknown. */
export const windowMsOf = (h: RulesHistory, version: number): number => {
  const found = atVersion(h, version);
  return found ? correlationRulesOf(found).windowMs : defaultRules.windowMs;
};

/**
 * The widest correlation window any version has had: how far back a run of
 * signals may reach, since an incident keeps the window it opened under.
 */
export const widestWindowMs = (h: RulesHistory): number =>
  h.versions.reduce((m, v) => Math.max(m, v.rules.correlation_window_seconds * 1000), defaultRules.windowMs);

/** A recorded incident as far as choosing its rules goes. */
export interface RecordedRulesVersion {
  id: string;
  first_seen: number;
  last_seen: number;
  rules_version: number;
}

/**
 * The rules each incident is computed under: a recorded incident keeps the
 * version it opened under, found by its id or, for an incident whose id is
 * not recorded, by the recorded incident whose span holds its first signal
 * (a replay's window may cut an earlier incident short, which changes its
 * id); any other incident, a new one, takes `fallback`, the rules in force.
 */
export function rulesOfIncidents(h: RulesHistory, recorded: readonly RecordedRulesVersion[], fallback: VersionedRules = inForce(h)): RulesOfIncident {
  const byVersion = new Map(h.versions.map((v) => [v.version, correlationRulesOf(v)]));
  const byId = new Map(recorded.map((i) => [i.id, i.rules_version]));
  const fresh = correlationRulesOf(fallback);
  return (incidentId, openedAt) => {
    const version = byId.get(incidentId) ?? recorded.find((i) => openedAt >= i.first_seen && openedAt <= i.last_seen)?.rules_version;
    return (version !== undefined ? byVersion.get(version) : undefined) ?? fresh;
  };
}
