// The messaging service's reader pages: the preference page and its confirmation. Layout and escaping
// come from @mailer/kit/html; topic labels and descriptions are the customer's text.
import { escapeHtml, htmlPage } from '@mailer/kit/html';
import type { TopicChoice } from '../app/preferences';

export { escapeHtml, messagePage, STYLESHEET } from '@mailer/kit/html';

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
    return htmlPage(
      'Email preferences',
      `<h1>Email preferences</h1>
<p>There are no newsletter topics to choose from for this address.</p>
<form method="post">
<button type="submit" name="action" value="unsubscribe_all">Unsubscribe from all</button>
</form>`,
    );
  }
  return htmlPage(
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
  return htmlPage('Preferences saved', `<h1>Preferences saved</h1>\n${list}\n<p><a href="">Change your preferences again</a></p>`);
}
