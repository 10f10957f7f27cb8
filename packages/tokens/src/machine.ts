import { BlockList, isIP } from 'node:net';
import {
  AUTOMATION_AGENTS,
  LINK_SCANNER_AGENTS,
  LINK_SCANNER_NETWORKS,
  MACHINE_WINDOW_MS,
  PRIVACY_PROXY_EXACT_AGENTS,
  PRIVACY_PROXY_NETWORKS,
  type MachineReason,
} from './machine-lists';

export * from './machine-lists';

/** What the open pixel or click redirect knows about one request. */
export interface TrackingEvent {
  /** When the open or click happened (epoch ms or Date). */
  at: Date | number;
  /** When the message was delivered, when known. */
  deliveredAt?: Date | number | null;
  /** The request's User-Agent header, as sent (may be missing). */
  userAgent?: string | null;
  /** The client address (IPv4, IPv6, or IPv4-mapped IPv6 as Node reports it). */
  ip?: string | null;
}

/**
 * Why an open or click is a machine event, or null when it looks like a person. Pure: the same input
 * always gives the same answer. Machine events are counted apart and never make a contact "responded".
 */
export function machineEventReason(event: TrackingEvent): MachineReason | null {
  if (event.deliveredAt !== undefined && event.deliveredAt !== null) {
    // Negative too: a scanner may fetch before the relay's acceptance is recorded as the delivery.
    if (ms(event.at) - ms(event.deliveredAt) < MACHINE_WINDOW_MS) return 'too_soon_after_delivery';
  }
  const agent = (event.userAgent ?? '').trim();
  const lower = agent.toLowerCase();
  const network = networkOf(event.ip);
  if (network && PROXY_NETWORKS.check(network.address, network.family)) return 'privacy_proxy';
  if (PRIVACY_PROXY_EXACT_AGENTS.includes(agent)) return 'privacy_proxy';
  if (network && SCANNER_NETWORKS.check(network.address, network.family)) return 'link_scanner';
  if (SCANNER_AGENTS.some((a) => lower.includes(a))) return 'link_scanner';
  if (agent === '') return 'no_user_agent';
  if (BOT_AGENTS.some((a) => lower.includes(a))) return 'automation';
  return null;
}

export function isMachineEvent(event: TrackingEvent): boolean {
  return machineEventReason(event) !== null;
}

const SCANNER_AGENTS = LINK_SCANNER_AGENTS.map((a) => a.toLowerCase());
const BOT_AGENTS = AUTOMATION_AGENTS.map((a) => a.toLowerCase());
const PROXY_NETWORKS = blockList(PRIVACY_PROXY_NETWORKS);
const SCANNER_NETWORKS = blockList(LINK_SCANNER_NETWORKS);

function blockList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address, prefix] = cidr.split('/');
    list.addSubnet(address, Number(prefix), isIP(address) === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

function networkOf(ip: string | null | undefined): { address: string; family: 'ipv4' | 'ipv6' } | null {
  if (!ip) return null;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const address = mapped ? mapped[1] : ip;
  const version = isIP(address);
  return version === 0 ? null : { address, family: version === 6 ? 'ipv6' : 'ipv4' };
}

function ms(value: Date | number): number {
  return value instanceof Date ? value.getTime() : value;
}
