// Which subscriber fields an RSS newsletter's templates print (the API contract: `subjectPattern` and
// `htmlContent` are Liquid templates with `items`, `newsletter` and `subscriber`). A field printed
// by a newsletter that still sends is a live merge tag: archiving the field blanks it in the next
// issues, deleting it is blocked.

export type NewsletterStatus = 'ACTIVE' | 'PAUSED';

export interface NewsletterTemplates {
  id: string;
  name: string;
  status: NewsletterStatus;
  subjectPattern: string;
  htmlContent: string;
}

export interface MergeTagUsage {
  category: 'CONTENT_MERGE_TAG';
  area: 'subjectPattern' | 'htmlContent';
  artifactId: string;
  artifactName: string;
  status: NewsletterStatus;
  reason: string;
  link: string;
  permanentDeleteBlocking: boolean;
  effect: 'CONTENT_MERGE_TAG';
}

// `subscriber.<tag>` or `subscriber["<tag>"]` inside a Liquid output `{{ ... }}` or tag `{% ... %}`.
const LIQUID = /\{\{([\s\S]*?)\}\}|\{%([\s\S]*?)%\}/g;
const SUBSCRIBER_MEMBER = /\bsubscriber\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)|\[\s*["']([^"']+)["']\s*\])/g;

/** The personalization tag names a Liquid template reads from `subscriber`, lowercase, each once. */
export function subscriberTagsIn(template: string): Set<string> {
  const tags = new Set<string>();
  for (const [, output, tag] of template.matchAll(LIQUID)) {
    for (const [, dotted, quoted] of (output ?? tag ?? '').matchAll(SUBSCRIBER_MEMBER)) tags.add((dotted ?? quoted).toLowerCase());
  }
  return tags;
}

/** The newsletter's usages of the personalization tag: one per template that prints it. */
export function mergeTagUsages(newsletter: NewsletterTemplates, personalizationTagName: string): MergeTagUsage[] {
  const tag = personalizationTagName.toLowerCase();
  const areas = (['subjectPattern', 'htmlContent'] as const).filter((area) => subscriberTagsIn(newsletter[area]).has(tag));
  return areas.map((area) => ({
    category: 'CONTENT_MERGE_TAG',
    area,
    artifactId: newsletter.id,
    artifactName: newsletter.name,
    status: newsletter.status,
    reason: `the newsletter's ${area} prints subscriber.${tag}`,
    link: `/rss-newsletters/${newsletter.id}`,
    // A paused newsletter sends nothing until resumed; an active one would print an empty value.
    permanentDeleteBlocking: newsletter.status === 'ACTIVE',
    effect: 'CONTENT_MERGE_TAG',
  }));
}
