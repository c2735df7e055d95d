import { z } from 'zod';
import { snmpAgentsHealth } from './enrichment-answers';

/** The answer of GET /healthz (api/routes/health.ts). */
/** Without a key only `status`; version, detail and error are for the platform admin key. */
const probe = z.object({ status: z.enum(['up', 'down']), version: z.string().optional(), detail: z.string().optional(), error: z.string().optional() });
export const healthAnswer = z
  .object({
    status: z.enum(['ok', 'degraded']),
    engines: z.object({ nats: probe, clickhouse: probe, temporal: probe }),
    loops: z.record(z.string(), probe).meta({ description: "each long-running loop of this process's roles, by name" }),
    snmp_agents: snmpAgentsHealth,
    governance: z
      .union([z.object({ ungated_workspaces: z.array(z.string()) }), z.object({ error: z.string() })])
      .optional()
      .meta({ description: 'platform admin only: the workspaces whose enabled playbooks act with no active policy requiring an approver (nobody decides their runs)' }),
  })
  .meta({ title: 'Health' });
