// Links and heading anchors of a markdown text, the way the forge renders them (GitHub's slugs).

export interface MarkdownLink {
  target: string;
  /** 1-based line. */
  line: number;
}

/** The `[text](target)` and `![alt](target)` links outside code (fenced blocks and inline code). */
export function markdownLinks(text: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  let fence: string | null = null;
  text.split('\n').forEach((raw, i) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(raw);
    if (open) {
      if (fence === null) fence = open[1];
      else if (raw.trim().startsWith(fence)) fence = null;
      return;
    }
    if (fence !== null) return;
    const line = raw.replace(/`[^`]*`/g, '');
    for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ target: m[1], line: i + 1 });
  });
  return links;
}

/** The anchors of the headings of `text`: lower case, punctuation dropped, spaces to `-`, repeats numbered. */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | null = null;
  for (const raw of text.split('\n')) {
    const open = /^\s*(`{3,}|~{3,})/.exec(raw);
    if (open) {
      if (fence === null) fence = open[1];
      else if (raw.trim().startsWith(fence)) fence = null;
      continue;
    }
    const heading = fence === null && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw);
    if (!heading) continue;
    const slug = heading[1]
      .replace(/<[^>]+>/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}
