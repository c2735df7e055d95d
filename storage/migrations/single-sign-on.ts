import { columnsAdded, type Migration } from './migration';

/**
 * Single sign-on, the same DDL on every generation (Strings, UInt64 and epoch
 * milliseconds in Int64, which 18.16 has): each workspace's group mappings,
 * one immutable row per version (core/group-mappings.ts), and whether the
 * platform admin requires single sign-on of its people, versioned rows where
 * the highest version wins.
 */
export const singleSignOnMigrations: Migration[] = [
  {
    id: '0026_single_sign_on',
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.sso_group_mappings (
        org_id String, version UInt64, mappings String, created_at Int64, actor String
      ) ENGINE = ReplacingMergeTree ORDER BY (org_id, version)`,
      `CREATE TABLE IF NOT EXISTS ${db}.sso_requirements (
        org_id String, required UInt8, version UInt64, updated_at Int64, actor String
      ) ENGINE = ReplacingMergeTree(version) ORDER BY org_id`,
    ],
  },
  // Issue 32: a workspace may require that keys owned by a person come from that person's own sign-in; rows stored before require nothing new.
  { id: '0027_sso_person_keys_from_sign_in', ...columnsAdded('sso_requirements', ['person_keys_from_sign_in UInt8 DEFAULT 0']) },
];
