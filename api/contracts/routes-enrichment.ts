import { z } from 'zod';
import { snmpSettingsSchema } from '../../core/enrichment/interfaces';
import * as enrichment from '../routes/enrichment';
import { versionParam } from '../routes/detection-rules';
import { noQuery } from '../validation';
import { timeOrNull } from './answers';
import type { RouteContract } from './contract';

/** Interface enrichment: exporters' SNMP agents and static interfaces, and the classification rules. */
const json = (description: string, schema: z.ZodType) => ({ description, schema });
const id = z.string().meta({ description: 'the exporter id; an id the workspace does not have is 404' });
const iface = z.object({ index: z.number().int(), name: z.string(), description: z.string(), speed: z.number().int() });

const agentAnswer = z
  .object({
    status: z.enum(['ok', 'failing', 'not_polled_yet']),
    last_attempt: timeOrNull,
    last_success: timeOrNull,
    failing_since: timeOrNull,
    error: z.string().nullable(),
    interfaces: z.number().int(),
  })
  .nullable();
const snmpPublic = z.union([
  z.object({ version: z.literal('2c'), port: z.number().int() }),
  z.object({ version: z.literal('3'), port: z.number().int(), user: z.string(), auth_protocol: z.string(), priv_protocol: z.string() }),
]);
const settingsAnswer = z
  .object({ snmp: snmpPublic.nullable(), interfaces: z.array(iface), version: z.number().int(), updated_at: timeOrNull, updated_by: z.string().nullable(), agent: agentAnswer })
  .meta({ title: 'ExporterEnrichment', description: "the exporter's SNMP agent (never its secrets), static interfaces and how its agent last answered" });
const interfacesAnswer = z.object({
  data: z.array(
    iface.extend({
      source: z.enum(['snmp', 'static']),
      boundary: z.string().nullable(),
      connectivity: z.string().nullable(),
      provider: z.string().nullable(),
      rules_version: z.number().int(),
    }),
  ),
});
const rulesAnswer = z
  .object({ version: z.number().int(), rules: z.string(), updated_at: timeOrNull, updated_by: z.string().nullable() })
  .meta({ title: 'ClassificationRulesVersion' });
const classOf = z.record(z.string(), z.string());
const evaluationAnswer = z.object({ exporter: classOf, interfaces: z.array(z.object({ index: z.number().int(), classification: classOf })) });
const exampleRules = 'Interface.Description matches "^Transit: (\\\\S+)" -> boundary external, connectivity transit, provider $1';

export const enrichmentContracts: RouteContract[] = [
  {
    method: 'get', path: '/v1/exporters/{id}/snmp', summary: "An exporter's SNMP agent, static interfaces and agent status", tag: 'Exporters',
    access: 'workspace', permission: 'read', query: noQuery, params: { id }, responses: { 200: json('the settings', settingsAnswer) },
  },
  {
    method: 'put', path: '/v1/exporters/{id}/snmp', summary: "Set how an exporter's SNMP agent is polled (v2c or v3 authPriv)", tag: 'Exporters',
    access: 'workspace', permission: 'exporters:manage', params: { id },
    body: { schema: snmpSettingsSchema, example: { version: '3', port: 161, user: 'nettel', auth_protocol: 'sha256', auth_key: 'auth-secret', priv_protocol: 'aes', priv_key: 'priv-secret' } },
    responses: { 200: json('the settings, without secrets', settingsAnswer) },
  },
  {
    method: 'delete', path: '/v1/exporters/{id}/snmp', summary: "Stop polling an exporter's SNMP agent (its last interfaces stay)", tag: 'Exporters',
    access: 'workspace', permission: 'exporters:manage', params: { id }, responses: { 200: json('the settings', settingsAnswer) },
  },
  {
    method: 'put', path: '/v1/exporters/{id}/interfaces', summary: "Set an exporter's static interfaces (they win over its agent's)", tag: 'Exporters',
    access: 'workspace', permission: 'exporters:manage', params: { id },
    body: { schema: enrichment.interfacesPutSchema, example: { interfaces: [{ index: 3, name: 'et-0/0/3', description: 'Transit: Cogent', speed: 100000 }] } },
    responses: { 200: json('the settings', settingsAnswer) },
  },
  {
    method: 'get', path: '/v1/exporters/{id}/interfaces', summary: "An exporter's interfaces as flows are read with them", tag: 'Exporters',
    access: 'workspace', permission: 'read', query: noQuery, params: { id }, responses: { 200: json('the interfaces, classified', interfacesAnswer) },
  },
  {
    method: 'get', path: '/v1/classification-rules', summary: 'The classification rules in force', tag: 'Classification rules',
    access: 'workspace', permission: 'read', query: noQuery, responses: { 200: json('the version in force', rulesAnswer) },
  },
  {
    method: 'put', path: '/v1/classification-rules', summary: 'Replace the classification rules (the next version)', tag: 'Classification rules',
    access: 'workspace', permission: 'rules:manage', errors: [409],
    body: { schema: enrichment.rulesPutSchema, example: { version: 1, rules: exampleRules } },
    responses: { 200: json('the version in force after the change; bad rule text is 400 naming its line and column', rulesAnswer) },
  },
  {
    method: 'get', path: '/v1/classification-rules/versions/{version}', summary: 'One version of the classification rules', tag: 'Classification rules',
    access: 'workspace', permission: 'read', query: noQuery, params: { version: versionParam }, responses: { 200: json('that version', rulesAnswer) },
  },
  {
    method: 'post', path: '/v1/classification-rules/evaluate', summary: 'What rules decide for a sample exporter and interfaces (nothing stored)',
    tag: 'Classification rules', access: 'workspace', permission: 'read',
    body: { schema: enrichment.evaluateSchema, example: { rules: exampleRules, exporter: { name: 'edge1', address: '192.0.2.1' }, interfaces: [{ index: 3, description: 'Transit: Cogent' }] } },
    responses: { 200: json('the decisions', evaluationAnswer) },
  },
];
