import type { Migration } from './migration';

/** Automation runs: versioned rows (the workflow's step), the highest version wins. */
export const automationMigrations: Migration[] = [
  {
    id: '0021_automations',
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.automations (
        org_id String, automation_id String, incident_id String, playbook_id String, playbook_version UInt64,
        status String, requested_by String, requested_at Int64, updated_at Int64, approvals String, actions String,
        error String, decision_deadline Int64, approval_policies String, version UInt64
      ) ENGINE = ReplacingMergeTree(version) ORDER BY (org_id, automation_id)`,
    ],
  },
];
