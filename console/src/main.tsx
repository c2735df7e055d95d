import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { get, post, session as apiSession, type ApiError } from './api';
import { SignIn, WorkspacePicker, type ConsoleSession, type SignInNotice } from './sign-in';
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
  { path: 'visualize', label: 'Visualize', allowed: (me) => can(me, 'read') },
  { path: 'exporters', label: 'Exporters', allowed: (me) => can(me, 'exporters:manage') },
  { path: 'exporter-approvals', label: 'Exporter approvals', allowed: (me) => me.kind === 'platform_admin' },
  { path: 'keys', label: 'API keys', allowed: (me) => can(me, 'keys:manage') },
  { path: 'audit', label: 'Audit ledger', allowed: (me) => can(me, 'audit:read') },
];

function useHashRoute(): string[] {
  // A view's own state may follow its path as a query (`#/visualize?v=1&…`): the route is the path alone.
  const parse = () => location.hash.replace(/^#\/?/, '').split('?')[0]!.split('/').filter(Boolean);
  const [route, setRoute] = useState(parse);
  useEffect(() => {
    const onChange = () => setRoute(parse());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

/** Who is signed in, as people read it: the person's name, or the key's id. */
function WhoLine({ session, me, onChosen, onSignOut }: { session: ConsoleSession; me: Me; onChosen: (s: ConsoleSession) => void; onSignOut: () => void }) {
  return (
    <span class="who">
      <Who person={session.person ?? me.person} credential={me.key_id} />{' '}
      {session.workspaces.length > 1 ? <WorkspacePicker session={session} onChosen={onChosen} compact /> : null} {me.kind === 'platform_admin' ? 'platform admin' : me.roles.join(', ')}
      <button type="button" class="secondary" onClick={onSignOut}>Sign out</button>
    </span>
  );
}

function Shell({ session, me, onChosen, onSignOut }: { session: ConsoleSession; me: Me; onChosen: (s: ConsoleSession) => void; onSignOut: () => void }) {
  const [view = 'incidents', id] = useHashRoute();
  const config = useLoad(() => get('/v1/console-config'), []);
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
        <WhoLine session={session} me={me} onChosen={onChosen} onSignOut={onSignOut} />
      </header>
      <main>{current ? <View name={current.path} id={id} me={me} /> : <p>This sign-in may not read any view of the console.</p>}</main>
      <DataCredits />
    </>
  );
}

/** The attribution the address databases' licences ask for (docs/enrichment.md, "Data sources and licences"). */
function DataCredits() {
  return (
    <footer class="credits">
      AS and country data: <a href="https://github.com/sapics/ip-location-db">ip-location-db</a> (NRO, RouteViews; CC BY 4.0),{' '}
      <a href="https://db-ip.com/">IP Geolocation by DB-IP</a> (CC BY 4.0).
    </footer>
  );
}

function View({ name, id, me }: { name: string; id?: string; me: Me }) {
  switch (name) {
    case 'approvals': return <ApprovalsView me={me} />;
    case 'replays': return <ReplaysView id={id} />;
    case 'automations': return <AutomationsView me={me} />;
    case 'telemetry': return <TelemetryView />;
    case 'visualize': return <LazyVisualize />;
    case 'exporters': return <ExportersView canManage={can(me, 'exporters:manage')} />;
    case 'exporter-approvals': return <PendingExportersView />;
    case 'keys': return <KeysView />;
    case 'audit': return <AuditView />;
    default: return <IncidentsView me={me} id={id} />;
  }
}

/** The visualize page, loaded when first opened: its charting library stays out of the first view's bundle. */
function LazyVisualize() {
  const [view, setView] = useState<{ C: () => preact.JSX.Element }>();
  const [failed, setFailed] = useState<ApiError>();
  useEffect(() => {
    import('./views/visualize/visualize').then((m) => setView({ C: m.VisualizeView }), (err: unknown) => setFailed(asApiError(err)));
  }, []);
  if (failed) return <ErrorNote error={failed} retry={() => location.reload()} />;
  return view ? <view.C /> : <p role="status">Loading…</p>;
}

/** A sign-in that failed at the provider's end comes back as `#/sign-in-failed?reason=…` (see /auth/callback). */
function signInFailure(): SignInNotice | undefined {
  const match = /^#\/sign-in-failed\?reason=(.*)$/.exec(location.hash);
  return match ? { title: 'The sign-in did not finish.', text: decodeURIComponent(match[1]!) } : undefined;
}

const sessionEnded: SignInNotice = { title: 'Your session ended.', text: 'It timed out, or was signed out elsewhere: sign in again.' };

function App() {
  const [session, setSession] = useState<ConsoleSession>();
  const [me, setMe] = useState<Me>();
  const [error, setError] = useState<ApiError>();
  // The cookie (if any) is the browser's, out of the page's reach: ask the service whether it holds a session, then whose.
  const check = useLoad(async () => ((await get('/auth/config')).signed_in ? get('/auth/session') : undefined), []);
  const adopt = (s: ConsoleSession) => {
    apiSession.adopt(s.csrf_token);
    setSession(s);
    setMe(undefined);
    if (s.kind === 'person' && !s.workspace) return;
    get('/v1/whoami').then(setMe, (err: unknown) => setError(asApiError(err)));
  };
  const [ended, setEnded] = useState(false);
  useEffect(() => {
    if (check.data) adopt(check.data);
  }, [check.data]);
  useEffect(() => apiSession.whenEnded(() => { setSession(undefined); setMe(undefined); setEnded(true); }), []);
  const signOut = () => {
    post('/auth/logout', { body: {} }).then(
      (out) => {
        apiSession.forget();
        if (out.logout_url) location.assign(out.logout_url);
        else { setSession(undefined); setMe(undefined); }
      },
      (err: unknown) => setError(asApiError(err)),
    );
  };
  if (error) return <main><ErrorNote error={error} retry={() => location.reload()} /></main>;
  if (session && me) return <Shell session={session} me={me} onChosen={adopt} onSignOut={signOut} />;
  if (session?.kind === 'person' && !session.workspace) return <WorkspacePicker session={session} onChosen={adopt} />;
  if ((check.loading && !ended) || session) return <main><p role="status">Signing in…</p></main>;
  if (check.error && check.error.status !== 401) return <main><ErrorNote error={check.error} retry={check.reload} /></main>;
  return <SignIn onSignedIn={(s) => { setEnded(false); adopt(s); }} notice={ended ? sessionEnded : signInFailure()} />;
}

render(<App />, document.getElementById('app')!);
