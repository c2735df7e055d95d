import { useEffect, useRef, useState } from 'preact/hooks';
import { request } from '../../api';
import type { Features } from './data';
import { completionContext, dimensionNames, filterProblem, keywords, stillFitting, type CompletionContext } from './filter-text';

/**
 * The filter box: the filter language (docs/analyst-queries.md) typed with
 * completion, as a WAI-ARIA combobox. Dimension names come from the
 * service (GET /v1/telemetry/flows/complete without a dimension) or, where
 * it has no such route, from the language's own catalog; values of the
 * dimension before the operator from the same route, from the workspace's
 * recent flows. Arrow keys move through the suggestions, Enter or Tab takes
 * one, Escape closes them; Enter with none open applies the filter.
 */
interface Item {
  value: string;
  label?: string;
}

async function suggestions(ctx: CompletionContext, f: Features): Promise<Item[]> {
  if (f.complete) {
    const q = new URLSearchParams({ prefix: ctx.prefix, limit: '20' });
    if (ctx.kind === 'value' && ctx.dimension) q.set('dimension', ctx.dimension);
    const answer = await request<{ items: Item[] }>('GET', `/v1/telemetry/flows/complete?${q.toString()}`).catch(() => ({ items: [] }));
    if (answer.items.length || ctx.kind === 'value') return answer.items;
  }
  if (ctx.kind === 'value') return [];
  const lower = ctx.prefix.toLowerCase();
  return [...dimensionNames, ...keywords].filter((n) => n.toLowerCase().startsWith(lower)).slice(0, 20).map((value) => ({ value }));
}

/** How a value is written in the filter: numbers, addresses and AS13335 bare, other text quoted. */
const written = (ctx: CompletionContext, value: string) => (ctx.kind === 'value' && !/^[0-9A-Fa-f.:/]+$/.test(value) && !/^AS\d+$/i.test(value) ? `'${value.replace(/'/g, "\\'")}'` : value);

export function FilterBox({ value, onApply, features }: { value: string; onApply: (filter: string) => void; features: Features }) {
  const [text, setText] = useState(value);
  const [items, setItems] = useState<Item[]>([]);
  const [active, setActive] = useState(0);
  const [ctx, setCtx] = useState<CompletionContext>();
  const input = useRef<HTMLInputElement>(null);
  const asked = useRef(0);
  useEffect(() => setText(value), [value]);
  const problem = text.trim() ? filterProblem(text) : undefined;

  const complete = (next: string, cursor: number) => {
    const c = completionContext(next, cursor);
    setCtx(c);
    const n = ++asked.current;
    if (c.prefix === '' && c.kind === 'dimension') return setItems([]);
    // Until the answer for the new text comes, offer only what still fits
    // it: Enter must never take a suggestion for text no longer typed.
    setItems((shown) => (ctx?.kind === c.kind && ctx.start === c.start && ctx.dimension === c.dimension ? stillFitting(shown, c.prefix) : []));
    setActive(0);
    suggestions(c, features).then((found) => {
      if (n !== asked.current) return;
      setItems(found);
      setActive(0);
    }, () => undefined);
  };
  const take = (item: Item) => {
    if (!ctx) return;
    const el = input.current!;
    const cursor = el.selectionStart ?? text.length;
    const insert = `${written(ctx, item.value)} `;
    const next = text.slice(0, ctx.start) + insert + text.slice(cursor).replace(/^\S*\s?/, '');
    setText(next);
    setItems([]);
    requestAnimationFrame(() => el.setSelectionRange(ctx.start + insert.length, ctx.start + insert.length));
  };
  const onKeyDown = (e: KeyboardEvent) => {
    const open = items.length > 0;
    if (open && e.key === 'ArrowDown') setActive((a) => (a + 1) % items.length);
    else if (open && e.key === 'ArrowUp') setActive((a) => (a - 1 + items.length) % items.length);
    else if (open && (e.key === 'Enter' || e.key === 'Tab')) take(items[active]!);
    else if (open && e.key === 'Escape') setItems([]);
    else if (e.key === 'Enter' && !problem) onApply(text.trim());
    else return;
    e.preventDefault();
  };
  const open = items.length > 0;
  return (
    <div class="filter-box">
      <label for="vis-filter">Filter</label>
      <div class="filter-row">
        <input
          id="vis-filter" ref={input} value={text} role="combobox" aria-expanded={open} aria-controls="vis-filter-options" aria-autocomplete="list"
          aria-activedescendant={open ? `vis-filter-option-${active}` : undefined} aria-invalid={problem ? true : undefined} aria-describedby="vis-filter-help"
          autocomplete="off" spellcheck={false} placeholder="dst_as = 13335 AND NOT src_country IN ('NL', 'DE')"
          onInput={(e) => { const el = e.currentTarget; setText(el.value); complete(el.value, el.selectionStart ?? el.value.length); }}
          onKeyDown={onKeyDown} onBlur={() => setTimeout(() => setItems([]), 150)}
        />
        <button type="button" onClick={() => onApply(text.trim())} disabled={!!problem}>Apply</button>
      </div>
      <ul id="vis-filter-options" role="listbox" aria-label="Suggestions" class="suggestions" hidden={!open}>
        {items.map((item, i) => (
          <li id={`vis-filter-option-${i}`} key={item.value} role="option" aria-selected={i === active} onMouseDown={(e) => { e.preventDefault(); take(item); }}>
            <code>{item.value}</code>{item.label && item.label !== item.value ? <span class="muted"> {item.label}</span> : null}
          </li>
        ))}
      </ul>
      <p id="vis-filter-help" class={problem ? 'error' : 'muted'} role={problem ? 'alert' : undefined}>{problem ?? 'AND, OR, NOT, parentheses; = != < <= > >=, IN (…), LIKE, << for prefixes (src_ip << 10.0.0.0/8). Enter applies.'}</p>
    </div>
  );
}
