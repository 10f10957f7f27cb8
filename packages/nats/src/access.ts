// What one process does on NATS, and the NATS server permissions that follow from it.
//
// Every process declares its NATS surface in one module (`src/nats-access.ts`): the streams and KV
// buckets it declares, the subjects it publishes, the durable consumers it reads. The process declares
// its streams and buckets and starts its consumers from that module, and its NATS user's permissions
// are derived from the same one (natsPermissions), so a process may do exactly what it does: the form
// service cannot publish an email job, pull another service's consumer or read the gateway's API keys.
import { STREAMS } from './streams';

export interface ConsumerDeclaration {
  stream: string;
  /**
   * The durable consumer's name. ANY_DURABLE: a setting chooses it (e.g. a projection rebuilt under a
   * new name); the process may then use any name on that stream except another process's consumers.
   */
  durable: string;
  /** Required: the permission pins it, so a consumer cannot be re-pointed at other subjects. */
  filterSubject: string;
}

export interface NatsAccess {
  /** The process (gateway, subscriber, ...): its replies arrive under `_INBOX.<name>.` (inboxPrefix). */
  name: string;
  /** Streams it creates or brings to spec (at start and after every reconnect). */
  streams: readonly string[];
  /** JetStream KV buckets it opens, reads, writes and watches. */
  buckets: readonly string[];
  /** KV buckets another process owns that it only reads (get by key; no write, no watch). */
  readBuckets?: readonly string[];
  /** Subjects it publishes (facts, jobs, events); `*` and `>` as in NATS. */
  publishes: readonly string[];
  /** Its durable pull consumers, by the name the process's code uses. */
  consumers: Readonly<Record<string, ConsumerDeclaration>>;
}

export const ANY_DURABLE = '*';

/** Where a process's request replies and KV watch deliveries arrive: only it may subscribe there. */
export const inboxPrefix = (name: string): string => `_INBOX.${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;

/**
 * A service's access: the streams follow from what it publishes and consumes (a publisher or a
 * consumer must find its stream, whoever starts first), so no service may reconfigure a stream it
 * never touches.
 */
export function serviceAccess(decl: Pick<NatsAccess, 'name' | 'publishes' | 'consumers' | 'readBuckets'> & { buckets?: readonly string[] }): NatsAccess {
  const streams = Object.values(STREAMS)
    .filter((s) => decl.publishes.some((p) => s.subjects.some((pattern) => covers(pattern, p))) || Object.values(decl.consumers).some((c) => c.stream === s.name))
    .map((s) => s.name);
  return { buckets: [], ...decl, streams };
}

export interface NatsPermissions {
  publish: { allow: string[]; deny?: string[] };
  subscribe: { allow: string[] };
}

const API = '$JS.API';

/**
 * The permissions of `access`'s NATS user. `others` are the other processes' declarations: a process
 * with a consumer of ANY_DURABLE name is denied theirs. Publish covers the JetStream API requests
 * the client makes for its streams, buckets and consumers, its acks, and its own subjects; subscribe
 * only its inbox (replies, KV watches), never another process's.
 */
export function natsPermissions(access: NatsAccess, others: readonly NatsAccess[] = []): NatsPermissions {
  const allow = new Set<string>([`${API}.INFO`]);
  const deny = new Set<string>();
  for (const stream of access.streams) streamApi(stream).forEach((s) => allow.add(s));
  for (const bucket of access.buckets) {
    const stream = `KV_${bucket}`;
    [
      ...streamApi(stream),
      `${API}.STREAM.MSG.GET.${stream}`,
      `${API}.DIRECT.GET.${stream}`,
      `${API}.DIRECT.GET.${stream}.>`,
      // Watches and key listings run ordered (ephemeral) consumers, answered with flow control.
      `${API}.CONSUMER.CREATE.${stream}`,
      `${API}.CONSUMER.CREATE.${stream}.>`,
      `${API}.CONSUMER.INFO.${stream}.*`,
      `${API}.CONSUMER.DELETE.${stream}.*`,
      `$JS.FC.${stream}.>`,
      `$KV.${bucket}.>`,
    ].forEach((s) => allow.add(s));
  }
  for (const bucket of access.readBuckets ?? []) {
    const stream = `KV_${bucket}`;
    [`${API}.STREAM.INFO.${stream}`, `${API}.STREAM.MSG.GET.${stream}`, `${API}.DIRECT.GET.${stream}`, `${API}.DIRECT.GET.${stream}.>`].forEach((s) => allow.add(s));
  }
  for (const subject of access.publishes) allow.add(subject);
  for (const c of Object.values(access.consumers)) {
    [
      `${API}.CONSUMER.CREATE.${c.stream}.${c.durable}.${c.filterSubject}`,
      `${API}.CONSUMER.INFO.${c.stream}.${c.durable}`,
      `${API}.CONSUMER.MSG.NEXT.${c.stream}.${c.durable}`,
      `$JS.ACK.${c.stream}.${c.durable}.>`,
    ].forEach((s) => allow.add(s));
    if (c.durable !== ANY_DURABLE) continue;
    // Any name, but not one another process declared: pulling or acking its messages would take them away.
    for (const other of others) {
      if (other.name === access.name) continue;
      for (const o of Object.values(other.consumers)) {
        if (o.stream !== c.stream || o.durable === ANY_DURABLE) continue;
        [
          `${API}.CONSUMER.CREATE.${o.stream}.${o.durable}.>`,
          `${API}.CONSUMER.MSG.NEXT.${o.stream}.${o.durable}`,
          `$JS.ACK.${o.stream}.${o.durable}.>`,
        ].forEach((s) => deny.add(s));
      }
    }
  }
  return {
    publish: { allow: [...allow], ...(deny.size ? { deny: [...deny] } : {}) },
    subscribe: { allow: [`${inboxPrefix(access.name)}.>`] },
  };
}

const streamApi = (stream: string) => [`${API}.STREAM.INFO.${stream}`, `${API}.STREAM.CREATE.${stream}`, `${API}.STREAM.UPDATE.${stream}`];

/** True when every subject `subject` can stand for is matched by `pattern` (NATS wildcards). */
export function covers(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length || s[i] === '>') return false;
    if (p[i] !== '*' && (p[i] !== s[i] || s[i] === '*')) return false;
  }
  return p.length === s.length;
}

export interface NatsUser {
  user: string;
  password: string;
  /** Absent: every permission (an operator's or a test's own connection). */
  permissions?: NatsPermissions;
}

/** The `authorization` users of a nats-server configuration, one per process (user name = process name). */
export function natsUsers(processes: readonly NatsAccess[], passwordOf: (name: string) => string): NatsUser[] {
  return processes.map((p) => ({ user: p.name, password: passwordOf(p.name), permissions: natsPermissions(p, processes) }));
}
