import { confirmationPage, escapeHtml, messagePage, preferencePage } from '../src/readers/http/html';

// The reader pages' markup: every customer value (topic label, description, id) is text, in element
// content and in attribute values alike. The rendered page in a browser: gateway/test/public-web.int.test.ts.
const hostile = `"><script>alert('x')</script><img src=x onerror=alert(1)>&amp;`;

describe('reader page markup', () => {
  it('escapes the five HTML metacharacters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });

  it('renders hostile labels, descriptions and ids as text in the preference and confirmation pages', () => {
    const topics = [{ topicId: hostile, label: hostile, description: hostile, subscribed: true }];
    for (const html of [preferencePage(topics), confirmationPage(topics), messagePage(hostile, hostile)]) {
      expect(html).not.toContain('<script>');
      expect(html).not.toContain('<img');
      expect(html).not.toMatch(/"><|'x'/);
      expect(html).toContain('&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;');
      expect(html).toContain('&amp;amp;');
    }
  });

  it('checks the topics the reader is in, posts to its own URL and has no script at all', () => {
    const html = preferencePage([
      { topicId: 't1', label: 'In', description: null, subscribed: true },
      { topicId: 't2', label: 'Out', description: null, subscribed: false },
    ]);
    expect(html).toContain('<input type="checkbox" name="topic" value="t1" checked> In');
    expect(html).toContain('<input type="checkbox" name="topic" value="t2"> Out');
    expect(html).toContain('<form method="post">');
    expect(html).not.toMatch(/<script|\son\w+=|javascript:/i);
    expect(confirmationPage([{ topicId: 't2', label: 'Out', description: null, subscribed: false }])).toContain('You are unsubscribed from all topics.');
  });
});
