import { KnownWorkspaces } from '../../application/known-workspaces';

function directory(withKeys: string[]) {
  const asked: string[] = [];
  let clock = 0;
  const keys = new Set(withKeys);
  const known = new KnownWorkspaces({ unknownTtlMs: 10_000, maxEntries: 2 }, { keys: { anyOf: (org) => (asked.push(org), Promise.resolve(keys.has(org))) }, now: () => clock });
  return { known, asked, keys, advance: (ms: number) => (clock += ms) };
}

describe('known workspaces', () => {
  test('a workspace with a key exists, and is asked of ClickHouse once', async () => {
    const { known, asked } = directory(['org_a']);
    expect([await known.exists('org_a'), await known.exists('org_a')]).toEqual([true, true]);
    expect(asked).toEqual(['org_a']);
  });

  test('a workspace without a key does not exist, and is asked again only after the unknown entry expires', async () => {
    const { known, asked, keys, advance } = directory([]);
    expect(await known.exists('org_new')).toBe(false);
    keys.add('org_new');
    expect(await known.exists('org_new')).toBe(false);
    advance(10_000);
    expect(await known.exists('org_new')).toBe(true);
    expect(asked).toEqual(['org_new', 'org_new']);
  });

  test('past the bound the least recently asked workspace is dropped and asked again', async () => {
    const { known, asked } = directory(['a', 'b', 'c']);
    for (const org of ['a', 'b', 'c', 'a']) await known.exists(org);
    expect(asked).toEqual(['a', 'b', 'c', 'a']);
  });
});
