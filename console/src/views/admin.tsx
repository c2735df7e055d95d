import { useState } from 'preact/hooks';
import { del, get, post, type ApiError } from '../api';
import { asApiError, ErrorNote, Section, Status, useLoad, when, Who } from '../ui';

type Role = 'admin' | 'operator' | 'analyst' | 'approver' | 'ingest';

function useAction(after: () => void) {
  const [error, setError] = useState<ApiError>();
  const run = (work: () => Promise<unknown>) => {
    work().then(() => { setError(undefined); after(); }, (err: unknown) => setError(asApiError(err)));
  };
  return { error, run };
}

/** How an active exporter's SNMP agent last answered: a failing agent shows since when and why (its last interface names are kept). */
function SnmpAgentCell({ id }: { id: string }) {
  const snmp = useLoad(() => get('/v1/exporters/{id}/snmp', { params: { id } }), [id]);
  const agent = snmp.data?.agent;
  if (!agent) return <span class="muted">{snmp.data ? 'no agent' : ''}</span>;
  const why = agent.status === 'failing' ? `failing since ${agent.failing_since ?? '?'}: ${agent.error ?? ''}` : `${agent.interfaces} interfaces`;
  return <span title={why}><Status value={agent.status} /> {agent.status === 'failing' ? `since ${agent.failing_since ?? '?'}` : `${agent.interfaces} interfaces`}</span>;
}

export function ExportersView({ canManage }: { canManage: boolean }) {
  const list = useLoad(() => get('/v1/exporters', { query: { limit: 100 } }), []);
  const action = useAction(list.reload);
  const [address, setAddress] = useState('');
  const [name, setName] = useState('');
  return (
    <Section title="Exporters">
      {canManage ? (
        <form class="filters" onSubmit={(e) => { e.preventDefault(); action.run(() => post('/v1/exporters', { body: { address, name: name || undefined } })); }}>
          <label>Address<input value={address} onInput={(e) => setAddress(e.currentTarget.value)} required /></label>
          <label>Name<input value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
          <button type="submit">Register exporter</button>
        </form>
      ) : null}
      <p class="muted">A new exporter is pending until the platform admin approves it; only an active exporter's flows are stored.</p>
      {action.error ? <ErrorNote error={action.error} /> : null}
      {list.error ? <ErrorNote error={list.error} retry={list.reload} /> : null}
      <table>
        <thead><tr><th scope="col">Address</th><th scope="col">Name</th><th scope="col">Sampling</th><th scope="col">Status</th><th scope="col">SNMP agent</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
        <tbody>
          {(list.data?.data ?? []).map((x) => (
            <tr key={x.id}>
              <td>{x.address}</td><td>{x.name}</td><td>{x.sampling_rate ?? 'reported'}</td><td><Status value={x.status} /></td>
              <td>{x.status === 'active' ? <SnmpAgentCell id={x.id} /> : null}</td>
              <td>{canManage && (x.status === 'active' || x.status === 'pending') ? <button type="button" class="secondary" onClick={() => action.run(() => del('/v1/exporters/{id}', { params: { id: x.id } }))}>{x.status === 'pending' ? 'Withdraw' : 'Delete'}</button> : null}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}

/** The platform admin's queue: every workspace's pending registrations, each approved or rejected here. */
export function PendingExportersView() {
  const list = useLoad(() => get('/v1/exporters/pending', { query: { limit: 100 } }), []);
  const action = useAction(list.reload);
  const decide = (decision: 'approve' | 'reject', id: string) =>
    action.run(() => post(decision === 'approve' ? '/v1/exporters/{id}/approve' : '/v1/exporters/{id}/reject', { params: { id } }));
  return (
    <Section title="Exporters awaiting approval">
      <p class="muted">Oldest first, from every workspace. An approval routes the address's flows to the workspace; it is refused while another workspace's exporter is active at that address.</p>
      {action.error ? <ErrorNote error={action.error} /> : null}
      {list.error ? <ErrorNote error={list.error} retry={list.reload} /> : null}
      <table>
        <thead><tr><th scope="col">Address</th><th scope="col">Workspace</th><th scope="col">Name</th><th scope="col">Sampling</th><th scope="col">Registered</th><th scope="col">Active at the address</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
        <tbody>
          {(list.data?.data ?? []).map((x) => (
            <tr key={x.id}>
              <td>{x.address}</td><td><code>{x.org_id}</code></td><td>{x.name}</td><td>{x.sampling_rate ?? 'reported'}</td><td>{when(x.created_at)}</td>
              <td>{x.address_active_for ? <code>{x.address_active_for.org_id}</code> : '—'}</td>
              <td>
                <button type="button" disabled={x.address_active_for !== null} onClick={() => decide('approve', x.id)}>Approve</button>
                <button type="button" class="secondary" onClick={() => decide('reject', x.id)}>Reject</button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}

export function KeysView() {
  const list = useLoad(() => get('/v1/api-keys', { query: { limit: 100 } }), []);
  const [role, setRole] = useState<Role>('analyst');
  const [name, setName] = useState('');
  const [minted, setMinted] = useState<string>();
  const action = useAction(list.reload);
  const mint = () => action.run(() => post('/v1/api-keys', { body: { role, name: name || undefined } }).then((k) => setMinted(k.key)));
  return (
    <Section title="API keys">
      <form class="filters" onSubmit={(e) => { e.preventDefault(); mint(); }}>
        <label>Role
          <select value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            {['admin', 'operator', 'analyst', 'approver', 'ingest'].map((r) => <option value={r}>{r}</option>)}
          </select>
        </label>
        <label>Name<input value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
        <button type="submit">Create key</button>
      </form>
      {minted ? <p class="note" role="status">New key, shown once: <code class="secret">{minted}</code></p> : null}
      {action.error ? <ErrorNote error={action.error} /> : null}
      {list.error ? <ErrorNote error={list.error} retry={list.reload} /> : null}
      <table>
        <thead><tr><th scope="col">Key</th><th scope="col">Name</th><th scope="col">Owner</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Expires</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
        <tbody>
          {(list.data?.data ?? []).map((k) => (
            <tr key={k.key_id}>
              <td><code>{k.key_id}</code></td><td>{k.name}</td><td>{k.owner === 'service' ? 'service' : <Who person={k.owner} credential={k.key_id} />}</td><td>{k.role}</td><td><Status value={k.status} /></td><td>{when(k.expires_at)}</td>
              <td>{k.status === 'active' ? <button type="button" class="secondary" onClick={() => action.run(() => del('/v1/api-keys/{id}', { params: { id: k.key_id } }))}>Revoke</button> : null}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}

export function AuditView() {
  const verify = useLoad(() => get('/v1/audit/verify'), []);
  const list = useLoad(() => get('/v1/audit', { query: { limit: 100 } }), []);
  const v = verify.data;
  return (
    <Section title="Audit ledger">
      {verify.error ? <ErrorNote error={verify.error} retry={verify.reload} /> : null}
      {v ? (
        <p class={v.valid ? 'ok' : 'error'} role="status" data-testid="audit-verify">
          {v.valid ? `Chain verified: ${v.entries} entries, unbroken.` : `Chain broken at entry ${v.broken_at ?? '?'}: ${v.reason ?? ''}`}
        </p>
      ) : null}
      {list.error ? <ErrorNote error={list.error} retry={list.reload} /> : null}
      <table>
        <thead><tr><th scope="col">Seq</th><th scope="col">At</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Hash</th></tr></thead>
        <tbody>
          {(list.data?.data ?? []).map((e) => (
            <tr key={e.seq}><td>{e.seq}</td><td>{when(e.at)}</td><td><Who person={e.actor_person} credential={e.actor} /></td><td>{e.action}</td><td><code>{e.target}</code></td><td><code>{e.hash.slice(0, 12)}…</code></td></tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}
