import { z } from 'zod';
import { segment, time } from './answers';

/**
 * The analysts' top-N and series answers (issue 34): units, the previous
 * period, a sankey's rows (a top-N by two or three dimensions), completion.
 */
const resolution = z.enum(['1h', '5m', '1m', 'raw']);
const unit = z.enum(['bytes', 'packets', 'flows']).optional().meta({ description: 'with unit=: what `rate` counts a second' });
const previousRange = z.object({ from: time, to: time }).meta({ description: 'with previous=true: the period just before, as long as the range' });

export const topAnswer = z
  .object({
    data: z.array(
      z.record(z.string(), z.union([z.string(), z.number(), z.null()])).meta({
        description:
          'a field per dimension (an absent exporter null), then the metric(s) and flows; with unit= `rate` (the unit per second over the range); ' +
          'with previous=true `previous_<metric>` (and `previous_rate`) of the same key. Two or three `by` dimensions: one row per sankey path',
      }),
    ),
    unit,
    resolution,
    segments: z.array(segment),
    previous_range: previousRange.optional(),
  })
  .meta({ title: 'FlowTop' });

const volumes = {
  bps: z.number(), pps: z.number(), bytes: z.number(), packets: z.number(),
  fps: z.number().optional().meta({ description: 'with unit=: flows per second' }),
  flows: z.number().optional().meta({ description: 'with unit=: flows in the step' }),
  rate: z.number().optional().meta({ description: 'with unit=: the unit per second' }),
};

export const flowSeriesAnswer = z
  .object({
    step: z.number().int(),
    unit,
    resolution,
    segments: z.array(segment),
    previous_range: previousRange.optional(),
    series: z.array(
      z.object({
        key: z
          .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
          .nullable()
          .meta({ description: 'the split_by values (an absent exporter null), `{other: true}` for the rest; null without split_by' }),
        points: z.array(z.object({ t: time, ...volumes })),
        previous: z
          .array(z.object({ t: time, t_previous: time, ...volumes }))
          .optional()
          .meta({ description: "with previous=true: the previous period's points, the i-th beside the i-th current step (`t` the current step's)" }),
      }),
    ),
  })
  .meta({ title: 'FlowSeries' });

export const completionAnswer = z
  .object({
    items: z.array(
      z.object({
        value: z.string().meta({ description: 'a dimension name, a keyword, or a value as stored (a string value is quoted when written in a filter)' }),
        label: z.string().meta({ description: "what to show: a dimension's type, a value's name (an AS's), or the value itself" }),
        kind: z.enum(['dimension', 'keyword', 'value']),
      }),
    ),
  })
  .meta({ title: 'FlowCompletion' });
