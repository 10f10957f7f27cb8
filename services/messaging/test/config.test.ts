// Settings the operator passes as they are: secrets keep their case (the chart and the runner put
// base64url secrets there), domain lists are compared lower-cased.
import { loadMessagingConfig } from '../src/config';

const base = { TRACKING_SECRET: 'A'.repeat(16) + 'b'.repeat(16) };

it('keeps former tracking secrets exactly as given, so links signed with them still verify', () => {
  const previous = ['Zx9_Qw-ErTyUiOpAsDfGhJkLzXcVbNm12', 'MixedCase-Secret-Of-At-Least-32-Chars'];
  const config = loadMessagingConfig({ ...base, TRACKING_SECRET_PREVIOUS: ` ${previous[0]} ,${previous[1]},` });
  expect(config.TRACKING_SECRET_PREVIOUS).toEqual(previous);
});

it('lower-cases the allowed sender domains', () => {
  expect(loadMessagingConfig({ ...base, MAIL_ALLOWED_FROM_DOMAINS: 'Example.ORG, mail.example.com' }).MAIL_ALLOWED_FROM_DOMAINS).toEqual(['example.org', 'mail.example.com']);
});
