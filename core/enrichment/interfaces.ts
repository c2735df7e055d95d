import { z } from 'zod';
import type { InterfaceAttributes } from './classifier';

/**
 * What is known of an exporter's interfaces, and how to ask its SNMP agent.
 * The numeric OIDs polled (no MIB files are read): ifName, ifAlias (the
 * description an operator sets), ifHighSpeed (Mbit/s) of IF-MIB's ifXTable,
 * and ifDescr of the ifTable for agents without ifXTable.
 */
export const interfaceOids = {
  name: '1.3.6.1.2.1.31.1.1.1.1',
  alias: '1.3.6.1.2.1.31.1.1.1.18',
  highSpeed: '1.3.6.1.2.1.31.1.1.1.15',
  descr: '1.3.6.1.2.1.2.2.1.2',
} as const;

export const maxInterfaceText = 255;
/** The most interfaces kept for one exporter (a chassis with many line cards stays well below). */
export const maxInterfacesPerExporter = 10_000;

const text = z.string().max(maxInterfaceText);
export const staticInterfaceSchema = z
  .object({
    index: z.number().int().min(0).max(4_294_967_295),
    name: text.default(''),
    description: text.default(''),
    speed: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
  })
  .strict();
export const staticInterfacesSchema = z
  .array(staticInterfaceSchema)
  .max(maxInterfacesPerExporter)
  .refine((list) => new Set(list.map((i) => i.index)).size === list.length, 'an interface index is given twice');

const secret = z.string().min(1).max(256);
const port = z.number().int().min(1).max(65_535).default(161);
/** How to reach an exporter's agent, with its secrets, as an operator gives it. */
export const snmpSettingsSchema = z.discriminatedUnion('version', [
  z.object({ version: z.literal('2c'), port, community: secret }).strict(),
  z
    .object({
      version: z.literal('3'),
      port,
      user: z.string().min(1).max(64),
      auth_protocol: z.enum(['sha', 'sha256', 'sha512']),
      auth_key: z.string().min(8).max(256),
      priv_protocol: z.enum(['aes', 'aes256b', 'aes256r']),
      priv_key: z.string().min(8).max(256),
    })
    .strict(),
]);
export type SnmpSettings = z.infer<typeof snmpSettingsSchema>;

/** The agent's settings without their secrets: what storage keeps in the clear and the API answers. */
export type SnmpPublic =
  | { version: '2c'; port: number }
  | { version: '3'; port: number; user: string; auth_protocol: string; priv_protocol: string };

export function publicPart(s: SnmpSettings): SnmpPublic {
  if (s.version === '2c') return { version: '2c', port: s.port };
  return { version: '3', port: s.port, user: s.user, auth_protocol: s.auth_protocol, priv_protocol: s.priv_protocol };
}

/** The secrets of the settings, sealed as one JSON value (core/secret-box.ts). */
export function secretPart(s: SnmpSettings): Record<string, string> {
  return s.version === '2c' ? { community: s.community } : { auth_key: s.auth_key, priv_key: s.priv_key };
}

/** An exporter's enrichment settings: its agent (secrets sealed), and its static interfaces, which win over the agent's. */
export interface ExporterSnmp {
  org_id: string;
  exporter_id: string;
  snmp: (SnmpPublic & { sealed: string }) | null;
  interfaces: InterfaceAttributes[];
  updated_at: number;
  actor: string;
  version: number;
}

/** One interface as stored: its attributes, where they came from, and its classification. */
export interface InterfaceRecord extends InterfaceAttributes {
  source: 'snmp' | 'static';
  boundary: string;
  connectivity: string;
  provider: string;
  rules_version: number;
}

/** The agent's interfaces with the static ones over them: a static interface wins for its index. */
export function mergeInterfaces(polled: readonly InterfaceAttributes[], statics: readonly InterfaceAttributes[]) {
  const byIndex = new Map<number, InterfaceAttributes & { source: 'snmp' | 'static' }>();
  const pick = (i: InterfaceAttributes) => ({ index: i.index, name: i.name, description: i.description, speed: i.speed });
  for (const i of polled) byIndex.set(i.index, { ...pick(i), source: 'snmp' });
  for (const i of statics) byIndex.set(i.index, { ...pick(i), source: 'static' });
  return [...byIndex.values()].sort((a, b) => a.index - b.index);
}

/** The attributes an agent's walk gave, by OID suffix (the ifIndex); ifAlias is the description, ifDescr stands in for a missing ifName. */
export function interfacesOfWalk(walk: { name: Map<number, string>; alias: Map<number, string>; highSpeed: Map<number, number>; descr: Map<number, string> }): InterfaceAttributes[] {
  const indexes = new Set([...walk.name.keys(), ...walk.alias.keys(), ...walk.highSpeed.keys(), ...walk.descr.keys()]);
  return [...indexes]
    .sort((a, b) => a - b)
    .slice(0, maxInterfacesPerExporter)
    .map((index) => ({
      index,
      name: (walk.name.get(index) || walk.descr.get(index) || '').slice(0, maxInterfaceText),
      description: (walk.alias.get(index) ?? '').slice(0, maxInterfaceText),
      speed: walk.highSpeed.get(index) ?? 0,
    }));
}
