// The default gRPC addresses: one table (SERVICE_PORTS in @mailer/kit), the same in every process's config (a service declares its
// own address and its peers'), in the chart and in the local runner, and outside Linux's ephemeral
// port range (an outgoing connection may hold a port there when a service starts: EADDRINUSE).
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { SERVICE_PORTS } from '@mailer/kit';
import { repoRoot, SERVICES } from '@mailer/testing';

type Shape = Record<string, { parse(v: unknown): unknown }>;
const shapes: Record<string, Shape> = {
  gateway: require(path.join(repoRoot, 'gateway/dist/config.js')).configSchema.shape,
  ...Object.fromEntries(SERVICES.map((s) => [s, require(path.join(repoRoot, `services/${s}/dist/config.js`)).configSchema.shape])),
};
const addrVar = (s: string) => `${s.toUpperCase()}_GRPC_ADDR`;
const portOf = (addr: unknown) => Number(String(addr).split(':')[1]);

function ephemeralRange(): [number, number] {
  try {
    const [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    return [Math.min(low, 32768), Math.max(high, 60999)];
  } catch {
    return [32768, 60999]; // Linux's default
  }
}

describe('default gRPC ports', () => {
  const defaults = Object.fromEntries(SERVICES.map((s) => [s, portOf(shapes[s][addrVar(s)].parse(undefined))]));

  it("are the kit's table, which names every service", () => {
    expect(Object.keys(SERVICE_PORTS)).toEqual([...SERVICES]);
    expect(defaults).toEqual(SERVICE_PORTS);
  });

  it('every config that declares a service address has the same default', () => {
    for (const [owner, shape] of Object.entries(shapes)) {
      for (const s of SERVICES) {
        if (shape[addrVar(s)]) expect({ owner, s, addr: shape[addrVar(s)].parse(undefined) }).toEqual({ owner, s, addr: `127.0.0.1:${defaults[s]}` });
      }
    }
  });

  it('lie outside the ephemeral range and clear of the other default ports', () => {
    const [low, high] = ephemeralRange();
    const others = [4222, 8080, 8081, ...Array.from({ length: 7 }, (_, i) => 9100 + i)];
    const ports = Object.values(defaults);
    expect(new Set(ports).size).toBe(ports.length);
    for (const p of ports) {
      expect(p < low || p > high).toBe(true);
      expect(others).not.toContain(p);
    }
  });

  it('the chart and the local runner use the same ports', () => {
    const values = yaml.load(fs.readFileSync(path.join(repoRoot, 'charts/mailer/values.yaml'), 'utf8')) as { services: Record<string, { grpcPort: number }> };
    for (const s of SERVICES) expect({ s, port: values.services[s].grpcPort }).toEqual({ s, port: defaults[s] });
    const runner = fs.readFileSync(path.join(repoRoot, 'scripts/run-local.js'), 'utf8');
    const base = Number(/port\('GRPC_BASE_PORT', (\d+)\)/.exec(runner)?.[1]);
    expect(SERVICES.map((s) => defaults[s])).toEqual(SERVICES.map((_, i) => base + i));
  });
});

// The messaging service's other listeners (reader-facing HTTP, inbound bounces) and the form
// service's HTTP listener: the same defaults in every config that declares them, in the local
// runner (scripts/run-local-mail.js) and in the chart, clear of the gRPC, metrics and mail catcher ports.
describe('default HTTP and bounce ports', () => {
  const runner = require(path.join(repoRoot, 'scripts/run-local-mail.js')) as { MAIL_PORT_DEFAULTS: Record<string, number>; HTTP_ADDR_DEFAULTS: Record<string, number> };
  const listeners = { ...runner.HTTP_ADDR_DEFAULTS, BOUNCE_SMTP_PORT: runner.MAIL_PORT_DEFAULTS.BOUNCE_SMTP_PORT };

  it('every config that declares one has the runner\'s default, and the messaging service declares its own', () => {
    expect(shapes.messaging.MESSAGING_HTTP_ADDR).toBeDefined();
    expect(shapes.messaging.BOUNCE_SMTP_PORT).toBeDefined();
    for (const [owner, shape] of Object.entries(shapes)) {
      for (const [name, port] of Object.entries(listeners)) {
        if (!shape[name]) continue;
        const value = shape[name].parse(undefined);
        expect({ owner, name, port: name.endsWith('_ADDR') ? portOf(value) : Number(value) }).toEqual({ owner, name, port });
      }
    }
  });

  it('the chart uses the same ports', () => {
    const values = yaml.load(fs.readFileSync(path.join(repoRoot, 'charts/mailer/values.yaml'), 'utf8')) as { services: Record<string, { httpPort?: number; bounceSmtp?: { port: number } }> };
    expect({
      MESSAGING_HTTP_ADDR: values.services.messaging.httpPort,
      FORM_HTTP_ADDR: values.services.form.httpPort,
      BOUNCE_SMTP_PORT: values.services.messaging.bounceSmtp?.port,
    }).toEqual(listeners);
  });

  it('lie outside the ephemeral range and clear of every other default port', () => {
    const [low, high] = ephemeralRange();
    const ports = [...Object.values(listeners), runner.MAIL_PORT_DEFAULTS.MAIL_SMTP_PORT, runner.MAIL_PORT_DEFAULTS.MAIL_UI_PORT];
    const others = [4222, 8080, 8081, ...Array.from({ length: 7 }, (_, i) => 9100 + i), ...Object.values(SERVICE_PORTS)];
    expect(new Set(ports).size).toBe(ports.length);
    for (const p of ports) {
      expect(p < low || p > high).toBe(true);
      expect(others).not.toContain(p);
    }
  });
});
