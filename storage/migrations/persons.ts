import { columnsAdded, type Migration } from './migration';

/**
 * Persons (issue 21). Keys have owners: the person who minted them, or
 * `service` for machine keys; keys stored before carry '' and read as a
 * person of their own (storage/keys-repo.ts ownerOfKey), so nothing is
 * rewritten. Replays and automation runs name the person who requested them
 * (JSON); those stored before carry '' and read as their requesting key's
 * person (core/person.ts storedPerson).
 */
const keyOwners = ["owner_subject String DEFAULT ''", "owner_name String DEFAULT ''", "owner_email String DEFAULT ''"];
const requester = ["requested_by_person String DEFAULT ''"];

export const personMigrations: Migration[] = [
  { id: '0022_key_owners', ...columnsAdded('api_keys', keyOwners) },
  { id: '0023_replay_requester_person', ...columnsAdded('replays', requester) },
  { id: '0024_automation_requester_person', ...columnsAdded('automations', requester) },
];
