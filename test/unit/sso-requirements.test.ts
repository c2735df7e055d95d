import { SsoRequirements } from '../../application/identity/sso-requirements';
import { ssoNotRequired, type SsoRequirement } from '../../storage/sso-repo';

/** A store whose reads can be made to fail, as ClickHouse out of reach. */
function storeOf(initial: SsoRequirement) {
  const state = { current: initial, down: false, reads: 0 };
  return {
    state,
    repo: {
      requirement: () => {
        state.reads += 1;
        return state.down ? Promise.reject(new Error('clickhouse down')) : Promise.resolve(state.current);
      },
      putRequirement: (_orgId: string, r: SsoRequirement) => {
        state.current = r;
        return Promise.resolve();
      },
    },
  };
}

function requirementsOver(store: ReturnType<typeof storeOf>, clock: { now: number }) {
  return new SsoRequirements({ repo: store.repo, audit: { append: () => Promise.resolve({} as never) }, withLock: (_name, work) => work(), now: () => clock.now });
}

describe('the single sign-on requirement', () => {
  it('is read from storage at most once per few seconds per workspace', async () => {
    const store = storeOf({ required: true, person_keys_from_sign_in: false, version: 1, updated_at: 1, actor: 'platform-admin' });
    const clock = { now: 0 };
    const requirements = requirementsOver(store, clock);
    expect(await requirements.isRequired('org_a')).toBe(true);
    clock.now = 2_000;
    expect(await requirements.isRequired('org_a')).toBe(true);
    expect(store.state.reads).toBe(1);
  });

  it('applies a change made on this process at once', async () => {
    const store = storeOf(ssoNotRequired);
    const requirements = requirementsOver(store, { now: 0 });
    expect(await requirements.isRequired('org_a')).toBe(false);
    await requirements.set('org_a', 'platform-admin', { required: true });
    expect(await requirements.isRequired('org_a')).toBe(true);
  });

  it('keeps the last answer while storage cannot be read, so keys keep working through an outage', async () => {
    const store = storeOf({ required: true, person_keys_from_sign_in: false, version: 1, updated_at: 1, actor: 'platform-admin' });
    const clock = { now: 0 };
    const requirements = requirementsOver(store, clock);
    await requirements.isRequired('org_a');
    store.state.down = true;
    clock.now = 60_000;
    expect(await requirements.isRequired('org_a')).toBe(true);
  });

  it('fails a workspace it never read while storage cannot be read, rather than guess', async () => {
    const store = storeOf(ssoNotRequired);
    store.state.down = true;
    await expect(requirementsOver(store, { now: 0 }).isRequired('org_b')).rejects.toThrow('clickhouse down');
  });
});
