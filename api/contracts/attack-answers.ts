import { z } from 'zod';
import { attackTypes } from '../../core/detection/classify';
import { trafficClasses } from '../../core/detection/traffic-class';
import { incidentAnswer } from './answers';

/** The attack on an incident (core/detection/incident-attack.ts), as GET /v1/incidents/{id} answers it. */
const rates = z.object({ pps: z.number(), bps: z.number(), fps: z.number() }).meta({ description: 'packets, bits and flows a second' });
const volume = { packets: z.number(), bytes: z.number(), flows: z.number() };

export const attackAnswer = z
  .object({
    type: z.enum(attackTypes),
    vector: z.enum(attackTypes).meta({ description: "the shape's own type (carpet: the shape of the traffic spread over the prefix)" }),
    scope: z.enum(['host', 'prefix']),
    windows: z.number().int().meta({ description: 'windows judged over the threshold during the incident' }),
    peak: rates.meta({ description: 'the highest total rates over those windows' }),
    current: rates.meta({ description: 'the total rates of the latest of them' }),
    peak_window_end: z.string(),
    total: z.object(volume).meta({ description: "the peak window's traffic to the target" }),
    protocols: z.array(z.object({ class: z.enum(trafficClasses), ...volume, share: z.number() })),
    top_sources: z.array(z.object({ address: z.string(), ...volume })),
    top_source_ports: z.array(z.object({ port: z.number().int(), ...volume })),
    top_destination_ports: z.array(z.object({ port: z.number().int(), ...volume })),
    packet_sizes: z.array(z.object({ min: z.number().int(), max: z.number().int(), ...volume })),
    exporters: z.array(z.object({ exporter: z.string(), in_if: z.number().int().nullable(), ...volume })),
  })
  .meta({ title: 'Attack' });

export const incidentWithAttackAnswer = incidentAnswer
  .extend({ attack: attackAnswer.nullable().meta({ description: 'what the rate detectors saw of the attack on its target; null for an incident of another detector' }) })
  .meta({ title: 'IncidentWithAttack' });
