import fs from 'node:fs';
import path from 'node:path';

/** A fenced ```sh or ```bash block of a markdown file, and the reason it is not run when a marker precedes it. */
export interface ShellBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  text: string;
  notRun?: string;
}

/** A relative link of a markdown file: the path it names (resolved) and its anchor, if any. */
export interface RelativeLink {
  file: string;
  line: number;
  target: string;
  anchor?: string;
}

const notRunMarker = /^<!--\s*not-run:(.*?)-->$/;
const fence = /^```(\S*)/;

/** Every markdown file under `dir`, recursively, in a stable order. */
export function markdownFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? markdownFiles(path.join(dir, e.name)) : e.name.endsWith('.md') ? [path.join(dir, e.name)] : []))
    .sort();
}

/** The lines of a markdown file outside its fenced blocks, with their 1-based numbers. */
function proseLines(text: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  let inFence = false;
  text.split('\n').forEach((line, i) => {
    if (fence.test(line)) inFence = !inFence;
    else if (!inFence) out.push({ line: i + 1, text: line });
  });
  return out;
}

/**
 * The ```sh and ```bash blocks of `file`. A block whose nearest non-blank line
 * before it is `<!-- not-run: reason -->` carries that reason; an empty reason
 * is an error, so every block left out says why.
 */
export function shellBlocks(file: string): ShellBlock[] {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const blocks: ShellBlock[] = [];
  let open: { line: number; lang: string; marker?: string; body: string[] } | undefined;
  let lastProse = '';
  lines.forEach((line, i) => {
    if (open) {
      if (!line.startsWith('```')) return void open.body.push(line);
      if (open.lang === 'sh' || open.lang === 'bash') blocks.push(block(file, open));
      open = undefined;
      lastProse = line;
      return;
    }
    const start = fence.exec(line);
    if (start) open = { line: i + 1, lang: start[1] ?? '', marker: lastProse, body: [] };
    else if (line.trim()) lastProse = line.trim();
  });
  return blocks;
}

function block(file: string, open: { line: number; marker?: string; body: string[] }): ShellBlock {
  const marker = notRunMarker.exec(open.marker ?? '');
  const reason = marker?.[1]?.trim();
  if (marker && !reason) throw new Error(`${file}:${open.line}: a not-run marker must say why`);
  return { file, line: open.line, text: open.body.join('\n'), ...(reason ? { notRun: reason } : {}) };
}

/**
 * GitHub's anchors for the headings of a markdown text: lower-cased, every
 * character but letters, digits, spaces, hyphens and underscores dropped,
 * spaces made hyphens, and a repeated anchor numbered (`-1`, `-2`, …).
 */
export function headingAnchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { text: line } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const base = heading[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count ? `${base}-${count}` : base);
  }
  return anchors;
}

/** Every link of `file` that is not absolute (no scheme), outside fenced blocks and inline code. */
export function relativeLinks(file: string): RelativeLink[] {
  const links: RelativeLink[] = [];
  for (const { line, text } of proseLines(fs.readFileSync(file, 'utf8'))) {
    const prose = text.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      const href = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue;
      const [pathPart = '', anchor] = href.split('#');
      links.push({ file, line, target: pathPart ? path.resolve(path.dirname(file), pathPart) : file, ...(anchor ? { anchor } : {}) });
    }
  }
  return links;
}
