import { z } from 'zod';
import { enrichedTextDimensions } from '../../core/flow-dimensions';

/** A flow's enrichment as the API answers it (docs/enrichment.md): stored countries and network labels, AS names resolved when read. */
export const enrichedFlowFields = {
  src_as_name: z.string().nullable().meta({ description: 'the name of src_as, resolved when read; null where none is known' }),
  dst_as_name: z.string().nullable().meta({ description: 'the name of dst_as, resolved when read; null where none is known' }),
  ...Object.fromEntries(
    enrichedTextDimensions.map((d) => [d, z.string().nullable().meta({ description: `${d.replace(/_/g, ' ')}; null where no database or network of the workspace knows it` })]),
  ),
  enrichment_version: z.number().int().meta({ description: 'the address databases that enriched the flow (0: stored before enrichment)' }),
};
