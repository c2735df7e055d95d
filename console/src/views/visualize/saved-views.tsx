import { useState } from 'preact/hooks';
import { request } from '../../api';
import { asApiError, ErrorNote, Section, useLoad, when } from '../../ui';
import type { ApiError } from '../../api';
import { fromSavedState, toSavedState, type VisualizeState } from './state';
import { isDimension } from './filter-text';

/**
 * Saved views (GET/POST /v1/views, DELETE /v1/views/{id}): named states of
 * the page, shared with the workspace, in the API's document (toSavedState);
 * read back like a URL's state, so one saved by an older console opens in this one.
 */
export interface SavedView {
  id: string;
  name: string;
  state: Record<string, unknown>;
  version: number;
  created_at: string;
  updated_at: string;
  created_by: string;
}

const listOf = (answer: SavedView[] | { data: SavedView[] }) => (Array.isArray(answer) ? answer : answer.data);

export function SavedViews({ state, onOpen }: { state: VisualizeState; onOpen: (s: VisualizeState) => void }) {
  const list = useLoad(async () => listOf(await request<SavedView[] | { data: SavedView[] }>('GET', '/v1/views')), []);
  const [name, setName] = useState('');
  const [error, setError] = useState<ApiError>();
  const [done, setDone] = useState('');
  const act = (work: Promise<unknown>, message: string) => {
    setError(undefined);
    work.then(() => { setDone(message); list.reload(); }, (err: unknown) => setError(asApiError(err)));
  };
  const save = (e: Event) => {
    e.preventDefault();
    if (!name.trim()) return;
    act(request('POST', '/v1/views', { name: name.trim(), state: toSavedState(state) }), `Saved "${name.trim()}".`);
    setName('');
  };
  return (
    <Section title="Saved views">
      <form class="filters" onSubmit={save}>
        <label>View name<input value={name} onInput={(e) => setName(e.currentTarget.value)} maxLength={200} /></label>
        <button type="submit" disabled={!name.trim()}>Save as</button>
      </form>
      {done ? <p role="status" class="muted">{done}</p> : null}
      {error ? <ErrorNote error={error} /> : null}
      {list.error ? <ErrorNote error={list.error} retry={list.reload} /> : null}
      <table aria-label="Saved views">
        <thead><tr><th scope="col">Name</th><th scope="col">Saved by</th><th scope="col">Updated</th><th scope="col">Actions</th></tr></thead>
        <tbody>
          {(list.data ?? []).map((v) => (
            <tr key={v.id}>
              <td>{v.name}</td><td><code>{v.created_by}</code></td><td>{when(v.updated_at)}</td>
              <td class="actions">
                <button type="button" class="secondary" aria-label={`Open ${v.name}`} onClick={() => { onOpen(fromSavedState(v.state, isDimension).state); setDone(`Opened "${v.name}".`); }}>Open</button>
                <button type="button" class="secondary" aria-label={`Delete ${v.name}`} onClick={() => act(request('DELETE', `/v1/views/${encodeURIComponent(v.id)}`), `Deleted "${v.name}".`)}>Delete</button>
              </td>
            </tr>
          ))}
          {list.data && list.data.length === 0 ? <tr><td colSpan={4}>No saved view in this workspace yet.</td></tr> : null}
        </tbody>
      </table>
    </Section>
  );
}
