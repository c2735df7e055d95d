import { z } from 'zod';
import { networkSchema } from '../../core/enrichment/networks';
import { versionParam } from '../routes/detection-rules';
import * as networks from '../routes/networks';
import { noQuery } from '../validation';
import { timeOrNull } from './answers';
import type { RouteContract } from './contract';

/** A workspace's own networks (issue 33): read, replaced by the next version, any version by number. */
export const networksAnswer = z
  .object({
    version: z.number().int().meta({ description: '0: no network was ever set' }),
    networks: z.array(networkSchema),
    updated_at: timeOrNull,
    updated_by: z.string().nullable(),
  })
  .meta({ title: 'NetworksVersion' });

const example = {
  version: 1,
  networks: [
    { prefix: '198.51.100.0/24', name: 'web-front', role: 'servers', site: 'par1', tenant: 'shop', tags: ['prod'] },
    { prefix: '2001:db8:100::/48', name: 'web-front-v6', role: 'servers', site: 'par1', tenant: 'shop', tags: [] },
  ],
};

const json = (description: string) => ({ description, schema: networksAnswer });

export const networkContracts: RouteContract[] = [
  {
    method: 'get', path: '/v1/networks', summary: "The workspace's networks in force", tag: 'Networks', access: 'workspace',
    permission: 'read', query: noQuery, responses: { 200: json('the version in force') },
  },
  {
    method: 'put', path: '/v1/networks', summary: "Replace the workspace's networks (the next version)", tag: 'Networks', access: 'workspace',
    permission: 'rules:manage', errors: [409], body: { schema: networks.putSchema, example },
    responses: { 200: json('the version in force after the change') },
  },
  {
    method: 'get', path: '/v1/networks/versions/{version}', summary: 'One version of the networks', tag: 'Networks', access: 'workspace',
    permission: 'read', query: noQuery, params: { version: versionParam }, responses: { 200: json('that version') },
  },
];
