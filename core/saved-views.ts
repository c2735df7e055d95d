import { z } from 'zod';
import { FilterError } from './analytics/filter/ast';
import { flowFilterCatalog } from './analytics/filter/catalog';
import { readFilter } from './analytics/filter/check';
import { flowUnits } from './analytics/rates';
import { validationError } from './errors';
import { isFlowDimension } from './flow-dimensions';

/**
 * A saved view of the visualize page (issue 34): a name and the view's
 * state, a versioned JSON document (`v: 1`) the console writes and reads
 * back, so a view saved by one release opens in the next (a later shape is
 * `v: 2`, and this module then reads both). Pure: shapes and their checks.
 */
export const maxViewsPerWorkspace = 500;
const day = 86_400;

const rangeSchema = z.union([
  z.object({ last_seconds: z.number().int().min(60).max(366 * day) }).strict(),
  z.object({ from: z.iso.datetime({ offset: true }), to: z.iso.datetime({ offset: true }) }).strict(),
]);

export const viewStateSchema = z
  .object({
    v: z.literal(1),
    filter: z.string().max(4096).default(''),
    dimensions: z.array(z.string().refine(isFlowDimension, 'a flow dimension')).max(3).default([]),
    chart: z.enum(['stacked', 'stacked100', 'lines', 'sankey', 'table']),
    unit: z.enum(flowUnits).default('bytes'),
    range: rangeSchema.meta({ description: '`{last_seconds}` (relative to when the view is opened) or `{from, to}`' }),
    previous: z.boolean().default(false),
    direction: z.enum(['in', 'out', 'both']).default('both').meta({ description: "traffic into, out of, or both ways of the workspace's networks" }),
    bidirectional: z.boolean().default(false).meta({ description: 'the reverse traffic (source and destination swapped) drawn beside' }),
    limit: z.number().int().min(1).max(50).default(10),
    step: z.number().int().min(60).max(31 * day).optional(),
  })
  .strict();
export type ViewState = z.infer<typeof viewStateSchema>;

export const viewInputSchema = z.object({ name: z.string().trim().min(1).max(100), state: viewStateSchema }).strict();
export type ViewInput = z.infer<typeof viewInputSchema>;

/** A version of a saved view; a deleted view's last version says so. */
export interface StoredView {
  id: string;
  version: number;
  name: string;
  state: ViewState;
  deleted: boolean;
  created_at: number;
  updated_at: number;
  created_by: string;
}

/** The filter of a view is the filter language's (core/analytics/filter/): one that would not run is refused when saved, naming where. */
export function checkViewFilter(state: ViewState): void {
  try {
    readFilter(state.filter, flowFilterCatalog);
  } catch (err) {
    if (!(err instanceof FilterError)) throw err;
    throw validationError(`invalid view: ${err.message}`, [{ path: 'state.filter', message: err.details?.[0]?.message ?? err.message }]);
  }
}

/** A stored state read back through the schema: a row this process did not write is no less hostile. */
export function parseStoredState(text: string): ViewState | undefined {
  try {
    const parsed = viewStateSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
