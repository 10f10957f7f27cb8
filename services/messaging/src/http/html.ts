// The reader pages as HTML strings: no template engine, no script, one inline stylesheet (allowed by
// its hash in the Content-Security-Policy), and every value that is not a literal of this file goes
// through `escapeHtml` (topic labels and descriptions are the customer's text).
import type { TopicChoice } from '../app/preferences';

export const STYLESHEET =
  'body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#222;line-height:1.5}' +
  'fieldset{border:1px solid #ccc;border-radius:6px;padding:1rem}label{display:block;margin:.4rem 0}' +
  '.hint{color:#666;font-size:.9em;margin:0 0 .4rem 1.6rem}button{margin:1rem .5rem 0 0;padding:.5rem 1rem}';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text safe in element content and in double- or single-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${STYLESHEET}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

/** A page with a heading and one paragraph (not found, bad request, unavailable, errors). */
export function messagePage(title: string, text: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(text)}</p>`);
}

function topicList(topics: TopicChoice[]): string {
  return topics
    .map((t) => {
      const id = escapeHtml(t.topicId);
      const hint = t.description ? `\n<p class="hint">${escapeHtml(t.description)}</p>` : '';
      return `<label><input type="checkbox" name="topic" value="${id}"${t.subscribed ? ' checked' : ''}> ${escapeHtml(t.label)}</label>${hint}`;
    })
    .join('\n');
}

/**
 * The preference page. The form posts back to the page's own URL (an empty action), which carries
 * the token: the same token authorises the POST. "Unsubscribe from all" is a second submit button.
 */
export function preferencePage(topics: TopicChoice[]): string {
  if (topics.length === 0) {
    return layout(
      'Email preferences',
      `<h1>Email preferences</h1>
<p>There are no newsletter topics to choose from for this address.</p>
<form method="post">
<button type="submit" name="action" value="unsubscribe_all">Unsubscribe from all</button>
</form>`,
    );
  }
  return layout(
    'Email preferences',
    `<h1>Email preferences</h1>
<form method="post">
<fieldset>
<legend>Send me emails about</legend>
${topicList(topics)}
</fieldset>
<button type="submit" name="action" value="save">Save preferences</button>
<button type="submit" name="action" value="unsubscribe_all">Unsubscribe from all</button>
</form>`,
  );
}

/** After the form: what the reader is subscribed to now. */
export function confirmationPage(topics: TopicChoice[]): string {
  const kept = topics.filter((t) => t.subscribed);
  const list = kept.length
    ? `<p>You will receive emails about:</p>\n<ul>\n${kept.map((t) => `<li>${escapeHtml(t.label)}</li>`).join('\n')}\n</ul>`
    : '<p>You are unsubscribed from all topics.</p>';
  return layout('Preferences saved', `<h1>Preferences saved</h1>\n${list}\n<p><a href="">Change your preferences again</a></p>`);
}
