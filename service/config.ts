import { z } from 'zod';
import { apiSettings } from '../api/api.config';
import { limitsSettings } from '../api/limits.config';
import { enrichmentSettings } from '../application/enrichment/enrichment.config';
import { keysSettings } from '../application/keys.config';
import { oidcSettings } from '../application/identity/oidc.config';
import { webhooksSettings } from '../application/webhooks.config';
import { bgpSettings } from '../engines/gobgp.config';
import { supervisionSettings } from '../engines/supervisor.config';
import { clickhouseSettings } from '../storage/clickhouse.config';
import { natsSettings } from '../streams/nats.config';
import { temporalSettings } from '../temporal/temporal.config';
import { collectorSettings } from '../workers/collector/collector.config';
import { replayReconcilerSettings } from '../workers/governance/replay-reconciler.config';
import { mitigationReconcilerSettings } from '../workers/mitigation/mitigation-reconciler.config';
import { snmpPollerSettings } from '../workers/enrichment/snmp-poller.config';
import { approvalsSettings } from '../workers/governance/approvals.config';
import { streamWorkerSettings } from '../workers/telemetry/stream-worker.config';
import { processSettings, type ProcessRole } from './process.config';

export type { ProcessRole };

/**
 * Every component's settings, in the order of the configuration reference
 * (docs/configuration.md, generated from them: npm run config:reference).
 * Each declares its variables beside its code, with their defaults, rules and
 * descriptions, and how their values make its part of the Config.
 */
export const componentSettings = [
  processSettings,
  apiSettings,
  limitsSettings,
  keysSettings,
  oidcSettings,
  natsSettings,
  clickhouseSettings,
  temporalSettings,
  supervisionSettings,
  bgpSettings,
  mitigationReconcilerSettings,
  streamWorkerSettings,
  collectorSettings,
  webhooksSettings,
  replayReconcilerSettings,
  approvalsSettings,
  snmpPollerSettings,
  enrichmentSettings,
] as const;

function composedShape() {
  const shape: Record<string, z.ZodType> = {};
  for (const { title, shape: own } of componentSettings) {
    for (const [name, schema] of Object.entries<z.ZodType>(own)) {
      if (shape[name]) throw new Error(`${name}: declared twice (again in "${title}")`);
      shape[name] = schema;
    }
  }
  return shape as typeof processSettings.shape &
    typeof apiSettings.shape &
    typeof limitsSettings.shape &
    typeof keysSettings.shape &
    typeof oidcSettings.shape &
    typeof natsSettings.shape &
    typeof clickhouseSettings.shape &
    typeof temporalSettings.shape &
    typeof supervisionSettings.shape &
    typeof bgpSettings.shape &
    typeof mitigationReconcilerSettings.shape &
    typeof streamWorkerSettings.shape &
    typeof collectorSettings.shape &
    typeof webhooksSettings.shape &
    typeof replayReconcilerSettings.shape &
    typeof approvalsSettings.shape &
    typeof snmpPollerSettings.shape &
    typeof enrichmentSettings.shape;
}

/** The environment variables the service reads: every component's, composed. */
export const envSchema = z.object(composedShape());
export type Env = z.infer<typeof envSchema>;

function configOf(e: Env) {
  return {
    ...processSettings.configOf(e),
    ...apiSettings.configOf(e),
    ...limitsSettings.configOf(e),
    ...keysSettings.configOf(e),
    ...oidcSettings.configOf(e),
    ...natsSettings.configOf(e),
    ...clickhouseSettings.configOf(e),
    ...temporalSettings.configOf(e),
    ...supervisionSettings.configOf(e),
    ...bgpSettings.configOf(e),
    ...mitigationReconcilerSettings.configOf(e),
    ...streamWorkerSettings.configOf(e),
    ...collectorSettings.configOf(e),
    ...webhooksSettings.configOf(e),
    ...replayReconcilerSettings.configOf(e),
    ...approvalsSettings.configOf(e),
    ...snmpPollerSettings.configOf(e),
    ...enrichmentSettings.configOf(e),
  };
}

/** The typed configuration: each component receives its part; no other module touches process.env. */
export type Config = ReturnType<typeof configOf>;

/** The one place that reads the environment: parsed and checked once, at the entry point. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid configuration: ${lines.join('; ')}`);
  }
  return configOf(parsed.data);
}
