import { columnsAdded, type Migration, type MigrationContext } from './migration';

/**
 * Enrichment (docs/enrichment.md). The flows gain the columns enrichment
 * stores: countries, the workspace's network labels and the id of the
 * address databases that enriched them (src_as and dst_as exist already).
 * Rows stored before read as empty: '' and 0, the columns' defaults.
 * `enrichment_versions` says what each id stands for; `as_names` holds the
 * AS names reads resolve, the newest load of an AS winning, so a renamed AS
 * needs no rewrite of stored flows.
 */
const flowColumns = ({ dialect: d }: MigrationContext): string[] => [
  ...['src_country', 'dst_country'].map((c) => `${c} ${d.labelType} ${d.codec('ZSTD(1)')}`),
  ...['name', 'role', 'site', 'tenant'].flatMap((l) => [`src_net_${l} ${d.labelType} ${d.codec('ZSTD(1)')}`, `dst_net_${l} ${d.labelType} ${d.codec('ZSTD(1)')}`]),
  `enrichment_version UInt32 ${d.codec('ZSTD(1)')}`,
];

function flowsEnriched(): Migration {
  return {
    id: '0040_flow_enrichment',
    statements: (ctx) => columnsAdded('flows', flowColumns(ctx)).statements(ctx),
    run: (ch, ctx) => columnsAdded('flows', flowColumns(ctx)).run!(ch, ctx),
  };
}

export const enrichmentMigrations: Migration[] = [
  flowsEnriched(),
  {
    id: '0041_enrichment_tables',
    // Same DDL on both generations: Strings, UInt32 and epoch milliseconds in Int64.
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.enrichment_versions (
        id UInt32, country_db String, as_db String, loaded_at Int64
      ) ENGINE = ReplacingMergeTree(loaded_at) ORDER BY id`,
      `CREATE TABLE IF NOT EXISTS ${db}.as_names (
        asn UInt32, name String, as_db String, loaded_at Int64
      ) ENGINE = ReplacingMergeTree(loaded_at) ORDER BY (asn, as_db)`,
    ],
  },
  {
    id: '0042_workspace_networks',
    // A workspace's own networks, one immutable row per version of the document (as detection rules).
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.workspace_networks (
        org_id String, version UInt64, networks String, created_at Int64, actor String
      ) ENGINE = ReplacingMergeTree ORDER BY (org_id, version)`,
    ],
  },
];
