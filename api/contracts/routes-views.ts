import { z } from 'zod';
import { viewInputSchema, viewStateSchema } from '../../core/saved-views';
import * as views from '../routes/views';
import { noQuery } from '../validation';
import { time } from './answers';
import type { RouteContract } from './contract';

/** The workspace's saved views of the visualize page (issue 34). */
export const viewAnswer = z
  .object({
    id: z.string(),
    name: z.string(),
    state: viewStateSchema,
    version: z.number().int().meta({ description: 'the view\'s version: 1 when created, one more at each change' }),
    created_at: time,
    updated_at: time,
    created_by: z.string().meta({ description: 'the key id that created it' }),
  })
  .meta({ title: 'SavedView' });

const id = z.string().meta({ description: 'the view id (`vw_…`); one the workspace does not have is 404' });
const example = {
  name: 'Transit by country',
  state: {
    v: 1, filter: "in_if_boundary = 'external' AND dst_as = 13335", dimensions: ['src_country', 'in_if_name'], chart: 'sankey', unit: 'bytes',
    range: { last_seconds: 86_400 }, previous: true, direction: 'in', limit: 10,
  },
};
const json = (description: string) => ({ description, schema: viewAnswer });

export const viewContracts: RouteContract[] = [
  {
    method: 'get', path: '/v1/views', summary: "The workspace's saved views, by name", tag: 'Views', access: 'workspace', permission: 'read',
    query: noQuery, responses: { 200: { description: 'the views', schema: z.object({ data: z.array(viewAnswer) }).meta({ title: 'SavedViews' }) } },
  },
  {
    method: 'post', path: '/v1/views', summary: 'Save a view', tag: 'Views', access: 'workspace', permission: 'views:manage', errors: [409],
    body: { schema: viewInputSchema, example }, responses: { 201: json('the view, version 1') },
  },
  {
    method: 'get', path: '/v1/views/{id}', summary: 'One saved view', tag: 'Views', access: 'workspace', permission: 'read',
    query: noQuery, params: { id }, responses: { 200: json('the view') },
  },
  {
    method: 'put', path: '/v1/views/{id}', summary: 'Change a saved view (its next version)', tag: 'Views', access: 'workspace', permission: 'views:manage',
    params: { id }, errors: [409], body: { schema: views.updateSchema, example: { ...example, version: 1 } }, responses: { 200: json('the view as it now is') },
  },
  {
    method: 'delete', path: '/v1/views/{id}', summary: 'Delete a saved view', tag: 'Views', access: 'workspace', permission: 'views:manage',
    params: { id }, responses: { 200: json('the view as deleted: its last version') },
  },
];
