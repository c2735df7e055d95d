import { useState } from 'preact/hooks';
import { get, post, type ApiError } from './api';
import type { components } from './schema';
import { asApiError, ErrorNote, useLoad } from './ui';

export type ConsoleSession = components['schemas']['ConsoleSession'];

/**
 * Sign-in: single sign-on at the organisation's OpenID provider where the
 * service is configured for it (a plain link: the browser goes to
 * /auth/login, the provider, and back), or an API key, given once and
 * exchanged for a session cookie, never kept by the page.
 */
/** Why the sign-in page is shown again, when it is: a sign-in that failed, or a session that ended. */
export interface SignInNotice {
  title: string;
  text: string;
}

export function SignIn({ onSignedIn, notice }: { onSignedIn: (session: ConsoleSession) => void; notice?: SignInNotice }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const options = useLoad(() => get('/auth/config'), []);
  const submit = (e: Event) => {
    e.preventDefault();
    setBusy(true);
    post('/auth/key-session', { body: { key: key.trim() } }).then(
      (session) => { setKey(''); onSignedIn(session); },
      (err: unknown) => { setError(asApiError(err)); setBusy(false); },
    );
  };
  return (
    <main class="signin">
      <h1>nettel console</h1>
      {notice ? <div class="error" role="alert"><strong>{notice.title}</strong> <span>{notice.text}</span></div> : null}
      {options.data?.single_sign_on ? (
        <p><a class="button" href="/auth/login">Sign in with single sign-on</a></p>
      ) : null}
      <form onSubmit={submit} autocomplete="off">
        <label for="api-key">API key</label>
        <input id="api-key" type="password" value={key} onInput={(e) => setKey(e.currentTarget.value)} required spellcheck={false} />
        <button type="submit" disabled={busy}>Sign in</button>
      </form>
      <p class="muted">The key is sent once to open a session; the page keeps neither the key nor the session, which lives in an HttpOnly cookie.</p>
      {error ? <ErrorNote error={error} retry={() => setError(undefined)} /> : null}
    </main>
  );
}

/** The workspaces a person holds roles in, to pick the one the session acts in. */
export function WorkspacePicker({ session, onChosen, compact }: { session: ConsoleSession; onChosen: (session: ConsoleSession) => void; compact?: boolean }) {
  const [error, setError] = useState<ApiError>();
  const choose = (orgId: string) => {
    post('/auth/workspace', { body: { org_id: orgId } }).then(onChosen, (err: unknown) => setError(asApiError(err)));
  };
  if (compact) {
    return (
      <select aria-label="Workspace" value={session.workspace ?? ''} onChange={(e) => choose(e.currentTarget.value)}>
        {session.workspaces.map((w) => <option key={w.org_id} value={w.org_id}>{w.org_id} ({w.roles.join(', ')})</option>)}
      </select>
    );
  }
  return (
    <main class="signin">
      <h1>Choose a workspace</h1>
      <p>{session.person?.name ?? session.key_id}, your groups give you roles in several workspaces.</p>
      <ul class="workspaces">
        {session.workspaces.map((w) => (
          <li key={w.org_id}>
            <button type="button" onClick={() => choose(w.org_id)}>{w.org_id}</button> <span class="muted">{w.roles.join(', ')}</span>
          </li>
        ))}
      </ul>
      {error ? <ErrorNote error={error} /> : null}
    </main>
  );
}
