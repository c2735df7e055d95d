import { z } from 'zod';
import { playbooksSchema } from '../../core/playbooks';
import { versionParam } from '../routes/detection-rules';
import { noQuery } from '../validation';
import * as playbooks from '../routes/playbooks';
import { timeOrNull } from './answers';
import type { RouteContract } from './contract';
import { guardrailChangeAnswer } from './routes-guardrails';

/** A workspace's playbooks (issue 20): read, replaced by the next version, any version by number. */
export const playbooksAnswer = z
  .object({
    version: z.number().int().meta({ description: '0: no playbook was ever set' }),
    playbooks: playbooksSchema.shape.playbooks,
    updated_at: timeOrNull,
    updated_by: z.string().nullable(),
  })
  .meta({ title: 'PlaybooksVersion' });

const example = {
  version: 2,
  playbooks: [
    {
      id: 'udp-flood',
      name: 'Rate-limit UDP floods to the web front',
      match: { rules: ['traffic_volume'], destinations: ['198.51.100.0/24'] },
      actions: [
        { type: 'flowspec_rate_limit', duration_minutes: 60, rate_bytes_per_second: 12_500_000, protocols: ['udp'], destination_ports: [80, 443] },
        { type: 'webhook' },
      ],
    },
    {
      id: 'blackhole-critical',
      name: 'Blackhole a critical attack',
      match: { severities: ['critical'], destinations: ['198.51.100.0/24'] },
      actions: [{ type: 'blackhole', duration_minutes: 30, communities: ['65535:666'] }],
    },
  ],
};

const json = (description: string) => ({ description, schema: playbooksAnswer });

export const playbookContracts: RouteContract[] = [
  {
    method: 'get', path: '/v1/playbooks', summary: 'The playbooks in force', tag: 'Playbooks', access: 'workspace',
    permission: 'read', query: noQuery, responses: { 200: json('the version in force') },
  },
  {
    method: 'put', path: '/v1/playbooks', summary: 'Replace the playbooks (the next version)', tag: 'Playbooks', access: 'workspace',
    permission: 'playbooks:manage', errors: [409], body: { schema: playbooks.putSchema, example },
    responses: {
      200: json('the version in force after the change'),
      202: { description: 'the change enables a playbook no policy gates and waits for a second person (the workspace asks for four eyes)', schema: guardrailChangeAnswer },
    },
  },
  {
    method: 'get', path: '/v1/playbooks/versions/{version}', summary: 'One version of the playbooks', tag: 'Playbooks', access: 'workspace',
    permission: 'read', query: noQuery, params: { version: versionParam }, responses: { 200: json('that version') },
  },
];
