import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { ExporterSnmp, InterfaceRecord } from '../../core/enrichment/interfaces';
import { snmpSettingsSchema, staticInterfacesSchema } from '../../core/enrichment/interfaces';
import { maxRuleTextLength } from '../../core/enrichment/rule-tokens';
import { ip } from '../../core/telemetry';
import { isoOrNull } from '../../core/time';
import type { AgentStatus } from '../../storage/enrichment/interfaces-repo';
import type { VersionedClassification } from '../../storage/enrichment/classification-rules-repo';
import { orgOf, principalOf, requirePermission } from '../auth';
import { readBody } from '../body';
import type { ApiDeps } from '../deps';
import { knownIdForm, parseOrThrow, pathParam, refuseQuery } from '../validation';
import { versionParam } from './detection-rules';

export const interfacesPutSchema = z.object({ interfaces: staticInterfacesSchema }).strict();
const ruleText = z.string().max(maxRuleTextLength);
export const rulesPutSchema = z
  .object({
    rules: ruleText,
    // The version the edit started from: another one in force means a concurrent change, 409.
    version: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    updated_at: z.string().max(64).nullable().optional(),
    updated_by: z.string().max(200).nullable().optional(),
  })
  .strict();
const sampleInterface = z
  .object({ index: z.number().int().min(0).max(4_294_967_295), name: z.string().max(255).default(''), description: z.string().max(255).default(''), speed: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0) })
  .strict();
export const evaluateSchema = z
  .object({
    rules: ruleText.optional(),
    exporter: z.object({ name: z.string().max(200).default(''), address: ip }).strict(),
    interfaces: z.array(sampleInterface).max(1_000).default([]),
  })
  .strict();

function agentView(agent: AgentStatus | undefined, polled: boolean) {
  if (!polled) return null;
  if (!agent) return { status: 'not_polled_yet' as const, last_attempt: null, last_success: null, failing_since: null, error: null, interfaces: 0 };
  return {
    status: agent.failing_since ? ('failing' as const) : ('ok' as const),
    last_attempt: isoOrNull(agent.last_attempt),
    last_success: isoOrNull(agent.last_success),
    failing_since: isoOrNull(agent.failing_since),
    error: agent.error || null,
    interfaces: agent.interfaces,
  };
}

/** The agent's settings as stored, less the sealed secrets. */
function withoutSecrets(snmp: NonNullable<ExporterSnmp['snmp']>) {
  const view: Record<string, unknown> = { ...snmp };
  delete view.sealed;
  return view;
}

/** An exporter's enrichment settings as answered: the agent's settings without any secret. */
function settingsView(s: ExporterSnmp, agent?: AgentStatus) {
  const snmp = s.snmp ? withoutSecrets(s.snmp) : null;
  return {
    snmp,
    interfaces: s.interfaces,
    version: s.version,
    updated_at: isoOrNull(s.updated_at),
    updated_by: s.actor || null,
    agent: agentView(agent, s.snmp !== null),
  };
}

const interfaceView = (i: InterfaceRecord) => ({
  index: i.index, name: i.name, description: i.description, speed: i.speed, source: i.source,
  boundary: i.boundary || null, connectivity: i.connectivity || null, provider: i.provider || null, rules_version: i.rules_version,
});

const rulesView = (v: VersionedClassification) => ({
  version: v.version, rules: v.rules, updated_at: isoOrNull(v.created_at ?? 0), updated_by: v.actor || null,
});

const exporterId = (ctx: Context) => knownIdForm('exp', pathParam(ctx, 'id'), 'exporter');

/**
 * Interface enrichment (docs/enrichment.md): an exporter's SNMP agent
 * settings and static interfaces (`exporters:manage`), its interfaces as
 * resolved (`read`), and the workspace's classification rules (`read`,
 * `rules:manage`), with an evaluation that stores nothing.
 */
export function registerEnrichmentRoutes(router: Router, deps: ApiDeps): void {
  const manage = requirePermission('exporters:manage');
  const read = requirePermission('read');
  const body = async (ctx: Context) => (await readBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['json'] }))!.value;

  router.get('/v1/exporters/:id/snmp', read, async (ctx) => {
    refuseQuery(ctx.query);
    const { settings, agent } = await deps.interfaceEnrichment.settings(orgOf(ctx), exporterId(ctx));
    ctx.body = settingsView(settings, agent);
  });

  router.put('/v1/exporters/:id/snmp', manage, async (ctx) => {
    const id = exporterId(ctx);
    const snmp = parseOrThrow(snmpSettingsSchema, await body(ctx), 'snmp settings');
    ctx.body = settingsView(await deps.interfaceEnrichment.putSnmp(orgOf(ctx), principalOf(ctx).keyId, id, snmp));
  });

  router.delete('/v1/exporters/:id/snmp', manage, async (ctx) => {
    ctx.body = settingsView(await deps.interfaceEnrichment.putSnmp(orgOf(ctx), principalOf(ctx).keyId, exporterId(ctx), null));
  });

  router.put('/v1/exporters/:id/interfaces', manage, async (ctx) => {
    const id = exporterId(ctx);
    const { interfaces } = parseOrThrow(interfacesPutSchema, await body(ctx), 'interfaces');
    ctx.body = settingsView(await deps.interfaceEnrichment.putInterfaces(orgOf(ctx), principalOf(ctx).keyId, id, interfaces));
  });

  router.get('/v1/exporters/:id/interfaces', read, async (ctx) => {
    refuseQuery(ctx.query);
    const exporter = await deps.exporters.get(orgOf(ctx), exporterId(ctx));
    ctx.body = { data: (await deps.interfaceEnrichment.interfaces(orgOf(ctx), exporter)).map(interfaceView) };
  });

  router.get('/v1/classification-rules', read, async (ctx) => {
    refuseQuery(ctx.query);
    ctx.body = rulesView(await deps.classification.get(orgOf(ctx)));
  });

  router.put('/v1/classification-rules', requirePermission('rules:manage'), async (ctx) => {
    const doc = parseOrThrow(rulesPutSchema, await body(ctx), 'classification rules');
    ctx.body = rulesView(await deps.classification.put(orgOf(ctx), principalOf(ctx).keyId, doc.rules, doc.version));
  });

  router.get('/v1/classification-rules/versions/:version', read, async (ctx) => {
    refuseQuery(ctx.query);
    const version = parseOrThrow(versionParam, pathParam(ctx, 'version'), 'version');
    ctx.body = rulesView(await deps.classification.version(orgOf(ctx), version));
  });

  router.post('/v1/classification-rules/evaluate', read, async (ctx) => {
    const input = parseOrThrow(evaluateSchema, await body(ctx), 'evaluation');
    ctx.body = await deps.classification.evaluate(orgOf(ctx), input.rules, { exporter: input.exporter, interfaces: input.interfaces });
  });
}
