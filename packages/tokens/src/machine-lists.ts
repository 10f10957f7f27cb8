// Known machine fetchers of open pixels and links (the API contract "Delivery facts, tracking": an open or click
// is a *machine* event when it comes within 2 s of delivery or from a known mail-privacy proxy or link
// scanner). The one place these lists live; each entry says where it comes from. Matching is a
// case-insensitive substring of the User-Agent, or the client address inside a CIDR range.
//
// Sources, as of 2025/2026:
// - Apple Mail Privacy Protection (MPP, iOS 15+ / macOS 12+): Apple's proxies prefetch every remote image
//   when the message arrives, whether or not the reader opens it, from Apple's own network 17.0.0.0/8
//   (ARIN "APPLE-WWNET") with the bare User-Agent "Mozilla/5.0" (as published by ESPs: SparkPost,
//   Litmus, Validity). iCloud Private Relay (which *people* browse through) uses other networks
//   (Akamai, Cloudflare, Fastly), so those are deliberately not listed.
// - NOT listed: the Gmail image proxy ("... (via ggpht.com GoogleImageProxy)") and the Yahoo Mail
//   proxy ("YahooMailProxy"). They are image caches, not privacy prefetchers: they fetch when a reader
//   opens the message, so their first fetch is a real open. Counting them as machine would make no Gmail
//   or Yahoo reader ever "responded" for segments.
// - Microsoft: Exchange Online Protection / Safe Links fetch from the EOP ranges of Microsoft's
//   "Microsoft 365 URLs and IP address ranges" (Exchange Online, ids 1-2); Outlook.com / Teams previews
//   send "BingPreview"; Office apps probe links with "Microsoft Office Existence Discovery" and "ms-office".
//   The plain "Microsoft Office/16.0 (... Microsoft Outlook ...)" agent is Outlook desktop loading
//   images for a reader who opened the mail, so it is NOT listed.
// - Secure email gateways that follow every link of an incoming message: Barracuda, Proofpoint (URL
//   Defense), Mimecast, Cisco IronPort, Forcepoint, Trend Micro, Sophos, Symantec/Broadcom MessageLabs,
//   FireEye/Trellix, each identified by its product name in the User-Agent (vendor documentation and
//   ESP reports of scanner clicks).
// - Generic automation (HTTP libraries, headless browsers): no mail client a person uses sends these.
//

export type MachineReason = 'too_soon_after_delivery' | 'privacy_proxy' | 'link_scanner' | 'automation' | 'no_user_agent';

export const MACHINE_WINDOW_MS = 2000;

/** Apple MPP sends exactly this User-Agent and nothing more; no browser does. */
export const PRIVACY_PROXY_EXACT_AGENTS: readonly string[] = ['Mozilla/5.0'];

/** Mail-privacy proxies, by client network. */
export const PRIVACY_PROXY_NETWORKS: readonly string[] = [
  '17.0.0.0/8', // Apple (MPP prefetch)
  '2620:149::/32', // Apple (IPv6, ARIN)
];

/** Link scanners and previewers, by User-Agent substring. */
export const LINK_SCANNER_AGENTS: readonly string[] = [
  'BingPreview',
  'Microsoft Office Existence Discovery',
  'ms-office',
  'SkypeUriPreview',
  'Barracuda',
  'Proofpoint',
  'urldefense',
  'Mimecast',
  'IronPort',
  'Forcepoint',
  'Trend Micro',
  'TrendMicro',
  'Sophos',
  'Symantec',
  'MessageLabs',
  'FireEye',
  'Trellix',
];

/** Link scanners, by client network (Exchange Online Protection, where Safe Links checks run). */
export const LINK_SCANNER_NETWORKS: readonly string[] = [
  '40.92.0.0/15',
  '40.107.0.0/16',
  '52.100.0.0/14',
  '104.47.0.0/17',
  '2a01:111:f400::/48',
  '2a01:111:f403::/48',
];

/** HTTP libraries and headless browsers, by User-Agent substring. */
export const AUTOMATION_AGENTS: readonly string[] = [
  'HeadlessChrome',
  'PhantomJS',
  'python-requests',
  'Python-urllib',
  'aiohttp',
  'curl/',
  'Wget/',
  'Go-http-client',
  'libwww-perl',
  'Apache-HttpClient',
  'Java/',
  'node-fetch',
  'axios/',
  'undici',
];
