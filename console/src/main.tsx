import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { get, session, type ApiError } from './api';
import './styles.css';
import { asApiError, can, ErrorNote, useLoad, Who, type Me } from './ui';
import { AuditView, ExportersView, KeysView, PendingExportersView } from './views/admin';
import { ApprovalsView } from './views/approvals';
import { AutomationsView } from './views/automations';
import { IncidentsView } from './views/incidents';
import { ReplaysView } from './views/replays';
import { TelemetryView } from './views/telemetry';

/** Views by the hash route; each is shown only to keys whose permissions use it. */
const views: { path: string; label: string; allowed: (me: Me) => boolean }[] = [
  { path: 'incidents', label: 'Incidents', allowed: (me) => can(me, 'read') },
  { path: 'approvals', label: 'Approvals', allowed: (me) => can(me, 'read') },
  { path: 'replays', label: 'Replays', allowed: (me) => can(me, 'read') },
  { path: 'automations', label: 'Automations', allowed: (me) => can(me, 'read') },
  { path: 'telemetry', label: 'Telemetry', allowed: (me) => can(me, 'read') },
  { path: 'exporters', label: 'Exporters', allowed: (me) => can(me, 'exporters:manage') },
  { path: 'exporter-approvals', label: 'Exporter approvals', allowed: (me) => me.kind === 'platform_admin' },
  { path: 'keys', label: 'API keys', allowed: (me) => can(me, 'keys:manage') },
  { path: 'audit', label: 'Audit ledger', allowed: (me) => can(me, 'audit:read') },
];

function useHashRoute(): string[] {
  const parse = () => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  const [route, setRoute] = useState(parse);
  useEffect(() => {
    const onChange = () => setRoute(parse());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

function SignIn({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const submit = (e: Event) => {
    e.preventDefault();
    setBusy(true);
    get('/v1/whoami', { key: key.trim() }).then(
      (me) => { session.signIn(key.trim()); setKey(''); onSignedIn(me); },
      (err: unknown) => { setError(asApiError(err)); setBusy(false); },
    );
  };
  return (
    <main class="signin">
      <h1>nettel console</h1>
      <form onSubmit={submit} autocomplete="off">
        <label for="api-key">API key</label>
        <input id="api-key" type="password" value={key} onInput={(e) => setKey(e.currentTarget.value)} required spellcheck={false} />
        <button type="submit" disabled={busy}>Sign in</button>
      </form>
      <p class="muted">The key is kept in this tab's session storage only, and sent only in the Authorization header.</p>
      {error ? <ErrorNote error={error} retry={() => setError(undefined)} /> : null}
    </main>
  );
}

function Shell({ me, onSignOut }: { me: Me; onSignOut: () => void }) {
  const [view = 'incidents', id] = useHashRoute();
  const config = useLoad(() => get('/v1/console-config', { key: null }), []);
  const visible = views.filter((v) => v.allowed(me));
  const current = visible.find((v) => v.path === view) ?? visible[0];
  const temporalUi = config.data?.temporal_ui_url;
  return (
    <>
      <header>
        <span class="brand">nettel</span>
        <nav aria-label="Views">
          {visible.map((v) => <a href={`#/${v.path}`} key={v.path} aria-current={v === current ? 'page' : undefined}>{v.label}</a>)}
          {temporalUi && can(me, 'replays:run') ? <a href={temporalUi} target="_blank" rel="noopener noreferrer">Temporal UI</a> : null}
        </nav>
        <span class="who">
          <Who person={me.person} credential={me.key_id} /> {me.kind === 'platform_admin' ? 'platform admin' : me.roles.join(', ')}
          <button type="button" class="secondary" onClick={onSignOut}>Sign out</button>
        </span>
      </header>
      <main>{current ? <View name={current.path} id={id} me={me} /> : <p>This key may not read any view of the console.</p>}</main>
    </>
  );
}

function View({ name, id, me }: { name: string; id?: string; me: Me }) {
  switch (name) {
    case 'approvals': return <ApprovalsView me={me} />;
    case 'replays': return <ReplaysView id={id} />;
    case 'automations': return <AutomationsView me={me} />;
    case 'telemetry': return <TelemetryView />;
    case 'exporters': return <ExportersView canManage={can(me, 'exporters:manage')} />;
    case 'exporter-approvals': return <PendingExportersView />;
    case 'keys': return <KeysView />;
    case 'audit': return <AuditView />;
    default: return <IncidentsView me={me} id={id} />;
  }
}

function App() {
  const [me, setMe] = useState<Me>();
  const stored = session.key();
  // A key kept from earlier in this tab is checked again; a refused one signs out.
  const check = useLoad(() => (stored && !me ? get('/v1/whoami') : Promise.resolve(undefined)), [stored]);
  useEffect(() => {
    if (check.data) setMe(check.data);
    if (check.error?.status === 401) session.signOut();
  }, [check.data, check.error]);
  const signOut = () => { session.signOut(); setMe(undefined); };
  if (me) return <Shell me={me} onSignOut={signOut} />;
  if (stored && check.loading) return <main><p role="status">Signing in…</p></main>;
  if (stored && check.error && check.error.status !== 401) return <main><ErrorNote error={check.error} retry={check.reload} /></main>;
  return <SignIn onSignedIn={setMe} />;
}

render(<App />, document.getElementById('app')!);
