import { isMachineEvent, machineEventReason, type TrackingEvent } from '../src';

// Which opens and clicks are machine events (the API contract "Delivery facts, tracking"): counted apart, never
// "responded". Agents below are real User-Agent strings as those clients and scanners send them.
const DELIVERED = Date.UTC(2026, 10, 23, 12, 0, 0);
const LATER = DELIVERED + 60 * 60 * 1000;
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const IPHONE_MAIL = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148';
const OUTLOOK_DESKTOP = 'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17928; Pro)';
const HOME_IP = '203.0.113.9';

const human = (over: Partial<TrackingEvent>): TrackingEvent => ({ at: LATER, deliveredAt: DELIVERED, userAgent: CHROME, ip: HOME_IP, ...over });

describe('machineEventReason', () => {
  it.each<[string, Partial<TrackingEvent>, string | null]>([
    ['a browser an hour after delivery', {}, null],
    ['an iPhone Mail open from a home address', { userAgent: IPHONE_MAIL }, null],
    ['Outlook desktop loading images for its reader', { userAgent: OUTLOOK_DESKTOP }, null],
    ['an IPv6 reader', { ip: '2001:db8::1' }, null],
    ['delivery time unknown', { deliveredAt: null }, null],
    ['exactly 2 s after delivery', { at: DELIVERED + 2000 }, null],
    ['1.999 s after delivery', { at: DELIVERED + 1999 }, 'too_soon_after_delivery'],
    ['at the delivery instant', { at: new Date(DELIVERED), deliveredAt: new Date(DELIVERED) }, 'too_soon_after_delivery'],
    ['before the delivery was recorded', { at: DELIVERED - 500 }, 'too_soon_after_delivery'],
    ['Apple MPP: bare agent from Apple', { userAgent: 'Mozilla/5.0', ip: '17.58.101.7' }, 'privacy_proxy'],
    ['Apple network, IPv4-mapped as Node reports it', { ip: '::ffff:17.1.2.3' }, 'privacy_proxy'],
    ['Apple network, IPv6', { ip: '2620:149:a:b::1' }, 'privacy_proxy'],
    ['bare "Mozilla/5.0" agent anywhere', { userAgent: 'Mozilla/5.0' }, 'privacy_proxy'],
    ['Gmail image proxy (fetches when the reader opens: a person)', { userAgent: 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)', ip: '66.102.8.1' }, null],
    ['Yahoo mail proxy (fetches when the reader opens: a person)', { userAgent: 'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html' }, null],
    ['Bing preview (Outlook.com)', { userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) BingPreview/1.0b' }, 'link_scanner'],
    ['Office link probe', { userAgent: 'Microsoft Office Existence Discovery' }, 'link_scanner'],
    ['Office ms-office agent', { userAgent: 'Mozilla/4.0 (compatible; ms-office; MSOffice 16)' }, 'link_scanner'],
    ['Safe Links from Exchange Online Protection', { ip: '40.107.22.51' }, 'link_scanner'],
    ['Safe Links from EOP, IPv6', { ip: '2a01:111:f400:fe1e::33' }, 'link_scanner'],
    ['Barracuda', { userAgent: 'Barracuda Sentinel (EE)' }, 'link_scanner'],
    ['Proofpoint', { userAgent: 'Mozilla/5.0 (compatible; Proofpoint URL Defense)' }, 'link_scanner'],
    ['Mimecast, any case', { userAgent: 'MIMECAST URL scanner' }, 'link_scanner'],
    ['no User-Agent', { userAgent: undefined }, 'no_user_agent'],
    ['blank User-Agent', { userAgent: '   ' }, 'no_user_agent'],
    ['curl', { userAgent: 'curl/8.5.0' }, 'automation'],
    ['python requests', { userAgent: 'python-requests/2.32.3' }, 'automation'],
    ['headless Chrome', { userAgent: CHROME.replace('Chrome/', 'HeadlessChrome/') }, 'automation'],
    ['an unparseable address does not decide anything', { ip: 'not-an-ip' }, null],
    ['a neighbour of Apple\'s network is a person', { ip: '16.255.255.255' }, null],
    ['a neighbour of an EOP range is a person', { ip: '40.108.0.1' }, null],
  ])('%s', (_name, over, expected) => {
    expect(machineEventReason(human(over))).toBe(expected);
    expect(isMachineEvent(human(over))).toBe(expected !== null);
  });

  it('the 2 s rule wins over everything else, and proxy networks over agents', () => {
    expect(machineEventReason(human({ at: DELIVERED + 100, userAgent: 'curl/8' }))).toBe('too_soon_after_delivery');
    expect(machineEventReason(human({ ip: '17.0.0.1', userAgent: 'Barracuda' }))).toBe('privacy_proxy');
  });
});
