import { z } from 'zod';

/** /healthz's part on SNMP agents (api/routes/health.ts). */
export const snmpAgentsHealth = z
  .object({
    failing: z.number().int(),
    agents: z.array(z.object({ org_id: z.string(), exporter_id: z.string(), address: z.string(), failing_since: z.string(), error: z.string() })).optional(),
  })
  .optional()
  .meta({ description: 'exporters whose SNMP agent stopped answering (their last known interface names are kept); which ones, with the platform admin key' });
