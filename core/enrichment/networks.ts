import { z } from 'zod';
import { networkLabelPattern } from '../flow-dimensions';
import { parseAddressRange } from '../flow-query';
import { PrefixTable } from '../prefix-table';

/** At most this many networks in a workspace's document. */
export const maxNetworks = 10_000;
const label = z.string().regex(networkLabelPattern, 'letters, digits, spaces or ._:/@+- (1-64)');
const optionalLabel = z.union([z.literal(''), label]).default('');

/**
 * A workspace's own network: a prefix (IPv4 or IPv6 CIDR) and the labels its
 * addresses take, the net dimensions of core/flow-dimensions.ts. Tags are
 * kept with the document for the workspace's own use; they label no flow.
 */
export const networkSchema = z
  .object({
    prefix: z.string().max(64).refine((p) => p.includes('/') && parseAddressRange(p) !== undefined, 'an IPv4 or IPv6 prefix in CIDR notation'),
    name: label,
    role: optionalLabel,
    site: optionalLabel,
    tenant: optionalLabel,
    tags: z.array(label).max(16).default([]),
  })
  .strict();
export type Network = z.output<typeof networkSchema>;

/** The document a workspace edits whole: its networks, no prefix twice (as its first address and length). */
export const networksSchema = z
  .object({ networks: z.array(networkSchema).max(maxNetworks) })
  .strict()
  .superRefine((doc, ctx) => {
    const seen = new Map<string, number>();
    doc.networks.forEach((n, i) => {
      const key = `${parseAddressRange(n.prefix)?.first ?? ''}/${n.prefix.split('/')[1] ?? ''}`;
      const before = seen.get(key);
      if (before !== undefined) ctx.addIssue({ code: 'custom', path: ['networks', i, 'prefix'], message: `the same prefix as networks[${before}]` });
      else seen.set(key, i);
    });
  });
export type Networks = z.output<typeof networksSchema>;

/** A version of a workspace's networks; version 0, none, was never stored. */
export interface VersionedNetworks {
  version: number;
  networks: Network[];
  created_at: number;
  actor: string;
}

export const noNetworks: VersionedNetworks = { version: 0, networks: [], created_at: 0, actor: '' };

export type NetworkLabels = Pick<Network, 'name' | 'role' | 'site' | 'tenant'>;

/**
 * A workspace's networks, by prefix: the labels of the most specific network
 * holding an address (core/prefix-table.ts).
 */
export class NetworkTable extends PrefixTable<NetworkLabels> {
  constructor(networks: readonly Network[]) {
    super(networks.map((n) => ({ prefix: n.prefix, value: { name: n.name, role: n.role, site: n.site, tenant: n.tenant } })));
  }
}
