#!/usr/bin/env node
// bench/rss-repoll: the CPU a poll of an unchanged large feed costs the rss service (issue 22
// follow-up: feed HTML is sanitized only for the items a poll keeps, the new ones). A 5 MB RSS feed of
// ~1,000 article-sized items is parsed as a poll reads it (nothing new: no item is sanitized), beside
// the baseline of what every poll cost before: the parse plus sanitizing every item's HTML. Rounds are
// interleaved in one process; the figures are CPU ms per poll and the ratio now / baseline.
// Usage: npm run build (or npx tsc -b), then node bench/rss-repoll.js [--rounds 8]
'use strict';
const path = require('node:path');
const { parseArgs } = require('node:util');
const { parseFeed, sanitizeItemHtml } = require(path.join(__dirname, '..', 'services', 'rss', 'dist', 'domain', 'feed.js'));

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '8' } } });
const para = '<p>Some <strong>article</strong> text with a <a href="/x">link</a>, an <img src="pic.png" width="300"> and more words to fill the paragraph up.</p>';
const items = [];
for (let i = 0, bytes = 0; bytes < 5 * 1024 * 1024 - 20_000; i++) {
  const item = `<item><guid>g-${i}</guid><title>Post ${i}</title><link>https://blog.example/${i}</link><description><![CDATA[${para.repeat(30)}]]></description></item>`;
  items.push(item);
  bytes += item.length;
}
const doc = `<?xml version="1.0"?><rss version="2.0"><channel><title>Big</title><link>https://blog.example/</link>${items.join('')}</channel></rss>`;
const cpuMs = (fn) => {
  const start = process.cpuUsage();
  fn();
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
};
const poll = () => parseFeed(doc, 'application/rss+xml', 'https://blog.example/feed');
const before = () => {
  for (const item of poll().items) sanitizeItemHtml(item.untrustedHtml);
};

console.log(`feed: ${(doc.length / 1024 / 1024).toFixed(1)} MB, ${items.length} items`);
poll(); // warm-up
const now = [];
const baseline = [];
for (let r = 0; r < Number(args.rounds); r++) {
  now.push(cpuMs(poll));
  baseline.push(cpuMs(before));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`poll of the unchanged feed: ${median(now).toFixed(0)} ms CPU (median of ${now.length}); before: ${median(baseline).toFixed(0)} ms CPU; ratio ${(median(now) / median(baseline)).toFixed(2)}`);
